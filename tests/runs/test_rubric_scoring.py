"""A target's own conversations scored by a SCOPE rubric set (issue 20, item 7) as a run of the one job
mechanism, resumed by a worker's entry point, and its tables per rubric and per area with drill-down,
exported with what produced them; conversations with tool_call and tool_result turns scored by the
tool-use rubrics, not only the satisfaction ones; the k-fold comparison as a job on the gold and silver
conversations whose stored result equals the one computed in the caller."""

from __future__ import annotations

from pathlib import Path

import pytest
from toolcase_support import mislabel

from evalcore import jobs
from evalcore.errors import EvalcoreError, UsageError
from evalcore.generators.simulation.job import simulate
from evalcore.generators.tool_case.evaluation import (
    compare,
    create_comparison,
    labelled_conversations,
    stored_comparison,
)
from evalcore.generators.tool_case.filtering import filter_toolcases
from evalcore.generators.tool_case.job import generate_toolcases
from evalcore.generators.tool_case.rubrics import save_rubric_set, validate_rubric_set
from evalcore.generators.tool_case.scope import discover_rubrics
from evalcore.generators.tool_case.signals import SIGNALS, USER_SATISFACTION
from evalcore.inputs import import_project
from evalcore.items.store_ops import add_conversation
from evalcore.llm.client import ModelClient
from evalcore.models import Conversation, Provenance, Run, Turn
from evalcore.reports.rubric_tables import (
    area_table,
    drill_down,
    export_rubric_tables,
    rubric_report,
    rubric_table,
)
from evalcore.runs.rubric_scoring import create_rubric_scoring, execute_rubric_scoring, score_with_rubrics
from evalcore.store import Store

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple:
    mp = pytest.MonkeyPatch()
    mp.setenv("EVALCORE_OFFLINE", "1")
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('rs') / 'store.db'}")
    pid = import_project(store, SAMPLE).project_id
    generate_toolcases(store, pid, per_situation=2, pos_share=None)
    mislabel(store, pid, as_="null_tool_response")  # shows bad input data, claims a null response
    filter_toolcases(store, pid)  # the offline judge makes them silver but that one
    conversations = labelled_conversations(store, pid, all_conversations=True)
    scope = discover_rubrics(ModelClient(store, pid), conversations, "scope")
    item, version = save_rubric_set(store, pid, scope, "lead")
    yield store, pid, conversations, scope, item, version
    store.close()
    mp.undo()


def test_a_worker_scores_every_conversation_and_the_tables_read_per_rubric_and_area(project):
    store, pid, conversations, scope, item, version = project
    run = create_rubric_scoring(store, pid, item, generator="tool_case")
    assert run.params["version"] == version and run.judge == "offline/heuristic"
    jobs.resume(store.url, run.id)  # what a queue worker calls
    report = rubric_report(store, run.id)
    assert report.scored == len(conversations) == 52 and report.run.status.value == "finished"
    rubrics = rubric_table(report)
    thanks = rubrics[rubrics["text"] == SIGNALS["user_thanks"].statement].iloc[0]
    satisfied = sorted(c.id for c in conversations if c.metadata["labels"]["user_satisfied"])
    assert thanks["applies"] == len(satisfied) and thanks["share"] == pytest.approx(len(satisfied) / 52)
    assert list(drill_down(report, rubric=thanks["rubric"])["conversation"]) == satisfied
    areas = area_table(report).set_index("area")
    assert areas.loc[thanks["area"], "with_pos"] >= len(satisfied)
    in_area = set(drill_down(report, area=thanks["area"])["conversation"])
    assert set(satisfied) <= in_area
    with pytest.raises(EvalcoreError, match="no rubric 'nope'"):
        drill_down(report, rubric="nope")
    texts = export_rubric_tables(report, "md")
    assert set(texts) == {"rubrics", "areas", "labels"}
    assert f"rubric_set: {item} v{version} (scope" in texts["rubrics"] and "offline: yes" in texts["rubrics"]
    assert export_rubric_tables(report, "csv")["labels"].startswith("# run: " + run.id)
    # An edit of the set after the run does not change what the run reports.
    fewer = scope.model_copy(update={"rubrics": [r for r in scope.rubrics if r.id != thanks["rubric"]]})
    save_rubric_set(store, pid, fewer, "lead", item_id=item, expected_version=version)
    assert len(rubric_table(rubric_report(store, run.id))) == len(scope.rubrics)


def test_a_stopped_scoring_run_resumes_where_it_stopped(project):
    store, pid, _, scope, *_ = project
    item = save_rubric_set(store, pid, scope, "lead")[0]
    run = create_rubric_scoring(store, pid, item, generator="tool_case")

    def stop_at_five(done: int, total: int) -> None:
        if done == 5:
            jobs.request_stop(store, run.id)

    first = execute_rubric_scoring(store, run.id, on_progress=stop_at_five)
    assert first.run.status.value == "stopped" and 5 <= first.done < 52
    again = execute_rubric_scoring(store, run.id)
    assert again.run.status.value == "finished" and again.done == 52
    assert rubric_report(store, run.id).scored == 52


def test_a_simulation_runs_conversations_are_scored_under_its_target(project):
    store, pid, _, _, item, _ = project
    sim = simulate(store, pid, "demo", standard=1, challenging=1).run
    run = create_rubric_scoring(store, pid, item, source_run=sim.id)
    assert run.target == "demo" and len(run.params["units"]) == 2
    outcome = execute_rubric_scoring(store, run.id)
    assert (
        outcome.done == 2
        and "target: demo" in export_rubric_tables(rubric_report(store, run.id), "md")["labels"]
    )
    with pytest.raises(UsageError, match="no conversations of generator 'nope'"):
        create_rubric_scoring(store, pid, item, generator="nope")


def test_tool_turns_make_the_tool_use_rubrics_fire_not_only_the_satisfaction_ones(project):
    """Item 7 on conversations with tool_call and tool_result turns: what the tools were given and answered
    is read, so the rubrics of tool use and task completion apply where the user noticed nothing."""
    store, pid, conversations, scope, *_ = project
    item = save_rubric_set(store, pid, scope, "lead")[0]  # the whole set: the first test edits its own
    assert all({"tool_call", "tool_result"} <= {t.role.value for t in c.turns} for c in conversations)
    report = rubric_report(store, score_with_rubrics(store, pid, item, generator="tool_case").run.id)
    rubrics = rubric_table(report).set_index("text")
    situation = {c.id: c.metadata["situation"] for c in conversations}
    fired = rubrics[rubrics["applies"] > 0]
    assert len(set(fired["area"]) - {USER_SATISFACTION}) >= 3, set(fired["area"])
    for code, where in (
        ("ungrounded_argument", "bad_params_silent"),  # an argument the user never gave; user satisfied
        ("unused_tool_result", "superfluous_tool_calls"),
        ("reply_contradicts_result", "bad_parse_silent"),  # the reply misreads the tool's answer
    ):
        rubric = rubrics.loc[SIGNALS[code].statement]
        assert rubric["area"] != USER_SATISFACTION and rubric["polarity"] == "NEG"
        drilled = drill_down(report, rubric=rubric["rubric"])
        hit = {situation[c] for c in drilled["conversation"]}
        assert where in hit and "correct" not in hit, (code, hit)
        # The user thanked the agent in these, yet the tool rubric makes the set call them NEG.
        if where != "superfluous_tool_calls":
            assert set(drilled[drilled["conversation"].map(situation) == where]["label"]) == {"NEG"}


def test_the_comparison_job_stores_what_compare_computes_on_gold_and_silver(project):
    store, pid, conversations, *_ = project
    used = labelled_conversations(store, pid)
    (rejected,) = [c.id for c in conversations if c.metadata["judge_passed"] is False]
    assert len(used) == 51 and rejected not in {c.id for c in used}
    run = create_comparison(store, pid, folds=2, ablations=False)
    assert run.params["units"] == ["fold-1", "fold-2"] and len(run.params["conversations"]) == 51
    pos = sum(c.metadata["labels"]["overall"] == "POS" for c in used)
    assert (run.params["pos"], run.params["all_conversations"]) == (pos, False)
    jobs.resume(store.url, run.id)
    stored = stored_comparison(store, run.id)
    direct = compare(ModelClient(store, pid), used, folds=2, ablations=False)
    assert stored.values == direct.values and stored.sizes == direct.sizes
    assert stored.table(["SPUR", "SCOPE"]) == direct.table(["SPUR", "SCOPE"])
    assert (
        stored.data_line()
        == direct.data_line()
        == (f"51 labelled conversations (gold + silver conversations), POS share {pos / 51:.2f} ({pos} POS)")
    )
    everything = create_comparison(store, pid, folds=1, ablations=False, all_conversations=True)
    assert rejected in everything.params["conversations"] and len(everything.params["conversations"]) == 52
    assert (
        stored_comparison(store, everything.id)
        .data_line()
        .startswith("52 labelled conversations (every tool-case conversation)")
    )
    with pytest.raises(UsageError, match="--folds must be at least 1"):
        create_comparison(store, pid, folds=0)


def test_a_comparison_that_would_train_without_a_pos_conversation_is_refused(sqlite_store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, SAMPLE).project_id
    generate_toolcases(
        sqlite_store, pid, per_situation=1, pos_share=None
    )  # one POS conversation: 40% of it rounds to 0
    with pytest.raises(UsageError, match=r"no gold or silver tool-case conversation \(26 unreviewed\)"):
        create_comparison(sqlite_store, pid, folds=1)
    with pytest.raises(
        UsageError, match=r"at least 2 conversations of each label .* has 1 handled well among"
    ):
        create_comparison(sqlite_store, pid, folds=1, all_conversations=True)
    assert sqlite_store.runs(pid, kind="rubric_comparison") == []


def test_the_judge_is_not_the_targets_own_model_when_another_is_configured(sqlite_store, monkeypatch):
    pid = import_project(sqlite_store, SAMPLE).project_id
    rubrics = {
        "method": "scope",
        "areas": [{"name": "User"}],
        "rubrics": [
            {"id": "p", "area": "User", "polarity": "POS", "text": "The user thanks the agent.", "weight": 3},
            {"id": "n", "area": "User", "polarity": "NEG", "text": "The user complains.", "weight": 5},
        ],
    }
    item, _ = save_rubric_set(sqlite_store, pid, validate_rubric_set(rubrics), "lead")
    target = {"name": "bot", "kind": "openai", "model": "openai/gpt-4o"}
    source = sqlite_store.start_run(
        pid, Run(id="run-sim", kind="simulation", target="bot", params={"target": target})
    )
    turns = [Turn(index=0, role="user", content="Hi"), Turn(index=1, role="assistant", content="Hello")]
    made = Provenance(producer="bot", provider="openai", run_id=source.id)
    add_conversation(
        sqlite_store, pid, Conversation(id="sim-1", generator="simulation", turns=turns, provenance=made)
    )
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    models = {"judge": "openai/gpt-4o-2024-08-06", "generator": "anthropic/claude-haiku-4-5"}
    sqlite_store.update_settings(pid, {"models": models})
    run = create_rubric_scoring(sqlite_store, pid, item, source_run=source.id)
    assert (run.target, run.judge, run.params["units"]) == ("bot", "anthropic/claude-haiku-4-5", ["sim-1"])
