"""The simulator-fault check as a job (issue 31, item 2): offline it stores the rules' findings per
dialogue, a model's answer goes through evalcore.llm and is stored as given, an unusable answer is a failed
unit, and the fault report and `simulations stats` read the stored findings."""

from __future__ import annotations

import json
import threading

from chatchecker_reference import reference_run
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.generators.simulation.fault_check import (
    CHECK_KIND,
    check_user_faults,
    create_fault_check,
    execute_fault_check,
    stored_faults,
)
from evalcore.generators.simulation.fault_report import run_fault_report
from evalcore.generators.simulation.store_ops import import_chatchecker_run
from evalcore.jobs import failed_units
from evalcore.models import RunStatus

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
MODEL = "openai/gpt-4o-mini"


def test_offline_check_stores_every_dialogue_and_the_report_reads_it(sqlite_store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    imported = import_chatchecker_run(sqlite_store, reference_run())
    assert stored_faults(sqlite_store, imported.run_id) is None
    before = run_fault_report(sqlite_store, imported.run_id)
    assert before.source.startswith("offline rules")
    check = check_user_faults(sqlite_store, imported.run_id).run
    assert check.status == RunStatus.finished and check.kind == CHECK_KIND
    stored = stored_faults(sqlite_store, imported.run_id)
    assert stored is not None and stored.offline and len(stored.faults) == 10
    after = run_fault_report(sqlite_store, imported.run_id)
    assert after.source == f"stored: offline rules (no model), check {check.id}"
    assert after.faults == before.faults and after.with_faulted == before.with_faulted


def test_a_models_faults_are_stored_as_given_and_an_unusable_answer_is_a_failed_unit(sqlite_store, llm_env):
    imported = import_chatchecker_run(sqlite_store, reference_run())
    fault = {"kind": "premature_end", "turn": 3, "reason": "It left while the bot asked 'Which day?'"}
    replies = [json.dumps({"faults": [fault]})]
    lock = threading.Lock()

    def reply(api, body):  # the first call finds a fault; every later one answers no JSON
        with lock:
            return replies.pop() if replies else "no JSON here"

    llm_env.responder = reply
    check = create_fault_check(sqlite_store, imported.run_id, model=MODEL)
    outcome = execute_fault_check(sqlite_store, check.id)
    failed = failed_units(sqlite_store, check.id)
    stored = stored_faults(sqlite_store, imported.run_id)
    assert stored is not None and not stored.offline and stored.producers == [MODEL]
    assert [f.model_dump(mode="json") for found in stored.faults.values() for f in found] == [fault]
    assert len(stored.faults) == outcome.checked == 1 and len(failed) == len(outcome.failed) == 9
    report = run_fault_report(sqlite_store, imported.run_id)
    assert report.source.startswith(f"stored: {MODEL}, check {check.id}; 9 dialogue(s)")


def test_stats_prints_who_found_the_faults(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    db = f"sqlite:///{tmp_path / 's.db'}"
    runner = CliRunner()
    imported = runner.invoke(app, ["simulations", "import", str(reference_run()), "--db", db])
    run_id = imported.output.strip().splitlines()[-1]
    checked = runner.invoke(app, ["simulations", "check-faults", run_id, "--db", db])
    assert checked.exit_code == 0, checked.output
    assert "10 dialogue(s) checked" in checked.output
    shown = runner.invoke(app, ["simulations", "stats", run_id, "--db", db])
    line = next(x for x in shown.output.splitlines() if x.startswith("user faults found by"))
    assert line.split(None, 4)[-1] == f"stored: offline rules (no model), check {checked.output.split()[-1]}"
