"""The one status of a run every page shows (reports.status.run_state) and the run list built on it."""

from __future__ import annotations

from runs_support import sample_project

from evalcore.models import RunStatus
from evalcore.reports.status import run_list, run_state
from evalcore.runs import create_run, execute_run


def test_the_status_follows_the_run_from_queued_to_finished(sqlite_store):
    store = sqlite_store
    pid, _ = sample_project(store)
    run = create_run(store, pid, "demo", judge="offline", name="first", limit=1)
    queued = run_state(store, run.id)
    assert (queued.word, queued.done, queued.live) == ("queued", 0, True)
    assert queued.text("turns") == f"0 / {queued.total} turns · queued"
    execute_run(store, run.id)
    done = run_state(store, run.id)
    assert (done.word, done.live) == ("finished", False) and done.done == done.total > 0
    # Every unit committed, the run still marked running and no worker holding it: its worker is closing
    # it, not a run nobody works.
    store.finish_run(run.id, RunStatus.running)
    assert run_state(store, run.id).word == "finishing"


def test_the_run_list_names_target_judge_scope_version_cost_and_status(sqlite_store):
    store = sqlite_store
    pid, _ = sample_project(store)
    run = create_run(store, pid, "demo", judge="offline", name="first", limit=2)
    execute_run(store, run.id)
    (row,) = run_list(store, pid)
    assert (row.name, row.target, row.judge, row.status) == ("first", "demo", "offline", "finished")
    assert row.items == "conversations, at most 2, 2 items, rejected left out"
    assert row.code_version != "-" and row.cost_usd == 0.0
    assert row.progress == run_state(store, run.id).text("turns")
