"""Page test (AppTest): Tool cases shows the catalog (the seed's 26 and a team's own, with conversation counts
and each tool group's skips), a situation's conversations with their intended labels and readable tool
turns, gold and silver with the precision on gold beside each silver set and the calibration curve, a
rubric set edited into versions (an invalid edit refused with its field, nothing saved), the stored
comparison of a queued job, a target's conversations scored per rubric and area with drill-down; and the
intended labels confirmed or rejected in Annotate, where calibration reads them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from toolcase_support import mislabel

from evalcore import jobs
from evalcore.generators.tool_case.catalog import add_project_situations
from evalcore.generators.tool_case.evaluation import comparison_runs, execute_comparison
from evalcore.generators.tool_case.filtering import calibrate_toolcases, filter_toolcases
from evalcore.generators.tool_case.job import generate_toolcases, project_catalog
from evalcore.generators.tool_case.overview import (
    situation_conversations,
    situation_info,
    tool_case_conversations,
)
from evalcore.generators.tool_case.records import intended_labels
from evalcore.generators.tool_case.rubrics import load_rubric_set, rubric_history, save_rubric_set
from evalcore.generators.tool_case.scope import discover_rubrics
from evalcore.inputs import import_project
from evalcore.items.state import project_policy
from evalcore.llm.client import ModelClient
from evalcore.models import Annotation, AnnotationLabel
from evalcore.runs.rubric_scoring import score_with_rubrics, scoring_runs
from evalcore.store import DATABASE_URL_ENV, Store
from pages._common import md

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, str]:
    """The sample project with two tool-case conversations per situation, generated once per module."""
    mp = pytest.MonkeyPatch()
    mp.setenv("EVALCORE_OFFLINE", "1")
    path = tmp_path_factory.mktemp("tool_cases") / "template.db"
    store = Store(f"sqlite:///{path}")
    pid = import_project(store, ROOT / "data" / "sample").project_id
    generate_toolcases(store, pid, per_situation=2, pos_share=None)
    store.close()
    mp.undo()
    return path, pid


@pytest.fixture
def project(template, tmp_path, monkeypatch) -> tuple[Store, str]:
    path, pid = template
    shutil.copy(path, tmp_path / "pages.db")
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    return Store(url), pid


def open_tab(tab: str, user: str | None = "lee") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if user:
        at.session_state["user_name"] = user
    at.run()
    at.switch_page("pages/tool_cases.py")
    at.session_state["tool_cases_tab"] = tab
    at.run()
    assert not at.exception, at.exception
    return at


def frame(at: AppTest, column: str):
    """The first table of the page with this column."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_the_catalog_lists_every_situation_with_its_labels_counts_and_skips(project, tmp_path):
    store, pid = project
    ours = tmp_path / "ours.yaml"
    ours.write_text(
        "situations:\n  - {id: our_case, name: Ours, tool_execution: correct, agent_appropriate: true,"
        " user_satisfied: true, overall: POS, description: 'A <b>team</b> case', recipe: correct}\n",
        encoding="utf-8",
    )
    add_project_situations(store, pid, ours)
    at = open_tab("Catalog")
    catalog = frame(at, "situation")
    assert len(catalog) == 27 and list(catalog["origin"]).count("team") == 1
    null = catalog[catalog["situation"] == "null_tool_response"].iloc[0]
    assert (null["tool execution"], null["agent"], null["user"], null["overall"]) == (
        "The tool's fault", "inappropriate", "dissatisfied", "Handled badly",
    )  # fmt: skip
    assert null["conversations"] == 2 and catalog.iloc[-1]["conversations"] == 0
    assert catalog.iloc[-1]["description"] == "A <b>team</b> case", "shown as text in a table cell"
    skips = frame(at, "reason")
    assert "needs a second tool to pick wrongly" in set(skips["reason"])


def test_a_situations_conversation_shows_its_intended_labels_and_tool_turns(project):
    store, pid = project
    first = situation_conversations(store, pid, "null_tool_response")[0]
    hostile = first.model_copy(deep=True)
    hostile.turns[0].content = "<img src=x onerror=alert(1)> ![b](http://h/b.png) " + first.turns[0].content
    store.save_revision(first.id, hostile.model_dump(mode="json"), "ann", store.current(first.id).version)
    at = open_tab("Conversations")
    at.selectbox(key="tc_situation").select("null_tool_response").run()
    assert not at.exception, at.exception
    shown = "\n".join(str(m.value) for m in at.markdown)
    assert "Null Tool Response\\: tool execution the tool\\'s fault\\, agent inappropriate" in shown
    assert any("Offline output" in str(i.value) for i in at.info)
    assert "\\<img src=x onerror=alert(1)\\> !\\[b\\]" in shown, "data shown as text, not HTML or an image"
    shown_first = situation_conversations(store, pid, "null_tool_response")[0]
    calls = [t.arguments for t in shown_first.turns if t.role.value == "tool_call"]
    assert [json.loads(j.proto.body) for j in at.get("json")] == calls, "each call with its arguments"
    results = [t.content for t in shown_first.turns if t.role.value == "tool_result"]
    assert [t.value for t in at.text] == results == ["null"], "the tool's null result, as text"
    next(b for b in at.button if b.label == "Generate for every situation").click().run()
    newest = store.runs(pid, kind="tool_case")[0]
    # 25 NEG situations with 2 each (the page's default); the one POS situation as many as make POS 35% of
    # them (round(50 * 35/65))
    assert newest.status.value == "pending" and len(newest.params["units"]) == 2 * 25 + 27
    assert newest.params.get("queued_at"), "handed to the queue"


def _decide(store: Store, item_id: str, accept: bool) -> None:
    label = AnnotationLabel.accept if accept else AnnotationLabel.reject
    note = Annotation(item_kind="conversation", item_id=item_id, label=label, author="ann")
    store.annotate(item_id, [note], "ann", store.current(item_id).version)


def test_gold_and_silver_show_the_precision_on_gold_beside_each_silver_set(project):
    store, pid = project
    at = open_tab("Gold and silver")
    assert any("No judge has checked these conversations yet" in str(i.value) for i in at.info)
    next(b for b in at.button if b.label == "Judge the conversations not judged yet").click().run()
    (run,) = store.runs(pid, kind="tool_case_filter")
    assert run.status.value == "pending" and len(run.params["units"]) == 52 and run.params.get("queued_at")
    jobs.resume(store.url, run.id)  # what a queue worker does
    conversations = tool_case_conversations(store, pid)
    top = [c for c in conversations if c.metadata["judge_score"] == 1.0][:13]
    low = [c for c in conversations if c.metadata["judge_score"] < 1.0][:4]
    for i, c in enumerate(top):
        _decide(store, c.id, accept=i > 0)
    for c in low:
        _decide(store, c.id, accept=False)
    at = open_tab("Gold and silver")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Accepted by a person"] == "12" and metrics["Rejected"] == str(1 + len(low))
    silver = frame(at, "precision on gold")
    assert list(silver["judge"]) == ["offline/heuristic"]
    assert silver.iloc[0]["precision on gold"] == f"{12 / 13:.2f}"
    passed = sum(c.metadata["judge_passed"] for c in conversations)
    assert silver.iloc[0]["accepted by the judge"] == passed - 13
    assert len(at.get("vega_lite_chart")) == 1, "the calibration curve"
    next(b for b in at.button if b.label.startswith("Use 1.000")).click().run()
    assert project_policy(store, pid).judge_threshold == 1.0
    next(b for b in at.button if b.label == "Review tool cases in Annotate").click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="q_gen").value == "tool_case" and not at.toggle(key="q_mine").value
    assert set(at.dataframe[0].value["generator"]) == {"Tool-use cases"}, "the generator in words"


def save_rubric(at: AppTest, version: int) -> None:
    """Press the rubric form's save button (the first of the two; the YAML form's is the second)."""
    next(b for b in at.button if b.label == f"Save as version {version}").click().run()


def _rubric_set(store: Store, pid: str) -> tuple[str, int]:
    scope = discover_rubrics(ModelClient(store, pid), tool_case_conversations(store, pid), "scope")
    return save_rubric_set(store, pid, scope, "lead")


def test_a_rubric_edit_is_a_new_version_and_an_invalid_one_changes_nothing(project):
    store, pid = project
    item, _ = _rubric_set(store, pid)
    at = open_tab("Rubrics")
    weight = next(n for n in at.number_input if n.label == "Weight")
    weight.set_value(11)
    save_rubric(at, 2)
    assert any("Refused, nothing was saved" in str(e.value) for e in at.error)
    assert "rubrics[0].weight" in set(frame(at, "field")["field"])
    assert load_rubric_set(store, item)[1] == 1, "nothing saved"
    weight = next(n for n in at.number_input if n.label == "Weight")
    weight.set_value(7)
    save_rubric(at, 2)
    assert not at.exception, at.exception
    saved, version = load_rubric_set(store, item)
    assert version == 2 and saved.rubrics[0].weight == 7
    assert [h["saved by"] for h in rubric_history(store, item)] == ["lead", "lee"]
    # The whole set without its NEG rubrics: refused, naming the field.
    at = open_tab("Rubrics")
    yaml_box = next(t for t in at.text_area if t.label == "Rubric set")
    kept = yaml_box.value.split("- id: neg-1")[0]
    yaml_box.input(kept)
    [b for b in at.button if b.label == "Save as version 3"][-1].click().run()
    problems = frame(at, "field")
    assert "needs at least one NEG rubric" in set(problems["problem"]) and "rubrics" in set(problems["field"])
    assert load_rubric_set(store, item)[1] == 2


def test_the_comparison_is_queued_and_read_back_from_its_stored_folds(project):
    store, pid = project
    at = open_tab("Rubric methods compared")
    assert any("No comparison yet" in str(i.value) for i in at.info)
    next(n for n in at.number_input if n.label == "Rounds").set_value(1)
    next(b for b in at.button if b.label == "Start the comparison").click().run()
    refused = md("no gold or silver tool-case conversation (52 unreviewed)")
    assert any(refused in str(e.value) for e in at.error)
    assert comparison_runs(store, pid) == []
    next(c for c in at.checkbox if c.label == "Every conversation").check()
    next(b for b in at.button if b.label == "Start the comparison").click().run()
    assert not at.exception, at.exception
    (run,) = comparison_runs(store, pid)
    assert run.status.value == "pending" and run.params["folds"] == 1 and run.params.get("queued_at")
    assert run.params["all_conversations"] and len(run.params["conversations"]) == 52
    at = open_tab("Rubric methods compared")
    assert any("No round computed yet" in str(i.value) for i in at.info)
    assert any("0 / 1 folds · queued" in str(p.proto.text) for p in at.get("progress")), "the job's progress"
    execute_comparison(store, run.id)  # what the worker does
    at = open_tab("Rubric methods compared")
    used = next(str(c.value) for c in at.caption if "POS share" in str(c.value))
    pos = run.params["pos"]
    assert md(f"52 labelled conversations (every tool-case conversation), POS share {pos / 52:.2f}") in used
    table3 = frame(at, "Method")
    assert list(table3["Method"])[:2] == ["Rubrics from user satisfaction", "Rubrics per area"]
    assert len(table3) == 6 and table3.iloc[2]["F1"] == "N/A"
    assert table3.iloc[2]["Conversations"] == "Satisfied but handled badly"
    table4 = at.dataframe[-1].value
    assert "Per area, areas not discovered" in set(table4["Method"])
    assert any("Offline output" in str(i.value) for i in at.info)


def test_scored_conversations_read_per_rubric_and_area_with_drill_down(project):
    store, pid = project
    item, _ = _rubric_set(store, pid)
    at = open_tab("Rubric scores")
    assert list(next(b for b in at.selectbox if b.label == "Conversations").options) == [
        "Every conversation of: Tool-use cases"
    ]
    next(b for b in at.button if b.label == "Score them").click().run()
    (queued,) = scoring_runs(store, pid)
    assert queued.params["generator"] == "tool_case" and queued.params.get("queued_at")
    outcome = score_with_rubrics(store, pid, item, generator="tool_case")
    at = open_tab("Rubric scores")
    assert any("Offline output" in str(i.value) for i in at.info)
    rubrics = frame(at, "mean_score")
    assert len(rubrics) == len(load_rubric_set(store, item)[0].rubrics)
    assert set(frame(at, "with_neg")["area"]) == {a.name for a in load_rubric_set(store, item)[0].areas}
    at.selectbox(key=f"tc_dr:{outcome.run.id}").select("neg-1").run()
    drilled = frame(at, "pos_side")
    assert len(drilled) == rubrics.set_index("rubric").loc["neg-1", "applies"]
    assert all(c.startswith("tc-") for c in drilled["conversation"])
    assert at.get("download_button")


def test_annotators_confirm_or_reject_the_intended_labels_and_the_threshold_is_tuned_on_them(project):
    """Item 3 end to end: the judge makes silver; in Annotate a person sees what a tool case is meant to
    show and accepts (gold) or rejects it; calibration reads those decisions."""
    store, pid = project
    mislabel(store, pid, as_="null_tool_response")  # shows bad input data: the judge must reject it
    filter_toolcases(store, pid)
    passed, failed = (
        next(c for c in tool_case_conversations(store, pid) if c.metadata["judge_passed"] is flag)
        for flag in (True, False)
    )
    for conversation, verdict in ((passed, "accept"), (failed, "reject")):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.session_state["user_name"] = "ann"
        at.run()
        at.query_params["item"] = conversation.id
        at.switch_page("pages/annotate.py").run()
        assert not at.exception, at.exception
        meant = next(str(i.value) for i in at.info if str(i.value).startswith("Meant to show"))
        assert md(intended_labels(conversation)) in meant
        shown = situation_info(store, pid, conversation)
        described = project_catalog(store, pid)[conversation.metadata["situation"]].description
        assert shown.description == described and f"**Situation:** {md(described)}" in meant
        assert f"**World state:** {md(shown.world_state)}" in meant
        # One label set: the reason is the choice that rejects.
        at.segmented_control(key=f"cv:{conversation.id}").set_value(
            "off-spec" if verdict == "reject" else verdict
        )
        next(b for b in at.button if b.label == "Save & next").click().run()
        assert not at.exception, at.exception
    found = calibrate_toolcases(store, pid)
    assert found.n == 2 and found.tiers["gold"] == 1 and found.tiers["rejected"] == 1
    at = open_tab("Gold and silver")
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Accepted by a person"], metrics["Rejected"]) == ("1", "1")
    assert frame(at, "precision on gold").iloc[0]["gold it rests on"] == "1 passed of 2 decided"


def test_every_tab_says_what_to_do_on_a_project_without_tool_cases(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    import_project(Store(url), ROOT / "data" / "sample")
    at = open_tab("Catalog", user=None)
    assert frame(at, "situation")["conversations"].sum() == 0
    for tab, says in [
        ("Conversations", "No tool-use conversations yet"),
        ("Gold and silver", "No judge has checked these conversations yet"),
        ("Rubrics", "No rubric set yet"),
        ("Rubric methods compared", "No comparison yet"),
        ("Rubric scores", "No scoring run yet"),
    ]:
        at.session_state["tool_cases_tab"] = tab
        at.run()
        assert not at.exception, tab
        assert any(says in str(i.value) for i in at.info), tab
    at.session_state["tool_cases_tab"] = "Rubric methods compared"
    at.run()
    assert next(b for b in at.button if b.label == "Start the comparison").disabled, "needs a name"
