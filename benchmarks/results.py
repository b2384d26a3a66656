"""Speed of the results view and of comparing two runs item by item (issue 27) at 100,000 judged turns each,
CPU and wall.

Run: .venv/bin/python benchmarks/results.py   (--quick: 10,000 judgments per run; --tests: the second shape;
     --browser [--repeat N]: the page in headless Chromium instead, median of N fresh servers, see below)

A SQLite store with two runs of one target over the same 14,286 conversations of 7 turns (30 specs, 10% of
the conversations annotated, 30% of those rejected); the second run flips 2% of the first run's verdicts.
Derives the items' tiers first (timed on its own), then times `compare_to_baseline` (judged turns of both
runs, tiers, pairing, per-spec McNemar) cold (the first call in the process) and warm (best and median of
5): once with neither run read before (what a compare keeps between calls cleared each time), once with
both runs kept from an earlier compare, as a server has them, then the
results view's library query (`reports.results.results_page`) over both runs: the first page of 50 rows,
and a filtered page (failures of one spec matching a search word, page 3). Goal: under 1 s warm. The
baseline, timed the same way in the same run: the least any compare must do, the two runs' scored turns
read from SQLite (`reports.compare._fetch_all`); every figure is also given as a ratio to it.

With --browser, the Results page in headless Chromium on the same store, served as `evalcore serve` serves
it (benchmarks/browser.py's probe and CPU meter): a fresh server, the page opened (cold), then the baseline
picked in "Compare with a baseline" (the first compare this server does; the open page has read ahead the
run and the one before it, the baseline picked, as it does for any run), each timed from the navigation
or the pick until Streamlit is idle and every table drawn, with the CPU seconds of the server and of the
browser beside the wall time; the baseline is the empty two-page Streamlit app of benchmarks/browser.py
served the same way (cold for the open, warm for the pick), and each time is also estimated from CPU (the
baseline's wall plus the CPU seconds spent above it: load inflates wall time, hardly CPU time). Then the
server is restarted on the same port and the page opened again: a browser that has used the dashboard
before. A second baseline is the page's first screen with no store behind it (the same widgets and a
table of 50 rows, benchmarks/results_browser.py): what Streamlit costs for them alone. The items' tiers
are derived before (timed on their own), as a store in use has them. Goal: usable in under 2 s.

Two shapes, so no figure is tuned to one: by default doc-QA-like conversations (7 judged turns each, 30
specs); with --tests, 100,000 single-turn tests (tool-case-like: one judged expected turn each, no turn
index, 300 specs, tool_case generator), each its own item to pair and to look up a tier for.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import sqlalchemy as sa  # noqa: E402

from evalcore.items.state import refresh_states  # noqa: E402
from evalcore.models import Annotation, Provenance, Run, RunStatus  # noqa: E402
from evalcore.models.common import now_utc  # noqa: E402
from evalcore.reports.compare import (  # noqa: E402
    _PAIRING,
    _SIDES,
    _collection_paused,
    _fetch_all,
    compare_to_baseline,
)
from evalcore.reports.results import ResultFilters, results_page  # noqa: E402
from evalcore.specs.drafts import SpecDraft  # noqa: E402
from evalcore.specs.store_ops import add_specs  # noqa: E402
from evalcore.store import Store  # noqa: E402
from evalcore.store import schema as t  # noqa: E402

SHAPES = {  # judged turns per item, item kind, specs
    "conversations": (7, "conversation", 30),
    "tests": (1, "test", 300),
}
FLIP = 0.02  # share of verdicts the second run changes


def fill(store: Store, pid: str, n: int, specs: list[str], shape: str) -> None:
    """Two finished runs, 'base' and 'new', of n judged turns each over the same items."""
    per_item, kind, _ = SHAPES[shape]
    rng = random.Random(n)
    conversations = [f"c{i}" for i in range((n + per_item - 1) // per_item)]
    stamp = now_utc()
    generator = "tool_case" if kind == "test" else "doc_qa"
    with store.write() as conn:
        for cid in conversations:
            # A first question per item: the page calls an item by it (reports/item_titles.py).
            opening = [{"index": 0, "role": "user", "content": f"What does the policy say about case {cid}?"}]
            body = {"id": cid, "turns": opening}
            store.add_item(pid, kind, body, "offline", item_id=cid, generator=generator, conn=conn)
        for cid in conversations[::10]:
            label = "accept" if rng.random() < 0.7 else "reject"
            verdict = Annotation(item_kind=kind, item_id=cid, label=label, author="ann")
            store.annotate(cid, [verdict], "ann", 1, conn=conn)
    base_scores = [None if rng.random() < 0.01 else float(rng.random() >= 0.4) for _ in range(n)]
    new_scores = [s if s is None or rng.random() >= FLIP else 1.0 - s for s in base_scores]
    for run_id, scores in (("base", base_scores), ("new", new_scores)):
        store.start_run(pid, Run(id=run_id, kind="run", target="bench-bot", params={"project_id": pid}))
        rows = []
        with store.write() as conn:
            for i, score in enumerate(scores):
                k, item = i % per_item, conversations[i // per_item]
                rows.append({
                    "run_id": run_id, "conversation_id": item if kind != "test" else None,
                    "test_id": item if kind == "test" else None,
                    "turn_index": 2 * k + 1 if kind != "test" else None, "score": score,
                    "error_type": "wrong_fact" if score == 0 else None,
                    "spec_id": specs[(i // per_item) % len(specs)], "n_documents": 2,
                    "query_type": "SINGLE-DOC",
                    "multi_turn": k > 0, "item_judge_passed": True, "judge": "offline", "created_at": stamp,
                    "body": {"run_id": run_id, "judge": "offline", "question": f"question {i}",
                             "expected": "expected", "reply": "reply", "rationale": "why"},
                })  # fmt: skip
                if len(rows) == 5000:
                    conn.execute(sa.insert(t.judgments), rows)
                    rows = []
            if rows:
                conn.execute(sa.insert(t.judgments), rows)
        store.finish_run(run_id, RunStatus.finished)


def timed(call) -> tuple[float, float, int]:
    """(wall s, CPU s, size of the answer) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    size = call()
    return time.perf_counter() - wall, time.process_time() - cpu, size


def report(what: str, call, unit: str, base: float | None = None) -> float:
    """Time `call` cold, then warm (best and median of 5), and print both with CPU beside wall (and the
    warm CPU as a ratio to `base`, the baseline's); returns the best warm CPU seconds."""
    wall, cpu, size = timed(call)
    print(f"{what}, cold: wall {wall * 1000:.0f} ms, CPU {cpu * 1000:.0f} ms ({size:,} {unit})")
    walls, cpus = [], []
    for _ in range(5):
        wall, cpu, _ = timed(call)
        walls.append(wall)
        cpus.append(cpu)
    ratio = f", {min(cpus) / base:.1f}x the baseline's CPU" if base else ""
    print(
        f"{what}, warm: wall {min(walls) * 1000:.0f} ms (median {statistics.median(walls) * 1000:.0f}), "
        f"CPU {min(cpus) * 1000:.0f} ms (median {statistics.median(cpus) * 1000:.0f}){ratio}   goal < 1000 ms"
    )
    return min(cpus)


def read_both(store: Store) -> int:
    """The baseline: both runs' scored turns read from SQLite, as the compare reads them."""
    found = 0
    with store.read() as conn, _collection_paused():
        for run_id in ("new", "base"):
            found += len(_fetch_all(conn, _PAIRING.where(t.judgments.c.run_id == run_id)))
    return found


def compare_afresh(store: Store) -> int:
    """A compare of two runs no compare has read yet (none kept), in a warm process."""
    _SIDES.clear()
    return len(compare_to_baseline(store, "new", "base").flipped())


def main() -> None:
    n = 10_000 if "--quick" in sys.argv else 100_000
    shape = "tests" if "--tests" in sys.argv else "conversations"
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/bench.db")
        store.create_project("bench", "Benchmark")
        drafts = [
            SpecDraft(scenario=f"Spec {i}", given="g", when="w", then="t", category="c")
            for i in range(SHAPES[shape][2])
        ]
        specs = add_specs(store, "bench", drafts, Provenance(producer="offline"))
        started = time.perf_counter()
        fill(store, "bench", n, specs, shape)
        print(
            f"two runs of {n:,} judged turns each ({shape}) stored in {time.perf_counter() - started:.1f} s"
        )
        if "--browser" in sys.argv:
            from results_browser import browse

            # The tiers of the 14,286 items as a store in use has them (every page's first read after
            # annotations derives them): the page's cold open is then a fresh server's, not also the
            # store's first derivation ever, which is timed here on its own.
            wall, cpu, derived = timed(lambda: refresh_states(store, "bench"))
            print(f"tiers of {derived:,} items derived first: wall {wall:.2f} s, CPU {cpu:.2f} s")

            repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 2
            browse(store.url, repeat=repeat)
            return
        wall, cpu, derived = timed(lambda: refresh_states(store, "bench"))
        print(f"tiers of {derived:,} items derived first: wall {wall * 1000:.0f} ms, CPU {cpu * 1000:.0f} ms")
        base = report("baseline (the two runs read)", lambda: read_both(store), "turns read")
        report("compare, runs not read before", lambda: compare_afresh(store), "turns flipped", base)
        flipped = lambda: len(compare_to_baseline(store, "new", "base").flipped())  # noqa: E731
        report("compare, runs read by an earlier compare", flipped, "turns flipped", base)
        both = ["new", "base"]
        first = ResultFilters(run_ids=both)
        report(
            "results view, first page", lambda: results_page(store, "bench", first).total, "rows in all", base
        )
        narrow = ResultFilters(run_ids=both, verdict="fail", spec_id=specs[3], text="question 1")
        report(
            "results view, filtered page 3",
            lambda: results_page(store, "bench", narrow, offset=100).total,
            "rows kept",
            base,
        )


if __name__ == "__main__":
    main()
