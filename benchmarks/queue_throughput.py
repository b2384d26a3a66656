"""Throughput of a run split over 1, 2 and 4 worker processes through the queue (issue 16).

Run: .venv/bin/python benchmarks/queue_throughput.py [--turns 2000] [--workers 1,2,4] [--concurrency 4]

A run of `turns` turns (conversations of 5 turns) against the local fake API server answering in 200 ms,
judge offline, on a SQLite store with its queue beside it. For each worker count N, N `evalcore worker`
processes are started, the run is queued for N of them (`enqueue(store, run_id, workers=N)`: they share its
units by their claims), and the turns/s are measured from the first turn committed to the run's end (the
workers' start-up, ~2-10 s of imports, left out) and from the enqueue. The ideal is N x concurrency turns
in flight, each taking 0.2 s: N x concurrency / 0.2 turns/s; the ratio to it is printed.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from llm_server import LLMServer  # noqa: E402
from runs_support import conversation  # noqa: E402

from evalcore.items.store_ops import add_conversation  # noqa: E402
from evalcore.jobs import progress  # noqa: E402
from evalcore.jobs.queue import enqueue  # noqa: E402
from evalcore.models import RunStatus, Target  # noqa: E402
from evalcore.runs import create_run  # noqa: E402
from evalcore.store import Store  # noqa: E402
from evalcore.targets import save_target  # noqa: E402

LATENCY, TURNS_PER_CONVERSATION = 0.2, 5


def measure(server: LLMServer, turns: int, workers: int, concurrency: int, folder: Path) -> None:
    url = f"sqlite:///{folder / f'store-{workers}.db'}"
    store = Store(url)
    store.create_project("p1", "Throughput")
    for i in range(turns // TURNS_PER_CONVERSATION):
        qa = [(f"question {j} of {i}?", "an answer", "SINGLE-DOC", []) for j in range(TURNS_PER_CONVERSATION)]
        add_conversation(store, "p1", conversation(f"c{i}", None, [], qa))
    config = {"base_url": server.openai_base_url, "model": "gpt-4o-mini", "cache": False, "max_tokens": 20}
    save_target(store, "p1", Target(name="bot", kind="openai", config=config))
    run_id = create_run(store, "p1", "bot", judge="offline", concurrency=concurrency).id
    env = {k: v for k, v in os.environ.items() if k not in ("EVALCORE_OFFLINE", "EVALCORE_QUEUE_URL")}
    env["PYTHONPATH"] = str(ROOT)
    command = [sys.executable, "-m", "evalcore", "worker", "--db", url, "--workers", "1"]
    processes = [
        subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True, stderr=subprocess.DEVNULL)
        for _ in range(workers)
    ]
    try:
        queued = time.monotonic()
        enqueue(store, run_id, workers=workers)
        first = None
        while (run := store.run(run_id)).status not in (
            RunStatus.finished,
            RunStatus.failed,
            RunStatus.stopped,
        ):
            if first is None and progress(store, run)[0] > 0:
                first = time.monotonic()
            time.sleep(0.05)
        end = time.monotonic()
        done, total = progress(store, run)
        assert run.status == RunStatus.finished and done == total == turns, (run.status, done, total)
        steady = (turns - 1) / (end - first) if first else float("nan")
        ideal = workers * concurrency / LATENCY
        wall = end - queued
        print(
            f"{workers} worker(s): {steady:6.1f} turns/s from the first turn ({steady / ideal:.0%} of the "
            f"ideal {ideal:.0f}), {turns / wall:6.1f} turns/s from the enqueue ({wall:.1f} s)",
            flush=True,
        )
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            process.wait(timeout=30)
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--concurrency", type=int, default=4, help="turns in flight per worker")
    args = parser.parse_args()
    server = LLMServer(latency=LATENCY).start()
    print(f"{args.turns} turns, {LATENCY * 1000:.0f} ms per reply, concurrency {args.concurrency} per worker")
    with tempfile.TemporaryDirectory() as folder:
        for workers in (int(n) for n in args.workers.split(",")):
            measure(server, args.turns, workers, args.concurrency, Path(folder))


if __name__ == "__main__":
    main()
