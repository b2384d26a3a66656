"""The one status of a run every page shows (reports.status.run_state) and the run list built on it."""

from __future__ import annotations

from runs_support import sample_project

from evalcore.models import RunStatus
from evalcore.reports.status import run_list, run_state
from evalcore.runs import create_run, execute_run, run_target
from evalcore.runs.control import run_name


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


def test_the_run_list_holds_every_kind_of_run_against_a_target_with_its_own_units(sqlite_store):
    """Procedure tests, scenario runs and simulations are listed beside conversation runs (the Runs page
    listed conversation runs only), each counting what it plays."""
    from evalcore.generators.scenario.records import Scenario
    from evalcore.generators.scenario.run import run_scenarios
    from evalcore.generators.simulation.job import simulate

    store = sqlite_store
    pid, _ = sample_project(store)
    played = run_target(store, pid, "demo", judge="offline", limit=1).run
    scenario = Scenario.model_validate(
        {"name": "Track", "simulation_context": "Where is my order?",
         "goals": {"assertions": [{"kind": "flow_started", "flow_id": "track_order"}]}}
    )  # fmt: skip
    scenarios = run_scenarios(store, pid, "demo-flows", [scenario], run_count=2).run
    simulation = simulate(store, pid, "demo", standard=1).run
    rows = {r.run_id: r for r in run_list(store, pid)}
    assert list(rows) == [simulation.id, scenarios.id, played.id], "newest first"
    assert [(r.kind, r.items) for r in rows.values()] == [
        ("simulation", "1 dialogue"), ("scenario run", "1 scenario x 2"),
        ("conversation run", "conversations, at most 1, 1 items, rejected left out"),
    ]  # fmt: skip
    assert rows[scenarios.id].progress == run_state(store, scenarios.id).text("repetitions")
    assert all(r.status == "finished" and r.name == run_name(store.run(i)) for i, r in rows.items())
