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


def run_name(run: Run) -> str:
    """A run's name; a run recorded before runs had names by its target, start and judge (never its
    id, which pages do not show)."""
    if run.params.get("name"):
        return str(run.params["name"])
    judge = run.judge or run.params.get("judge_requested") or "the judge role"
    return f"{run.target or 'no target'} · {run.started_at:%Y-%m-%d %H:%M} · judged by {judge}"


def run_label(run: Run) -> str:
    """A run as a picker names it: name, target, judge, start, status and id, each as the store has it now
    (the judge asked for until the run records the one it chose; 'queued' for a run no worker has
    started). What the name already says is not said twice: a default name ('demo · gpt-4o ·
    2026-11-28') is followed by the judge, the time of the start and the status only, which keeps the
    label short enough for a half-width picker."""
    judge = run.judge or run.params.get("judge_requested") or "the judge role"
    status = "queued" if run.status == RunStatus.pending else run.status.value
    name = run.params.get("name")
    said = set(str(name).split(" · ")) if name else set()
    day, time = f"{run.started_at:%Y-%m-%d}", f"{run.started_at:%H:%M}"
    parts = [
        *([] if (run.target or "-") in said else [run.target or "-"]),
        f"judged by {judge}",
        time if day in said else f"{day} {time}",
        status,
    ]
    prefix = f"{name}: " if name else ""  # runs recorded before runs had names show as they did
    return f"{prefix}{' · '.join(parts)} ({run.id})"
