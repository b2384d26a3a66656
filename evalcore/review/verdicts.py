"""Saving human verdicts: turn accept/reject with a reason, corrected answers, the whole-item verdict,
reopening, and a lead's adjudication. Every save is one version-checked transaction.

A save appends only what changed against the author's current verdicts, as one new revision of the item
(`Store.annotate`), and updates the item's derived state in the same transaction: either all of it is
committed or none. A save on a version older than the item's head is refused with `StaleVersionError`,
which names who saved in between; nothing is written, and the caller can reload and save again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import sqlalchemy as sa
from pydantic import Field, model_validator

from evalcore.auth.audit import acting_author
from evalcore.auth.roles import Actor, Permission
from evalcore.errors import EvalcoreError
from evalcore.items.sql import annotations_of
from evalcore.items.state import update_states
from evalcore.items.tiers import ANNOTATOR, LEAD, ROLES, TierState, TurnKey
from evalcore.models import Annotation, AnnotationLabel, TurnRole
from evalcore.models.common import Record
from evalcore.review.assignments import leads_of
from evalcore.review.breakdown_labels import BREAKDOWN_ROLE, BreakdownLabel, plan_labels
from evalcore.store import Store
from evalcore.store import schema as t
from evalcore.store.failures import reported_busy

# The short list of rejection reasons (issue 7); "other" needs a note saying what.
REASONS: tuple[str, ...] = ("wrong answer", "not grounded", "unnatural", "off-spec", "unsafe", "other")
OTHER = "other"
Verdict = Literal["accept", "reject"]


class TurnVerdict(Record):
    """An annotator's verdict on one turn, with an optional corrected expected answer."""

    turn_index: int = Field(ge=0, description="The turn judged.")
    label: Verdict = Field(description="accept or reject.")
    reason: str | None = Field(default=None, description="One of REASONS; required to reject.")
    note: str = Field(default="", description="Free text; required when the reason is 'other'.")
    edited_content: str | None = Field(default=None, description="Corrected expected answer, if edited.")

    @model_validator(mode="after")
    def _check(self) -> TurnVerdict:
        _check_reason(self.label, self.reason, self.note, f"turn {self.turn_index}")
        return self


class ItemVerdict(Record):
    """A verdict on the whole conversation (or test)."""

    label: Verdict = Field(description="accept or reject.")
    reason: str | None = Field(default=None, description="One of REASONS; required to reject.")
    note: str = Field(default="", description="Free text; required when the reason is 'other'.")

    @model_validator(mode="after")
    def _check(self) -> ItemVerdict:
        _check_reason(self.label, self.reason, self.note, "the conversation")
        return self


def _check_reason(label: str, reason: str | None, note: str, what: str) -> None:
    if reason is not None and reason not in REASONS:
        raise ValueError(f"unknown reason {reason!r} for {what}; choose one of: {', '.join(REASONS)}")
    if label == "reject" and reason is None:
        raise ValueError(f"rejecting {what} needs a reason: {', '.join(REASONS)}")
    if label == "accept" and reason is not None:
        raise ValueError(f"accepting {what} takes no rejection reason (got {reason!r})")
    if reason == OTHER and not note.strip():
        raise ValueError(f"reason 'other' for {what} needs a note saying what is wrong")


@dataclass(frozen=True)
class SaveResult:
    """What a save did: the item's version after it (unchanged when nothing was new), the number of
    annotation rows appended, and the item's derived state."""

    version: int
    appended: int
    state: TierState | None


def current_of(
    annotations: Sequence[Annotation], author: str, role: str = ANNOTATOR
) -> dict[TurnKey, Annotation]:
    """The author's current accept/reject per target (None = whole item) in that role; reopened absent."""
    current: dict[TurnKey, Annotation] = {}
    for a in annotations:
        if a.author != author or a.role != role:
            continue
        if a.label == AnnotationLabel.reopen:
            current.pop(a.turn_index, None)
        else:
            current[a.turn_index] = a
    return current


def _same(a: Annotation, label: str, reason: str | None, note: str, edited: str | None) -> bool:
    return (str(a.label), a.reason, a.note, a.edited_content) == (label, reason, note, edited)


def plan(
    item_kind: str,
    item_id: str,
    history: Sequence[Annotation],
    author: str,
    turns: Sequence[TurnVerdict] = (),
    item: ItemVerdict | None = None,
    role: str = ANNOTATOR,
) -> list[Annotation]:
    """The annotations to append so the author's current verdicts become `turns` and `item`: only what
    differs from their current ones (saving the same verdicts twice appends nothing)."""
    mine = current_of(history, author, role)
    wanted: list[tuple[TurnKey, str, str | None, str, str | None]] = [
        (v.turn_index, v.label, v.reason, v.note.strip(), v.edited_content) for v in turns
    ]
    if item is not None:
        wanted.append((None, item.label, item.reason, item.note.strip(), None))
    seen: set[TurnKey] = set()
    out = []
    for turn, label, reason, note, edited in wanted:
        if turn in seen:
            raise EvalcoreError(f"two verdicts for {'turn ' + str(turn) if turn is not None else 'the item'}")
        seen.add(turn)
        if turn in mine and _same(mine[turn], label, reason, note, edited):
            continue
        out.append(
            Annotation(
                item_kind=item_kind,
                item_id=item_id,
                turn_index=turn,
                label=label,
                reason=reason,
                note=note,
                edited_content=edited,
                author=author,
                role=role,
            )
        )
    return out


def _item_kind_and_turns(conn: sa.Connection, item_id: str) -> tuple[str, dict[int, str]]:
    """The item's kind and the role of each of its turns, by index."""
    kind = conn.scalar(sa.select(t.items.c.kind).where(t.items.c.id == item_id))
    if kind is None:
        raise EvalcoreError(f"no item '{item_id}' in the store")
    rows = conn.execute(sa.select(t.turns.c.idx, t.turns.c.role).where(t.turns.c.item_id == item_id))
    return kind, {idx: role for idx, role in rows}


def _append(
    store: Store,
    item_id: str,
    author: str,
    expected_version: int,
    build: Callable[[str, dict[int, str], list[Annotation]], list[Annotation]],
) -> SaveResult:
    """One transaction: read the history, build the rows, append them version-checked, re-derive."""
    if not author or not author.strip():
        raise EvalcoreError("a name is needed to save: every verdict is recorded with who made it")
    # A person is waiting on this save: a store too busy to take it says so in one line (nothing written,
    # try again) instead of a traceback on the page.
    with reported_busy(store.display_url), store.write() as conn:
        kind, turns = _item_kind_and_turns(conn, item_id)
        history = annotations_of(conn, [item_id], (*ROLES, BREAKDOWN_ROLE))[item_id]
        rows = build(kind, turns, history)
        if not rows:
            head = conn.scalar(
                sa.select(sa.func.max(t.revisions.c.version)).where(t.revisions.c.item_id == item_id)
            )
            if head != expected_version:
                # Nothing new to say, but the caller's view is out of date: say so rather than pretend.
                store.save_revision(item_id, None, author, expected_version, conn=conn)
            return SaveResult(expected_version, 0, None)
        version = store.annotate(item_id, rows, author.strip(), expected_version, conn=conn)
        state = update_states(conn, [item_id]).get(item_id)
    return SaveResult(version, len(rows), state)


def save_review(
    store: Store,
    item_id: str,
    author: str,
    expected_version: int,
    turns: Sequence[TurnVerdict] = (),
    item: ItemVerdict | None = None,
    breakdowns: Sequence[BreakdownLabel] = (),
    cleared_breakdowns: Sequence[int] = (),
    *,
    actor: Actor | None = None,
) -> SaveResult:
    """Save an annotator's turn verdicts, whole-item verdict and breakdown labels of target turns
    (`breakdowns`; labels on `cleared_breakdowns` withdrawn) on top of `expected_version`.

    Raises StaleVersionError (nothing written) if someone saved the item after that version, and
    PermissionDenied if `actor` may not annotate or is signed in as someone other than `author`.
    """
    author = acting_author(store, actor, Permission.annotate, "review.save", author)

    def build(kind: str, roles: dict[int, str], history: list[Annotation]) -> list[Annotation]:
        unknown = sorted({v.turn_index for v in turns} - set(roles))
        if unknown:
            raise EvalcoreError(f"'{item_id}' has no turn {unknown[0]} (it has {len(roles)} turns)")
        labelled = sorted({b.turn_index for b in breakdowns} | set(cleared_breakdowns))
        untargeted = [i for i in labelled if roles.get(i) != TurnRole.assistant.value]
        if untargeted:
            raise EvalcoreError(
                f"'{item_id}' turn {untargeted[0]} is no target turn: breakdowns are labelled on "
                "assistant turns only"
            )
        try:
            labels = plan_labels(kind, item_id, history, author.strip(), breakdowns, cleared_breakdowns)
        except ValueError as e:
            raise EvalcoreError(str(e)) from None
        return plan(kind, item_id, history, author.strip(), turns, item) + labels

    return _append(store, item_id, author, expected_version, build)


def reopen(
    store: Store,
    item_id: str,
    author: str,
    expected_version: int,
    role: str = ANNOTATOR,
    *,
    actor: Actor | None = None,
) -> SaveResult:
    """Withdraw the author's current verdicts on the item (whole item and turns) in that role.

    A lead's reopen withdraws the adjudication, and the annotators' verdicts apply again. Corrected
    answers stay: a reopen withdraws a verdict, not a correction.
    """
    needed = Permission.adjudicate if role == LEAD else Permission.annotate
    author = acting_author(store, actor, needed, "review.reopen", author)

    def build(kind: str, _turns: dict[int, str], history: list[Annotation]) -> list[Annotation]:
        mine = current_of(history, author.strip(), role)
        targets = [None] if role == LEAD else sorted(mine, key=lambda k: -1 if k is None else k)
        return [
            Annotation(
                item_kind=kind,
                item_id=item_id,
                turn_index=k,
                label="reopen",
                author=author.strip(),
                role=role,
            )
            for k in targets
            if k in mine
        ]

    return _append(store, item_id, author, expected_version, build)


def adjudicate(
    store: Store,
    item_id: str,
    lead: str,
    expected_version: int,
    item: ItemVerdict,
    *,
    actor: Actor | None = None,
) -> SaveResult:
    """Record a lead's decision on the whole item (role 'lead'); it decides the tier whatever the
    annotators said. When the project names its leads (setting ``leads``), only they may decide."""
    lead = acting_author(store, actor, Permission.adjudicate, "review.adjudicate", lead)
    with store.read() as conn:
        settings = conn.scalar(
            sa.select(t.projects.c.settings)
            .join(t.items, t.items.c.project_id == t.projects.c.id)
            .where(t.items.c.id == item_id)
        )
    leads = leads_of(settings or {})
    if leads and lead.strip() not in leads:
        raise EvalcoreError(f"only the project's leads ({', '.join(leads)}) can adjudicate; you are {lead!r}")

    def build(kind: str, _turns: dict[int, str], history: list[Annotation]) -> list[Annotation]:
        return plan(kind, item_id, history, lead.strip(), (), item, role=LEAD)

    return _append(store, item_id, lead, expected_version, build)


# ------------------------------------------------------------------ from a review form

ACCEPT = "accept"
# What a reviewer picks per turn: accept, or one of the reasons (which rejects): one click for both.
TURN_CHOICES: tuple[str, ...] = (ACCEPT, *REASONS)
CORRECTION_REASON = "wrong answer"


def turn_verdict(
    turn_index: int,
    choice: str | None,
    note: str = "",
    text: str | None = None,
    shown: str | None = None,
    previous_edit: str | None = None,
) -> TurnVerdict | None:
    """A TurnVerdict from a review form: `choice` is 'accept', a reason, or None when the reviewer picked
    nothing; `text` is the expected answer as the reviewer left it and `shown` what they were shown.
    Changed text is a correction, and a correction rejects the turn as 'wrong answer' unless another
    reason was picked (the generated answer was not right); keeping one's own earlier correction keeps it.
    A turn with no choice and no correction has no verdict (None): nobody looked at it, so it is not
    recorded as accepted (issue 15)."""
    edited = None
    if text is not None and shown is not None and text.strip():
        if text.strip() != shown.strip():
            edited = text.strip()
        elif previous_edit is not None and text.strip() == previous_edit.strip():
            edited = previous_edit
    if choice is None and edited is None:
        return None
    if choice is not None and choice not in TURN_CHOICES:
        raise EvalcoreError(
            f"unknown choice {choice!r} for turn {turn_index}; one of: {', '.join(TURN_CHOICES)}"
        )
    if choice == ACCEPT and edited is None:
        return TurnVerdict(turn_index=turn_index, label="accept", note=note.strip())
    reason = CORRECTION_REASON if choice in (ACCEPT, None) else choice
    return TurnVerdict(
        turn_index=turn_index, label="reject", reason=reason, note=note.strip(), edited_content=edited
    )


def item_verdict(
    turns: Sequence[TurnVerdict],
    choice: str | None = None,
    reason: str | None = None,
    note: str = "",
    unmarked: Sequence[int] = (),
    labelled: bool = False,
) -> ItemVerdict | None:
    """The whole-item verdict from a review form. With no explicit `choice`, the item is rejected when a
    turn is rejected without a correction (for that turn's reason), and accepted when every judged turn
    has a verdict and none is an uncorrected rejection (a corrected conversation is a good one). Judged
    turns left `unmarked` never count as accepted: then the reviewer must mark them or pick a verdict.
    A reviewer who only `labelled` breakdowns (no turn verdict, no choice) gives no verdict: None."""
    if labelled and not turns and choice is None:
        return None
    uncorrected = [v for v in turns if v.label == "reject" and v.edited_content is None]
    if choice == ACCEPT:
        return ItemVerdict(label="accept", note=note.strip())
    if choice is None and not uncorrected:
        if unmarked:
            listed = ", ".join(str(i) for i in sorted(unmarked))
            raise EvalcoreError(
                f"turn(s) {listed} have no verdict yet: mark each one, or pick a verdict for the whole "
                "conversation"
            )
        return ItemVerdict(label="accept", note=note.strip())
    if reason is None:
        source = uncorrected or [v for v in turns if v.label == "reject"]
        if not source:
            raise EvalcoreError("pick a reason for rejecting the conversation")
        reason = source[0].reason
        note = note.strip() or source[0].note or f"turn {source[0].turn_index}"
    return ItemVerdict(label="reject", reason=reason, note=note.strip())
