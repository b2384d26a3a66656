"""A worker process: huey's consumer on a store's queue, plus the sweep that resumes orphaned runs.

`evalcore worker` and `evalcore serve` call `run_worker`. The consumer forks `workers` processes, each
taking one task at a time (a job runs its units on its own threads); huey restarts a worker process
that died. On SIGTERM or Ctrl+C the job in flight releases its units and its run goes back to pending,
so the next worker resumes it (jobs/queue.py).
"""

from __future__ import annotations

import logging
import threading

from evalcore.jobs.queue import JobQueue, recover, recover_seconds
from evalcore.store import Store

log = logging.getLogger("evalcore.worker")


def run_worker(store_url: str, workers: int = 1, queue_url: str | None = None) -> None:
    """Consume the store's queue until a termination signal."""
    from huey.consumer import Consumer

    stop = threading.Event()

    class SweepingConsumer(Consumer):
        def start(self) -> None:
            super().start()  # forks the worker processes first: none inherits the sweep's thread
            threading.Thread(
                target=_sweep, args=(store_url, queue_url, stop), name="evalcore-sweep", daemon=True
            ).start()

    queue = JobQueue(store_url, queue_url)
    consumer = SweepingConsumer(queue.huey, workers=max(1, workers), worker_type="process", periodic=False)
    try:
        consumer.run()
    finally:
        stop.set()


def _sweep(store_url: str, queue_url: str | None, stop: threading.Event) -> None:
    """Every few seconds, enqueue the runs no live worker holds (own connections: the consumer's are its)."""
    store = Store(store_url)
    queue = JobQueue(store_url, queue_url)
    try:
        while True:
            try:
                if found := recover(store, queue):
                    log.warning("resuming run(s) whose worker is gone: %s", ", ".join(found))
            except Exception:  # a busy or restarting database: the next sweep tries again
                log.exception("could not sweep %s for orphaned runs", store.display_url)
            if stop.wait(recover_seconds()):
                return
    finally:
        store.close()
