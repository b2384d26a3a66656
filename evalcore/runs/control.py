"""Controlling runs from a page or a shell: start in the background, watch progress, code version.

Stopping is the job mechanism's (`evalcore.jobs.request_stop`: a column of the run every worker reads
between turns, in any process). Progress is read from the store (finished turns / total turns), so a
page shows it whoever plays the run, and a reopened tab picks it up.
"""

from __future__ import annotations

import functools
import logging
import subprocess
import threading
from pathlib import Path
from typing import Any

from evalcore import __version__
from evalcore.jobs import progress
from evalcore.store import Store

log = logging.getLogger("evalcore.runs")
_ACTIVE: dict[str, threading.Thread] = {}
_ACTIVE_LOCK = threading.Lock()
_ERRORS: dict[str, str] = {}


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


def run_progress(store: Store, run_id: str) -> tuple[int, int]:
    """(turns done, turns in the run)."""
    return progress(store, store.run(run_id))


def is_active(run_id: str) -> bool:
    """True while this process plays the run in a background thread."""
    with _ACTIVE_LOCK:
        thread = _ACTIVE.get(run_id)
        return thread is not None and thread.is_alive()


def last_error(run_id: str) -> str | None:
    """Why the last background execution of a run in this process failed, if it did."""
    return _ERRORS.get(run_id)


def start_in_background(store: Store, run_id: str, **options: Any) -> threading.Thread:
    """Play (or resume) a run in a daemon thread of this process; a second start while it plays is a no-op.

    `options` go to `execute_run` (budget, concurrency, retry). The page watches it with `run_progress`.
    """
    from evalcore.runs.job import execute_run

    def play() -> None:
        try:
            execute_run(store, run_id, **options)
        except Exception as e:  # recorded on the run by execute_run; kept here for the page too
            _ERRORS[run_id] = f"{type(e).__name__}: {e}"
            log.exception("run %s failed", run_id)

    with _ACTIVE_LOCK:
        thread = _ACTIVE.get(run_id)
        if thread is not None and thread.is_alive():
            return thread
        _ERRORS.pop(run_id, None)
        thread = threading.Thread(target=play, name=f"evalcore-run-{run_id}", daemon=True)
        _ACTIVE[run_id] = thread
        thread.start()
    return thread


def wait_for(run_id: str, timeout: float | None = None) -> bool:
    """Wait for this process's background execution of a run to end; True when it has."""
    with _ACTIVE_LOCK:
        thread = _ACTIVE.get(run_id)
    if thread is None:
        return True
    thread.join(timeout)
    return not thread.is_alive()
