"""Jobs in worker processes through the huey queue (issue 16), on SQLite and PostgreSQL.

A run queued by a process that is then killed (a dashboard restarted) is finished by a worker; a run
started on the Runs page survives a restart of `evalcore serve` mid-run; a worker killed with SIGKILL
mid-run is replaced by another that finishes the run, every turn played once and no model call repeated
beyond those in flight at the kill. Every job command of the CLI takes --queue.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from queue_support import work_the_queue
from runs_support import conversation, sample_project

from evalcore.errors import EvalcoreError
from evalcore.items.store_ops import add_conversation
from evalcore.jobs import progress
from evalcore.jobs.control import Holder, holders
from evalcore.jobs.queue import enqueue, open_queue, queue_url_for
from evalcore.models import RunStatus, Target
from evalcore.models.common import now_utc
from evalcore.runs import create_run
from evalcore.runs.store_ops import judgment_rows
from evalcore.store import DATABASE_URL_ENV, Store
from evalcore.store import schema as t
from evalcore.targets import save_target

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server
PROJECT = "p1"
ROOT = Path(__file__).resolve().parents[2]
CONVERSATIONS, TURNS, CONCURRENCY = 8, 3, 2


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("EVALCORE_OFFLINE", "EVALCORE_QUEUE_URL")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests")])
    env["EVALCORE_QUEUE_RECOVER_S"] = "1"  # the sweep finds a dead worker's run within seconds
    return env


def _worker(url: str) -> subprocess.Popen:
    """`evalcore worker` in its own session, so a kill reaches its consumer and its worker process."""
    command = [sys.executable, "-m", "evalcore", "worker", "--db", url, "--workers", "1"]
    return subprocess.Popen(command, cwd=ROOT, env=_env(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _project(store: Store, llm_server) -> None:
    """A project of CONVERSATIONS conversations and a target 'bot' on the fake API server."""
    store.create_project(PROJECT, "Queued")
    for i in range(CONVERSATIONS):
        qa = [(f"question {j} of conversation {i}?", "an answer", "SINGLE-DOC", []) for j in range(TURNS)]
        add_conversation(store, PROJECT, conversation(f"k{i}", None, [], qa))
    config = {"base_url": llm_server.openai_base_url, "model": "gpt-4o-mini", "cache": False,
              "max_tokens": 50, "timeout_s": 10}  # fmt: skip
    save_target(store, PROJECT, Target(name="bot", kind="openai", config=config))


def _run(store: Store, llm_server) -> str:
    _project(store, llm_server)
    return create_run(store, PROJECT, "bot", judge="offline", concurrency=CONCURRENCY).id


def _start_on_the_runs_page(store: Store, monkeypatch) -> str:
    """Start a run of 'bot' with the Runs page's form, as a person does (no worker in this process)."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(DATABASE_URL_ENV, store.url)
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/runs.py").run()
    next(s for s in at.selectbox if s.label == "Target").set_value("bot")
    next(s for s in at.selectbox if s.label == "Judge").set_value("offline")
    next(s for s in at.slider if s.label == "Conversations at once").set_value(CONCURRENCY)
    next(b for b in at.button if b.label == "Start run").click().run()
    assert not at.exception, at.exception
    [run] = store.runs(PROJECT, kind="run")
    assert run.status == RunStatus.pending and run.params["concurrency"] == CONCURRENCY
    return run.id


def _wait(store: Store, run_id: str, until, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, f"run {run_id}: {store.run(run_id).status.value} after {timeout}s"
        time.sleep(0.2)


def _played_once(store: Store, run_id: str) -> None:
    turns = Counter((r[1], r[3]) for r in judgment_rows(store, run_id))
    assert len(turns) == CONVERSATIONS * TURNS and set(turns.values()) == {1}, "every turn played once"


def test_the_queue_lives_beside_a_sqlite_store_or_in_its_postgres_database(tmp_path, monkeypatch):
    monkeypatch.delenv("EVALCORE_QUEUE_URL", raising=False)
    assert queue_url_for(f"sqlite:///{tmp_path}/evalcore.db") == f"sqlite:///{tmp_path}/evalcore.queue.db"
    assert queue_url_for("postgresql://u@127.0.0.1:5432/team") == "postgresql://u@127.0.0.1:5432/team"
    monkeypatch.setenv("EVALCORE_QUEUE_URL", "redis://127.0.0.1:6379/0")
    assert queue_url_for(f"sqlite:///{tmp_path}/evalcore.db") == "redis://127.0.0.1:6379/0"


@pytest.mark.skipif(importlib.util.find_spec("redis") is not None, reason="the redis client is installed")
def test_a_redis_queue_without_its_client_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_QUEUE_URL", "redis://127.0.0.1:6399/0")
    with pytest.raises(EvalcoreError, match="needs the redis package: uv pip install redis"):
        open_queue(f"sqlite:///{tmp_path}/evalcore.db")


def test_a_run_queued_by_a_process_killed_since_is_finished_by_a_worker(db_url, llm_server):
    store = Store(db_url)
    worker = None
    try:
        run_id = _run(store, llm_server)
        enqueuer = subprocess.Popen(  # the dashboard: queues the run, then dies before any worker runs
            [sys.executable, "-c", ENQUEUE, db_url, run_id], cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert enqueuer.stdout.readline().strip() == "queued"
        enqueuer.kill()
        enqueuer.wait()
        assert store.run(run_id).status == RunStatus.pending
        worker = _worker(db_url)
        _wait(store, run_id, lambda: store.run(run_id).status == RunStatus.finished)
        _played_once(store, run_id)
        assert len(llm_server.completed("openai")) == CONVERSATIONS * TURNS
    finally:
        if worker is not None:
            _stop(worker)
        store.close()


ENQUEUE = """
import sys, time
from evalcore.jobs.queue import enqueue
from evalcore.store import Store
enqueue(Store(sys.argv[1]), sys.argv[2])
print("queued", flush=True)
time.sleep(600)
"""


def test_a_worker_killed_mid_run_is_replaced_and_no_call_is_repeated_beyond_those_in_flight(
    db_url, llm_server
):
    store = Store(db_url)
    workers: list[subprocess.Popen] = []
    try:
        run_id = _run(store, llm_server)
        llm_server.latency = 0.2
        workers = [_worker(db_url), _worker(db_url)]
        enqueue(store, run_id)

        def holder() -> Holder | None:
            held = holders(store, run_id)  # what the run's page shows: one worker, since when
            return held[0] if held and len(judgment_rows(store, run_id)) >= 4 else None

        _wait(store, run_id, holder)
        taken = holder()
        assert taken.units <= CONCURRENCY and taken.since <= now_utc()
        pid = int(taken.worker.split(":")[1])
        victim = next(w for w in workers if os.getpgid(pid) == w.pid)
        os.killpg(victim.pid, signal.SIGKILL)  # the consumer and its worker process, mid-run
        victim.wait()
        _wait(store, run_id, lambda: store.run(run_id).status == RunStatus.finished)
        _played_once(store, run_id)
        asked = Counter(c.body["messages"][-1]["content"] for c in llm_server.completed("openai"))
        assert len(asked) == CONVERSATIONS * TURNS
        repeated = sum(n - 1 for n in asked.values())
        assert repeated <= CONCURRENCY, f"{repeated} call(s) repeated: only those in flight at the kill"
        print(f"calls repeated after the kill: {repeated} (at most {CONCURRENCY} in flight)")
    finally:
        for worker in workers:
            _stop(worker)
        store.close()


def test_a_unit_held_by_a_dead_worker_on_another_machine_waits_for_its_lease_then_is_played(
    db_url, llm_server
):
    """A worker elsewhere cannot be checked for life: its claim is taken over only once its lease ran out,
    while the run's other units go on."""
    store = Store(db_url)
    worker = None
    try:
        run_id = _run(store, llm_server)
        # What a worker on another machine that died mid-item leaves: its claim, leased a while yet.
        lease_ends = now_utc() + timedelta(seconds=6)
        elsewhere = "elsewhere:4242:cafe:w1"
        with store.write() as conn:
            conn.execute(sa.insert(t.job_claims).values(
                run_id=run_id, unit_key="conversation:k0", status="claimed", claimed_by=elsewhere,
                claimed_until=lease_ends, attempts=1, updated_at=now_utc(), claimed_at=now_utc(),
            ))  # fmt: skip
        assert [h.worker for h in holders(store, run_id)] == [elsewhere]
        enqueue(store, run_id)
        worker = _worker(db_url)
        _wait(store, run_id, lambda: store.run(run_id).status == RunStatus.finished)
        assert store.run(run_id).finished_at >= lease_ends, "its unit is taken over only after the lease"
        _played_once(store, run_id)
    finally:
        if worker is not None:
            _stop(worker)
        store.close()


def _serve(url: str, port: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "evalcore", "serve", "--port", str(port), "--db", url]
    return subprocess.Popen(command, cwd=ROOT, env=_env(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip


def test_a_run_started_on_a_page_survives_a_restart_of_serve_and_finishes(db_url, llm_server, monkeypatch):
    """`evalcore serve` runs the dashboard and a worker; SIGTERM stops both and the job waits in the queue."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    store = Store(db_url)
    serve = None
    try:
        _project(store, llm_server)
        llm_server.latency = 0.2
        run_id = _start_on_the_runs_page(store, monkeypatch)
        serve = _serve(db_url, port)
        _wait(store, run_id, lambda: len(judgment_rows(store, run_id)) >= 4)
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=30) == 0
        paused = store.run(run_id)
        assert paused.status == RunStatus.pending, "a restart is not a stop: the run waits for a worker"
        assert len(judgment_rows(store, run_id)) < CONVERSATIONS * TURNS
        serve = _serve(db_url, port)
        _wait(store, run_id, lambda: store.run(run_id).status == RunStatus.finished)
        _played_once(store, run_id)
        asked = Counter(c.body["messages"][-1]["content"] for c in llm_server.completed("openai"))
        assert sum(n - 1 for n in asked.values()) <= CONCURRENCY, "only the calls in flight at the stop"
    finally:
        if serve is not None:
            _stop(serve)
        store.close()


def test_run_with_queue_hands_the_run_to_the_workers_and_returns(sqlite_store, monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from evalcore.cli.main import app

    monkeypatch.delenv("EVALCORE_QUEUE_URL", raising=False)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid, _ = sample_project(sqlite_store)
    args = ["run", "-t", "demo", "--judge", "offline", "--budget", "1", "--queue", "--db", sqlite_store.url]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    [run] = sqlite_store.runs(pid, kind="run")
    assert f"run {run.id} queued on sqlite:///{tmp_path}/store.queue.db" in result.output
    assert (
        run.status == RunStatus.pending and run.budget == {"usd": 1.0} and progress(sqlite_store, run)[0] == 0
    )
    queue = open_queue(sqlite_store.url)
    assert queue.pending_runs() == {run.id}
    assert queue.huey.execute(queue.huey.dequeue())["status"] == "finished"  # what a worker does with it
    assert sqlite_store.run(run.id).status == RunStatus.finished


def test_conversations_generate_with_queue_records_the_job_for_a_worker(sqlite_store, monkeypatch):
    from typer.testing import CliRunner

    from evalcore.cli.main import app

    monkeypatch.delenv("EVALCORE_QUEUE_URL", raising=False)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid, _ = sample_project(sqlite_store)
    args = ["conversations", "generate", "--specs", "all", "--per-spec", "1", "--turns", "2", "--d", "1"]
    result = CliRunner().invoke(app, [*args, "--queue", "--db", sqlite_store.url])
    assert result.exit_code == 0, result.output
    [run] = sqlite_store.runs(pid, kind="conversations.doc_qa")
    assert run.status == RunStatus.pending and f"run {run.id} queued" in result.output
    queue = open_queue(sqlite_store.url)
    assert queue.huey.execute(queue.huey.dequeue())["status"] == "finished"
    done, total = progress(sqlite_store, sqlite_store.run(run.id))
    assert done == total > 0


QUEUED_COMMANDS = {  # every job command of the CLI, with --queue: (arguments, the run kind it records)
    "specs generate": (["specs", "generate", "-m", "10"], "specs.generate"),
    "procedures generate": (["procedures", "generate", "--paths", "1"], "procedures.generate"),
    "toolcases generate": (["toolcases", "generate"], "tool_case"),
    "simulations run": (["simulations", "run", "-t", "demo", "--standard", "1"], "simulation"),
}


@pytest.mark.parametrize("command", list(QUEUED_COMMANDS))
def test_each_job_command_with_queue_records_its_run_for_a_worker_and_prints_its_id(
    command, sqlite_store, monkeypatch
):
    from typer.testing import CliRunner

    from evalcore.cli.main import app

    monkeypatch.delenv("EVALCORE_QUEUE_URL", raising=False)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    args, kind = QUEUED_COMMANDS[command]
    pid, _ = sample_project(sqlite_store)
    result = CliRunner().invoke(app, [*args, "--queue", "--db", sqlite_store.url])
    assert result.exit_code == 0, result.output
    [run] = sqlite_store.runs(pid, kind=kind)
    assert result.output.splitlines()[-1] == run.id, "the run's id is the last line"
    assert f"run {run.id} queued on" in result.output
    assert run.status == RunStatus.pending and progress(sqlite_store, run)[0] == 0, "nothing ran yet"
    [outcome] = work_the_queue(sqlite_store.url)
    assert outcome["status"] == "finished", outcome
    done, total = progress(sqlite_store, sqlite_store.run(run.id))
    assert done == total > 0


def finish_then_shut_down(store: Store, run_id: str) -> None:
    """A job whose run ends (its last unit committed by another worker) just as its worker is shut down."""
    store.finish_run(run_id, RunStatus.finished)
    raise KeyboardInterrupt


def test_a_worker_shut_down_after_its_run_ended_leaves_the_run_ended(sqlite_store):
    from evalcore.jobs import entry_point
    from evalcore.jobs.queue import resume_job
    from evalcore.models import Run

    sqlite_store.create_project(PROJECT, "Queued")
    run = Run(id="run-end", kind="test", params=entry_point(finish_then_shut_down))
    sqlite_store.start_run(PROJECT, run, pending=True)
    with pytest.raises(KeyboardInterrupt):
        resume_job(sqlite_store.url, run.id)
    assert sqlite_store.run(run.id).status == RunStatus.finished, "not put back in the queue"
