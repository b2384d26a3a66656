"""The review queue: a project's items filtered by generator, spec, tier, assignee and "needs my review",
one page at a time in SQL (never all items in memory), plus each annotator's progress.

Filters read the derived rows of `evalcore.items.state`; call `refresh_states` first (queue_page
does) so items written since the last look are included.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

import sqlalchemy as sa

from evalcore.items.state import refresh_states
from evalcore.models import Tier
from evalcore.store import Store
from evalcore.store import schema as t

CONVERSATION = "conversation"
DISAGREEMENT = "disagreement"
TIER_FILTERS: tuple[str, ...] = (*(x.value for x in Tier), DISAGREEMENT)
PREVIEW_CHARS = 140


@dataclass(frozen=True)
class QueueFilter:
    """What the queue shows. ``tier`` is a Tier value or 'disagreement' (needs adjudication);
    ``needs_review_by`` keeps the items assigned to that annotator that they have no verdict on yet."""

    kind: str = CONVERSATION
    generator: str | None = None
    spec_id: str | None = None
    tier: str | None = None
    assignee: str | None = None
    needs_review_by: str | None = None


@dataclass(frozen=True)
class QueueRow:
    """One line of the queue."""

    item_id: str
    generator: str | None
    spec_id: str | None
    created_at: datetime
    tier: str
    needs_adjudication: bool
    judge_passed: bool | None
    judge_score: float | None
    n_turns: int
    preview: str
    assignees: tuple[str, ...]
    reviewers: int
    my_verdict: str | None


@dataclass(frozen=True)
class QueuePage:
    """A page of the queue and the number of items matching the filter in all."""

    rows: list[QueueRow]
    total: int
    offset: int
    limit: int


@dataclass(frozen=True)
class AnnotatorProgress:
    """An annotator's assigned items, how many of those they gave a verdict, and verdicts in all."""

    annotator: str
    assigned: int
    done: int
    reviewed: int


def _where(project_id: str, f: QueueFilter) -> list[sa.ColumnElement[bool]]:
    i, s, asg, v = t.items, t.annotation_states, t.assignments, t.annotation_verdicts
    clauses = [i.c.project_id == project_id, i.c.kind == f.kind]
    if f.generator:
        clauses.append(i.c.generator == f.generator)
    if f.spec_id:
        clauses.append(i.c.spec_id == f.spec_id)
    if f.tier == DISAGREEMENT:
        clauses.append(s.c.needs_adjudication.is_(True))
    elif f.tier:
        clauses.append(s.c.tier == Tier(f.tier).value)
    if f.assignee:
        clauses.append(sa.exists().where(asg.c.item_id == i.c.id, asg.c.annotator == f.assignee))
    if f.needs_review_by:
        who = f.needs_review_by
        clauses.append(sa.exists().where(asg.c.item_id == i.c.id, asg.c.annotator == who))
        clauses.append(~sa.exists().where(v.c.item_id == i.c.id, v.c.author == who))
    return clauses


def matching(project_id: str, f: QueueFilter) -> sa.Select:
    i, s = t.items, t.annotation_states
    return sa.select(i.c.id).join(s, s.c.item_id == i.c.id).where(*_where(project_id, f))


def count(store: Store, project_id: str, f: QueueFilter) -> int:
    """How many items match the filter."""
    with store.read() as conn:
        return conn.scalar(sa.select(sa.func.count()).select_from(matching(project_id, f).subquery()))


@dataclass(frozen=True)
class QueueProgress:
    """How far one annotator is through a queue: items of it they gave a verdict, of all its items."""

    done: int
    total: int


def queue_progress(store: Store, project_id: str, f: QueueFilter, user: str) -> QueueProgress:
    """`user`'s progress through the queue `f` ("12 of 62 done"). With "needs my review" the queue is
    everything assigned to them, the items they reviewed counted as done (they have left the list)."""
    whole = replace(f, needs_review_by=None, assignee=f.needs_review_by or f.assignee)
    v = t.annotation_verdicts
    mine = sa.exists().where(v.c.item_id == t.items.c.id, v.c.author == user)
    with store.read() as conn:
        total = conn.scalar(sa.select(sa.func.count()).select_from(matching(project_id, whole).subquery()))
        done = conn.scalar(
            sa.select(sa.func.count()).select_from(matching(project_id, whole).where(mine).subquery())
        )
    return QueueProgress(int(done or 0), int(total or 0))


def queue_page(
    store: Store,
    project_id: str,
    f: QueueFilter = QueueFilter(),
    *,
    limit: int = 25,
    offset: int = 0,
    user: str | None = None,
    refresh: bool = True,
) -> QueuePage:
    """One page of the queue, oldest items first; ``user`` fills in each row's ``my_verdict``."""
    if refresh:
        refresh_states(store, project_id, f.kind)
    i, s = t.items, t.annotation_states
    query = (
        sa.select(i.c.id, i.c.generator, i.c.spec_id, i.c.created_at, s)
        .join(s, s.c.item_id == i.c.id)
        .where(*_where(project_id, f))
        .order_by(i.c.created_at, i.c.id)
        .limit(limit)
        .offset(offset)
    )
    with store.read() as conn:
        rows = conn.execute(query).all()
        total = conn.scalar(sa.select(sa.func.count()).select_from(matching(project_id, f).subquery()))
        ids = [r.id for r in rows]
        n_turns, previews = _turn_facts(conn, ids)
        assignees = _assignees(conn, ids)
        reviewers, mine = _verdicts(conn, ids, user)
    return QueuePage(
        [
            QueueRow(
                item_id=r.id,
                generator=r.generator,
                spec_id=r.spec_id,
                created_at=r.created_at,
                tier=r.tier,
                needs_adjudication=r.needs_adjudication,
                judge_passed=r.judge_passed,
                judge_score=r.judge_score,
                n_turns=n_turns.get(r.id, 0),
                preview=previews.get(r.id, ""),
                assignees=tuple(assignees.get(r.id, ())),
                reviewers=reviewers.get(r.id, 0),
                my_verdict=mine.get(r.id),
            )
            for r in rows
        ],
        total,
        offset,
        limit,
    )


def _turn_facts(conn: sa.Connection, ids: list[str]) -> tuple[dict[str, int], dict[str, str]]:
    """Number of turns and the first user turn's text (shortened) of each item."""
    if not ids:
        return {}, {}
    tu = t.turns
    counts = dict(
        conn.execute(
            sa.select(tu.c.item_id, sa.func.count()).where(tu.c.item_id.in_(ids)).group_by(tu.c.item_id)
        ).all()
    )
    first = (
        sa.select(tu.c.item_id, sa.func.min(tu.c.idx).label("idx"))
        .where(tu.c.item_id.in_(ids), tu.c.role == "user")
        .group_by(tu.c.item_id)
        .subquery()
    )
    texts = conn.execute(
        sa.select(tu.c.item_id, sa.func.substr(tu.c.content, 1, PREVIEW_CHARS + 1)).join(
            first, (first.c.item_id == tu.c.item_id) & (first.c.idx == tu.c.idx)
        )
    ).all()
    previews = {i: (x if len(x) <= PREVIEW_CHARS else x[: PREVIEW_CHARS - 1] + "…") for i, x in texts}
    return counts, previews


def _assignees(conn: sa.Connection, ids: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if ids:
        a = t.assignments
        for item_id, who in conn.execute(
            sa.select(a.c.item_id, a.c.annotator).where(a.c.item_id.in_(ids)).order_by(a.c.annotator)
        ):
            out.setdefault(item_id, []).append(who)
    return out


def _verdicts(conn: sa.Connection, ids: list[str], user: str | None) -> tuple[dict[str, int], dict[str, str]]:
    reviewers: dict[str, int] = {}
    mine: dict[str, str] = {}
    if ids:
        v = t.annotation_verdicts
        for item_id, author, label in conn.execute(
            sa.select(v.c.item_id, v.c.author, v.c.label).where(v.c.item_id.in_(ids))
        ):
            reviewers[item_id] = reviewers.get(item_id, 0) + 1
            if author == user:
                mine[item_id] = label
    return reviewers, mine


def next_item(store: Store, project_id: str, f: QueueFilter, after: str | None = None) -> str | None:
    """The item that follows `after` in the filtered queue, wrapping to the start; None when the queue
    has nothing else. With "needs my review", the item just saved has left the queue, so this is the
    next one still to do."""
    i = t.items
    base = matching(project_id, f).order_by(i.c.created_at, i.c.id).limit(1)
    with store.read() as conn:
        if after is not None:
            pos = conn.execute(sa.select(i.c.created_at, i.c.id).where(i.c.id == after)).first()
            if pos is not None:
                later = (i.c.created_at > pos.created_at) | (
                    (i.c.created_at == pos.created_at) & (i.c.id > pos.id)
                )
                found = conn.scalar(base.where(later))
                if found is not None:
                    return found
        found = conn.scalar(base.where(i.c.id != after) if after else base)
    return found


def previous_item(store: Store, project_id: str, f: QueueFilter, before: str) -> str | None:
    """The item just before `before` in the filtered queue (no wrap), for a "back" button."""
    i = t.items
    with store.read() as conn:
        pos = conn.execute(sa.select(i.c.created_at, i.c.id).where(i.c.id == before)).first()
        if pos is None:
            return None
        earlier = (i.c.created_at < pos.created_at) | ((i.c.created_at == pos.created_at) & (i.c.id < pos.id))
        return conn.scalar(
            matching(project_id, f).where(earlier).order_by(i.c.created_at.desc(), i.c.id.desc()).limit(1)
        )


@dataclass(frozen=True)
class FilterOptions:
    """Values the queue filters can take in a project: generators, specs (id -> scenario), annotators."""

    generators: list[str]
    specs: dict[str, str]
    annotators: list[str]


def filter_options(store: Store, project_id: str, kind: str = CONVERSATION) -> FilterOptions:
    """The generators and specs of the project's items, and everyone assigned or with a verdict."""
    i, rev = t.items, t.revisions
    with store.read() as conn:
        generators = conn.scalars(
            sa.select(i.c.generator)
            .where(i.c.project_id == project_id, i.c.kind == kind, i.c.generator.is_not(None))
            .distinct()
            .order_by(i.c.generator)
        ).all()
        spec_ids = conn.scalars(
            sa.select(i.c.spec_id)
            .where(i.c.project_id == project_id, i.c.kind == kind, i.c.spec_id.is_not(None))
            .distinct()
            .order_by(i.c.spec_id)
        ).all()
        titles: dict[str, str] = {}
        if spec_ids:
            # The first revision's scenario is enough for a label; specs keep their id when edited.
            rows = conn.execute(
                sa.select(rev.c.item_id, rev.c.body["scenario"].as_string()).where(
                    rev.c.item_id.in_(spec_ids), rev.c.version == 1
                )
            )
            titles = {r[0]: r[1] for r in rows}
        annotators = conn.scalars(
            sa.union(
                sa.select(t.assignments.c.annotator.label("name")).where(
                    t.assignments.c.project_id == project_id
                ),
                sa.select(t.annotation_verdicts.c.author.label("name")).where(
                    t.annotation_verdicts.c.project_id == project_id
                ),
            )
        ).all()
    return FilterOptions(list(generators), {s: titles.get(s) or s for s in spec_ids}, sorted(annotators))


def progress(store: Store, project_id: str, kind: str = CONVERSATION) -> list[AnnotatorProgress]:
    """Per annotator: items assigned, assigned items they gave a verdict (done), verdicts in all."""
    a, v, i = t.assignments, t.annotation_verdicts, t.items
    with store.read() as conn:
        assigned = dict(
            conn.execute(
                sa.select(a.c.annotator, sa.func.count())
                .join(i, i.c.id == a.c.item_id)
                .where(a.c.project_id == project_id, i.c.kind == kind)
                .group_by(a.c.annotator)
            ).all()
        )
        done = dict(
            conn.execute(
                sa.select(a.c.annotator, sa.func.count())
                .join(i, i.c.id == a.c.item_id)
                .join(v, (v.c.item_id == a.c.item_id) & (v.c.author == a.c.annotator))
                .where(a.c.project_id == project_id, i.c.kind == kind)
                .group_by(a.c.annotator)
            ).all()
        )
        reviewed = dict(
            conn.execute(
                sa.select(v.c.author, sa.func.count())
                .join(i, i.c.id == v.c.item_id)
                .where(v.c.project_id == project_id, i.c.kind == kind)
                .group_by(v.c.author)
            ).all()
        )
    names = sorted(set(assigned) | set(reviewed))
    return [AnnotatorProgress(n, assigned.get(n, 0), done.get(n, 0), reviewed.get(n, 0)) for n in names]
