"""The one job mechanism: failed units are retryable, run state is column-level, claims keep processes apart.

One test per bug of issue 11: a job whose units all failed reads `failed` and its retry asks the model
again (3); a warning saved by a worker keeps a stop request saved in between, and concurrent warnings are
all kept (4); three processes resuming one run play every turn once, pay no call twice and stay within the
budget, on SQLite and PostgreSQL (5). Plus the claims themselves: atomic, expiring, never redoing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from runs_support import conversation

from evalcore import jobs
from evalcore.items.store_ops import add_conversation
from evalcore.jobs import claims
from evalcore.llm import ModelClient
from evalcore.llm.records import calls
from evalcore.models import Run, RunStatus, Target
from evalcore.models.common import now_utc
from evalcore.runs import create_run
from evalcore.runs.store_ops import judgment_rows
from evalcore.specs.generation import generate_specs
from evalcore.store import Store
from evalcore.store import schema as t
from evalcore.store.workers import worker_id
from evalcore.targets import save_target

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
PROJECT = "p1"
ROOT = Path(__file__).resolve().parents[2]
MODEL = "openai/gpt-4o-mini"


@pytest.fixture(autouse=True)
def _online(monkeypatch):
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)


# ------------------------------------------------------------------------- bug 3: failed units


def test_a_job_whose_units_all_failed_is_failed_and_its_retry_asks_the_model_again(project, llm_env):
    llm_env.responder = lambda api, body: "Sorry, I cannot write specs today."  # never parseable
    first = generate_specs(project, PROJECT, m=10, batch=5, model=MODEL)
    assert first.added == 0 and sorted(first.failed) == ["batch-0000", "batch-0001"]
    run = project.run(first.run.id)
    assert run.status == RunStatus.failed and "every unit failed" in run.stopped_reason
    assert set(jobs.failed_units(project, run.id)) == {"batch-0000", "batch-0001"}
    asked = len(llm_env.completed())
    assert asked == 6, "two units, each asked once and re-asked twice"

    again = generate_specs(project, PROJECT, run_id=run.id)  # a plain resume: failed units are final
    assert again.run.status == RunStatus.failed and len(llm_env.completed()) == asked

    llm_env.responder = llm_env.default_reply  # the model now answers with valid output
    seen: list[tuple[int, int]] = []
    retried = generate_specs(
        project, PROJECT, run_id=run.id, retry_failed=True, on_progress=lambda *p: seen.append(p)
    )
    assert retried.run.status == RunStatus.finished and retried.failed == []
    assert seen == [(0, 2), (1, 2), (2, 2)], "a retried unit counts once, when its new record replaces it"
    assert len(llm_env.completed()) == asked + 2, "the unusable cached replies were not replayed"
    assert jobs.failed_units(project, run.id) == {}
    units = project.finished_units(run.id)
    assert {u["status"] for u in units.values()} == {"done"} and set(units) == {"batch-0000", "batch-0001"}


def test_the_cli_retries_failed_units(project, llm_env):
    from typer.testing import CliRunner

    from evalcore.cli.main import app

    llm_env.responder = lambda api, body: "not json"
    runner = CliRunner()
    base = ["specs", "generate", "--db", project.url, "--project", PROJECT, "--model", MODEL]
    result = runner.invoke(app, [*base, "-m", "5", "--batch", "5"])
    assert result.exit_code == 0, result.output
    run_id = project.runs(PROJECT)[0].id
    assert "status failed" in result.output and f"--resume {run_id} --retry-failed" in result.output
    llm_env.responder = llm_env.default_reply
    result = runner.invoke(app, [*base, "--resume", run_id, "--retry-failed"])
    assert result.exit_code == 0 and "status finished" in result.output, result.output


# ------------------------------------------------------------------ bug 4: column-level run state


def test_a_warning_saved_by_a_worker_keeps_a_stop_request_saved_in_between(project, monkeypatch):
    project.start_run(PROJECT, Run(id="run-w", kind="test"))
    worker = ModelClient(project, PROJECT, run_id="run-w")
    seen_before = project.run("run-w")  # what the worker read before the stop was saved
    monkeypatch.setattr(worker, "current_run", lambda: seen_before)
    jobs.request_stop(project, "run-w", "ana")
    worker.warn("no price known for x/y")
    run = project.run("run-w")
    assert run.status == RunStatus.stopped and run.stopped_reason == "stopped by ana"
    assert project.stop_requested("run-w") == "stopped by ana"
    assert run.warnings == ["no price known for x/y"]


def test_warnings_saved_at_once_by_several_workers_are_all_kept(project, monkeypatch):
    project.start_run(PROJECT, Run(id="run-c", kind="test", judge="first/judge"))
    stale = project.run("run-c")
    workers = [ModelClient(project, PROJECT, run_id="run-c") for _ in range(8)]
    for w in workers:  # each read the run before any of them saved
        monkeypatch.setattr(w, "current_run", lambda: stale)
    threads = [threading.Thread(target=w.warn, args=(f"warning {i}",)) for i, w in enumerate(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    workers[0].warn("warning 0")  # the same warning twice is kept once
    project.set_run_judge("run-c", "second/judge")
    run = project.run("run-c")
    assert sorted(run.warnings) == [f"warning {i}" for i in range(8)]
    assert run.judge == "second/judge" and run.status == RunStatus.running


# ---------------------------------------------------------------------------- claims themselves


def test_a_unit_is_claimed_once_a_dead_claim_expires_and_a_done_unit_is_never_redone(project, monkeypatch):
    project.start_run(PROJECT, Run(id="run-u", kind="test"))
    me, other = worker_id("a"), worker_id("b")
    assert claims.take(project, "run-u", "u1", me, None)
    assert not claims.take(project, "run-u", "u1", other, None), "the second insert loses"
    seen = claims.unit_states(project, "run-u")["u1"]
    assert not seen.takeable(now_utc()) and seen.held_by_other(other, now_utc())
    assert seen.takeable(now_utc() + timedelta(seconds=claims.lease_seconds() + 1)), "a lease runs out"
    dead = f"{worker_id().split(':')[0]}:999999:deadbeef:x"  # this machine, a pid that does not exist
    with project.write() as conn:
        conn.execute(sa.update(t.job_claims).values(claimed_by=dead))
    seen = claims.unit_states(project, "run-u")["u1"]
    assert seen.takeable(now_utc()), "a claim of a process that no longer exists is taken at once"
    assert claims.take(project, "run-u", "u1", other, seen)
    assert not claims.take(project, "run-u", "u1", me, seen), "taken by one of two racing workers only"
    with project.unit("run-u", "u1") as writer:
        claims.hold(writer.conn, "run-u", "u1", other)
        claims.close(writer.conn, "run-u", "u1", other, "done")
    done = claims.unit_states(project, "run-u")["u1"]
    assert done.status == "done" and not done.takeable(now_utc() + timedelta(days=1))
    assert jobs.retry_failed(project, "run-u") == 0, "a done unit is never given back"


def test_a_holder_is_shown_since_its_first_claim_and_a_renewal_does_not_move_it(project, monkeypatch):
    from evalcore.jobs.control import held_by, holders

    project.start_run(PROJECT, Run(id="run-h", kind="test"))
    me = worker_id("a")
    assert holders(project, "run-h") == [] and held_by(project, "run-h") == []
    before = now_utc()
    assert claims.take(project, "run-h", "u1", me, None)
    with project.unit("run-h", "u1") as writer:  # u1 done: it still names me
        claims.hold(writer.conn, "run-h", "u1", me)
        claims.close(writer.conn, "run-h", "u1", me, "done")
    with project.read() as conn:
        first = conn.scalar(sa.select(t.job_claims.c.claimed_at).where(t.job_claims.c.unit_key == "u1"))
    assert claims.take(project, "run-h", "u2", me, None)
    claims.renew(project, me)
    [holder] = holders(project, "run-h")
    assert (holder.worker, holder.units, holder.since) == (me, 1, first) and first >= before
    assert held_by(project, "run-h") == [
        f"held by {me} since {first:%Y-%m-%d %H:%M:%S} UTC (1 unit(s) in hand)"
    ]
    claims.release(project, "run-h", "u2", me)
    assert held_by(project, "run-h") == [], "a released unit is held by nobody"


# --------------------------------------------------------------- bug 5: three processes, one run

CHILD = """
import sys
from evalcore.jobs import resume
outcome = resume(sys.argv[1], sys.argv[2])  # all a worker process needs: the store's URL and the run's id
print(outcome.run.status.value, outcome.played, flush=True)
"""
CONVERSATIONS, TURNS = 10, 3


def _three_processes(store: Store, run_id: str, budget: int) -> list[str]:
    store.update_run(store.run(run_id).model_copy(update={"budget": {"tokens": budget}}))
    env = {k: v for k, v in os.environ.items() if k != "EVALCORE_OFFLINE"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests")])
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, store.url, run_id],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = []
    for child in children:
        out, err = child.communicate(timeout=180)
        assert child.returncode == 0, err
        outputs.append(out.strip())
    return outputs


def test_three_processes_resuming_one_run_play_every_turn_once_within_the_budget(db_url, llm_server):
    """On SQLite and PostgreSQL: first with a budget that stops the run, then with room to finish."""
    store = Store(db_url)
    try:
        store.create_project(PROJECT, "Three workers")
        for i in range(CONVERSATIONS):
            qa = [(f"question {j} of conversation {i}?", "an answer", "SINGLE-DOC", []) for j in range(TURNS)]
            add_conversation(store, PROJECT, conversation(f"k{i}", None, [], qa))
        config = {"base_url": llm_server.openai_base_url, "model": "gpt-4o-mini", "cache": False,
                  "max_tokens": 50, "timeout_s": 10}  # fmt: skip
        save_target(store, PROJECT, Target(name="bot", kind="openai", config=config))
        llm_server.latency = 0.05  # calls overlap: the processes work the run at the same time
        run = create_run(store, PROJECT, "bot", judge="offline", concurrency=2)
        total = CONVERSATIONS * TURNS

        tight = 1200  # room for about half the turns (each reserves its prompt estimate + 50 tokens)
        _three_processes(store, run.id, tight)
        stopped = store.run(run.id)
        spent = sum(c.tokens_in + c.tokens_out for c in calls(store, run_id=run.id) if not c.cache_hit)
        assert stopped.status == RunStatus.stopped and stopped.stopped_reason == "budget"
        assert 0 < spent <= tight, "the budget held across the three processes"
        played_first = len(judgment_rows(store, run.id))
        assert 0 < played_first < total

        _three_processes(store, run.id, 100_000)
        finished = store.run(run.id)
        assert finished.status == RunStatus.finished
        rows = judgment_rows(store, run.id)
        turns = Counter((r[1], r[3]) for r in rows)
        assert len(turns) == total and set(turns.values()) == {1}, "every turn played exactly once"
        asked = Counter(c.body["messages"][-1]["content"] for c in llm_server.completed("openai"))
        assert len(asked) == total and set(asked.values()) == {1}, "no model call made twice"
        assert sum(1 for c in calls(store, run_id=run.id) if not c.cache_hit) == total
    finally:
        store.close()
