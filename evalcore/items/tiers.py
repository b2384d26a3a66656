"""Derive an item's verification tier (unreviewed, silver, gold, rejected) from its annotation history.

Annotations are appended, never overwritten (DESIGN.md, "The store"); the current state is derived here,
as pure functions with no store access, so the dashboard, the CLI and batch jobs agree on one rule set.

History order: a list of annotations is read in the order it was appended, which is the order
`Store.annotations` returns (revision version, then row id). `created_at` is deliberately not used to
order: it is stamped by the client, and two annotators' clocks may disagree, while the store's version
order is serialised by the version check.

The rules, for one item (a conversation or a test):

1. An annotator's *current* verdict on a target (the whole item, ``turn_index=None``, or one turn) is
   their latest accept or reject on it; a later ``reopen`` by the same author clears it.
2. An annotator's *effective* item verdict is their current whole-item verdict. An annotator with no
   current whole-item verdict who currently rejects at least one turn counts as rejecting the item: a
   rejected turn is a defect, so the item must not reach gold on the others' say alone. Turn accepts
   never imply an item accept: gold needs an explicit whole-item accept.
3. A whole-item accept by an annotator who also rejected a turn is authoritative. The usual reason is
   the workflow "reject the turn, type the corrected answer (``edited_content``), accept the item";
   such authors are listed in ``TierState.inconsistent`` so a page can point at them, and
   `turn_verdicts` still shows the turn rejection.
4. A lead's whole-item verdict (``role='lead'``) is an adjudication. The latest one by any lead is the
   decision, whatever annotators said before or after; a lead's ``reopen`` withdraws the adjudication
   and the annotators' verdicts apply again. A lead's turn verdicts are shown in `turn_verdicts` but do
   not adjudicate: an adjudication is deliberate and made on the whole item.
5. Without an adjudication:
   - gold when at least ``required_agreement`` distinct annotators effectively accept and none rejects;
   - rejected when at least one annotator effectively rejects and none accepts (one rejection is
     enough, whatever ``required_agreement`` is: silver is meant to be precise, and a human who saw a
     defect outweighs the judge; a later accept by someone else turns this into a disagreement);
   - disagreement (some accept, some reject): not decided by humans, so the tier falls back to the
     judge's, and ``needs_adjudication`` is True;
   - otherwise (no verdicts, or fewer accepts than required): silver if the judge passed, else
     unreviewed. A judge failure (``judge_passed=False``) is not a human rejection: the item stays
     unreviewed and annotators can still take it to gold.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evalcore.models.common import Tier
from evalcore.models.items import Annotation, AnnotationLabel

ANNOTATOR = "annotator"
LEAD = "lead"
ROLES = (ANNOTATOR, LEAD)

TurnKey = int | None


@dataclass(frozen=True)
class TierState:
    """The derived verification state of one item.

    ``accepted_by`` and ``rejected_by`` are the annotators whose effective verdict is accept or reject
    (sorted by name; leads are reported in ``adjudicated_by``). ``reasons`` are the distinct rejection
    reasons of the current rejections, the lead's first, then whole-item ones, then turn ones, in order of
    appearance. ``inconsistent`` names annotators who accept the item while rejecting one of its turns.
    """

    tier: Tier
    accepted_by: tuple[str, ...] = ()
    rejected_by: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    needs_adjudication: bool = False
    adjudicated_by: str | None = None
    adjudication: AnnotationLabel | None = None
    inconsistent: tuple[str, ...] = ()


def _check(annotations: Sequence[Annotation]) -> None:
    """Refuse histories that would be silently misread: mixed items or an unknown role."""
    item_ids = {(a.item_kind, a.item_id) for a in annotations}
    if len(item_ids) > 1:
        raise ValueError(f"annotations of one item expected, got {len(item_ids)}: {sorted(item_ids)}")
    for a in annotations:
        if a.role not in ROLES:
            raise ValueError(f"unknown annotation role {a.role!r} by {a.author!r}; expected one of {ROLES}")


def _current(annotations: Iterable[Annotation]) -> dict[tuple[str, str, TurnKey], Annotation]:
    """Latest accept/reject per (role, author, turn); a reopen removes the entry it follows."""
    current: dict[tuple[str, str, TurnKey], Annotation] = {}
    for a in annotations:
        key = (a.role, a.author, a.turn_index)
        if a.label == AnnotationLabel.reopen:
            current.pop(key, None)
        else:
            current[key] = a
    return current


def _unique(values: Iterable[str | None]) -> tuple[str, ...]:
    """Distinct non-empty values in first-seen order."""
    seen: dict[str, None] = {}
    for v in values:
        if v:
            seen.setdefault(v, None)
    return tuple(seen)


def _lead_decision(annotations: Sequence[Annotation]) -> Annotation | None:
    """The latest whole-item lead verdict, or None if there is none or the last lead action reopened."""
    decision: Annotation | None = None
    for a in annotations:
        if a.role == LEAD and a.turn_index is None:
            # A reopen by any lead withdraws the adjudication, whichever lead made it.
            decision = None if a.label == AnnotationLabel.reopen else a
    return decision


def conversation_verdicts(annotations: Sequence[Annotation]) -> dict[str, AnnotationLabel]:
    """Each annotator's effective verdict on the whole item (rules 1-2 of the module docstring).

    Leads are left out: their verdicts are adjudications, not votes. Authors without a verdict are absent.
    """
    _check(annotations)
    current = _current(annotations)
    verdicts: dict[str, AnnotationLabel] = {}
    turn_rejecters: set[str] = set()
    for (role, author, turn), a in current.items():
        if role != ANNOTATOR:
            continue
        if turn is None:
            verdicts[author] = a.label
        elif a.label == AnnotationLabel.reject:
            turn_rejecters.add(author)
    for author in turn_rejecters:
        verdicts.setdefault(author, AnnotationLabel.reject)
    return dict(sorted(verdicts.items()))


def turn_verdicts(annotations: Sequence[Annotation]) -> dict[int, dict[str, AnnotationLabel]]:
    """Current verdict per turn and author (annotators and leads), turns in order; cleared ones absent.

    An author who annotates the same turn both as annotator and as lead shows their latest verdict.
    """
    _check(annotations)
    by_turn: dict[int, dict[str, AnnotationLabel]] = {}
    latest: dict[tuple[int, str], AnnotationLabel] = {}
    for a in annotations:
        if a.turn_index is None:
            continue
        key = (a.turn_index, a.author)
        if a.label == AnnotationLabel.reopen:
            latest.pop(key, None)
        else:
            latest[key] = a.label
    for (turn, author), label in sorted(latest.items()):
        by_turn.setdefault(turn, {})[author] = label
    return by_turn


def current_edits(annotations: Sequence[Annotation]) -> dict[TurnKey, str]:
    """The latest edited content per turn (``None`` = the whole item, e.g. a test's expected answer).

    The latest edit wins whoever made it; a reopen does not undo an edit, because it withdraws a verdict,
    not a correction of the content.
    """
    _check(annotations)
    edits: dict[TurnKey, str] = {}
    for a in annotations:
        if a.edited_content is not None:
            edits[a.turn_index] = a.edited_content
    return edits


def derive_tier(
    annotations: Sequence[Annotation], judge_passed: bool | None, required_agreement: int = 1
) -> TierState:
    """Derive the tier of one item from its annotation history and the LLM judge's verdict.

    ``annotations`` are every annotation of the item in append order; ``judge_passed`` is None when the
    judge has not run. ``required_agreement`` is how many distinct annotators must accept for gold. The
    rules are in the module docstring.
    """
    if required_agreement < 1:
        raise ValueError(f"required_agreement must be at least 1, got {required_agreement}")
    annotations = list(annotations)
    verdicts = conversation_verdicts(annotations)
    accepted = tuple(a for a, v in verdicts.items() if v == AnnotationLabel.accept)
    rejected = tuple(a for a, v in verdicts.items() if v == AnnotationLabel.reject)
    current = _current(annotations)
    inconsistent = tuple(
        sorted(
            {
                author
                for (role, author, turn), a in current.items()
                if role == ANNOTATOR and turn is not None and a.label == AnnotationLabel.reject
            }
            & set(accepted)
        )
    )
    lead = _lead_decision(annotations)
    # Reasons: the adjudication's first (it decides), then annotators' whole-item and turn rejections.
    current_rejections = [
        a
        for (role, _, turn), a in sorted(current.items(), key=lambda kv: kv[0][2] is not None)
        if role == ANNOTATOR and a.label == AnnotationLabel.reject
    ]
    lead_reasons = [lead.reason] if lead is not None and lead.label == AnnotationLabel.reject else []
    reasons = _unique([*lead_reasons, *(a.reason for a in current_rejections)])
    fallback = Tier.silver if judge_passed else Tier.unreviewed

    needs_adjudication = False
    if lead is not None:
        tier = Tier.gold if lead.label == AnnotationLabel.accept else Tier.rejected
    elif accepted and rejected:
        tier, needs_adjudication = fallback, True
    elif rejected:
        tier = Tier.rejected
    elif len(accepted) >= required_agreement:
        tier = Tier.gold
    else:
        tier = fallback
    return TierState(
        tier=tier,
        accepted_by=accepted,
        rejected_by=rejected,
        reasons=reasons,
        needs_adjudication=needs_adjudication,
        adjudicated_by=lead.author if lead is not None else None,
        adjudication=lead.label if lead is not None else None,
        inconsistent=inconsistent,
    )
