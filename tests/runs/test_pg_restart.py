"""PostgreSQL restarted mid-run (issue 25, finding 6): the run's process loses its connections, stops
with an error (or carries on once the server is back), and a resume finishes the run with every turn
judged once and no model call paid twice beyond those in flight. The test restarts a server of its own
(`pg_ctl restart -m fast`), so the session's shared server is not touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pg import Databases, LocalServer, find_bin_dir
from runs_support import SAMPLE, sample_project
from test_runs import turns_of

from evalcore.models import RunStatus, Target
from evalcore.runs import create_run, execute_run
from evalcore.runs.control import run_progress
from evalcore.store import Store
from evalcore.targets import save_target

pytestmark = pytest.mark.postgres
ROOT = Path(__file__).resolve().parents[2]
CONCURRENCY = 2


def slow_logging_bot(messages: list[dict[str, str]]) -> str:
    """A python target standing for a paid model: logs every call to $EC_RESTART_LOG, takes 0.3 s."""
    with Path(os.environ["EC_RESTART_LOG"]).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"pid": os.getpid(), "q": messages[-1]["content"]}) + "\n")
    time.sleep(0.3)
    return f"Echo: {messages[-1]['content']}"


@pytest.fixture
def own_server():
    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.skip("no PostgreSQL binaries")
    server = LocalServer.start(bin_dir)
    try:
        yield server
    finally:
        server.stop()


def test_postgres_restarted_mid_run_loses_no_turn_and_pays_no_call_twice(own_server, tmp_path):
    databases = Databases(own_server.url)
    url = databases.create()
    store = Store(url)
    pid, _ = sample_project(store)
    save_target(
        store, pid, Target(name="py", kind="python", config={"callable": "test_pg_restart:slow_logging_bot"})
    )
    run = create_run(store, pid, "py", judge="offline", concurrency=CONCURRENCY)
    log = tmp_path / "calls.log"
    code = (
        "import sys; sys.path[:0] = ['tests/runs', 'tests', '.']\nimport typer\n"
        "from evalcore.cli.common import friendly\nfrom evalcore.runs import execute_run\n"
        "from evalcore.store import Store\n"
        f"try:\n    friendly(lambda: execute_run(Store({url!r}), {run.id!r}))()\n"
        "except typer.Exit as exc:\n    sys.exit(exc.exit_code)\n"
    )
    env = {**os.environ, "EC_RESTART_LOG": str(log)}
    child = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True
    )
    total = sum(len(qa) for _, _, qa in SAMPLE)
    try:
        deadline = time.monotonic() + 120
        while run_progress(store, run.id)[0] < 3:
            assert time.monotonic() < deadline and child.poll() is None, "the run did not start"
            time.sleep(0.1)
        store.close()
        log_file = str(own_server.base / "server.log")  # not our pipe: the new server would hold it open
        own_server._run(
            "pg_ctl", "-D", str(own_server.data_dir), "-l", log_file, "-m", "fast", "-w", "restart"
        )
        _, err = child.communicate(timeout=180)
    finally:
        if child.poll() is None:
            child.kill()
    # Either way is fine: it stopped with an error, or reconnected and finished; never a half-written turn.
    assert "Traceback" not in err or child.returncode == 0, err[-2000:]

    store = Store(url)
    kept = turns_of(store, run.id)
    assert len({(x.conversation_id, x.turn_index) for x in kept}) == len(kept), "no turn stored twice"
    os.environ["EC_RESTART_LOG"] = str(log)
    try:
        outcome = execute_run(store, run.id)
    finally:
        del os.environ["EC_RESTART_LOG"]
    assert outcome.run.status == RunStatus.finished and outcome.done == total
    after = turns_of(store, run.id)
    assert len({(x.conversation_id, x.turn_index) for x in after}) == len(after) == total
    asked = [json.loads(line)["q"] for line in log.read_text().splitlines()]
    repeated = len(asked) - len(set(asked))
    assert repeated <= CONCURRENCY, f"{repeated} calls paid twice: only those in flight may be"
    store.close()
    databases.drop(url)
