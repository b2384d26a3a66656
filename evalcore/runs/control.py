"""Controlling runs from a page or a shell: watch progress, code version (a page starts a run through the
queue: evalcore.jobs.queue).

Stopping is the job mechanism's (`evalcore.jobs.request_stop`: a column of the run every worker reads
between turns, in any process). Progress is read from the store (finished turns / total turns), so a
page shows it whoever plays the run, and a reopened tab picks it up.
"""

from __future__ import annotations

from evalcore.jobs import progress
from evalcore.models import Run, RunStatus
from evalcore.store import Store


def run_progress(store: Store, run_id: str) -> tuple[int, int]:
    """(turns done, turns in the run)."""
    return progress(store, store.run(run_id))


def run_label(run: Run) -> str:
    """A run as a picker names it: target, judge, start, status and id, each as the store has it now (the
    judge asked for until the run records the one it chose; 'queued' for a run no worker has started)."""
    judge = run.judge or run.params.get("judge_requested") or "the judge role"
    status = "queued" if run.status == RunStatus.pending else run.status.value
    name = run.params.get("name")
    prefix = f"{name}: " if name else ""  # runs recorded before runs had names show as they did
    started = f"{run.started_at:%Y-%m-%d %H:%M}"
    return f"{prefix}{run.target or '-'} · judged by {judge} · {started} · {status} ({run.id})"
