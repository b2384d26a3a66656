"""Working a store's queue inside a test as `evalcore worker` would: page tests have no worker beside them."""

from __future__ import annotations

from typing import Any

from evalcore.jobs.queue import open_queue


def work_the_queue(store_url: str) -> list[dict[str, Any]]:
    """Take every task waiting in the store's queue and run it here, in order; return their results."""
    queue = open_queue(store_url)
    results = []
    while (task := queue.huey.dequeue()) is not None:
        results.append(queue.huey.execute(task))
    return results
