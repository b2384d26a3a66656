"""What a worker process calls: `resume(url, run_id)` opens the store and resumes the run's job.

Every job records, in its run's parameters, the function that resumes it (`job`: 'module:function',
called as function(store, run_id)), so a worker needs nothing but the store's URL and the run's id; it
imports the job's module only then, and this package knows no job by name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.store import Store

ENTRY = "job"  # the run parameter naming the function that resumes the run


def entry_point(function: Callable[[Store, str], Any]) -> dict[str, str]:
    """The run parameter that names `function` as the one resuming the run."""
    return {ENTRY: f"{function.__module__}:{function.__qualname__}"}


def resume(url: str, run_id: str) -> Any:
    """Open the store at `url` and resume run `run_id` with its job's function; return what it returns."""
    store = Store(url)
    try:
        target = store.run(run_id).params.get(ENTRY)
        if not target:
            raise EvalcoreError(f"run {run_id} records no job function to resume it with")
        module, _, name = target.partition(":")
        function = getattr(importlib.import_module(module), name)
        return function(store, run_id)
    finally:
        store.close()
