"""The review queue (filters, pagination in SQL, progress), assignments with overlap, agreement,
silver calibration and the gold/silver exports, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
import sqlalchemy as sa

from evalcore.items.jsonl import export_jsonl
from evalcore.models import Conversation
from evalcore.reports.status import tier_counts
from evalcore.review import (
    MIN_SHARED,
    ItemVerdict,
    QueueFilter,
    TurnVerdict,
    agreement_report,
    assign_items,
    filter_options,
    next_item,
    open_item,
    previous_item,
    progress,
    queue_page,
    save_review,
    shown_pairs,
    silver_calibration,
    unassign,
)
from evalcore.review.agreement import cohen_kappa
from evalcore.store import Store
from tests.annotation_data import add_conversations

PID = "p"
ACCEPT = ItemVerdict(label="accept")
REJECT = ItemVerdict(label="reject", reason="not grounded")


def project(store: Store, n: int, **kwargs) -> list[str]:
    store.create_project(PID, "P")
    return add_conversations(store, PID, n, pairs=2, **kwargs)


def review(store: Store, item: str, who: str, verdict: ItemVerdict, turns=()) -> int:
    return save_review(store, item, who, open_item(store, item).version, list(turns), verdict).version


def test_the_queue_pages_in_order_without_gaps_or_overlaps(store: Store):
    ids = project(store, 23)
    pages = [queue_page(store, PID, limit=10, offset=o) for o in (0, 10, 20)]
    assert [p.total for p in pages] == [23, 23, 23]
    assert [r.item_id for p in pages for r in p.rows] == ids
    row = pages[0].rows[0]
    assert (row.n_turns, row.preview) == (4, "How long do I have to return a bike I bought in store?")
    assert row.generator == "doc_qa" and row.judge_score is not None


def test_queue_filters_by_generator_spec_tier_assignee_and_needs_my_review(store: Store):
    ids = project(store, 16, spec_ids=["spec-a", "spec-b"])
    by_generator = queue_page(store, PID, QueueFilter(generator="procedure"), limit=50)
    assert {r.generator for r in by_generator.rows} == {"procedure"} and by_generator.total == 4
    by_spec = queue_page(store, PID, QueueFilter(spec_id="spec-b"), limit=50)
    assert by_spec.total == 8 and {r.spec_id for r in by_spec.rows} == {"spec-b"}

    review(store, ids[0], "ann", ACCEPT)
    review(store, ids[1], "ann", REJECT)
    assert [r.item_id for r in queue_page(store, PID, QueueFilter(tier="gold")).rows] == [ids[0]]
    assert [r.item_id for r in queue_page(store, PID, QueueFilter(tier="rejected")).rows] == [ids[1]]
    silver = queue_page(store, PID, QueueFilter(tier="silver"), limit=50)
    assert all(r.judge_passed for r in silver.rows)

    assign_items(store, PID, ["ann", "bea"], 1, "lee", seed=3)
    mine = queue_page(store, PID, QueueFilter(assignee="ann"), limit=50, user="ann")
    assert mine.total == 8
    todo = queue_page(store, PID, QueueFilter(needs_review_by="ann"), limit=50)
    reviewed_and_mine = {r.item_id for r in mine.rows if r.my_verdict}
    assert todo.total == 8 - len(reviewed_and_mine)
    assert not {r.item_id for r in todo.rows} & reviewed_and_mine

    combined = QueueFilter(generator="doc_qa", spec_id="spec-a", needs_review_by="bea")
    rows = queue_page(store, PID, combined, limit=50).rows
    assert all(r.generator == "doc_qa" and r.spec_id == "spec-a" and "bea" in r.assignees for r in rows)


def test_after_a_save_the_next_item_is_the_next_one_still_to_do(store: Store):
    ids = project(store, 6)
    assign_items(store, PID, ["ann"], 1, "lee")
    todo = QueueFilter(needs_review_by="ann")
    assert next_item(store, PID, todo) == ids[0]
    review(store, ids[2], "ann", ACCEPT)
    assert next_item(store, PID, todo, after=ids[1]) == ids[3], "item 2 is done: skipped"
    assert next_item(store, PID, todo, after=ids[5]) == ids[0], "wraps around to what was skipped"
    assert previous_item(store, PID, todo, ids[3]) == ids[1]
    for item in ids:
        if item != ids[2]:
            review(store, item, "ann", ACCEPT)
    assert next_item(store, PID, todo, after=ids[5]) is None


def test_progress_counts_done_over_assigned_per_annotator(store: Store):
    ids = project(store, 10)
    result = assign_items(store, PID, ["ann", "bea", "cy"], 2, "lee", seed=1)
    assert result.items == 10 and sum(result.per_annotator.values()) == 20
    ann_items = [r.item_id for r in queue_page(store, PID, QueueFilter(assignee="ann"), limit=50).rows]
    for item in ann_items[:3]:
        review(store, item, "ann", ACCEPT)
    unassigned = next(i for i in ids if i not in ann_items)
    review(store, unassigned, "ann", ACCEPT)
    rows = {p.annotator: p for p in progress(store, PID)}
    assert (rows["ann"].assigned, rows["ann"].done, rows["ann"].reviewed) == (len(ann_items), 3, 4)
    assert sum(p.assigned for p in rows.values()) == 20
    assert filter_options(store, PID).annotators == ["ann", "bea", "cy"]


def test_assignment_gives_each_item_to_overlap_annotators_and_spreads_pairs(store: Store):
    ids = project(store, 30)
    assign_items(store, PID, ["ann", "bea", "cy"], 2, "lee", limit=24)
    per_item = Counter()
    pairs = Counter()
    for item in ids:
        assignees = open_item(store, item).assignees
        per_item[len(assignees)] += 1
        if len(assignees) == 2:
            pairs[tuple(assignees)] += 1
    assert per_item == {2: 24, 0: 6}
    assert set(pairs) == {("ann", "bea"), ("ann", "cy"), ("bea", "cy")}, "every pair shares items"
    again = assign_items(store, PID, ["ann", "bea", "cy"], 2, "lee")
    assert again.items == 6, "only what nobody had yet"
    ann_items = [i for i in ids if "ann" in open_item(store, i).assignees]
    review(store, ann_items[0], "ann", ACCEPT)
    assert unassign(store, PID, "ann") == len(ann_items) - 1, "open items only"
    assert [i for i in ids if "ann" in open_item(store, i).assignees] == [ann_items[0]]
    with pytest.raises(Exception, match="overlap"):
        assign_items(store, PID, ["ann"], 2, "lee")


def test_agreement_per_pair_and_overall_on_conversation_and_turn_labels(store: Store):
    ids = project(store, 8)
    labels = {
        "ann": ["accept", "accept", "reject", "accept", "reject", "accept", "accept", "reject"],
        "bea": ["accept", "reject", "reject", "accept", "reject", "accept", "reject", "reject"],
    }
    for who, verdicts in labels.items():
        for item, label in zip(ids, verdicts, strict=True):
            turn = TurnVerdict(
                turn_index=1, label=label, reason="wrong answer" if label == "reject" else None
            )
            review(store, item, who, ACCEPT if label == "accept" else REJECT, [turn])
    report = agreement_report(store, PID)
    expected = cohen_kappa(dict(enumerate(labels["ann"])), dict(enumerate(labels["bea"])))
    conv = report["conversation"]
    assert conv.overall_name == "Cohen's kappa" and math.isclose(conv.overall, expected)
    assert (conv.units, conv.pairable) == (8, 8)
    assert list(conv.pairs[["a", "b", "n"]].itertuples(index=False, name=None)) == [("ann", "bea", 8)]
    assert math.isclose(report["turn"].overall, expected)
    assert conv.headline == f"{expected:.2f}" and conv.too_few is None, "8 shared items are enough"
    shown = shown_pairs(conv.pairs)
    assert list(shown.columns) == [
        "annotator A",
        "annotator B",
        "shared",
        "observed agreement",
        "Cohen's kappa",
    ]

    for item in ids[:4]:
        review(store, item, "cy", ACCEPT)
    three = agreement_report(store, PID)["conversation"]
    assert three.overall_name == "Krippendorff's alpha" and three.annotators == ["ann", "bea", "cy"]
    assert len(three.pairs) == 3 and math.isclose(three.overall, three.alpha)
    # cy shares 4 items with each of the others: below MIN_SHARED, so those pairs' kappa is not shown.
    assert shown_pairs(three.pairs)["Cohen's kappa"].tolist()[1:] == ["n/a", "n/a"]


def test_agreement_on_fewer_than_five_shared_items_reads_n_a_with_the_reason(store: Store):
    ids = project(store, 3)
    for item in ids:
        review(store, item, "ann", ACCEPT)
    review(store, ids[0], "bea", REJECT)
    conv = agreement_report(store, PID)["conversation"]
    assert conv.shared == 1 and conv.overall == 0.0, "computed, but not shown"
    assert conv.headline == "n/a"
    assert conv.too_few == (
        f"Cohen's kappa needs at least {MIN_SHARED} conversations labelled by two annotators; 1 so far. "
        "Raise the overlap when assigning."
    )
    shown = shown_pairs(conv.pairs)
    assert shown.iloc[0].tolist() == ["ann", "bea", 1, "0.00", "n/a"]


def test_silver_calibration_measures_the_judge_on_gold_and_picks_a_threshold(store: Store):
    ids = project(store, 12)
    scores = {i: open_item(store, i).judge_score for i in ids}
    # People accept exactly the conversations the judge scores at 0.4 or more.
    for item, score in scores.items():
        review(store, item, "ann", ACCEPT if score >= 0.4 else REJECT)
    cal = silver_calibration(store, PID, target_precision=0.95)
    assert cal.n == 12 and cal.positives == sum(s >= 0.4 for s in scores.values())
    assert cal.choice is not None and cal.choice.precision == 1.0 and cal.choice.recall == 1.0
    assert cal.choice.threshold == min(s for s in scores.values() if s >= 0.4)
    assert list(cal.frame().columns)[:3] == ["threshold", "precision", "recall"]
    assert 0.0 <= cal.judge_precision <= 1.0


def test_table_6_correlates_the_judge_score_with_the_people_s_decision(store: Store):
    from scipy import stats

    from evalcore.review import judge_human_correlation

    ids = project(store, 12)
    assert not judge_human_correlation(store, PID).defined  # nobody decided yet
    scores = [open_item(store, i).judge_score for i in ids]
    decisions = [1.0 if n % 3 else 0.0 for n in range(12)]  # people disagree with the judge now and then
    for item, decided in zip(ids, decisions, strict=True):
        review(store, item, "ann", ACCEPT if decided else REJECT)
    table6 = judge_human_correlation(store, PID)
    expected = stats.pearsonr(scores, decisions)
    assert table6.n == 12
    assert table6.r == pytest.approx(expected.statistic, abs=1e-9)
    assert table6.p_value == pytest.approx(expected.pvalue, rel=1e-6)
    low, high = expected.confidence_interval(0.95)
    assert (table6.low, table6.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))


def test_gold_and_silver_exports_say_who_accepted_what_and_the_judge_score(store: Store):
    ids = project(store, 6)
    fix = TurnVerdict(turn_index=1, label="reject", reason="wrong answer", edited_content="Corrected answer.")
    review(store, ids[0], "ann", ACCEPT, [fix, TurnVerdict(turn_index=3, label="accept")])
    review(store, ids[0], "bea", ACCEPT)
    review(store, ids[1], "ann", REJECT)
    gold = [json.loads(line) for line in export_jsonl(store, PID, tier="gold", review=True)]
    assert len(gold) == 1
    line = gold[0]
    conversation = Conversation.model_validate(line["conversation"])
    assert conversation.id == ids[0] and conversation.tier.value == "gold"
    assert conversation.turns[1].content == "Corrected answer."
    assert conversation.turns[1].metadata["corrected_by"] == "ann"
    assert conversation.turns[1].metadata["original_content"]
    assert line["review"]["accepted_by"] == ["ann", "bea"]
    assert line["review"]["turn_verdicts"]["1"] == {"ann": "reject"}
    assert {a["author"] for a in line["review"]["annotations"]} == {"ann", "bea"}
    assert line["judge"]["score"] == open_item(store, ids[0]).judge_score

    silver = [json.loads(line) for line in export_jsonl(store, PID, tier="silver", review=True)]
    counts = tier_counts(store, PID)
    assert len(silver) == counts["silver"] and all(s["judge"]["passed"] for s in silver)
    assert ids[1] not in {s["conversation"]["id"] for s in silver}, "a rejected item is not silver"
    assert sum(counts[t] for t in ("gold", "silver", "rejected", "unreviewed")) == 6


def test_the_queue_reads_one_page_not_the_whole_project(store: Store):
    """Pagination happens in SQL: the page query has LIMIT/OFFSET and the per-row reads (turns,
    assignments, verdicts) ask for the page's items only."""
    ids = project(store, 40)
    queue_page(store, PID, limit=5)  # derive the states first
    seen: list[tuple[str, object]] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        seen.append((statement, parameters))

    sa.event.listen(store.engine, "before_cursor_execute", record)
    try:
        page = queue_page(store, PID, limit=5, offset=10)
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", record)
    assert [r.item_id for r in page.rows] == ids[10:15] and page.total == 40
    assert any("LIMIT" in s.upper() and "OFFSET" in s.upper() for s, _ in seen)
    for statement, parameters in seen:
        values = parameters.values() if isinstance(parameters, dict) else parameters
        asked = {v for v in values if isinstance(v, str) and v.startswith("conv-")}
        assert asked <= set(ids[10:15]), statement
