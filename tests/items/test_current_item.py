"""The read model of "the current item" (issue 11): runs, exports, pages and reports read one item the
same way: human corrections applied, the tier under the project's policy, one judge-verdict rule."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa
from runs_support import conversation, sample_project
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.errors import EvalcoreError, NotFoundError
from evalcore.items.current import content_field, iter_items, read_item, read_items, read_tiers
from evalcore.items.exports import export_lines
from evalcore.items.jsonl import export_jsonl
from evalcore.items.store_ops import add_conversation, add_test
from evalcore.models import Annotation, Provenance, Tier
from evalcore.models import Test as ItemTest
from evalcore.reports import build_report, judged_turns
from evalcore.reports.status import project_status, tier_counts
from evalcore.review import (
    ItemVerdict,
    QueueFilter,
    TurnVerdict,
    adjudicate,
    open_item,
    queue_page,
    save_review,
    set_policy,
)
from evalcore.runs import run_target
from evalcore.runs.items import load_item, select_keys
from evalcore.runs.store_ops import judgment_bodies, judgment_rows
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.store_ops import add_specs, edit_spec
from evalcore.store import DATABASE_URL_ENV, Store
from tests.annotation_data import add_conversations

ACCEPT = ItemVerdict(label="accept")
ROOT = Path(__file__).resolve().parents[2]


def queue_tiers(store: Store, project_id: str) -> dict[str, str]:
    """The tier of every conversation as the Annotate page lists it."""
    return {r.item_id: r.tier for r in queue_page(store, project_id, QueueFilter(), limit=100).rows}


def test_a_run_after_a_correction_judges_against_the_corrected_answer(store):
    """Bug 1, on SQLite and PostgreSQL: the annotator's corrected expected answer is what a run plays."""
    project_id, ids = sample_project(store)
    item = ids[0]
    fixed = "Corrected: e-bikes can be returned within 14 days if the display shows under 25 km."
    original = open_item(store, item).conversation.turns[1].content
    correction = TurnVerdict(turn_index=1, label="reject", reason="wrong answer", edited_content=fixed)
    save_review(store, item, "ann", open_item(store, item).version, [correction], ACCEPT)

    outcome = run_target(store, project_id, "demo", judge="offline", keys=[f"conversation:{item}"])
    rows = judgment_rows(store, outcome.run.id)
    turns = {t.turn_index: t for t in judgment_bodies(store, [r[0] for r in rows]).values()}
    assert turns[1].expected == fixed and turns[1].expected != original
    assert turns[3].expected == open_item(store, item).conversation.turns[3].content
    # The gold scope of the report holds the corrected item (one accept is enough by default).
    assert set(judged_turns(store, [outcome.run.id])["tier"]) == {"gold"}


def test_exports_tier_items_under_the_project_policy_as_the_pages_do(store):
    """Bug 2: two approvals required, one given: the pages say silver, so does every export."""
    project_id, ids = sample_project(store)
    set_policy(store, project_id, required_agreement=2)
    item = ids[0]  # its judge passed: silver until two annotators accept
    fixed = "Within 14 days, under 25 km on the display."
    correction = TurnVerdict(turn_index=1, label="accept", edited_content=fixed)
    save_review(store, item, "ann", open_item(store, item).version, [correction], ACCEPT)
    assert queue_tiers(store, project_id)[item] == "silver"

    exported = {json.loads(x)["id"]: json.loads(x) for x in export_jsonl(store, project_id)}
    assert exported[item]["tier"] == "silver"
    assert {i: x["tier"] for i, x in exported.items()} == queue_tiers(store, project_id)
    assert exported[item]["turns"][1]["content"] == fixed
    listed = {json.loads(x)["id"]: json.loads(x) for x in export_lines(store, project_id, "conversation")}
    assert listed[item]["tier"] == "silver" and listed[item]["turns"][1]["content"] == fixed


def test_one_judge_verdict_rule_for_runs_and_pages(store):
    """Bug 2: a run records the judge verdict the tiers fall back to, read by the one rule: the
    calibrated threshold when the project sets one, and only `judge_passed`/`judge_score`."""
    project_id, _ = sample_project(store)
    _, chain, qa = (
        "x",
        ["return-policy"],
        [("How long to return?", "Within 30 days.", "SINGLE-DOC", ["return-policy"])],
    )
    add_conversation(
        store, project_id, conversation("scored", "spec-x", chain, qa, judge_passed=False, judge_score=0.9)
    )
    add_conversation(store, project_id, conversation("nested", "spec-x", chain, qa, verified=True))
    set_policy(store, project_id, judge_threshold=0.5)
    tiers = queue_tiers(store, project_id)
    assert (tiers["scored"], tiers["nested"]) == ("silver", "unreviewed")
    for item in ("scored", "nested"):
        passes = load_item(store, f"conversation:{item}").judge_passed
        assert bool(passes) == (tiers[item] == "silver"), item


def test_no_runs_make_an_empty_frame(store):
    """Bug 7: a report of no runs is an empty frame with the report's columns, not an IndexError."""
    frame = judged_turns(store, [])
    assert frame.empty and {"tier", "score", "item_id", "spec_id", "target"} <= set(frame.columns)


def test_a_limit_of_zero_plays_nothing(store):
    """Bug 7: `limit=0` selects no item; None selects all."""
    project_id, ids = sample_project(store)
    assert select_keys(store, project_id, limit=0) == []
    assert select_keys(store, project_id, limit=2) == [f"conversation:{i}" for i in ids[:2]]
    assert select_keys(store, project_id) == [f"conversation:{i}" for i in ids]


def statements(store: Store, read) -> int:
    """How many SQL statements `read()` sends."""
    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)

    sa.event.listen(store.engine, "before_cursor_execute", record)
    try:
        read()
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", record)
    return len(seen)


def test_many_items_are_read_in_a_few_queries_not_one_per_item(sqlite_store):
    store = sqlite_store
    store.create_project("p", "P")
    store.create_project("q", "Q")
    ids = add_conversations(store, "p", 60, pairs=2)
    add_conversations(store, "q", 3, pairs=2, start=100)
    read_items(store, ids)  # derive the states once
    # Each listing once before: a second finds no revision since and skips checking its tiers.
    list(iter_items(store, "q", "conversation"))
    list(iter_items(store, "p", "conversation"))
    few = statements(store, lambda: read_items(store, ids[:3]))
    assert statements(store, lambda: read_items(store, ids)) == few <= 8
    listing = statements(store, lambda: list(iter_items(store, "q", "conversation")))
    assert statements(store, lambda: list(iter_items(store, "p", "conversation"))) == listing <= 20


def test_the_current_item_has_its_corrections_reviewers_and_judge(store):
    _, ids = sample_project(store)
    item = ids[0]
    fixed = "Within 14 days."
    correction = TurnVerdict(turn_index=1, label="reject", reason="wrong answer", edited_content=fixed)
    save_review(store, item, "ann", open_item(store, item).version, [correction], ACCEPT)
    save_review(
        store, item, "bea", open_item(store, item).version, [], ItemVerdict(label="reject", reason="unsafe")
    )
    current = read_item(store, item)
    stored = store.current(item)
    assert current.version == stored.version and current.saved_by == "bea"
    assert current.tier == Tier.silver and current.needs_adjudication, (
        "a disagreement falls back to the judge"
    )
    assert current.judge.passed is True and current.judge.passes is True and current.judge.score is None
    assert [(r.name, r.label.value, r.role) for r in current.reviewers] == [
        ("ann", "accept", "annotator"),
        ("bea", "reject", "annotator"),
    ]
    turn = current.conversation().turns[1]
    assert turn.content == fixed and turn.metadata["original_content"] == stored.body["turns"][1]["content"]
    assert [(c.turn_index, c.content, c.by) for c in current.corrections] == [(1, fixed, "ann")]
    assert current.content["tier"] == "silver" and stored.body["turns"][1]["content"] != fixed

    adjudicate(store, item, "lee", current.version, ItemVerdict(label="accept"))
    decided = read_item(store, item)
    assert decided.tier == Tier.gold and decided.reviewers[-1].name == "lee"
    assert decided.reviewers[-1].role == "lead" and decided.reviewers[-1].label.value == "accept"
    with pytest.raises(NotFoundError):
        read_item(store, "nope")


def test_a_corrected_test_plays_its_corrected_expected_turn(store):
    project_id, ids = sample_project(store)
    source = read_item(store, ids[0]).conversation()
    test = ItemTest(
        id="test-1",
        conversation_id=source.id,
        spec_id=source.spec_id,
        context=source.turns[:1],
        expected=source.turns[1],
        provenance=Provenance(producer="offline"),
    )
    add_test(store, project_id, test)
    annotation = Annotation(
        item_kind="test", item_id="test-1", label="accept", edited_content="Fourteen days.", author="ann"
    )
    store.annotate("test-1", [annotation], "ann", 1)
    played = load_item(store, "test:test-1")
    assert played.exchanges[0].expected == "Fourteen days."
    assert read_item(store, "test-1").tier == Tier.gold
    line = json.loads(next(export_jsonl(store, project_id, "test")))
    assert line["expected"]["content"] == "Fourteen days." and line["tier"] == "gold"
    # A later edit of the expected turn by its index wins over the earlier whole-item edit.
    later = {"turn_index": test.expected.index, "edited_content": "Two weeks."}
    by_turn = annotation.model_copy(update=later)
    store.annotate("test-1", [by_turn], "bea", read_item(store, "test-1").version)
    assert load_item(store, "test:test-1").exchanges[0].expected == "Two weeks."


def test_items_nobody_reviews_have_no_tier_and_an_unknown_tier_is_refused(store):
    project_id, _ = sample_project(store)
    specs = list(iter_items(store, project_id, "spec"))
    assert specs and all(s.tier is None and "tier" not in s.content for s in specs)
    with pytest.raises(EvalcoreError, match="unknown tier 'bronze'"):
        list(iter_items(store, project_id, "conversation", tier="bronze"))
    silver = {i.id for i in iter_items(store, project_id, "conversation", tier="silver")}
    assert silver == {i for i, t in read_tiers(store, project_id).items() if t == Tier.silver} != set()


def test_status_counts_tiers_as_the_read_model_does(store):
    """One status module: the Home page's counts per stage say how many items each tier holds, the same
    counts the annotation pages show, under the project's policy."""
    project_id, ids = sample_project(store)
    set_policy(store, project_id, required_agreement=2)
    save_review(store, ids[0], "ann", open_item(store, ids[0]).version, [], ACCEPT)
    tiers = Counter(t.value for t in read_tiers(store, project_id).values())
    counts = tier_counts(store, project_id)
    assert {k: v for k, v in counts.items() if k in tiers} == dict(tiers) and counts["gold"] == 0
    row = next(r for r in project_status(store, project_id) if r.stage == "Conversations")
    assert row.count == len(ids)
    assert row.detail == ", ".join(f"{n} {t}" for t, n in counts.items() if n)


def test_status_details_count_with_thousands_separators_as_the_metrics_do(store, monkeypatch):
    """Home shows '1,666' in the Annotation metrics; the breakdown above them reads the same, not '1666'."""
    import evalcore.reports.status as status

    project_id, _ = sample_project(store)
    monkeypatch.setattr(status, "tier_counts", lambda *a, **k: {"silver": 1666, "gold": 141, "rejected": 0})
    row = next(r for r in status.project_status(store, project_id) if r.stage == "Conversations")
    assert row.detail == "1,666 silver, 141 gold"


def test_a_verified_report_leaves_out_turns_judged_against_an_answer_corrected_since(store):
    """Bug 1: a run played before a correction judged that turn against the answer people marked wrong;
    gold and silver+gold scopes leave it out (and say how many), a run played after counts it."""
    project_id, ids = sample_project(store)
    item = ids[0]
    before = run_target(store, project_id, "demo", judge="offline", keys=[f"conversation:{item}"])
    correction = TurnVerdict(
        turn_index=3, label="reject", reason="wrong answer", edited_content="Exchange only."
    )
    save_review(store, item, "ann", open_item(store, item).version, [correction], ACCEPT)
    after = run_target(store, project_id, "demo", judge="offline", keys=[f"conversation:{item}"])

    frame = judged_turns(store, [before.run.id, after.run.id])
    outdated = frame[frame["outdated"]]
    assert list(zip(outdated["run_id"], outdated["turn_index"], strict=True)) == [(before.run.id, 3)]
    everything = build_report(store, [before.run.id], tiers="all")
    gold = build_report(store, [before.run.id], tiers="gold")
    assert len(everything.frame) == len(gold.frame) + 1 and gold.outdated == 1
    assert 3 not in set(gold.frame["turn_index"])
    assert build_report(store, [after.run.id], tiers="gold").outdated == 0
    said = CliRunner().invoke(app, ["report", "--run", before.run.id, "--tiers", "gold", "--db", store.url])
    assert said.exit_code == 0 and "1 turn(s) left out of the gold scope" in said.output


def test_the_reports_page_rereads_a_report_after_a_verdict_or_a_correction(tmp_path, monkeypatch):
    """The page caches a report; a verdict or a correction since makes it read the report again."""
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    project_id, ids = sample_project(store)
    run_target(store, project_id, "demo", judge="offline", keys=[f"conversation:{ids[0]}"])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/reports.py").run()
    at.selectbox(key="report_tiers").set_value("gold").run()
    assert any("No judged turn of this run is in scope" in str(w.value) for w in at.warning)

    fixed = "Only an exchange."
    correction = TurnVerdict(turn_index=3, label="reject", reason="wrong answer", edited_content=fixed)
    save_review(store, ids[0], "ann", open_item(store, ids[0]).version, [correction], ACCEPT)
    at.run()
    assert not at.exception, at.exception
    assert not at.warning and any("1 turn(s) left out" in str(c.value) for c in at.caption)


def test_a_field_of_the_latest_content_is_read_for_every_item_or_for_those_asked(store):
    store.create_project("p", "P")
    drafts = [SpecDraft(scenario=f"Spec {n}", given="g", when="w", then="t", category="c") for n in range(3)]
    ids = add_specs(store, "p", drafts, Provenance(producer="offline"))
    edit_spec(store, ids[1], "ana", 1, scenario="Spec 1, renamed")
    assert content_field(store, "p", "spec", "scenario") == {
        ids[0]: "Spec 0",
        ids[1]: "Spec 1, renamed",
        ids[2]: "Spec 2",
    }
    asked = content_field(store, "p", "spec", "scenario", [ids[1], "no-such-spec"])
    assert asked == {ids[1]: "Spec 1, renamed"}
    assert content_field(store, "p", "spec", "scenario", []) == {}
