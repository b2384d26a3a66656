"""Doc-QA generation on the sample project (seed 000, Algorithm 2): graph, chains, query types, speed,
grounding, and model calls through the local fake server (n conversations, then 0 on a re-run).

    .venv/bin/python benchmarks/doc_qa.py            # 10 specs x 10 conversations offline
    .venv/bin/python benchmarks/doc_qa.py --quick    # 4 specs x 3 conversations
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from llm_server import LLMServer  # noqa: E402
from test_doc_qa_llm import distinct_replies  # noqa: E402

from evalcore.documents.chains import count_chains  # noqa: E402
from evalcore.documents.graph import graph_stats  # noqa: E402
from evalcore.generators.doc_qa.generate import document_input, qa_pairs  # noqa: E402
from evalcore.generators.doc_qa.graph_build import build_document_graph  # noqa: E402
from evalcore.generators.doc_qa.job import generate_conversations  # noqa: E402
from evalcore.generators.doc_qa.rules import grounded_share  # noqa: E402
from evalcore.generators.doc_qa.schema import is_cannot_answer  # noqa: E402
from evalcore.generators.doc_qa.specs import system_description  # noqa: E402
from evalcore.inputs import import_project  # noqa: E402
from evalcore.items.store_ops import list_conversations  # noqa: E402
from evalcore.llm import ModelClient  # noqa: E402
from evalcore.specs.generation import generate_specs  # noqa: E402
from evalcore.store import Store  # noqa: E402


def _project(folder: Path, name: str, specs: int) -> tuple[Store, str]:
    store = Store(f"sqlite:///{folder / name}")
    project_id = import_project(store, ROOT / "data" / "sample").project_id
    generate_specs(store, project_id, m=specs, batch=specs)
    return store, project_id


def offline(folder: Path, specs: int, per_spec: int) -> None:
    store, project_id = _project(folder, "offline.db", specs)
    docs = store.documents(project_id)
    _, ignore = system_description(store, project_id)
    built = build_document_graph(ModelClient(store, project_id), docs, ignore=ignore)
    stats = graph_stats(built.graph)
    print("Document graph (text and table documents; policies are context), offline entity extractor")
    print(f"  nodes: {stats['nodes']}   edges: {stats['edges']}   components: {stats['components']}")
    print("Chains (simple paths, deduplicated) over the whole graph, by length d")
    print("  " + "   ".join(f"d={d}: {count_chains(built.graph, d)}" for d in range(1, 7)))

    started = time.perf_counter()
    outcome = generate_conversations(store, project_id, specs="all", per_spec=per_spec)
    elapsed = time.perf_counter() - started
    conversations = [v.conversation for v in list_conversations(store, project_id)]
    types: Counter[str] = Counter()
    for conversation in conversations:
        for question, answer in qa_pairs(conversation):
            types["CANNOTANSWER" if is_cannot_answer(answer.content) else question.query_type or "?"] += 1
    total = sum(types.values())
    rate = outcome.added / elapsed
    print(f"\nOffline generation: {outcome.added} conversations ({specs} specs x {per_spec}, d=5, L=7), "
          f"verification included: {elapsed:.1f} s, {rate:.1f} conversations/s")  # fmt: skip
    print("Share of pairs per query type (the unanswerable pair counted as CANNOTANSWER)")
    for name, n in types.most_common():
        print(f"  {name:<13}{n:>6}  {n / total:6.1%}")
    inputs = {d.id: document_input(d) for d in docs}
    good = sum(grounded_share(c, inputs)[0] for c in conversations)
    answerable = sum(grounded_share(c, inputs)[1] for c in conversations)
    print(f"Expected answers whose grounding text (sentence or table cells) contains the answer: "
          f"{good}/{answerable} = {good / answerable:.1%}")  # fmt: skip
    tiers = Counter(c.tier.value for c in conversations)
    fired = sum(c.metadata["verification"]["correction"]["fired"] for c in conversations)
    print(f"Tiers: {dict(tiers)}; corrections fired on {fired} answer(s); messages: {len(outcome.messages)}")


def with_server(folder: Path, per_spec: int) -> None:
    server = LLMServer().start()
    server.responder = distinct_replies  # each conversation differs, as a model's would
    os.environ.update(
        {
            "OPENAI_API_KEY": "sk-benchmark",
            "OPENAI_BASE_URL": server.openai_base_url,
            "ANTHROPIC_API_KEY": "sk-ant-benchmark",
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        }
    )
    os.environ.pop("EVALCORE_OFFLINE", None)
    store, project_id = _project(folder, "server.db", 1)
    prose = sum(d.kind.value == "text" for d in store.documents(project_id))
    params = {"specs": "all", "per_spec": per_spec, "model": "openai/gpt-4o-mini",
              "judge": "anthropic/claude-judge", "dense": False}  # fmt: skip
    print("\nWith the local fake model server (generator openai/gpt-4o-mini, judge anthropic/claude-judge)")
    first = generate_conversations(store, project_id, **params)
    calls = len(server.calls)
    print(f"  {first.added} conversations: {calls} model calls "
          f"(= {prose} entity extractions + {first.added} x 3: generation, correction, check)")  # fmt: skip
    again = generate_conversations(store, project_id, **params)
    print(f"  a new run with the same parameters: {len(server.calls) - calls} model calls "
          f"({again.added} conversations, from the cache)")  # fmt: skip
    before = len(server.calls)
    resumed = generate_conversations(store, project_id, first.run.id)
    print(f"  resuming the finished run: {len(server.calls) - before} model calls, {resumed.added} new")
    server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 specs x 3 conversations")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the SDKs log every request; the figures are what matters here
    specs, per_spec = (4, 3) if args.quick else (10, 10)
    with tempfile.TemporaryDirectory() as tmp:
        offline(Path(tmp), specs, per_spec)
        with_server(Path(tmp), per_spec)


if __name__ == "__main__":
    main()
