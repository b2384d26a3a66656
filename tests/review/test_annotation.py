"""Annotation workbench against the store (SQLite and PostgreSQL): saving verdicts, never losing work,
derived tiers, reopening, adjudication."""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from evalcore.errors import EvalcoreError, StaleVersionError
from evalcore.items import state as state_module
from evalcore.items.store_ops import add_conversation
from evalcore.review import (
    ItemVerdict,
    TurnVerdict,
    adjudicate,
    adjudication_queue,
    open_item,
    queue_page,
    refresh_states,
    reopen,
    save_review,
    set_leads,
    set_policy,
)
from evalcore.review.queue import QueueFilter
from evalcore.review.verdicts import item_verdict, turn_verdict
from evalcore.store import Store
from evalcore.store import schema as t
from tests.annotation_data import add_conversations, make_conversation

ACCEPT = ItemVerdict(label="accept")
PID = "p"


def project(store: Store, n: int = 6) -> list[str]:
    """A project 'p' with `n` three-pair conversations; their ids."""
    store.create_project(PID, "P")
    return add_conversations(store, PID, n, pairs=3)


def tier_of(store: Store, item_id: str) -> str:
    with store.read() as conn:
        return conn.scalar(
            sa.select(t.annotation_states.c.tier).where(t.annotation_states.c.item_id == item_id)
        )


def test_a_review_appends_only_what_changed_and_sets_the_tier(store: Store):
    ids = project(store)
    item = ids[0]
    turns = [TurnVerdict(turn_index=1, label="accept"), TurnVerdict(turn_index=3, label="accept")]
    first = save_review(store, item, "ann", 1, turns, ACCEPT)
    assert (first.version, first.appended, first.state.tier.value) == (2, 3, "gold")
    assert tier_of(store, item) == "gold"

    again = save_review(store, item, "ann", 2, turns, ACCEPT)
    assert (again.version, again.appended) == (2, 0), "the same verdicts twice append nothing"

    changed = [turns[0], TurnVerdict(turn_index=3, label="reject", reason="not grounded", note="no source")]
    third = save_review(store, item, "ann", 2, changed, ItemVerdict(label="reject", reason="not grounded"))
    assert (third.version, third.appended, third.state.tier.value) == (3, 2, "rejected")
    history = store.annotations(item)
    assert [(a.turn_index, a.label.value, a.reason) for a in history[-2:]] == [
        (3, "reject", "not grounded"),
        (None, "reject", "not grounded"),
    ]
    assert all(a.author == "ann" and a.role == "annotator" for a in history)


def test_two_sessions_saving_one_item_the_second_is_refused_naming_who_saved(store: Store, snapshot):
    ids = project(store)
    item = ids[1]
    opened_by_ann = open_item(store, item, "ann").version
    opened_by_bea = open_item(store, item, "bea").version
    save_review(store, item, "ann", opened_by_ann, [TurnVerdict(turn_index=1, label="accept")], ACCEPT)

    before = snapshot(store)
    with pytest.raises(StaleVersionError) as refused:
        save_review(store, item, "bea", opened_by_bea, [], ItemVerdict(label="reject", reason="unsafe"))
    assert refused.value.changed_by == "ann"
    assert "changed by ann" in str(refused.value) and "reload" in str(refused.value)
    assert snapshot(store) == before, "a refused save writes nothing"

    # Reload (the head version) and save again: both saves stay in the history.
    reloaded = open_item(store, item, "bea")
    save_review(store, item, "bea", reloaded.version, [], ItemVerdict(label="reject", reason="unsafe"))
    assert [(r.version, r.author) for r in store.history(item)] == [(1, "offline"), (2, "ann"), (3, "bea")]
    assert {a.author for a in store.annotations(item)} == {"ann", "bea"}
    assert open_item(store, item, "bea").state.needs_adjudication


def test_saves_racing_on_one_version_exactly_one_wins_and_state_matches(store: Store):
    ids = project(store)
    item = ids[2]
    outcomes: dict[str, object] = {}
    barrier = threading.Barrier(2)

    def save(who: str, verdict: ItemVerdict) -> None:
        barrier.wait()
        try:
            outcomes[who] = save_review(store, item, who, 1, [], verdict)
        except StaleVersionError as exc:
            outcomes[who] = exc

    threads = [
        threading.Thread(target=save, args=("ann", ACCEPT)),
        threading.Thread(target=save, args=("bea", ItemVerdict(label="reject", reason="off-spec"))),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    refused = [who for who, o in outcomes.items() if isinstance(o, StaleVersionError)]
    assert len(refused) == 1, outcomes
    winner = ({"ann", "bea"} - set(refused)).pop()
    assert {a.author for a in store.annotations(item)} == {winner}
    assert tier_of(store, item) == ("gold" if winner == "ann" else "rejected")


@pytest.mark.parametrize("where", ["before the derived state", "after the derived state"])
def test_a_save_interrupted_half_way_leaves_the_previous_state_whole(
    store: Store, snapshot, monkeypatch, where
):
    ids = project(store)
    item = ids[3]
    save_review(store, item, "ann", 1, [TurnVerdict(turn_index=1, label="accept")], ACCEPT)
    before = snapshot(store)
    real_upsert = state_module.upsert

    def crash_before(*args, **kwargs):
        raise RuntimeError("power cut")

    def crash_after(*args, **kwargs):
        real_upsert(*args, **kwargs)  # the new state row is written inside the transaction ...
        raise RuntimeError("power cut")  # ... and then the save dies before committing

    monkeypatch.setattr(state_module, "upsert", crash_before if where.startswith("before") else crash_after)
    with pytest.raises(RuntimeError, match="power cut"):
        save_review(store, item, "bea", 2, [], ItemVerdict(label="reject", reason="wrong answer"))
    monkeypatch.undo()

    assert snapshot(store) == before, "nothing of the interrupted save is kept"
    assert tier_of(store, item) == "gold"
    assert [r.version for r in store.history(item)] == [1, 2]
    # The item is still usable: the same save, retried, goes through on the same version.
    assert (
        save_review(store, item, "bea", 2, [], ItemVerdict(label="reject", reason="wrong answer")).version
        == 3
    )


def test_reasons_come_from_the_short_list_and_other_needs_a_note():
    with pytest.raises(ValueError, match="needs a reason"):
        TurnVerdict(turn_index=1, label="reject")
    with pytest.raises(ValueError, match="unknown reason"):
        TurnVerdict(turn_index=1, label="reject", reason="boring")
    with pytest.raises(ValueError, match="needs a note"):
        ItemVerdict(label="reject", reason="other")
    with pytest.raises(ValueError, match="takes no rejection reason"):
        ItemVerdict(label="accept", reason="unsafe")
    assert ItemVerdict(label="reject", reason="other", note="talks about cars").reason == "other"


def test_a_name_is_needed_and_turns_must_exist(store: Store):
    ids = project(store)
    with pytest.raises(EvalcoreError, match="name is needed"):
        save_review(store, ids[0], "  ", 1, [], ACCEPT)
    with pytest.raises(EvalcoreError, match="has no turn 42"):
        save_review(store, ids[0], "ann", 1, [TurnVerdict(turn_index=42, label="accept")], ACCEPT)


def test_a_corrected_answer_is_a_new_version_and_shows_in_the_view(store: Store):
    ids = project(store)
    item = ids[0]
    fix = TurnVerdict(turn_index=1, label="reject", reason="wrong answer", edited_content="Returns: 30 days.")
    save_review(store, item, "ann", 1, [fix], ACCEPT)
    view = open_item(store, item, "bea")
    assert view.content(1) == "Returns: 30 days."
    original = store.current(item).body["turns"][1]["content"]
    assert original != "Returns: 30 days.", "the generated content is kept"
    assert view.conversation.turns[1].metadata["original_content"] == original
    assert view.conversation.turns[1].metadata["corrected_by"] == "ann"
    assert view.state.tier.value == "gold" and view.state.inconsistent == ("ann",)


def test_a_rejected_item_keeps_its_reasons_and_can_be_reopened(store: Store):
    ids = project(store)
    item = ids[1]
    bad = TurnVerdict(turn_index=3, label="reject", reason="unsafe", note="gives medical advice")
    v = save_review(store, item, "ann", 1, [bad], ItemVerdict(label="reject", reason="unsafe")).version
    view = open_item(store, item, "ann")
    assert view.state.tier.value == "rejected" and view.state.reasons == ("unsafe",)
    assert queue_page(store, PID, QueueFilter(tier="rejected")).total == 1

    reopened = reopen(store, item, "ann", v)
    assert reopened.state.tier.value == ("silver" if view.judge_passed else "unreviewed")
    assert open_item(store, item, "ann").mine == {}
    assert [a.label.value for a in store.annotations(item)].count("reopen") == 2, "item and turn reopened"
    assert queue_page(store, PID, QueueFilter(tier="rejected")).total == 0


def test_disagreements_wait_for_a_lead_whose_decision_is_recorded_as_such(store: Store):
    ids = project(store)
    item = ids[2]
    v = save_review(store, item, "ann", 1, [], ACCEPT).version
    v = save_review(store, item, "bea", v, [], ItemVerdict(label="reject", reason="not grounded")).version
    assert [d.item_id for d in adjudication_queue(store, PID)] == [item]
    assert queue_page(store, PID, QueueFilter(tier="disagreement")).total == 1

    set_leads(store, PID, ["lee"])
    with pytest.raises(EvalcoreError, match="only the project's leads"):
        adjudicate(store, item, "ann", v, ACCEPT)
    decided = adjudicate(store, item, "lee", v, ItemVerdict(label="reject", reason="not grounded"))
    assert decided.state.tier.value == "rejected" and decided.state.adjudicated_by == "lee"
    assert store.annotations(item)[-1].role == "lead"
    assert adjudication_queue(store, PID) == []

    withdrawn = reopen(store, item, "lee", decided.version, role="lead")
    assert withdrawn.state.needs_adjudication and withdrawn.state.adjudicated_by is None


def test_gold_needs_the_project_number_of_agreeing_annotators(store: Store):
    ids = project(store)
    item = ids[0]
    set_policy(store, PID, required_agreement=2)
    v = save_review(store, item, "ann", 1, [], ACCEPT)
    assert v.state.tier.value != "gold"
    assert save_review(store, item, "bea", v.version, [], ACCEPT).state.tier.value == "gold"
    set_policy(store, PID, required_agreement=3)
    assert tier_of(store, item) != "gold", "a stricter policy re-derives existing tiers"
    set_policy(store, PID, required_agreement=1)
    assert tier_of(store, item) == "gold"
    with pytest.raises(EvalcoreError, match="required_agreement"):
        set_policy(store, PID, required_agreement=0)


def test_a_calibrated_judge_threshold_defines_silver(store: Store):
    ids = project(store, 10)
    scores = {i: open_item(store, i).judge_score for i in ids}
    set_policy(store, PID, judge_threshold=0.5)
    silver = {r.item_id for r in queue_page(store, PID, QueueFilter(tier="silver"), limit=100).rows}
    assert silver == {i for i, s in scores.items() if s >= 0.5}
    set_policy(store, PID, clear_threshold=True)
    silver = {r.item_id for r in queue_page(store, PID, QueueFilter(tier="silver"), limit=100).rows}
    assert silver == {i for i in ids if open_item(store, i).judge_passed}


def test_writes_made_outside_the_workbench_are_caught_up(store: Store):
    """Annotations written straight through Store.annotate, new content and new items all show."""
    ids = project(store)
    refresh_states(store, PID)
    from evalcore.models import Annotation

    direct = Annotation(
        item_kind="conversation", item_id=ids[0], label="reject", reason="unsafe", author="cy"
    )
    store.annotate(ids[0], [direct], "cy", 1)
    body = make_conversation(0, pairs=3).model_dump(mode="json")
    body["metadata"] = {"judge_passed": True, "judge_score": 0.99}
    store.save_revision(ids[1], body, "judge-rerun", 1)
    add_conversation(store, PID, make_conversation(99, pairs=2))

    assert refresh_states(store, PID) == 3
    assert tier_of(store, ids[0]) == "rejected"
    assert open_item(store, ids[1]).judge_score == 0.99 and tier_of(store, ids[1]) == "silver"
    assert queue_page(store, PID).total == len(ids) + 1
    assert refresh_states(store, PID) == 0, "nothing left to do: the check is cheap and idempotent"


def test_a_refresh_with_no_revision_since_the_last_looks_through_nothing(store: Store, monkeypatch):
    ids = project(store)
    refresh_states(store, PID)
    looked = []
    real = state_module._out_of_date
    monkeypatch.setattr(state_module, "_out_of_date", lambda *a: looked.append(a) or real(*a))
    assert refresh_states(store, PID) == 0 and not looked  # nothing written since: no look at the items
    save_review(store, ids[0], "ann", 1, [], ItemVerdict(label="reject", reason="unsafe"))
    refresh_states(store, PID)
    assert tier_of(store, ids[0]) == "rejected" and len(looked) == 1  # a revision since: looked again
    set_policy(store, PID, required_agreement=2)  # a policy: looked again
    assert len(looked) == 2 and refresh_states(store, PID) == 0 and len(looked) == 2
    # A derived row lost outside the workbench is re-derived by a store opened again (not by this one,
    # which saw no revision since).
    with store.write() as conn:
        conn.execute(sa.delete(t.annotation_states).where(t.annotation_states.c.item_id == ids[0]))
    assert refresh_states(store, PID) == 0
    again = Store(store.url)
    try:
        assert refresh_states(again, PID) == 1 and tier_of(again, ids[0]) == "rejected"
    finally:
        again.close()


def test_deleting_a_project_removes_its_annotation_rows(store: Store):
    from evalcore.review import assign_items

    ids = project(store)
    assign_items(store, PID, ["ann", "bea"], 2, "lee")
    save_review(store, ids[0], "ann", 1, [], ACCEPT)
    store.delete_project(PID)
    with store.read() as conn:
        for table in (t.assignments, t.annotation_states, t.annotation_verdicts):
            assert conn.scalar(sa.select(sa.func.count()).select_from(table)) == 0


def test_a_turn_nobody_marked_has_no_verdict_and_never_makes_the_item_accepted():
    assert turn_verdict(3, None) is None, "no choice, no correction: nothing to record"
    corrected = turn_verdict(3, None, text="14 days", shown="30 days")
    assert (corrected.label, corrected.reason, corrected.edited_content) == (
        "reject",
        "wrong answer",
        "14 days",
    )
    accepted = turn_verdict(1, "accept")
    with pytest.raises(EvalcoreError, match=r"turn\(s\) 3, 5 have no verdict yet"):
        item_verdict([accepted], unmarked=[5, 3])
    assert item_verdict([accepted], "accept", unmarked=[3, 5]).label == "accept", "an explicit verdict"
    rejected = turn_verdict(1, "unsafe")
    assert item_verdict([rejected], unmarked=[3]).reason == "unsafe", "a rejected turn rejects the item"
    assert item_verdict([accepted, corrected]).label == "accept", "every turn marked, a corrected one"
