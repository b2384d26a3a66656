"""Procedure-grounded tests offline (issue 17, "Figures"; seed 001, Tables 1 and 2, Algorithm 1).

Prints, on the sample project: the counts at each stage like Table 1 (procedures -> with known APIs ->
valid flowgraphs -> valid conversation graphs -> conversations -> conversations keeping A.6 -> tests);
edge coverage of the weighted walk (Algorithm 1) against uniform random walks with the same number of
paths, per conversation graph with branches, averaged over seeds (issue's goal: ratio >= 1.3), and on
full trees for reference; the
calibration of the correct-reply threshold on the local embedding model; the seven metrics of Table 2
with 95% Wilson intervals for the demo agent, the oracle (must be 100% everywhere) and the null agent that
always replies "OK" (API recall 0).

Run from the repository root: `.venv/bin/python benchmarks/procedures.py [--paths N] [--seed S]`.
Everything is offline (EVALCORE_OFFLINE=1): graphs compiled from the procedures' steps, conversations
written from the paths; the figures say how the offline pipeline behaves, not how a model would.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COVERAGE_SEEDS = 200  # walks per graph and n: enough for the mean coverage to settle to +-0.01


def _pct(hits: int, n: int) -> str:
    from evalcore.reports.tables import wilson_interval

    if n == 0:
        return f"{'n/a':>18}"
    low, high = wilson_interval(hits, n)
    return f"{100 * hits / n:6.1f} [{100 * low:4.0f},{100 * high:4.0f}]"


def _full_tree(depth: int, k: int):
    """A full k-ary tree of the given depth as a conversation graph (node types do not matter to walks)."""
    from evalcore.generators.procedure.graphs import Edge, Graph, Node

    nodes = [Node(node_id="N0", node_type="agent", node_description="root")]
    edges: list[Edge] = []
    frontier = ["N0"]
    for _ in range(depth):
        grown = []
        for parent in frontier:
            for _ in range(k):
                child = f"N{len(nodes)}"
                nodes.append(Node(node_id=child, node_type="agent", node_description=child))
                edges.append(Edge(edge_id=f"E{len(edges)}", edge=(parent, child)))
                grown.append(child)
        frontier = grown
    return Graph(kind="conversation", procedure="tree", nodes=nodes, edges=edges)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=5, help="paths (conversations) per graph (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ["EVALCORE_OFFLINE"] = "1"

    import numpy as np

    from evalcore.generators.procedure.agents import DemoAgent, NullAgent, OracleAgent, play
    from evalcore.generators.procedure.job import generate, list_graphs
    from evalcore.generators.procedure.metrics import (
        METRICS,
        REPLY_THRESHOLD,
        embedding_similarity,
        score_tests,
        table2,
    )
    from evalcore.generators.procedure.paths import edge_coverage, has_branches, uniform_walks, weighted_walks
    from evalcore.inputs import import_project
    from evalcore.items.store_ops import list_conversations, list_tests
    from evalcore.llm.client import ModelClient
    from evalcore.store import Store

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{Path(tmp) / 'store.db'}")
        pid = import_project(store, ROOT / "data" / "sample").project_id
        outcome = generate(store, pid, paths=args.paths, seed=args.seed)
        graphs = list_graphs(store, pid, outcome.run.id)
        procedures = store.procedures(pid)
        tool_names = {t.name for t in store.tools(pid)}
        conversations = [v.conversation for v in list_conversations(store, pid, generator="procedure")]
        tests = list_tests(store, pid)
        kept = [c for c in conversations if not c.metadata.get("problems")]
        print(f"Stages (Table 1 shape), {args.paths} paths per graph, seed {args.seed}:")
        stages = [
            ("procedures", len(procedures)),
            ("w/ known APIs", sum(set(p.apis) <= tool_names for p in procedures)),
            ("valid flowgraphs", sum(g.flowgraph.valid for g in graphs)),
            (
                "valid conv. graphs",
                sum(bool(g.conversation_graph and g.conversation_graph.valid) for g in graphs),
            ),
            ("conversations", len(conversations)),
            ("keeping A.6 rules", len(kept)),
            ("tests", len(tests)),
        ]
        print("  " + " -> ".join(f"{name} {count}" for name, count in stages))

        print(f"\nEdge coverage, weighted walk vs uniform, mean of {COVERAGE_SEEDS} seeds (noisy graphs):")
        print(
            f"  {'procedure':<16}{'nodes':>6}{'edges':>6}"
            + "".join(f"{f'n={n} w/u':>18}" for n in (3, 5, 10))
        )
        ratios: dict[int, list[float]] = {3: [], 5: [], 10: []}
        for g in graphs:
            noisy = g.noisy_graph
            if noisy is None or not has_branches(noisy):
                continue
            cells = []
            for n in ratios:
                w = statistics.mean(
                    edge_coverage(noisy, weighted_walks(noisy, n, s)) for s in range(COVERAGE_SEEDS)
                )
                u = statistics.mean(
                    edge_coverage(noisy, uniform_walks(noisy, n, s)) for s in range(COVERAGE_SEEDS)
                )
                ratios[n].append(w / u)
                cells.append(f"{w:.2f}/{u:.2f}={w / u:.2f}x")
            print(
                f"  {g.procedure:<16}{len(noisy.nodes):>6}{len(noisy.edges):>6}"
                + "".join(f"{c:>18}" for c in cells)
            )
        means = {n: statistics.mean(r) for n, r in ratios.items() if r}
        print("  mean ratio: " + ", ".join(f"n={n} {m:.2f}x" for n, m in means.items()))
        # reference: the same comparison on full trees, where every branch is a real choice
        for depth, k in ((4, 2), (2, 4)):
            tree = _full_tree(depth, k)
            cells = []
            for n in ratios:
                w = statistics.mean(
                    edge_coverage(tree, weighted_walks(tree, n, s)) for s in range(COVERAGE_SEEDS)
                )
                u = statistics.mean(
                    edge_coverage(tree, uniform_walks(tree, n, s)) for s in range(COVERAGE_SEEDS)
                )
                cells.append(f"{w:.2f}/{u:.2f}={w / u:.2f}x")
            label = f"tree {k}^{depth}"
            print(
                f"  {label:<16}{len(tree.nodes):>6}{len(tree.edges):>6}" + "".join(f"{c:>18}" for c in cells)
            )
        top = max(means.values())
        print(f"  goal >= 1.3x: {'met' if top >= 1.3 else 'NOT met'} (best mean {top:.2f}x)")

        llm = ModelClient(store, pid)
        model = llm.registry.resolve("embedding", None)[2]
        similarity = embedding_similarity(llm)

        replies = sorted({t.expected.content for t in tests if t.expected.role.value == "assistant"})
        rng = random.Random(args.seed)
        paraphrased = [f"{rng.choice(('Sure.', 'Of course!', 'Happy to help.'))} {r}" for r in replies]
        others = [rng.choice([x for x in replies if x != r]) for r in replies]
        pos, neg = np.array(similarity(replies, paraphrased)), np.array(similarity(replies, others))
        # the midpoint of the gap between unrelated replies and paraphrases, when there is a gap
        gap = (pos.min() + neg.max()) / 2 if pos.min() > neg.max() else float("nan")
        print(f"\nCorrect-reply threshold on {model}, {len(replies)} expected replies:")
        print(f"  paraphrase cosine min {pos.min():.2f}, median {np.median(pos):.2f}")
        print(f"  other reply cosine max {neg.max():.2f}, median {np.median(neg):.2f}")
        print(f"  midpoint of the gap {gap:.2f}; threshold used {REPLY_THRESHOLD} (the seed: BERTScore 0.55)")

        tools = store.tools(pid)
        print(f"\nTable 2 (percent [95% Wilson]), {len(tests)} tests, {len(kept)} conversations:")
        print(f"  {'agent':<8}" + "".join(f"{m:>22}" for m in METRICS))
        for agent in (DemoAgent(store.procedures(pid), tools, args.seed), OracleAgent(tests), NullAgent()):
            counts = table2(score_tests(play(tests, agent, tools), similarity))
            print(f"  {agent.name:<8}" + "".join(f"{_pct(*counts[m]):>22}" for m in METRICS))
        store.close()
    print(f"\n{time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    main()
