"""Procedure tests played against targets that act (issue 17, items 8 and 9): the job stores each test's
action, resumes without playing a test twice, records crashes; the Table 2 report side by side with
Wilson intervals, its drill-down to failing tests, and its exports with provenance and the offline mark."""

from __future__ import annotations

from pathlib import Path

import pytest
from target_endpoints import Endpoint

from evalcore.errors import EvalcoreError
from evalcore.generators.procedure.job import generate
from evalcore.inputs import import_project
from evalcore.models import RunStatus, Target
from evalcore.reports.procedure_tables import (
    counts_frame,
    export_procedure_tables,
    failing_frame,
    score_run,
    table2_frame,
)
from evalcore.runs.procedure_tests import create_procedure_run, execute_procedure_run, select_tests
from evalcore.store import Store
from evalcore.targets import save_target
from evalcore.targets.config import TargetConfigError

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server


@pytest.fixture
def sample(sqlite_store: Store, monkeypatch) -> tuple[Store, str, str]:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, SAMPLE).project_id
    run = generate(sqlite_store, pid, procedures=["track_order", "return_item"], paths=2, seed=0).run
    for name, agent in (("oracle", "oracle"), ("null", "null"), ("agent", "demo")):
        save_target(sqlite_store, pid, Target(name=name, kind="agent", config={"agent": agent}))
    return sqlite_store, pid, run.id


def test_oracle_reaches_every_maximum_and_null_has_no_api_recall(sample) -> None:
    store, pid, generation = sample
    tests = select_tests(store, pid, generation=generation)
    assert tests
    oracle = create_procedure_run(store, pid, "oracle", generation=generation)
    outcome = execute_procedure_run(store, oracle.id)
    assert outcome.run.status == RunStatus.finished and outcome.done == outcome.total == len(tests)
    again = execute_procedure_run(store, oracle.id)  # a resume of a finished run plays nothing
    assert again.played == 0 and again.done == len(tests)
    units = store.finished_units(oracle.id)
    assert all(u["result"]["action"]["kind"] in ("reply", "api") for u in units.values())

    null = create_procedure_run(store, pid, "null", generation=generation)
    execute_procedure_run(store, null.id)
    scored = [score_run(store, oracle.id), score_run(store, null.id)]
    assert all(h == n > 0 for h, n in scored[0].counts.values()), scored[0].counts
    assert scored[1].counts["api_recall"][0] == 0 and scored[1].counts["test_correct"][0] == 0
    frame = table2_frame(scored)
    assert list(frame["target"]) == ["oracle", "null"]
    assert frame.loc[0, "share_test_correct"] == 1.0 and frame.loc[0, "ci_low_test_correct"] < 1.0
    assert frame.loc[1, "share_api_recall"] == 0.0 and frame.loc[1, "ci_high_api_recall"] > 0.0
    from evalcore.reports.status import project_status

    runs = next(r for r in project_status(store, pid) if r.stage == "Runs")
    assert runs.count == 2 and runs.detail.startswith("2 procedure test runs (2 finished)"), runs
    counts = counts_frame(scored)
    assert counts.loc[1, "API recall"] == f"0 / {scored[1].counts['api_recall'][1]}"
    failing = failing_frame(scored[1])
    assert len(failing) == len(tests) and failing_frame(scored[0]).empty
    assert set(failing["why"]) == {"replied where an API call was due"} | {
        w for w in failing["why"] if w.startswith("reply not similar enough")
    }

    texts = export_procedure_tables(scored, "md", failing=True)
    assert set(texts) == {"table2", "table2_counts", f"failing_{oracle.id}", f"failing_{null.id}"}
    assert "offline: yes" in texts["table2"] and "100.0% [" in texts["table2"]
    assert "reply threshold: 0.48 (calibrated for wordllama/l2_supercat_256)" in texts["table2"] or (
        "reply threshold: 0.35 (calibrated for offline/hash-256)" in texts["table2"]
    )
    assert "Reply recall" in texts["table2"] and "share_" not in texts["table2"]
    assert "history:" not in texts["table2"], "a conversation run's choice, not a procedure test run's"
    latex = export_procedure_tables(scored, "latex")["table2"]
    assert "\\begin{tabular}" in latex and "(offline)" in latex
    csv = export_procedure_tables(scored, "csv")["table2"]
    assert csv.startswith("#") and "share_reply_recall" in csv


def test_the_demo_agent_makes_mistakes_of_every_kind_through_the_job(sample) -> None:
    store, pid, generation = sample
    run = create_procedure_run(store, pid, "agent", generation=generation)
    execute_procedure_run(store, run.id)
    counts = score_run(store, run.id).counts
    assert 0 < counts["test_correct"][0] < counts["test_correct"][1]
    assert counts["correct_api"][0] == counts["correct_api"][1]  # it calls the procedure's APIs


def test_a_crashing_target_is_recorded_and_chat_only_targets_are_refused(sample, monkeypatch) -> None:
    store, pid, generation = sample
    monkeypatch.delenv("EVALCORE_OFFLINE")
    endpoint = Endpoint()
    try:
        endpoint.script = [("json", {"nothing": "useful"})] * 200
        config = {"url": endpoint.url, "timeout_s": 0.5}
        save_target(store, pid, Target(name="web", kind="http", config=config))
        run = create_procedure_run(store, pid, "web", generation=generation, limit=3)
        outcome = execute_procedure_run(store, run.id)
        assert outcome.crashed == 3 and outcome.run.status == RunStatus.finished
        scored = score_run(store, run.id)
        assert len(scored.crashes) == 3 and scored.counts["test_correct"] == (0, 3)
        assert scored.counts["reply_recall"][0] == scored.counts["api_recall"][0] == 0
        assert set(failing_frame(scored)["why"]) == {next(iter(scored.crashes.values()))}
    finally:
        endpoint.server.shutdown()
        endpoint.server.server_close()
    with pytest.raises(TargetConfigError, match="only chats"):
        create_procedure_run(store, pid, "demo")
    with pytest.raises(EvalcoreError, match="no procedure tests"):
        create_procedure_run(store, pid, "oracle", generation="run-none")


def test_cli_run_tests_resume_and_report(sample) -> None:
    from typer.testing import CliRunner

    from evalcore.cli.main import app

    store, _, generation = sample
    runner = CliRunner()
    db = ["--db", store.url]
    added = runner.invoke(app, ["targets", "add", "perfect", "--kind", "agent", "--agent", "oracle", *db])
    assert added.exit_code == 0 and "built-in oracle agent" in added.output, added.output
    played = runner.invoke(app, ["run", "--tests", "--target", "perfect", "--generation", generation, *db])
    assert played.exit_code == 0, played.output
    run_id = next(
        line.split()[1].rstrip(":") for line in played.output.splitlines() if line.startswith("run ")
    )
    assert "Table 2" in played.output and played.output.count("| 100.0% [") == 7
    resumed = runner.invoke(app, ["run", "--resume", run_id, *db])
    assert resumed.exit_code == 0 and "(0 now, 0 crashed)" in resumed.output, resumed.output
    every = runner.invoke(app, ["run", "--tests", "--target", "null", "--limit", "4", *db])
    assert (
        every.exit_code == 0 and f"playing the tests of generation(s) {generation} (4 tests)" in every.output
    )
    report = runner.invoke(app, ["procedures", "report", "--format", "csv", "--failing", *db])
    assert report.exit_code == 0, report.output
    assert report.output.startswith("#") and "share_api_recall" in report.output
    assert "replied where an API call was due" in report.output or "not similar" in report.output
    chat_only = runner.invoke(app, ["run", "--tests", "--target", "demo", *db])
    assert chat_only.exit_code != 0 and "only chats" in chat_only.output


def test_tests_of_rejected_conversations_are_skipped_and_the_run_says_how_many(sample) -> None:
    from evalcore.items.current import read_items
    from evalcore.models import Annotation, AnnotationLabel

    store, pid, generation = sample
    found = read_items(store, select_tests(store, pid, generation=generation))
    tests = [item.test() for item in found.values()]
    conversation = tests[0].conversation_id
    assert conversation is not None
    note = Annotation(
        item_kind="conversation",
        item_id=conversation,
        label=AnnotationLabel.reject,
        author="ann",
        reason="off",
    )
    store.annotate(conversation, [note], "ann", store.current(conversation).version)
    cut = {t.id for t in tests if t.conversation_id == conversation}
    rejected: list[str] = []
    kept = select_tests(store, pid, generation=generation, rejected=rejected)
    assert set(rejected) == cut and not cut & set(kept) and len(kept) == len(tests) - len(cut)
    run = create_procedure_run(store, pid, "oracle", generation=generation)
    assert run.params["units"] == kept
    assert f"{len(cut)} test(s) of rejected conversations were skipped" in store.run(run.id).warnings


def test_a_queue_worker_resumes_a_procedure_run_by_its_recorded_job_function(sample) -> None:
    from evalcore import jobs

    store, pid, generation = sample
    run = create_procedure_run(store, pid, "oracle", generation=generation, limit=5)
    outcome = jobs.resume(store.url, run.id)  # what a worker does with a queued run
    assert outcome.done == 5 and store.run(run.id).status == RunStatus.finished
    assert score_run(store, run.id).counts["test_correct"] == (5, 5)


def test_an_openai_target_plays_through_the_job_with_cache_and_accounting(sample, llm_server, monkeypatch):
    from llm_server import ToolCallReply

    from evalcore.generators.procedure.agents import context_key
    from evalcore.llm.records import calls
    from evalcore.models import Test

    store, pid, generation = sample
    monkeypatch.delenv("EVALCORE_OFFLINE")

    def agent(api: str, body: dict):
        last = body["messages"][-1]
        if last["role"] == "user" and "Sure" in str(last["content"]):
            tool = body["tools"][0]["function"]
            return ToolCallReply(tool["name"], {k: "x" for k in tool["parameters"].get("required", [])})
        return "Let me help you with that."

    llm_server.responder = agent
    config = {"base_url": llm_server.openai_base_url, "model": "agent-1"}
    save_target(store, pid, Target(name="gpt", kind="openai", config=config))
    run = create_procedure_run(store, pid, "gpt", generation=generation, limit=8, concurrency=1)
    outcome = execute_procedure_run(store, run.id)
    assert outcome.done == 8 and outcome.crashed == 0
    served = len(llm_server.calls)
    tests = [Test.model_validate(store.current(t).body) for t in run.params["units"]]
    contexts = {context_key(t.context) for t in tests}
    assert served == len(contexts) > 1  # two tests with one context: the second from the cache
    assert all(c.body.get("tools") for c in llm_server.calls)
    kinds = {u["result"]["action"]["kind"] for u in store.finished_units(run.id).values()}
    assert kinds == {"reply", "api"}
    recorded = calls(store, run_id=run.id)
    assert len(recorded) == 8 and {r.role for r in recorded} == {"target"}  # cache hits counted too
    assert sum(not r.cache_hit for r in recorded) == served
    again = create_procedure_run(store, pid, "gpt", generation=generation, limit=8, concurrency=1)
    execute_procedure_run(store, again.id)  # the same tests again: every action from the cache
    assert len(llm_server.calls) == served
    assert [u["result"]["action"] for u in store.finished_units(again.id).values()] == [
        u["result"]["action"] for u in store.finished_units(run.id).values()
    ]
    assert all(u["result"]["cache_hit"] for u in store.finished_units(again.id).values())


def test_a_prompt_based_target_is_shown_each_test_s_own_procedure(sample, llm_server, monkeypatch):
    """Seed 001's A.8 mode through the job: each test's prompt holds the procedure its conversation was
    written from, and the action comes back from the reply's JSON."""
    store, pid, generation = sample
    monkeypatch.delenv("EVALCORE_OFFLINE")
    llm_server.responder = lambda api, body: '{"reply": "Let me help you with that."}'
    config = {"base_url": llm_server.openai_base_url, "model": "agent-1", "tool_mode": "prompt"}
    save_target(store, pid, Target(name="prompted", kind="openai", config=config))
    run = create_procedure_run(store, pid, "prompted", generation=generation, limit=6, concurrency=1)
    outcome = execute_procedure_run(store, run.id)
    assert outcome.done == 6 and outcome.crashed == 0
    procedures = {p.name: p for p in store.procedures(pid)}
    for call in llm_server.calls:
        system = call.body["messages"][0]["content"]
        assert "tools" not in call.body
        assert any(procedures[n].steps[0].text in system for n in ("track_order", "return_item"))
    assert {u["result"]["action"]["kind"] for u in store.finished_units(run.id).values()} == {"reply"}
