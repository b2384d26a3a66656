"""Tier derivation from annotation history: each rule of evalcore.items.tiers has its own test."""

from __future__ import annotations

import pytest

from evalcore.items.tiers import conversation_verdicts, current_edits, derive_tier, turn_verdicts
from evalcore.models import Annotation, AnnotationLabel, Tier

ACCEPT, REJECT, REOPEN = AnnotationLabel.accept, AnnotationLabel.reject, AnnotationLabel.reopen


def ann(
    author: str,
    label: AnnotationLabel,
    turn: int | None = None,
    *,
    role: str = "annotator",
    reason: str | None = None,
    edit: str | None = None,
    item: str = "c1",
) -> Annotation:
    return Annotation(
        item_kind="conversation",
        item_id=item,
        turn_index=turn,
        label=label,
        reason=reason,
        edited_content=edit,
        author=author,
        role=role,
    )


# ------------------------------------------------------------------ no human verdict: the judge decides


@pytest.mark.parametrize(
    ("judge_passed", "tier"), [(True, Tier.silver), (False, Tier.unreviewed), (None, Tier.unreviewed)]
)
def test_without_annotations_the_judge_sets_silver_or_unreviewed(judge_passed, tier):
    state = derive_tier([], judge_passed)
    assert state.tier == tier
    assert state.accepted_by == state.rejected_by == state.reasons == ()
    assert not state.needs_adjudication


# ------------------------------------------------------------------ gold


def test_one_accept_is_gold_when_one_is_required():
    state = derive_tier([ann("alice", ACCEPT)], judge_passed=True)
    assert state.tier == Tier.gold
    assert state.accepted_by == ("alice",)


def test_human_accept_takes_a_judge_failed_item_to_gold():
    assert derive_tier([ann("alice", ACCEPT)], judge_passed=False).tier == Tier.gold


def test_two_required_one_accept_stays_silver_then_second_distinct_accept_makes_gold():
    history = [ann("alice", ACCEPT)]
    assert derive_tier(history, True, required_agreement=2).tier == Tier.silver
    # The same annotator accepting twice is still one annotator.
    history.append(ann("alice", ACCEPT))
    assert derive_tier(history, True, required_agreement=2).tier == Tier.silver
    history.append(ann("bob", ACCEPT))
    state = derive_tier(history, True, required_agreement=2)
    assert state.tier == Tier.gold
    assert state.accepted_by == ("alice", "bob")


def test_required_agreement_below_one_is_refused():
    with pytest.raises(ValueError, match="required_agreement"):
        derive_tier([], True, required_agreement=0)


# ------------------------------------------------------------------ latest verdict and reopen


def test_latest_verdict_of_an_annotator_wins():
    history = [ann("alice", REJECT, reason="hallucination"), ann("alice", ACCEPT)]
    state = derive_tier(history, True)
    assert state.tier == Tier.gold
    assert state.rejected_by == ()
    assert state.reasons == ()


def test_reopen_clears_the_annotators_verdict():
    history = [ann("alice", ACCEPT), ann("alice", REOPEN)]
    state = derive_tier(history, judge_passed=True)
    assert state.tier == Tier.silver
    assert state.accepted_by == ()
    # Reopen clears only its author's verdict.
    history = [ann("alice", ACCEPT), ann("bob", ACCEPT), ann("bob", REOPEN)]
    assert derive_tier(history, True, required_agreement=2).tier == Tier.silver
    assert derive_tier(history, True, required_agreement=2).accepted_by == ("alice",)


def test_verdict_after_reopen_counts_again():
    history = [ann("alice", ACCEPT), ann("alice", REOPEN), ann("alice", REJECT, reason="off-spec")]
    state = derive_tier(history, True)
    assert state.tier == Tier.rejected
    assert state.reasons == ("off-spec",)


# ------------------------------------------------------------------ rejected, kept with reasons


def test_rejection_without_accepts_rejects_and_keeps_reasons():
    history = [
        ann("alice", REJECT, reason="wrong answer"),
        ann("bob", REJECT, reason="unsupported claim"),
        ann("carol", REJECT, reason="wrong answer"),
    ]
    state = derive_tier(history, judge_passed=True, required_agreement=2)
    assert state.tier == Tier.rejected
    assert state.rejected_by == ("alice", "bob", "carol")
    assert state.reasons == ("wrong answer", "unsupported claim")


def test_one_rejection_rejects_even_when_two_accepts_are_required():
    assert derive_tier([ann("alice", REJECT)], True, required_agreement=2).tier == Tier.rejected


# ------------------------------------------------------------------ disagreement and adjudication


def test_disagreement_falls_back_to_judge_tier_and_needs_adjudication():
    history = [ann("alice", ACCEPT), ann("bob", REJECT, reason="tool misuse")]
    state = derive_tier(history, judge_passed=True)
    assert state.tier == Tier.silver
    assert state.needs_adjudication
    assert state.accepted_by == ("alice",)
    assert state.rejected_by == ("bob",)
    assert state.reasons == ("tool misuse",)
    assert derive_tier(history, judge_passed=None).tier == Tier.unreviewed


def test_lead_accept_overrides_annotator_rejection():
    history = [
        ann("alice", ACCEPT),
        ann("bob", REJECT, reason="tool misuse"),
        ann("dana", ACCEPT, role="lead"),
    ]
    state = derive_tier(history, judge_passed=False, required_agreement=2)
    assert state.tier == Tier.gold
    assert not state.needs_adjudication
    assert state.adjudicated_by == "dana"
    assert state.adjudication == ACCEPT


def test_lead_reject_overrides_annotator_accepts_and_later_annotator_verdicts():
    history = [
        ann("alice", ACCEPT),
        ann("dana", REJECT, role="lead", reason="policy violation"),
        ann("bob", ACCEPT),
    ]
    state = derive_tier(history, judge_passed=True)
    assert state.tier == Tier.rejected
    assert state.reasons == ("policy violation",)
    assert state.accepted_by == ("alice", "bob")


def test_lead_reopen_withdraws_the_adjudication():
    history = [
        ann("alice", ACCEPT),
        ann("bob", REJECT),
        ann("dana", ACCEPT, role="lead"),
        ann("dana", REOPEN, role="lead"),
    ]
    state = derive_tier(history, judge_passed=True)
    assert state.tier == Tier.silver
    assert state.needs_adjudication
    assert state.adjudicated_by is None


def test_latest_lead_decision_wins_between_leads():
    history = [ann("dana", ACCEPT, role="lead"), ann("erin", REJECT, role="lead", reason="duplicate")]
    state = derive_tier(history, True)
    assert state.tier == Tier.rejected
    assert state.adjudicated_by == "erin"


def test_lead_turn_verdict_is_not_an_adjudication():
    history = [ann("alice", ACCEPT), ann("dana", REJECT, 2, role="lead", reason="typo")]
    assert derive_tier(history, True).tier == Tier.gold


# ------------------------------------------------------------------ turn-level verdicts


def test_turn_rejection_without_item_verdict_counts_as_rejecting_the_item():
    history = [ann("alice", ACCEPT, 0), ann("alice", REJECT, 3, reason="hallucination")]
    state = derive_tier(history, judge_passed=True)
    assert state.tier == Tier.rejected
    assert state.rejected_by == ("alice",)
    assert state.reasons == ("hallucination",)


def test_turn_accepts_alone_do_not_make_gold():
    history = [ann("alice", ACCEPT, 0), ann("alice", ACCEPT, 1)]
    assert derive_tier(history, judge_passed=True).tier == Tier.silver


def test_item_accept_is_authoritative_over_own_turn_rejection_and_flagged():
    history = [
        ann("alice", REJECT, 3, reason="wrong price", edit="The price is 40 EUR."),
        ann("alice", ACCEPT),
    ]
    state = derive_tier(history, judge_passed=True)
    assert state.tier == Tier.gold
    assert state.inconsistent == ("alice",)
    assert turn_verdicts(history) == {3: {"alice": REJECT}}
    assert conversation_verdicts(history) == {"alice": ACCEPT}


def test_turn_reopen_lifts_the_implicit_rejection():
    history = [ann("alice", REJECT, 3), ann("alice", REOPEN, 3)]
    assert derive_tier(history, True).tier == Tier.silver
    assert turn_verdicts(history) == {}


def test_turn_verdicts_are_current_per_author_and_turn():
    history = [
        ann("alice", ACCEPT, 1),
        ann("bob", REJECT, 1),
        ann("alice", REJECT, 1),
        ann("bob", ACCEPT, 0),
        ann("bob", REOPEN, 1),
        ann("carol", ACCEPT),  # whole-conversation verdicts are not turn verdicts
        ann("dana", ACCEPT, 2, role="lead"),
    ]
    assert turn_verdicts(history) == {0: {"bob": ACCEPT}, 1: {"alice": REJECT}, 2: {"dana": ACCEPT}}
    assert list(turn_verdicts(history)) == [0, 1, 2]


def test_current_edits_latest_per_turn_wins_and_survives_reopen():
    history = [
        ann("alice", REJECT, 2, edit="first fix"),
        ann("bob", REJECT, 2, edit="second fix"),
        ann("bob", REOPEN, 2),
        ann("alice", ACCEPT, 4, edit="turn four fix"),
        ann("carol", ACCEPT, None, edit="expected answer"),
        ann("carol", ACCEPT, 4),  # no edit: keeps the earlier one
    ]
    assert current_edits(history) == {2: "second fix", 4: "turn four fix", None: "expected answer"}


# ------------------------------------------------------------------ refused inputs


def test_mixed_items_are_refused():
    with pytest.raises(ValueError, match="one item"):
        derive_tier([ann("alice", ACCEPT, item="c1"), ann("bob", ACCEPT, item="c2")], True)


def test_unknown_role_is_refused():
    with pytest.raises(ValueError, match="role"):
        derive_tier([ann("alice", ACCEPT, role="Lead")], True)
