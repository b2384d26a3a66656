"""The CLI: import, status, export and clear one-line errors."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalcore.cli.main import SAMPLE_PROJECT, app
from evalcore.store import Store

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cli.db'}"


def test_help_of_every_command_is_useful():
    for command in ("init", "import", "status", "export", "serve"):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0
        assert "Usage" in result.output and "--db" in result.output


def test_init_creates_the_store(db):
    result = runner.invoke(app, ["init", "--db", db])
    assert result.exit_code == 0, result.output
    assert "001_initial" in result.output
    again = runner.invoke(app, ["init", "--db", db])
    assert "already up to date" in again.output


def test_import_status_and_export_the_sample(db, tmp_path):
    first = runner.invoke(app, ["import", str(SAMPLE_PROJECT), "--db", db])
    assert first.exit_code == 0, first.output
    second = runner.invoke(app, ["import", str(SAMPLE_PROJECT), "--db", db])
    assert "0 record(s) written" in second.output

    store = Store(db)
    project_id = store.projects()[0].id
    documents = len(store.documents(project_id))
    status = runner.invoke(app, ["status", "--db", db])
    assert status.exit_code == 0
    assert f"Documents{documents:>11}" in status.output

    out = tmp_path / "inputs.json"
    exported = runner.invoke(app, ["export", "inputs", "--out", str(out), "--db", db])
    assert exported.exit_code == 0, exported.output
    bundle = json.loads(out.read_text())
    assert len(bundle["documents"]) == documents
    assert bundle["system_card"]["id"] == project_id


def test_errors_are_one_clear_line_and_exit_non_zero(db, tmp_path):
    missing = runner.invoke(app, ["import", str(tmp_path / "nope"), "--db", db])
    assert missing.exit_code == 1
    assert "no such folder" in missing.output and "Traceback" not in missing.output

    unknown = runner.invoke(app, ["status", "--project", "ghost", "--db", db])
    assert unknown.exit_code == 1
    assert "no project 'ghost'" in unknown.output

    bad_url = runner.invoke(app, ["status", "--db", "postgresql://nobody@127.0.0.1:9/none"])
    assert bad_url.exit_code == 1
    assert bad_url.output.startswith(
        "error: the store postgresql+psycopg://nobody@127.0.0.1:9/none could not"
    )
    assert len(bad_url.output.strip().splitlines()) == 1
    assert "Traceback" not in bad_url.output


@pytest.mark.parametrize(
    "command",
    [
        ["specs", "generate"],
        ["conversations", "generate"],
        ["procedures", "generate"],
        ["run", "--target", "demo"],
        ["toolcases", "generate"],
        ["simulations", "run", "--target", "demo"],
        ["rubrics", "score", "set-1"],
    ],
)
def test_retry_failed_without_a_run_to_resume_is_a_usage_error(db, command):
    runner = CliRunner()
    assert runner.invoke(app, ["import", str(SAMPLE_PROJECT), "--db", db]).exit_code == 0
    result = runner.invoke(app, [*command, "--retry-failed", "--db", db])
    assert result.exit_code == 2, result.output
    assert "give --resume RUN_ID too" in result.output
