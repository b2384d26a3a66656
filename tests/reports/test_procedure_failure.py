"""A failing procedure test opened (evalcore.reports.procedure_failure): on the retail project, whose
procedures come from its policy, a test the null agent fails shows its conversation, the expected call
beside the reply it got, and the policy passages of its procedure, the expected step marked; procedures
read from the policy say so (not "project")."""

from __future__ import annotations

from pathlib import Path

from evalcore.generators.procedure.job import generate
from evalcore.generators.procedure.origins import FROM_POLICY, FROM_PROJECT, procedure_sources
from evalcore.inputs import import_project
from evalcore.models import Target
from evalcore.reports.procedure_failure import failed_test
from evalcore.reports.procedure_tables import failing_frame, score_run
from evalcore.reports.status import project_status
from evalcore.runs.procedure_tests import create_procedure_run, execute_procedure_run
from evalcore.store import Store
from evalcore.targets import save_target

ROOT = Path(__file__).resolve().parents[2]


def _played(tmp_path, monkeypatch, project: str):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    pid = import_project(store, ROOT / "data" / project).project_id
    generation = generate(store, pid, paths=1, seed=0).run.id
    save_target(store, pid, Target(name="null", kind="agent", config={"agent": "null"}))
    run = create_procedure_run(store, pid, "null", generation=generation).id
    execute_procedure_run(store, run)
    return store, pid, generation, score_run(store, run)


def test_a_policy_test_opens_with_its_context_both_actions_and_the_cited_passages(tmp_path, monkeypatch):
    store, pid, generation, scored = _played(tmp_path, monkeypatch, "retail")
    sources = procedure_sources(store, pid, [generation])
    assert sources and set(sources.values()) == {FROM_POLICY}
    # The status counts them (it said "Procedures 0" beside the tests made from them).
    status = {row.stage: row for row in project_status(store, pid)}["Procedures"]
    assert (status.count, status.detail) == (len(sources), f"{len(sources)} written from the policy")
    failing = failing_frame(scored)
    opened = [failed_test(store, pid, scored, t) for t in failing["test"]]
    calls = [o for o in opened if o.expected.startswith("call ")]
    assert calls and all(o.got == "reply: OK" and o.why == "replied where an API call was due" for o in calls)
    found = next(o for o in calls if o.expected.startswith("call find_customer_by_email("))
    assert found.procedure and found.procedure.startswith("policy_") and found.source == FROM_POLICY
    assert found.intent and "_" not in found.intent, "said in words, not the procedure's name"
    assert found.context and found.context[0][0] == "customer"
    marked = [p for p in found.passages if p.about_expected]
    assert marked and all(p.action == "find_customer_by_email" for p in marked)
    assert any("01_identification.md" in p.source for p in marked)


def test_a_project_procedure_test_has_no_passages_and_says_where_it_comes_from(tmp_path, monkeypatch):
    store, pid, generation, scored = _played(tmp_path, monkeypatch, "sample")
    assert set(procedure_sources(store, pid, [generation]).values()) == {FROM_PROJECT}
    opened = failed_test(store, pid, scored, failing_frame(scored)["test"][0])
    assert opened.source == FROM_PROJECT and opened.passages == [] and opened.got == "reply: OK"
    assert opened.intent == next(p.intent for p in store.procedures(pid) if p.name == opened.procedure)
