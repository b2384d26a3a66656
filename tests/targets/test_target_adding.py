"""Adding a target from a face (evalcore.targets.adding): the CLI and the Procedures page build and save
a target through the same two calls; only a lead may save one, and a refusal changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.auth.roles import Actor, PermissionDenied, Role
from evalcore.errors import EvalcoreError
from evalcore.inputs import import_project
from evalcore.store import Store
from evalcore.targets import describe, list_targets
from evalcore.targets.adding import add_target, new_target

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path) -> tuple[Store, str]:
    store = Store(f"sqlite:///{tmp_path / 't.db'}")
    return store, import_project(store, ROOT / "data" / "sample").project_id


def test_empty_fields_are_dropped_and_a_built_in_agent_is_saved(project):
    store, pid = project
    target = new_target(" oracle-agent ", "agent", {"agent": "oracle", "base_url": "", "headers": {}})
    assert target.name == "oracle-agent" and target.config == {"agent": "oracle"} and target.model is None
    saved = add_target(store, pid, target, actor=Actor(name="lee", role=Role.lead))
    assert describe(saved) == "agent: built-in oracle agent for procedure tests (offline)"
    assert "oracle-agent" in [t.name for t in list_targets(store, pid)]


def test_a_bad_field_is_one_line_naming_it_and_nothing_is_saved(project):
    store, pid = project
    with pytest.raises(EvalcoreError, match="agent") as caught:
        add_target(store, pid, new_target("x", "agent", {"agent": "genius"}))
    assert "\n" not in str(caught.value)
    with pytest.raises(EvalcoreError, match="kind"):
        new_target("x", "carrier-pigeon", {})
    assert "x" not in [t.name for t in list_targets(store, pid)]


def test_only_a_lead_saves_a_target(project):
    store, pid = project
    target = new_target("demo-agent", "agent", {"agent": "demo"})
    with pytest.raises(PermissionDenied, match="lead"):
        add_target(store, pid, target, actor=Actor(name="ana", role=Role.analyst))
    assert "demo-agent" not in [t.name for t in list_targets(store, pid)]


def test_the_cli_adds_a_prompt_based_model_target_and_refuses_an_unknown_mode(project, tmp_path):
    from typer.testing import CliRunner

    from evalcore.cli import app

    store, pid = project
    db = f"sqlite:///{tmp_path / 't.db'}"
    runner = CliRunner()
    args = ["targets", "add", "prompted", "--kind", "openai", "--model", "m", "--db", db, "--project", pid]
    done = runner.invoke(app, [*args, "--tool-mode", "prompt"])
    assert done.exit_code == 0, done.output
    assert "tools and procedure in the prompt" in done.output
    assert {t.name: t for t in list_targets(store, pid)}["prompted"].config["tool_mode"] == "prompt"
    refused = runner.invoke(app, [*args, "--tool-mode", "telepathy"])
    assert refused.exit_code == 1 and "tool_mode" in refused.output and len(refused.output.splitlines()) == 1
