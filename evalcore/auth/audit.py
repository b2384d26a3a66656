"""The audit trail: who did what, when. Actions that keep no who/when of their own (settings, jobs,
imports, accounts, sign-ins, refusals) are rows of `audit_log`; saved versions and verdicts already keep
theirs in `revisions` and `annotations`, and the trail reads them from there rather than twice."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import sqlalchemy as sa
from pydantic import BaseModel, Field

from evalcore.auth.roles import Actor, Permission, PermissionDenied, Role, author_for, require, resolve
from evalcore.models.common import now_utc
from evalcore.store import Store
from evalcore.store import schema as t

# A spreadsheet reads a cell starting with one of these as a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class AuditEntry(BaseModel):
    """One action of the trail."""

    at: datetime = Field(description="when (UTC)")
    actor: str = Field(description="who: the signed-in name, or the local user's")
    role: str = Field(description="their role then ('' where the action's own table keeps none)")
    action: str = Field(description="what, e.g. 'settings.models', 'job.start', 'spec.saved'")
    outcome: str = Field(description="'done' or 'refused'")
    project_id: str | None = Field(description="the project, when the action had one")
    target: str = Field(description="what it acted on: a run, an item, an account")
    detail: str = Field(description="more: a refusal's reason, a version's note")


def record(
    store: Store,
    actor: Actor | None,
    action: str,
    *,
    outcome: str = "done",
    project_id: str | None = None,
    target: str = "",
    detail: str = "",
) -> None:
    """Append one action to the audit log."""
    who = actor or resolve(None)
    with store.write() as conn:
        conn.execute(
            sa.insert(t.audit_log).values(
                at=now_utc(), actor=who.name, role=who.role.name, action=action, outcome=outcome,
                project_id=project_id, target=target, detail=detail,
            )
        )  # fmt: skip


def authorize(
    store: Store,
    actor: Actor | None,
    permission: Permission,
    action: str,
    *,
    project_id: str | None = None,
    target: str = "",
) -> Actor:
    """`require(actor, permission)`, a refusal kept in the audit log (and re-raised)."""
    try:
        return require(actor, permission)
    except PermissionDenied as exc:
        shown = actor if actor is not None else Actor(name="(nobody signed in)", role=Role.viewer)
        record(store, shown, action, outcome="refused", project_id=project_id, target=target, detail=str(exc))
        raise


@contextmanager
def authorized(
    store: Store,
    actor: Actor | None,
    permission: Permission,
    action: str,
    *,
    project_id: str | None = None,
    target: str = "",
) -> Iterator[Actor]:
    """Around an action: `authorize` first, and the action kept in the audit log once the block ends
    without an error (an action refused for its input leaves no row, as it changed nothing)."""
    who = authorize(store, actor, permission, action, project_id=project_id, target=target)
    yield who
    record(store, who, action, project_id=project_id, target=target)


@contextmanager
def importing(
    store: Store,
    actor: Actor | None,
    action: str,
    *,
    project_id: str | None = None,
    target: str = "",
    author: str | None = None,
) -> Iterator[str]:
    """Around an import: the actor must hold the import permission (a refusal is logged), the block gets
    the author name to store under (a signed-in actor is always themself; the local user's `author` as
    given), and the import is kept in the audit log once the block ends without an error."""
    who = authorize(store, actor, Permission.import_inputs, action, project_id=project_id, target=target)
    try:
        name = author_for(who, author) if author is not None else who.name
    except PermissionDenied as exc:
        record(store, who, action, outcome="refused", project_id=project_id, target=target, detail=str(exc))
        raise
    yield name
    record(store, who, action, project_id=project_id, target=target)


def acting_author(store: Store, actor: Actor | None, permission: Permission, action: str, author: str) -> str:
    """The author name to save a version or verdict under: the actor must hold `permission`, and a
    signed-in actor saves as themself only (`author_for`). Refusals are logged; the saved row keeps the
    who and when of an allowed save."""
    who = authorize(store, actor, permission, action, target=author)
    try:
        return author_for(who, author)
    except PermissionDenied as exc:
        record(store, who, action, outcome="refused", target=author, detail=str(exc))
        raise


def trail(
    store: Store,
    *,
    actor: Actor | None = None,
    project_id: str | None = None,
    since: datetime | None = None,
    limit: int | None = 1000,
) -> list[AuditEntry]:
    """The newest actions first (at most `limit`; None for all), optionally of one project and since a
    time: the audit log, saved versions (revisions) and verdicts (annotations) together. A lead's."""
    require(actor, Permission.read_audit)
    a, r, n, i = t.audit_log, t.revisions, t.annotations, t.items
    logged = sa.select(
        a.c.at, a.c.actor, a.c.role, a.c.action, a.c.outcome, a.c.project_id, a.c.target, a.c.detail
    )
    saved = sa.select(
        r.c.created_at.label("at"), r.c.author.label("actor"), sa.literal("").label("role"),
        (i.c.kind + sa.literal(".saved")).label("action"), sa.literal("done").label("outcome"),
        i.c.project_id, (r.c.item_id + sa.literal(" v") + sa.cast(r.c.version, sa.String)).label("target"),
        r.c.note.label("detail"),
    ).join(i, i.c.id == r.c.item_id)  # fmt: skip
    judged = sa.select(
        n.c.created_at.label("at"), n.c.author.label("actor"), n.c.role.label("role"),
        (i.c.kind + sa.literal(".") + n.c.label).label("action"), sa.literal("done").label("outcome"),
        i.c.project_id, n.c.item_id.label("target"), sa.func.coalesce(n.c.reason, "").label("detail"),
    ).join(i, i.c.id == n.c.item_id)  # fmt: skip
    parts = []
    for query, at, project in (
        (logged, a.c.at, a.c.project_id),
        (saved, r.c.created_at, i.c.project_id),
        (judged, n.c.created_at, i.c.project_id),
    ):
        if project_id is not None:
            query = query.where(project == project_id)
        if since is not None:
            query = query.where(at >= since)
        parts.append(query)
    union = sa.union_all(*parts).subquery()
    query = sa.select(union).order_by(union.c.at.desc(), union.c.action)
    if limit is not None:
        query = query.limit(limit)
    with store.read() as conn:
        rows = conn.execute(query).all()
    return [AuditEntry(**row._mapping) for row in rows]


def _cell(value: object) -> str:
    text = "" if value is None else value.isoformat() if isinstance(value, datetime) else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def trail_csv(entries: list[AuditEntry]) -> str:
    """The trail as CSV; a cell a spreadsheet would read as a formula starts with a quote (OWASP)."""
    out = io.StringIO()
    writer = csv.writer(out)
    fields = list(AuditEntry.model_fields)
    writer.writerow(fields)
    for entry in entries:
        writer.writerow([_cell(getattr(entry, f)) for f in fields])
    return out.getvalue()
