"""Controlling runs from a page or a shell: start in the background, stop, watch progress, code version.

A stop is a state in the store (status `stopped`, with who asked), not a signal to a process, so it
reaches a run played by another process or worker too: `execute_run` polls its run's status and stops
after the turns in flight. Progress is read from the store (finished units / total turns), so a page
shows it whoever plays the run, and a reopened tab picks it up.
"""

from __future__ import annotations

import functools
import logging
import subprocess
import threading
from pathlib import Path
from typing import Any

from evalcore import __version__
from evalcore.models import Run, RunStatus
from evalcore.models.common import now_utc
from evalcore.runs.store_ops import count_units
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


def request_stop(store: Store, run_id: str, who: str = "a user") -> Run:
    """Ask a run to stop: marked stopped now; the process playing it stops after the turns in flight."""
    run = store.run(run_id)
    if run.status in (RunStatus.running, RunStatus.pending):
        run = run.model_copy(
            update={
                "status": RunStatus.stopped,
                "stopped_reason": f"stopped by {who}",
                "finished_at": now_utc(),
            }
        )
        store.update_run(run)
    return run


def run_progress(store: Store, run_id: str) -> tuple[int, int]:
    """(turns done, turns in the run)."""
    run = store.run(run_id)
    return count_units(store, run_id), int(run.params.get("total_turns") or 0)


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
