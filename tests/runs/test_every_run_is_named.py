"""Every kind of run against a target is a named experiment with notes (issue 27, item 1): conversation runs,
procedure tests, scenario runs and simulations record the name given (else target, model and date) and the
notes, from the library and from each CLI command; options that do not apply to procedure tests are refused
with one line, not ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.generators.procedure.job import generate
from evalcore.generators.scenario.records import Scenario
from evalcore.generators.scenario.run import create_scenario_run
from evalcore.generators.simulation.job import create_simulation
from evalcore.inputs import import_project
from evalcore.models import Target
from evalcore.reports.results import run_labels
from evalcore.runs import create_run
from evalcore.runs.procedure_tests import create_procedure_run
from evalcore.targets import save_target

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
TRACK = {
    "name": "Track an order",
    "simulation_context": "You want to know where your order is.",
    "goals": {"assertions": [{"kind": "flow_started", "flow_id": "track_order"}]},
}


@pytest.fixture
def sample(sqlite_store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, SAMPLE).project_id
    generation = generate(sqlite_store, pid, procedures=["track_order"], paths=1, seed=0).run.id
    save_target(sqlite_store, pid, Target(name="agent", kind="agent", config={"agent": "oracle"}))
    return sqlite_store, pid, generation


def _starts(store, pid, generation):
    """Each kind's start, as a function of (name, notes)."""
    scenario = Scenario.model_validate(TRACK)
    return {
        "conversations": lambda **n: create_run(store, pid, "demo", judge="offline", limit=1, **n),
        "procedure tests": lambda **n: create_procedure_run(store, pid, "agent", generation=generation, **n),
        "scenarios": lambda **n: create_scenario_run(store, pid, "demo-flows", [scenario], **n),
        "simulation": lambda **n: create_simulation(store, pid, "demo", standard=1, **n),
    }


def test_every_kind_of_run_records_its_name_and_notes_or_the_default_name(sample):
    store, pid, generation = sample
    for kind, start in _starts(store, pid, generation).items():
        named = start(name="  new prompt  ", notes="shorter answers")
        assert (named.params["name"], named.params["notes"]) == ("new prompt", "shorter answers"), kind
        plain = start()
        target = plain.params["target"]
        kind = target["kind"].replace("_", " ")
        default = f"{target['name']} · {target.get('model') or kind} · {plain.started_at:%Y-%m-%d}"
        assert (plain.params["name"], plain.params["notes"]) == (default, ""), kind
        labels = run_labels([store.run(named.id), store.run(plain.id)])
        assert labels[named.id].startswith(f"new prompt: {target['name']} · judged by "), kind
        assert labels[plain.id].startswith(f"{default}: judged by "), (
            kind,
            "the name's parts not said twice",
        )


def test_each_cli_command_names_the_run_it_starts(sample, tmp_path):
    store, pid, _ = sample
    runner, db = CliRunner(), ["--db", store.url]
    tests = runner.invoke(
        app, ["run", "--tests", "--target", "agent", "--name", "tools v2", "--notes", "n", *db]
    )
    scenario_file = tmp_path / "track.yml"
    scenario_file.write_text(
        "scenario:\n  name: Track an order\n  simulation_context: You want to know where your order is.\n"
        "  goals:\n    assertions:\n      - flow_completed:\n          flow_id: track_order\n",
        encoding="utf-8",
    )
    scenarios = runner.invoke(
        app, ["scenarios", "run", str(scenario_file), "--target", "demo-flows", "--name", "flows v2", *db]
    )
    simulation = runner.invoke(
        app, ["simulations", "run", "--target", "demo", "--standard", "1", "--name", "sim v2", *db]
    )
    for result in (tests, scenarios, simulation):
        assert result.exit_code == 0, result.output
    names = {r.kind: r.params.get("name") for r in store.runs(pid)}
    assert {names["procedure_tests"], names["scenario"], names["simulation"]} == {
        "tools v2",
        "flows v2",
        "sim v2",
    }


@pytest.mark.parametrize(
    "extra", [["--repeat", "2"], ["--judge", "offline"], ["--pairs"], ["--history", "expected"]]
)
def test_options_of_conversation_runs_are_refused_for_procedure_tests_and_nothing_is_recorded(sample, extra):
    store, pid, _ = sample
    before = len(store.runs(pid))
    result = CliRunner().invoke(app, ["run", "--tests", "--target", "agent", *extra, "--db", store.url])
    assert result.exit_code == 2 and f"{extra[0]}: not for procedure tests" in result.output, result.output
    assert len(store.runs(pid)) == before
