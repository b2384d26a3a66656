"""Annotation workbench speed on a SQLite store: saving a turn verdict, the queue's first page and opening
one conversation (library calls and whole-page renders with AppTest), at 1,000 and 10,000 conversations
of 10 turns each (10,000 / 100,000 turns), so the growth is visible.

Goals (issue 7): p95 of saving a turn verdict < 50 ms; queue first page and opening a conversation < 1 s.
Each store holds the sample project, the conversations, assignments to three annotators with overlap 2
and 10% of the conversations already reviewed by two annotators, so the derived tables are not empty.

    .venv/bin/python benchmarks/annotation.py            # 1,000 and 10,000 (~2-3 min)
    .venv/bin/python benchmarks/annotation.py --sizes 1000
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalcore.inputs import import_project  # noqa: E402
from evalcore.review import (  # noqa: E402
    ItemVerdict,
    QueueFilter,
    TurnVerdict,
    assign_items,
    open_item,
    queue_page,
    refresh_states,
    save_review,
)
from evalcore.store import DATABASE_URL_ENV, Store  # noqa: E402
from tests.annotation_data import add_conversations  # noqa: E402

ANNOTATORS = ["ann", "bea", "cy"]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def build(url: str, n: int) -> tuple[Store, str, list[str], dict[str, float]]:
    """A store with `n` conversations, assignments and some reviews; how long each step took."""
    times = {}
    store = Store(url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    start = time.perf_counter()
    ids = []
    for offset in range(0, n, 1000):
        ids += add_conversations(store, pid, min(1000, n - offset), pairs=5, start=offset)
    times["add conversations"] = time.perf_counter() - start
    start = time.perf_counter()
    refresh_states(store, pid)
    times["first derivation of every state"] = time.perf_counter() - start
    assign_items(store, pid, ANNOTATORS, 2, "lead", seed=0)
    rng = random.Random(0)
    for item in rng.sample(ids, n // 10):
        for who in open_item(store, item).assignees:
            verdict = (
                ItemVerdict(label="accept")
                if rng.random() < 0.8
                else ItemVerdict(label="reject", reason="unsafe")
            )
            save_review(store, item, who, open_item(store, item).version, [], verdict)
    return store, pid, ids, times


def save_latencies(store: Store, ids: list[str], samples: int) -> list[float]:
    """Seconds per save of one turn verdict (the version read beforehand, as the page holds it)."""
    rng = random.Random(1)
    latencies = []
    for _ in range(samples):
        item = rng.choice(ids)
        version = open_item(store, item).version
        label = rng.choice(["accept", "reject"])
        verdict = TurnVerdict(turn_index=rng.choice([1, 3, 5, 7, 9]), label=label,
                              reason="not grounded" if label == "reject" else None)  # fmt: skip
        start = time.perf_counter()
        save_review(store, item, rng.choice(ANNOTATORS), version, [verdict])
        latencies.append(time.perf_counter() - start)
    return latencies


def page_times(url: str, item: str, repeats: int) -> tuple[list[float], list[float]]:
    """AppTest renders of the Annotate page: the queue (first page) and one open conversation."""
    from streamlit.testing.v1 import AppTest

    os.environ[DATABASE_URL_ENV] = url
    queue, conversation = [], []
    for _ in range(repeats):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.session_state["user_name"] = "ann"
        at.run()
        start = time.perf_counter()
        at.switch_page("pages/annotate.py").run()
        queue.append(time.perf_counter() - start)
        assert not at.exception and len(at.dataframe[0].value) == 25, at.exception
        at.query_params["item"] = item
        start = time.perf_counter()
        at.run()
        conversation.append(time.perf_counter() - start)
        assert not at.exception and any(b.label == "Save & next" for b in at.button)
    return queue, conversation


def run(n: int, samples: int, repeats: int, folder: Path) -> dict[str, str]:
    url = f"sqlite:///{folder / f'annotation-{n}.db'}"
    store, pid, ids, times = build(url, n)
    print(f"\n== {n:,} conversations / {10 * n:,} turns (SQLite) ==")
    for label, seconds in times.items():
        print(f"  {label:<38}{seconds:8.2f} s")
    saves = save_latencies(store, ids, samples)
    print(f"  save a turn verdict ({samples} saves)     p50 {ms(statistics.median(saves))}"
          f"   p95 {ms(percentile(saves, 0.95))}   max {ms(max(saves))}")  # fmt: skip
    lib_queue, lib_open = [], []
    todo = QueueFilter(needs_review_by="ann")
    for _ in range(repeats):
        start = time.perf_counter()
        queue_page(store, pid, todo, limit=25, user="ann")
        lib_queue.append(time.perf_counter() - start)
        start = time.perf_counter()
        open_item(store, ids[len(ids) // 2], "ann")
        lib_open.append(time.perf_counter() - start)
    print(f"  library: queue_page (25 rows, mine)     median {ms(statistics.median(lib_queue))}")
    print(f"  library: open_item                      median {ms(statistics.median(lib_open))}")
    queue, conversation = page_times(url, ids[len(ids) // 2], repeats)
    for label, values in (("queue first page", queue), ("open one conversation", conversation)):
        print(f"  AppTest: {label:<31}first {ms(values[0])}   median {ms(statistics.median(values))}"
              f"   max {ms(max(values))}")  # fmt: skip
    store.close()
    return {
        "save p95": ms(percentile(saves, 0.95)),
        "queue page": ms(statistics.median(queue)),
        "open conversation": ms(statistics.median(conversation)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated numbers of conversations")
    parser.add_argument("--saves", type=int, default=300, help="turn verdicts saved per size")
    parser.add_argument("--repeats", type=int, default=5, help="renders per page measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        summary = {n: run(n, args.saves, args.repeats, Path(tmp)) for n in map(int, args.sizes.split(","))}
    print("\n== summary (goals: save p95 < 50 ms, pages < 1 s) ==")
    for n, figures in summary.items():
        print(f"  {n:>7,} conversations: " + ", ".join(f"{k} {v.strip()}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
