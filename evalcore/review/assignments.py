"""Who reviews what: items assigned to annotators with a chosen overlap (each item to `overlap` distinct
annotators), and the project's leads, who may adjudicate.

The overlap is what makes agreement measurable: `evalcore.review.agreement.assign` balances the loads and
spreads the shared items over every pair of annotators, so each pair's kappa rests on some items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from evalcore.auth.audit import authorize
from evalcore.auth.roles import Actor, Permission
from evalcore.errors import EvalcoreError
from evalcore.items.sql import chunks, insert_missing
from evalcore.items.state import refresh_states
from evalcore.models import now_utc
from evalcore.review.agreement import assign
from evalcore.review.queue import QueueFilter, matching
from evalcore.store import Store
from evalcore.store import schema as t

# Project setting: the names allowed to adjudicate.
LEADS = "leads"


@dataclass(frozen=True)
class AssignmentResult:
    """How many items were handed out, and how many each annotator received."""

    items: int
    per_annotator: dict[str, int]


def assign_items(
    store: Store,
    project_id: str,
    annotators: Sequence[str],
    overlap: int,
    assigned_by: str,
    *,
    f: QueueFilter = QueueFilter(),
    only_unassigned: bool = True,
    limit: int | None = None,
    seed: int = 0,
    actor: Actor | None = None,
) -> AssignmentResult:
    """Assign the items matching the filter (by default those nobody has yet, oldest first, at most
    `limit`) to `overlap` of the annotators each, in one transaction. Existing assignments are kept.
    A lead's."""
    authorize(store, actor, Permission.manage_review, "review.assign", project_id=project_id)
    names = [a.strip() for a in annotators if a and a.strip()]
    if not names:
        raise EvalcoreError("name at least one annotator to assign items to")
    if not assigned_by.strip():
        raise EvalcoreError("a name is needed to assign: every action is recorded with who made it")
    if overlap < 1 or overlap > len(set(names)):
        raise EvalcoreError(
            f"overlap must be between 1 and the number of annotators ({len(set(names))}), got {overlap}"
        )
    refresh_states(store, project_id, f.kind)
    i, a = t.items, t.assignments
    query = matching(project_id, f).order_by(i.c.created_at, i.c.id)
    if only_unassigned:
        query = query.where(~sa.exists().where(a.c.item_id == i.c.id))
    if limit is not None:
        query = query.limit(limit)
    with store.write() as conn:
        ids = list(conn.scalars(query))
        if not ids:
            return AssignmentResult(0, dict.fromkeys(names, 0))
        plan = assign(ids, list(dict.fromkeys(names)), overlap, seed)
        stamp = now_utc()
        rows = [
            {
                "item_id": item,
                "annotator": who,
                "project_id": project_id,
                "assigned_by": assigned_by.strip(),
                "assigned_at": stamp,
            }
            for who, items in plan.items()
            for item in items
        ]
        for batch in chunks(rows):
            insert_missing(conn, a, list(batch))
    return AssignmentResult(len(ids), {who: len(items) for who, items in plan.items()})


def unassign(
    store: Store, project_id: str, annotator: str, *, only_open: bool = True, actor: Actor | None = None
) -> int:
    """Take items back from an annotator (by default only those they have not reviewed); return how many.
    A lead's."""
    authorize(store, actor, Permission.manage_review, "review.unassign", project_id=project_id)
    a, v = t.assignments, t.annotation_verdicts
    where = [a.c.project_id == project_id, a.c.annotator == annotator]
    if only_open:
        where.append(~sa.exists().where(v.c.item_id == a.c.item_id, v.c.author == a.c.annotator))
    with store.write() as conn:
        return conn.execute(sa.delete(a).where(*where)).rowcount


def assignees_of(store: Store, item_id: str) -> list[str]:
    """Who is assigned the item, by name."""
    a = t.assignments
    with store.read() as conn:
        return list(
            conn.scalars(sa.select(a.c.annotator).where(a.c.item_id == item_id).order_by(a.c.annotator))
        )


def leads_of(settings: dict[str, Any]) -> list[str]:
    """Names allowed to adjudicate; an empty list means anyone who gives a name may."""
    return [str(x) for x in settings.get(LEADS) or []]


def set_leads(store: Store, project_id: str, names: list[str], *, actor: Actor | None = None) -> list[str]:
    """Name the project's leads (who may adjudicate); an empty list lets anyone with a name decide.
    A lead's."""
    authorize(store, actor, Permission.manage_review, "review.leads", project_id=project_id)
    leads = sorted({n.strip() for n in names if n and n.strip()})
    store.update_settings(project_id, {LEADS: leads or None})
    return leads
