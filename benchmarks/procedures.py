"""Procedure-grounded tests offline (issue 17, "Figures"; seed 001, Tables 1 and 2, Algorithm 1).

Prints, on the sample project: the counts at each stage like Table 1 (procedures -> with known APIs ->
valid flowgraphs -> valid conversation graphs -> conversations -> conversations keeping A.6 -> tests);
edge coverage of the weighted walk (Algorithm 1, the default) and of the coverage-directed walk (the
deviation `--walk coverage`) against uniform random walks with the same number of paths, per
conversation graph with branches, averaged over seeds (issue's goal: ratio >= 1.3), at 3, 5 and 10 paths
and at as many paths as the graph has leaves, with the node coverage ratio there (the seed's own claim is
"improve node coverage", with no figure); the same on full trees and on a star (every edge a choice:
Algorithm 1's most favourable shape), and the star's ceiling if no child were ever drawn twice; which
walk meets the goal (best mean ratio over the sample's graphs, and how many graphs reach it there); the
calibration of the correct-reply threshold on the embedding model in use, over the hand-written pairs of
tests/fixtures/procedure_replies.jsonl (expected utterance, a correct paraphrase, a wrong reply; the cut
with the best accuracy, both sides' ranges) against the threshold configured for it; the seven metrics
of Table 2 with 95% Wilson intervals for the demo agent (which follows the procedures with seeded
mistakes), the oracle (must be 100% everywhere) and the null agent that always replies "OK" (API recall 0).

Run from the repository root: `.venv/bin/python benchmarks/procedures.py [--paths N] [--seed S]`.
Everything is offline (EVALCORE_OFFLINE=1): graphs compiled from the procedures' steps, conversations
written from the paths; the figures say how the offline pipeline behaves, not how a model would.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPLY_PAIRS = ROOT / "tests" / "fixtures" / "procedure_replies.jsonl"
COVERAGE_SEEDS = 200  # walks per graph and n: enough for the mean coverage to settle to +-0.01
SIZES = (3, 5, 10)  # paths per graph compared; "L" below: as many paths as the graph has leaves


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


def _coverage_rows(label: str, graph) -> dict[str, dict[int | str, float]]:
    """Print one graph's coverage ratios against uniform walks, a row per walk (edges at each n and at
    n = leaves, nodes at n = leaves); return the edge ratios by walk and n."""
    from evalcore.generators.procedure.paths import WALKS, edge_coverage, uniform_walks

    g = graph.digraph()
    leaves = sum(1 for node in g if g.out_degree(node) == 0)

    def nodes(_, paths):
        return len({node for path in paths for node in path}) / len(g)

    def mean(measure, walks, n):
        return statistics.mean(measure(graph, walks(graph, n, s)) for s in range(COVERAGE_SEEDS))

    sizes = [*((n, n) for n in SIZES), ("L", leaves)]
    uniform = {key: mean(edge_coverage, uniform_walks, n) for key, n in sizes}
    uniform_nodes = mean(nodes, uniform_walks, leaves)
    ratios: dict[str, dict[int | str, float]] = {}
    for name, walks in WALKS.items():
        cells = []
        ratios[name] = {}
        for key, n in sizes:
            w, u = mean(edge_coverage, walks, n), uniform[key]
            ratios[name][key] = w / u
            cells.append(f"{w:.2f}/{u:.2f}={w / u:.2f}x")
        node_ratio = mean(nodes, walks, leaves) / uniform_nodes
        head = f"{label:<16}{len(g):>6}{g.number_of_edges():>6}{leaves:>7}" if name == "weighted" else ""
        print(f"  {head:<35}{name:>9}" + "".join(f"{c:>20}" for c in cells) + f"{node_ratio:>10.2f}x")
    return ratios


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
        calibrate_threshold,
        embedding_similarity,
        reply_threshold,
        score_tests,
        table2,
        threshold_note,
    )
    from evalcore.generators.procedure.paths import has_branches
    from evalcore.inputs import import_project
    from evalcore.items.store_ops import list_conversations, list_tests
    from evalcore.llm.client import ModelClient
    from evalcore.store import Store

    started, cpu = time.perf_counter(), time.process_time()
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

        print(
            f"\nCoverage, weighted walk (Algorithm 1) and coverage-directed walk / uniform random walk, "
            f"mean of {COVERAGE_SEEDS} seeds:"
        )
        print(
            f"  {'graph':<16}{'nodes':>6}{'edges':>6}{'leaves':>7}{'walk':>9}"
            + "".join(f"{f'edges n={n}':>20}" for n in (*SIZES, "L"))
            + f"{'nodes n=L':>11}"
        )
        ratios: dict[str, dict[int | str, list[float]]] = {}
        for g in graphs:
            noisy = g.noisy_graph
            if noisy is None or not has_branches(noisy):
                continue
            for walk, by_n in _coverage_rows(g.procedure, noisy).items():
                for n, ratio in by_n.items():
                    ratios.setdefault(walk, {}).setdefault(n, []).append(ratio)
        means = {walk: {n: statistics.mean(r) for n, r in by_n.items()} for walk, by_n in ratios.items()}
        for walk, by_n in means.items():
            print(f"  mean edge ratio, {walk}: " + ", ".join(f"n={n} {m:.2f}x" for n, m in by_n.items()))
        # reference shapes where every edge is a choice: full trees, and a star (Algorithm 1's best case)
        for label, shape in (("tree 2^4", (4, 2)), ("tree 4^2", (2, 4)), ("star 10", (1, 10))):
            _coverage_rows(label, _full_tree(*shape))
        # the goal on the sample's graphs: the best mean ratio over n, and how many graphs reach 1.3x there
        verdicts = []
        for walk, label in (("weighted", "weighted walk (seed)"), ("coverage", "coverage-directed walk")):
            best = max(means[walk], key=means[walk].get)
            top, reached = means[walk][best], sum(r >= 1.3 for r in ratios[walk][best])
            verdicts.append(
                f"{label} {top:.2f}x {'met' if top >= 1.3 else 'NOT met'} "
                f"(n={best}; {reached}/{len(ratios[walk][best])} graphs >= 1.3x)"
            )
        print("  goal >= 1.3x, best mean edge ratio: " + "; ".join(verdicts))
        k = 10
        print(
            f"  ceiling on the star at n={k} if no child were drawn twice (sampling without replacement): "
            f"1 / (1 - (1 - 1/{k})^{k}) = {1 / (1 - (1 - 1 / k) ** k):.2f}x"
        )

        llm = ModelClient(store, pid)
        model = llm.registry.resolve("embedding", None)[2]
        similarity = embedding_similarity(llm)

        pairs = [json.loads(line) for line in REPLY_PAIRS.read_text(encoding="utf-8").splitlines()]
        expected = [p["expected"] for p in pairs]
        pos = np.array(similarity(expected, [p["paraphrase"] for p in pairs]))
        neg = np.array(similarity(expected, [p["wrong"] for p in pairs]))
        cal = calibrate_threshold(pos.tolist(), neg.tolist())
        cut, calibrated = reply_threshold(model)
        print(f"\nCorrect-reply threshold on {model}, {len(pairs)} hand-written pairs ({REPLY_PAIRS.name}):")
        print(
            f"  correct paraphrase cosine {cal.positive[0]:.2f}-{cal.positive[1]:.2f}, "
            f"median {np.median(pos):.2f}"
        )
        print(
            f"  wrong reply cosine {cal.negative[0]:.2f}-{cal.negative[1]:.2f}, median {np.median(neg):.2f}"
        )
        print(f"  best cut {cal.threshold:.2f}: accuracy {cal.accuracy:.2f}, F1 {cal.f1:.2f}")
        hits = ((pos >= cut).sum() + (neg < cut).sum()) / (len(pos) + len(neg))
        print(
            f"  threshold used {threshold_note(cut, model)}: accuracy {hits:.2f} (the seed: BERTScore 0.55)"
        )
        if not calibrated:
            print(
                f"  WARNING: {model} has no calibrated threshold; add {cal.threshold:.2f} to REPLY_THRESHOLDS"
            )

        tools = store.tools(pid)
        print(f"\nTable 2 (percent [95% Wilson]), {len(tests)} tests, {len(kept)} conversations:")
        print(f"  {'agent':<8}" + "".join(f"{m:>22}" for m in METRICS))
        for agent in (DemoAgent(store.procedures(pid), tools, args.seed), OracleAgent(tests), NullAgent()):
            counts = table2(score_tests(play(tests, agent, tools), similarity, cut), cut)
            print(f"  {agent.name:<8}" + "".join(f"{_pct(*counts[m]):>22}" for m in METRICS))
        store.close()
    print(f"\nwall {time.perf_counter() - started:.1f} s, CPU {time.process_time() - cpu:.1f} s")


if __name__ == "__main__":
    main()
