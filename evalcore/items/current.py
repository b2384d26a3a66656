"""The read model of "the current item": a conversation or test as people and runs mean it now.

Stored content is what a generator wrote; people then correct it (an annotator's ``edited_content`` on a
turn), accept or reject it, and the project's policy says what their verdicts and the LLM judge's make of
it. Every reader (runs, every export, the annotation views, the Conversations page, reports) reads items
through here, so a correction, a tier and a judge verdict mean the same thing everywhere:

- ``content``: the latest content with every current correction applied (`evalcore.items.tiers.current_edits`:
  the latest edit of each turn wins); a corrected turn keeps ``original_content`` and ``corrected_by`` in
  its metadata, and ``tier`` is set to the tier below;
- ``tier``: the project's policy applied to the annotations and the judge (`evalcore.items.state`),
  read from the derived ``annotation_states`` row, brought up to date first;
- ``judge``: the one judge-verdict rule: ``judge_passed`` and ``judge_score`` in the item's metadata
  (`evalcore.items.state.judge_fields`), and whether the judge passes it under the policy (the calibrated
  threshold when the project sets one);
- ``reviewers``: who decided what, as annotator or lead, and when.

Items are read in batches (a handful of queries per 500 items), never one query per item, so reports and
pages can read thousands. Kinds nobody reviews turn by turn (specs, personas) come back as stored, with
no tier.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from pydantic import Field

from evalcore.errors import EvalcoreError, NotFoundError
from evalcore.items.sql import BATCH, annotations_of, chunks, latest_bodies
from evalcore.items.state import (
    REVIEWED_KINDS,
    Policy,
    judge_fields,
    judge_passes,
    policy_of,
    refresh_states,
    update_states,
)
from evalcore.items.tiers import ANNOTATOR, LEAD, conversation_verdicts, current_edits
from evalcore.models import Annotation, AnnotationLabel, Conversation, Test, Tier
from evalcore.models.common import Record
from evalcore.store import Store
from evalcore.store import schema as t

# Items per batch of reads (an export page): a handful of queries each.
PAGE = BATCH


class Reviewer(Record):
    """Someone whose verdict counts for the item's tier."""

    name: str = Field(description="Who.")
    role: str = Field(description="annotator, or lead (an adjudication).")
    label: AnnotationLabel = Field(description="Their effective verdict on the whole item: accept or reject.")
    at: datetime = Field(description="When they last annotated the item.")


class Correction(Record):
    """A human correction in effect: the latest edit of one turn."""

    turn_index: int | None = Field(description="The corrected turn; None for a test's expected turn.")
    content: str = Field(description="The corrected text, as the item's content now has it.")
    original: str = Field(description="The text the generator wrote.")
    by: str = Field(description="Who made the correction.")
    at: datetime = Field(description="When.")


class JudgeVerdict(Record):
    """The LLM judge's verdict on the item, read by the one rule."""

    passed: bool | None = Field(description="``judge_passed`` in the item's metadata; None if not judged.")
    score: float | None = Field(description="``judge_score`` in [0, 1]; None if missing or malformed.")
    threshold: float | None = Field(description="The project's calibrated threshold, if it sets one.")
    passes: bool | None = Field(description="Whether the judge passes the item under the project's policy.")


class CurrentItem(Record):
    """One item as every reader sees it now (see the module docstring)."""

    id: str = Field(description="The item's id.")
    kind: str = Field(description="conversation, test, or another item kind.")
    project_id: str = Field(description="The project it belongs to.")
    generator: str | None = Field(description="The generator that wrote it, if any.")
    spec_id: str | None = Field(description="The spec it exercises, if any.")
    version: int = Field(description="Head version: the one a version-checked save goes on top of.")
    saved_by: str = Field(description="Who saved the head version.")
    saved_at: datetime = Field(description="When.")
    created_at: datetime = Field(description="When the item was created (the order of every listing).")
    content: dict[str, Any] = Field(description="Latest content with every correction applied, tier set.")
    tier: Tier | None = Field(description="Tier under the project's policy; None for kinds not reviewed.")
    needs_adjudication: bool = Field(default=False, description="Annotators disagree and no lead decided.")
    reasons: list[str] = Field(default_factory=list, description="Rejection reasons in effect.")
    judge: JudgeVerdict = Field(description="The judge's verdict.")
    reviewers: list[Reviewer] = Field(default_factory=list, description="Annotators and lead who decided.")
    corrections: list[Correction] = Field(default_factory=list, description="Corrections in effect.")
    annotations: list[Annotation] = Field(default_factory=list, description="The full trail, oldest first.")

    def conversation(self) -> Conversation:
        """The content as a Conversation (corrections applied, tier set)."""
        return Conversation.model_validate(self.content)

    def test(self) -> Test:
        """The content as a Test (corrections applied, tier set)."""
        return Test.model_validate(self.content)


def _authors(history: Sequence[Annotation]) -> dict[int | None, tuple[int, Annotation]]:
    """The annotation that made the latest edit of each turn, with its position in the history."""
    latest: dict[int | None, tuple[int, Annotation]] = {}
    for n, a in enumerate(history):
        if a.edited_content is not None:
            latest[a.turn_index] = (n, a)
    return latest


def corrected(body: dict[str, Any], history: Sequence[Annotation]) -> tuple[dict[str, Any], list[Correction]]:
    """`body` with the current corrections of `history` applied, and the corrections that changed it.

    Turns are matched by index in ``turns`` (conversations) and in a test's ``context`` and ``expected``;
    an edit of the whole item (no turn) corrects a test's expected turn, the one thing a test asks for.
    """
    edits = current_edits(history)
    if not edits:
        return body, []
    made = _authors(history)
    content = copy.deepcopy(body)
    changes: list[Correction] = []

    def fix(turn: dict[str, Any], key: int | None) -> None:
        if key not in edits or edits[key] == turn.get("content"):
            return
        _, by = made[key]
        changes.append(
            Correction(
                turn_index=key,
                content=edits[key],
                original=turn.get("content", ""),
                by=by.author,
                at=by.created_at,
            )
        )
        turn["metadata"] = {
            **(turn.get("metadata") or {}),
            "original_content": turn.get("content", ""),
            "corrected_by": by.author,
        }
        turn["content"] = edits[key]

    for turn in [*(content.get("turns") or []), *(content.get("context") or [])]:
        fix(turn, turn.get("index"))
    expected = content.get("expected")
    if isinstance(expected, dict):
        # A test's expected turn is edited as the whole item or by its index: the later edit wins.
        keys = [k for k in (None, expected.get("index")) if k in edits]
        if keys:
            fix(expected, max(keys, key=lambda k: made[k][0]))
    return content, changes


def _reviewers(history: Sequence[Annotation], detail: dict[str, Any], tier: Tier | None) -> list[Reviewer]:
    """Annotators with an effective verdict, then the lead who adjudicated (if one did)."""
    last: dict[tuple[str, str], datetime] = {}
    for a in history:
        last[(a.role, a.author)] = a.created_at
    reviewers = [
        Reviewer(name=name, role=ANNOTATOR, label=label, at=last[(ANNOTATOR, name)])
        for name, label in conversation_verdicts(history).items()
    ]
    lead = detail.get("adjudicated_by")
    if lead and (LEAD, lead) in last:
        label = AnnotationLabel.accept if tier == Tier.gold else AnnotationLabel.reject
        reviewers.append(Reviewer(name=lead, role=LEAD, label=label, at=last[(LEAD, lead)]))
    return reviewers


def _states(conn: sa.Connection, ids: Sequence[str]) -> dict[str, sa.Row]:
    s = t.annotation_states
    return {r.item_id: r for r in conn.execute(sa.select(s).where(s.c.item_id.in_(list(ids))))}


def _read_batch(store: Store, ids: Sequence[str]) -> list[CurrentItem]:
    """The current items among `ids` (unknown ids left out), in the order of `ids`: five queries, plus a
    re-derivation of the items whose derived state is missing, behind, or of another policy."""
    i, p, rev = t.items, t.projects, t.revisions
    with store.read() as conn:
        rows = {
            r.id: r
            for r in conn.execute(
                sa.select(i, p.c.settings).join(p, p.c.id == i.c.project_id).where(i.c.id.in_(list(ids)))
            )
        }
        bodies = latest_bodies(conn, list(rows))
        saves = conn.execute(
            sa.select(rev.c.item_id, rev.c.version, rev.c.author, rev.c.created_at).where(
                rev.c.item_id.in_(list(rows))
            )
        ).all()
        histories = annotations_of(conn, list(rows))
        states = _states(conn, list(rows))
    heads = {r.item_id: r for r in sorted(saves, key=lambda r: r.version)}  # the highest version wins
    policies: dict[str, Policy] = {row.project_id: policy_of(row.settings) for row in rows.values()}
    stale = [
        item_id
        for item_id, row in rows.items()
        if row.kind in REVIEWED_KINDS
        and item_id in bodies
        and (
            item_id not in states
            or states[item_id].version < bodies[item_id][0]
            or states[item_id].policy != policies[row.project_id].key
        )
    ]
    if stale:
        # Written since the last refresh (or under another policy): derive now, as a page would.
        with store.write() as conn:
            update_states(conn, stale)
        with store.read() as conn:
            states.update(_states(conn, stale))
    items = []
    for item_id in ids:
        row = rows.get(item_id)
        if row is None or item_id not in bodies:
            continue
        policy = policies[row.project_id]
        state = states.get(item_id)
        history = histories[item_id]
        content, corrections = corrected(bodies[item_id][1], history)
        tier = Tier(state.tier) if state is not None and row.kind in REVIEWED_KINDS else None
        if tier is not None:
            content["tier"] = tier.value
        passed, score = judge_fields(content.get("metadata"))
        detail = state.detail if state is not None else {}
        head = heads[item_id]
        items.append(
            CurrentItem(
                id=item_id,
                kind=row.kind,
                project_id=row.project_id,
                generator=row.generator,
                spec_id=row.spec_id,
                version=head.version,
                saved_by=head.author,
                saved_at=head.created_at,
                created_at=row.created_at,
                content=content,
                tier=tier,
                needs_adjudication=bool(state.needs_adjudication) if state is not None else False,
                reasons=list(detail.get("reasons") or []),
                judge=JudgeVerdict(
                    passed=passed,
                    score=score,
                    threshold=policy.judge_threshold,
                    passes=judge_passes(passed, score, policy),
                ),
                reviewers=_reviewers(history, detail, tier),
                corrections=corrections,
                annotations=history,
            )
        )
    return items


def read_items(store: Store, item_ids: Sequence[str]) -> dict[str, CurrentItem]:
    """The current items with these ids (unknown ids are left out), in the order given."""
    found: dict[str, CurrentItem] = {}
    for batch in chunks(list(dict.fromkeys(item_ids)), PAGE):
        found.update({item.id: item for item in _read_batch(store, batch)})
    return found


def read_item(store: Store, item_id: str) -> CurrentItem:
    """One current item; NotFoundError if there is none with this id."""
    found = read_items(store, [item_id])
    if item_id not in found:
        raise NotFoundError(f"no item '{item_id}' in the store")
    return found[item_id]


def _listing(
    project_id: str, kind: str, generator: str | None, spec_id: str | None, tier: str | None
) -> sa.Select:
    i, s = t.items, t.annotation_states
    query = sa.select(i.c.id, i.c.created_at).where(i.c.project_id == project_id, i.c.kind == kind)
    if generator:
        query = query.where(i.c.generator == generator)
    if spec_id:
        query = query.where(i.c.spec_id == spec_id)
    if tier is not None:
        query = query.join(s, s.c.item_id == i.c.id).where(s.c.tier == tier)
    return query.order_by(i.c.created_at, i.c.id)


def _check_tier(kind: str, tier: str | None) -> None:
    if tier is not None and tier not in {x.value for x in Tier}:
        raise EvalcoreError(f"unknown tier {tier!r}; choose one of: {', '.join(x.value for x in Tier)}")
    if tier is not None and kind not in REVIEWED_KINDS:
        raise EvalcoreError(f"'{kind}' items have no tier; only {' and '.join(REVIEWED_KINDS)} items do")


def item_ids(
    store: Store,
    project_id: str,
    kind: str,
    *,
    generator: str | None = None,
    spec_id: str | None = None,
    tier: str | None = None,
) -> list[str]:
    """Ids of a project's items of one kind, oldest first, optionally of one generator, spec or tier
    (one query on the indexed columns: no content is read)."""
    _check_tier(kind, tier)
    if tier is not None:
        refresh_states(store, project_id, kind)
    with store.read() as conn:
        return list(conn.scalars(_listing(project_id, kind, generator, spec_id, tier)))


def head_versions(
    store: Store, project_id: str, kind: str, *, generator: str | None = None
) -> dict[str, int]:
    """Each of a project's items of one kind (optionally of one generator), oldest first, with the version
    of its latest save (content, edit or annotation): one grouped query, so a reader of thousands can tell
    which items changed since it last read them."""
    i, rev = t.items, t.revisions
    query = (
        _listing(project_id, kind, generator, None, None)
        .with_only_columns(i.c.id, sa.func.max(rev.c.version))
        .join(rev, rev.c.item_id == i.c.id)
        .group_by(i.c.id, i.c.created_at)
    )
    with store.read() as conn:
        return {item_id: int(version) for item_id, version in conn.execute(query)}


def content_field(
    store: Store, project_id: str, kind: str, field: str, item_ids: Sequence[str] | None = None
) -> dict[str, Any]:
    """One top-level field of the latest content of each of a project's items of one kind (or of those
    among `item_ids`: a run's tens of specs, not the project's thousands), by id, oldest first, cut out in
    SQL (a spec's scenario for a label: no item is read whole). Annotators' corrections are not applied:
    for conversations and tests, read the items."""
    i, rev = t.items, t.revisions
    older = rev.alias()
    latest = (
        sa.select(sa.func.max(older.c.version))
        .where(older.c.item_id == i.c.id, older.c.body.is_not(None))
        .scalar_subquery()
    )
    query = (
        _listing(project_id, kind, None, None, None)
        .with_only_columns(i.c.id, rev.c.body[field])
        .join(rev, rev.c.item_id == i.c.id)
        .where(rev.c.version == latest)
    )
    with store.read() as conn:
        if item_ids is None:
            return dict(conn.execute(query).all())
        found: dict[str, Any] = {}
        for batch in chunks(list(dict.fromkeys(item_ids)), BATCH):
            found.update(conn.execute(query.where(i.c.id.in_(batch))).all())
        return found


def iter_items(
    store: Store,
    project_id: str,
    kind: str,
    *,
    generator: str | None = None,
    spec_id: str | None = None,
    tier: str | None = None,
) -> Iterator[CurrentItem]:
    """Every current item of a project's kind, oldest first, a batch at a time (never all in memory),
    optionally of one generator, spec or tier."""
    _check_tier(kind, tier)
    store.project(project_id)
    if kind in REVIEWED_KINDS:
        refresh_states(store, project_id, kind)
    i = t.items
    after: tuple[datetime, str] | None = None
    while True:
        query = _listing(project_id, kind, generator, spec_id, tier).limit(PAGE)
        if after is not None:
            query = query.where(
                (i.c.created_at > after[0]) | ((i.c.created_at == after[0]) & (i.c.id > after[1]))
            )
        with store.read() as conn:
            page = conn.execute(query).all()
        yield from _read_batch(store, [r.id for r in page])
        if len(page) < PAGE:
            return
        after = (page[-1].created_at, page[-1].id)


def read_tiers(store: Store, project_id: str, item_ids: Sequence[str] | None = None) -> dict[str, Tier]:
    """Only the tier of each item (every reviewed item of the project, or those of `item_ids`), for readers
    of thousands (reports, tables): the derived rows, brought up to date, and no content."""
    refresh_states(store, project_id)
    s = t.annotation_states
    query = sa.select(s.c.item_id, s.c.tier).where(s.c.project_id == project_id)
    tiers: dict[str, Tier] = {}
    with store.read() as conn:
        if item_ids is None:
            tiers.update({r.item_id: Tier(r.tier) for r in conn.execute(query)})
        else:
            for batch in chunks(list(item_ids), BATCH):
                rows = conn.execute(query.where(s.c.item_id.in_(batch)))
                tiers.update({r.item_id: Tier(r.tier) for r in rows})
    return tiers


def correction_versions(store: Store, item_ids: Sequence[str]) -> dict[tuple[str, int | None], int]:
    """Per (item, turn) with a correction: the item version its latest correction was saved at (turn None:
    an edit of the whole item, a test's expected turn). Whatever was read of the item before that version
    had the uncorrected text."""
    a = t.annotations
    found: dict[tuple[str, int | None], int] = {}
    with store.read() as conn:
        for batch in chunks(list(dict.fromkeys(item_ids)), BATCH):
            rows = conn.execute(
                sa.select(a.c.item_id, a.c.turn_index, sa.func.max(a.c.version))
                .where(a.c.item_id.in_(batch), a.c.edited_content.is_not(None))
                .group_by(a.c.item_id, a.c.turn_index)
            )
            found.update({(r[0], r[1]): r[2] for r in rows})
    return found
