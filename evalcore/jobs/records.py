"""A job's record: the one way every job (generation, simulation, runs against a target, selection, maps,
imports of other tools' runs) is recorded in the store, so each carries its entry point, its progress
total and one code version, stamped the same way."""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from evalcore import __version__
from evalcore.jobs.control import PROGRESS_TOTAL
from evalcore.jobs.entry import entry_point
from evalcore.models import Run
from evalcore.store import Store
from evalcore.store.store import new_id


@functools.cache
def code_version() -> str:
    """evalcore's version, plus the git commit when running from a checkout ('0.1.0+g54e86e9')."""
    root = Path(__file__).resolve().parents[2]
    try:
        sha = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return __version__
    return f"{__version__}+g{sha}" if sha else __version__


def create(
    store: Store,
    project_id: str,
    kind: str,
    params: dict[str, Any],
    *,
    entry: Callable[[Store, str], Any] | None = None,
    total: int | None = None,
    target: str | None = None,
    judge: str | None = None,
    budget: dict[str, float] | None = None,
    warnings: Iterable[str] = (),
    pending: bool = True,
) -> Run:
    """Record a new job of `kind` in project `project_id` and return it.

    `entry` is the function a worker resumes it with (`function(store, run_id)`; none for a job done in
    one go, such as a selection or an import); `total` the number of units its progress counts. A job is
    recorded `pending` (a worker or the caller starts it) unless `pending=False` (the caller works it now).
    """
    params = dict(params)
    if entry is not None:
        params.update(entry_point(entry))
    if total is not None:
        params[PROGRESS_TOTAL] = total
    run = Run(
        id=new_id("run"),
        kind=kind,
        params=params,
        target=target,
        judge=judge,
        budget=budget or {},
        warnings=list(warnings),
        code_version=code_version(),
    )
    return store.start_run(project_id, run, pending=pending)
