"""The server's own record of each review save (issue 34): when it arrived, when it was committed or
refused, and when the page answered, per save, with the server's clock.

Off unless `EVALCORE_SAVE_LOG` names a file: then each phase is one JSON line appended to it,
`{"save": ID, "phase": "arrive" | "commit" | "refused" | "error" | "duplicate" | "reply", "item": ...,
"author": ..., "t": unix seconds}` ("duplicate": a second press of a form this session already saved),
flushed at once, so a benchmark (benchmarks/team_load.py) can tell a save the server never received from
one it received and never answered, and measure the server's share of a save's time apart from the
browser's wait.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ENV = "EVALCORE_SAVE_LOG"
_lock = threading.Lock()


def new_save() -> str:
    """An id for one save attempt."""
    return uuid.uuid4().hex[:12]


def record(save: str, phase: str, **fields: Any) -> None:
    """Append one phase of save `save` to the log, when there is one (a failure to log never fails a save)."""
    path = os.environ.get(ENV)
    if not path:
        return
    line = json.dumps({"save": save, "phase": phase, "t": time.time(), **fields}, default=str)
    try:
        with _lock, Path(path).open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    except OSError:
        pass


def read(path: Path) -> dict[str, dict[str, Any]]:
    """The log as {save id: {phase: time, "item": ..., "author": ...}} (a line cut by a crash is skipped)."""
    saves: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return saves
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        saves.setdefault(entry["save"], {}).update(
            {
                entry["phase"]: entry["t"],
                **{k: v for k, v in entry.items() if k not in ("save", "phase", "t")},
            }
        )
    return saves
