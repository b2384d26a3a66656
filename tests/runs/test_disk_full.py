"""A full disk during an import and during a run (issue 25, finding 6), on SQLite: a clear one-line error,
nothing half-written, and a run resumed once there is room again plays no finished turn twice.

The disk fills for real as far as SQLite can tell: the command runs in a child process whose
RLIMIT_FSIZE (`ulimit -f`) stops every file from growing past a size, so the kernel cuts SQLite's
write short exactly as a full disk does (SQLITE_FULL, or "disk I/O error" when the write-ahead log
cannot grow). Unprivileged, unlike mounting a small filesystem."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

from runs_support import SAMPLE, sample_project
from test_runs import turns_of

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.models import RunStatus, Target
from evalcore.runs import create_run, execute_run
from evalcore.store import Store
from evalcore.targets import save_target

ROOT = Path(__file__).resolve().parents[2]


def on_a_full_disk(
    args: list[str], room: int, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run `args` where no file may grow past `room` bytes (SIGXFSZ ignored: writes fail instead)."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (room, room))

    return subprocess.run(
        args, cwd=ROOT, env={**os.environ, **(env or {})}, preexec_fn=limit, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "disk is full" in lines[0], result.stderr
    return lines[0]


def test_an_import_on_a_full_disk_is_one_line_and_writes_nothing(tmp_path, snapshot):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    Store(url).close()
    store = Store(url)
    before = snapshot(store)
    store.close()
    command = [sys.executable, "-m", "evalcore", "import", str(SAMPLE_PROJECT), "--db", url]
    line = one_error_line(on_a_full_disk(command, room=64 * 1024))
    assert line.startswith("error: the store sqlite:///") and "nothing of this step was written" in line
    store = Store(url)
    assert snapshot(store) == before, "nothing half-written"
    assert store.projects() == []
    store.close()
    assert subprocess.run(command, cwd=ROOT, capture_output=True).returncode == 0, "with room, it imports"


def test_a_run_on_a_full_disk_stops_with_one_line_and_resumes_without_replaying(sqlite_store, tmp_path):
    pid, _ = sample_project(sqlite_store)
    save_target(
        sqlite_store,
        pid,
        Target(name="py", kind="python", config={"callable": "runs_support:logging_bot"}),
    )
    run = create_run(sqlite_store, pid, "py", judge="offline", concurrency=2)
    sqlite_store.close()  # its log checkpointed into the file: the child's log starts empty
    log = tmp_path / "bot.log"
    code = (  # as `evalcore run` resumes it: errors printed by the CLI's own wrapper
        "import sys; sys.path[:0] = ['tests', '.']\nimport typer\n"
        "from evalcore.cli.common import friendly\nfrom evalcore.runs import execute_run\n"
        "from evalcore.store import Store\n"
        f"try:\n    friendly(lambda: execute_run(Store({sqlite_store.url!r}), {run.id!r}))()\n"
        "except typer.Exit as exc:\n    sys.exit(exc.exit_code)\n"
    )
    full = on_a_full_disk([sys.executable, "-c", code], room=96 * 1024, env={"EC8_BOT_LOG": str(log)})
    one_error_line(full)
    store = Store(sqlite_store.url)
    total = sum(len(qa) for _, _, qa in SAMPLE)
    kept = turns_of(store, run.id)
    assert 0 < len(kept) < total, f"the disk filled mid-run ({len(kept)} of {total} turns kept)"
    assert len({(x.conversation_id, x.turn_index) for x in kept}) == len(kept), "no unit half-written twice"

    os.environ["EC8_BOT_LOG"] = str(log)
    try:
        outcome = execute_run(store, run.id)
    finally:
        del os.environ["EC8_BOT_LOG"]
    assert outcome.run.status == RunStatus.finished and outcome.done == total
    after = turns_of(store, run.id)
    assert len({(x.conversation_id, x.turn_index) for x in after}) == len(after) == total
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    asked = [c["q"] for c in calls]
    repeated = len(asked) - len(set(asked))
    assert repeated <= 2, f"{repeated} calls paid twice: only those in flight (concurrency 2) may be"
    store.close()
