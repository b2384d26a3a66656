"""Report aggregation speed over stored judgments, and run throughput against a local model server.

Run: .venv/bin/python benchmarks/reports.py   (~1 min; --quick: 10,000 judgments, 20 conversations)

1. A SQLite store holding 100,000 judged turns of one run (14,286 conversations of 7 turns, 30 specs, 10% of
   the conversations annotated): time to load the judged-turn frame (indexed columns, spec labels, tiers
   derived from annotations) and to compute every report table (by spec, error type, number of documents,
   query type, single/multi-turn, tier, with totals and Wilson intervals). Goal: aggregation < 1 s. The
   same at 10,000 shows how it grows.
2. A run of 50 doc-QA conversations (7 turns, generated offline on the sample project) against the local
   OpenAI-compatible test server answering in 200 ms, 8 conversations at once, offline judge: turns per
   second against the limit 8 / 0.2 s = 40 turns/s (a conversation's turns are sequential by nature).
   Then the same with an LLM judge on the same server: two calls per turn, limit 20 turns/s.
"""

from __future__ import annotations

import logging
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import sqlalchemy as sa  # noqa: E402
from llm_server import LLMServer  # noqa: E402

from evalcore.models import Annotation, Provenance, Run, Target  # noqa: E402
from evalcore.models.common import now_utc  # noqa: E402
from evalcore.reports import build_report, judged_turns  # noqa: E402
from evalcore.reports.tables import all_tables  # noqa: E402
from evalcore.runs import create_run, execute_run  # noqa: E402
from evalcore.specs.drafts import SpecDraft  # noqa: E402
from evalcore.specs.store_ops import add_specs  # noqa: E402
from evalcore.store import Store  # noqa: E402
from evalcore.store import schema as t  # noqa: E402
from evalcore.targets import save_target  # noqa: E402

QUERY_TYPES = ["SINGLE-DOC", "MULTI-DOC", "PRE-FILLER", "FILLER", "SYNTHESIS", "SINGLE-DOC", "SYNTHESIS"]
ERRORS = [
    "wrong_fact",
    "incomplete",
    "hallucinated",
    "failed_to_say_cannot_answer",
    "ignored_context",
    "crash",
]
TURNS = 7


def fill(store: Store, pid: str, run_id: str, n: int, specs: list[str], seed: int) -> None:
    """n judged turns of one run over n/7 conversations (items created, 10% of them annotated)."""
    rng = random.Random(seed)
    store.start_run(pid, Run(id=run_id, kind="run", target="bench-bot", params={"project_id": pid}))
    conversations = [f"{run_id}-c{i}" for i in range((n + TURNS - 1) // TURNS)]
    stamp = now_utc()
    with store.write() as conn:
        for cid in conversations:
            store.add_item(pid, "conversation", {"id": cid, "turns": []}, "offline", item_id=cid, conn=conn)
        for cid in conversations[::10]:
            label = "accept" if rng.random() < 0.7 else "reject"
            verdict = Annotation(item_kind="conversation", item_id=cid, label=label, author="ann")
            store.annotate(cid, [verdict], "ann", 1, conn=conn)
        rows = []
        for i in range(n):
            cid, k = conversations[i // TURNS], i % TURNS
            roll = rng.random()
            score = None if roll < 0.01 else (0.0 if roll < 0.45 else 1.0)
            rows.append({
                "run_id": run_id, "conversation_id": cid, "test_id": None, "turn_index": 2 * k + 1,
                "score": score, "error_type": rng.choice(ERRORS) if score == 0.0 else None,
                "spec_id": specs[(i // TURNS) % len(specs)], "n_documents": 2 + (i // TURNS) % 4,
                "query_type": QUERY_TYPES[k], "multi_turn": k > 0, "item_judge_passed": rng.random() < 0.8,
                "judge": "offline", "created_at": stamp,
                "body": {"question": f"question {i} " * 6, "expected": "expected answer " * 8,
                         "reply": "the reply of the target " * 8, "rationale": "why " * 20},
            })  # fmt: skip
            if len(rows) == 5000:
                conn.execute(sa.insert(t.judgments), rows)
                rows = []
        if rows:
            conn.execute(sa.insert(t.judgments), rows)


def aggregation(sizes: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/bench.db")
        store.create_project("bench", "Benchmark")
        drafts = [
            SpecDraft(scenario=f"Spec {i}", given="g", when="w", then="t", category="policy")
            for i in range(30)
        ]
        specs = add_specs(store, "bench", drafts, Provenance(producer="offline"))
        print("1. report aggregation from a SQLite store (best and median of 5)")
        for n in sizes:
            started = time.perf_counter()
            fill(store, "bench", f"run-{n}", n, specs, seed=n)
            print(f"   {n:>7,} judgments: stored in {time.perf_counter() - started:.1f} s")
            loads, tables, totals = [], [], []
            for _ in range(5):
                started = time.perf_counter()
                frame = judged_turns(store, [f"run-{n}"])
                loaded = time.perf_counter()
                all_tables(frame, total=True)
                done = time.perf_counter()
                loads.append(loaded - started)
                tables.append(done - loaded)
                started = time.perf_counter()
                build_report(store, [f"run-{n}"], tiers="silver+gold")
                totals.append(time.perf_counter() - started)
            assert len(frame) == n
            show = lambda xs: f"{min(xs) * 1000:6.0f} ms (median {statistics.median(xs) * 1000:.0f})"  # noqa: E731
            print(f"      load judged turns + tiers  {show(loads)}")
            print(f"      aggregate all 6 tables     {show(tables)}   goal < 1000 ms")
            print(f"      build_report (gold+silver) {show(totals)}")


def throughput(conversations: int) -> None:
    from evalcore.generators.doc_qa.job import generate_conversations
    from evalcore.inputs import import_project
    from evalcore.specs.generation import generate_specs

    server = LLMServer(latency=0.2).start()
    os.environ.update(OPENAI_API_KEY="sk-benchmark", OPENAI_BASE_URL=server.openai_base_url)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/run.db")
        pid = import_project(store, ROOT / "data" / "sample").project_id
        os.environ["EVALCORE_OFFLINE"] = "1"  # conversations generated offline; the run itself is online
        generate_specs(store, pid, 10, batch=5)
        generate_conversations(
            store, pid, specs="all", per_spec=max(1, conversations // 10), turns=TURNS, d=3
        )
        del os.environ["EVALCORE_OFFLINE"]
        config = {"base_url": server.openai_base_url, "model": "bench-model", "cache": False}
        save_target(store, pid, Target(name="bot", kind="openai", config=config))
        warm = create_run(store, pid, "bot", judge="offline", limit=1)
        execute_run(store, warm.id)  # SDK import and first connection, outside the timing
        print(
            f"2. run throughput: {conversations} conversations x {TURNS} turns, "
            "server latency 200 ms, concurrency 8"
        )
        for judge, calls in (("offline", 1), ("openai/gpt-4o-mini", 2)):
            run = create_run(store, pid, "bot", judge=judge, concurrency=8, limit=conversations)
            server.calls.clear()
            started = time.perf_counter()
            outcome = execute_run(store, run.id)
            elapsed = time.perf_counter() - started
            limit = 8 / (0.2 * calls)
            rate = outcome.done / elapsed
            waves = -(-conversations // 8)  # a conversation's turns are sequential: the last wave runs alone
            best = outcome.done / (waves * TURNS * 0.2 * calls)
            print(
                f"   judge {judge:<19} {outcome.done} turns in {elapsed:.2f} s: {rate:.1f} turns/s vs limit "
                f"{limit:.0f} ({rate / limit:.0%}); {len(server.calls)} server calls, "
                f"max {server.max_in_flight} in flight, {outcome.crashed} crashes"
            )
            print(
                f"      best possible in {waves} waves of 8 conversations: {best:.1f} turns/s "
                f"({rate / best:.0%} of it)"
            )
            server.max_in_flight = 0
    server.stop()


def main() -> None:
    logging.disable(logging.INFO)  # the SDK's HTTP client logs every request at INFO
    quick = "--quick" in sys.argv
    aggregation([10_000] if quick else [10_000, 100_000])
    throughput(20 if quick else 50)


if __name__ == "__main__":
    main()
