"""`evalcore scenarios validate|import|export`: problems as file:line lines with exit 1, imports that store
nothing on a problem and nothing twice, one file per scenario out."""

from __future__ import annotations

from pathlib import Path

import pytest
from scenario_examples import SEED_DOMAIN, SEED_EXAMPLE, SEED_FLOWS
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.store import Store

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    Store(url).create_project("demo", "Demo", None)
    return url


@pytest.fixture
def scenarios(tmp_path: Path) -> Path:
    folder = tmp_path / "eval" / "scenarios"
    folder.mkdir(parents=True)
    (folder / "order_delay.yml").write_text(SEED_EXAMPLE)
    return folder


def test_validate_passes_the_seed_example_and_checks_the_domain(scenarios, tmp_path):
    result = runner.invoke(app, ["scenarios", "validate", str(scenarios)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "1 scenario(s) valid\n"
    (tmp_path / "domain.yml").write_text(SEED_DOMAIN)
    (tmp_path / "flows.yml").write_text(SEED_FLOWS)
    domain = ["--domain", str(tmp_path / "domain.yml"), "--domain", str(tmp_path / "flows.yml")]
    assert runner.invoke(app, ["scenarios", "validate", str(scenarios), *domain]).exit_code == 0
    (tmp_path / "domain.yml").write_text(SEED_DOMAIN.replace("  order_id:\n    type: text\n", ""))
    missing = runner.invoke(app, ["scenarios", "validate", str(scenarios), *domain])
    assert missing.exit_code == 1
    file, why = scenarios / "order_delay.yml", "slot 'order_id' is not in the domain"
    assert missing.stderr.splitlines() == [
        f"{file}:12 [scenario.setup.initial_slots.order_id]: {why}",
        f"{file}:28 [scenario.goals.assertions[4].slot_was_set[0].name]: {why}",
        "2 problem(s) in 1 file(s)",
    ]


def test_validate_prints_every_problem_of_every_file_and_exits_1(scenarios):
    (scenarios / "broken.yml").write_text(
        "scenario:\n  name: broken\n  simulation_context: x\n  goals:\n    assertions:\n"
        "      - flow_started: {flow_ids: [a], operator: every}\n      - bot_uttered: {}\n"
    )
    (scenarios / "not_yaml.yml").write_text("scenario: [unclosed\n")
    result = runner.invoke(app, ["scenarios", "validate", str(scenarios)])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"{scenarios / 'broken.yml'}:6 [scenario.goals.assertions[0].flow_started.operator]: "
        "operator must be 'any' or 'all', got 'every'"
    )
    assert lines[1] == (
        f"{scenarios / 'broken.yml'}:7 [scenario.goals.assertions[1].bot_uttered]: "
        "give at least one of utter_name, text_matches, buttons"
    )
    assert lines[2].startswith(f"{scenarios / 'not_yaml.yml'}:1: invalid YAML")
    assert lines[3] == "3 problem(s) in 2 file(s)"
    missing = runner.invoke(app, ["scenarios", "validate", "nowhere.yml"])
    assert missing.exit_code == 1 and "nowhere.yml: no such file or folder" in missing.stderr


def test_import_stores_nothing_on_a_problem_and_nothing_twice(scenarios, db, tmp_path):
    (scenarios / "bad.yml").write_text(SEED_EXAMPLE.replace("name: Agent", "nam: Agent"))
    refused = runner.invoke(app, ["scenarios", "import", str(scenarios), "--db", db])
    assert refused.exit_code == 1
    assert "nothing was written" in refused.stderr and f"{scenarios / 'bad.yml'}:2" in refused.stderr
    assert Store(db).count_items("demo") == {}

    (scenarios / "bad.yml").unlink()
    first = runner.invoke(app, ["scenarios", "import", str(scenarios), "--db", db, "--author", "ana"])
    assert first.exit_code == 0, first.output
    assert first.stdout == "project demo: 1 added, 0 updated, 0 unchanged\n"
    again = runner.invoke(app, ["scenarios", "import", str(scenarios / "order_delay.yml"), "--db", db])
    assert again.stdout == "project demo: 0 added, 0 updated, 1 unchanged\n"
    assert Store(db).count_items("demo") == {"scenario": 1}

    out = tmp_path / "exported"
    exported = runner.invoke(app, ["scenarios", "export", "--out", str(out), "--db", db])
    assert exported.exit_code == 0, exported.output
    assert exported.stdout == f"wrote 1 file(s) to {out}\n"
    assert [p.name for p in out.iterdir()] == ["order_delay.yml"]
    assert runner.invoke(app, ["scenarios", "validate", str(out)]).exit_code == 0


def test_help_and_usage():
    for command in ("validate", "import", "export"):
        result = runner.invoke(app, ["scenarios", command, "--help"])
        assert result.exit_code == 0 and "Usage" in result.output
    assert runner.invoke(app, ["scenarios", "validate"]).exit_code == 2
    no_store = runner.invoke(app, ["scenarios", "export", "--db", "sqlite:////nonexistent/x.db"])
    assert no_store.exit_code == 2 and "no store at" in no_store.stderr


def test_validate_checks_slots_and_flows_against_a_targets_domain(tmp_path, monkeypatch):
    from evalcore.inputs import import_project

    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    url = f"sqlite:///{tmp_path / 'sample.db'}"
    pid = import_project(Store(url), Path(__file__).resolve().parents[2] / "data" / "sample").project_id
    path = tmp_path / "track.yml"
    path.write_text(
        "scenario:\n  name: track\n  simulation_context: x\n  setup:\n    initial_slots:\n"
        "      order_id: WEB-204518\n  goals:\n    assertions:\n      - flow_started: track_order\n"
    )
    target = ["--target", "demo-flows", "--project", pid, "--db", url]
    ok = runner.invoke(app, ["scenarios", "validate", str(path), *target])
    assert ok.exit_code == 0, ok.output
    path.write_text(path.read_text().replace("order_id", "loyalty_tier").replace("track_order", "track_it"))
    refused = runner.invoke(app, ["scenarios", "validate", str(path), *target])
    assert refused.exit_code == 1
    assert refused.stderr.splitlines() == [
        f"{path}:6 [scenario.setup.initial_slots.loyalty_tier]: slot 'loyalty_tier' is not in the domain",
        f"{path}:9 [scenario.goals.assertions[0].flow_started]: flow 'track_it' is not in the domain "
        "(did you mean 'track_order'?)",
        "2 problem(s) in 1 file(s)",
    ]
    both = runner.invoke(app, ["scenarios", "validate", str(path), *target, "--domain", str(path)])
    assert both.exit_code == 2 and "not both" in both.stderr
