"""SQL shared by the read model and the annotation modules: batched reads of annotations, heads and bodies,
and upserts."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from evalcore.items.tiers import ROLES
from evalcore.models import Annotation
from evalcore.store import schema as t
from evalcore.store.store import annotation_from_row

T = TypeVar("T")

# Rows per statement when a batch of items is read or written (well under SQLite's variable limit).
BATCH = 500


def chunks(values: Sequence[T], size: int = BATCH) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most `size` values."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


def upsert(
    conn: sa.Connection,
    table: sa.Table,
    rows: list[dict[str, Any]],
    keys: Sequence[str],
    *,
    only_if_newer: str | None = None,
) -> None:
    """Insert rows, updating those whose key exists; with `only_if_newer`, an existing row is only
    overwritten by a row whose value in that column is at least as high (a late writer with older data
    never undoes a newer derivation)."""
    if not rows:
        return
    insert = (postgresql if conn.dialect.name == "postgresql" else sqlite).insert
    # One statement executed for many rows: compiled once (and cached), unlike a multi-VALUES insert.
    stmt = insert(table)
    updates = {c: stmt.excluded[c] for c in rows[0] if c not in keys}
    where = table.c[only_if_newer] <= stmt.excluded[only_if_newer] if only_if_newer else None
    conn.execute(stmt.on_conflict_do_update(index_elements=list(keys), set_=updates, where=where), rows)


def insert_missing(conn: sa.Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
    """Insert rows, leaving alone those whose primary key exists already."""
    if not rows:
        return
    insert = (postgresql if conn.dialect.name == "postgresql" else sqlite).insert
    conn.execute(insert(table).on_conflict_do_nothing(), rows)


def annotations_of(
    conn: sa.Connection, item_ids: Iterable[str], roles: Sequence[str] = ROLES
) -> dict[str, list[Annotation]]:
    """The annotations of each item in `roles` (by default the verdicts of annotators and leads, from
    which tiers are derived; breakdown labels are another role), in append order (version, then row id),
    read through `conn`."""
    ids = list(dict.fromkeys(item_ids))
    found: dict[str, list[Annotation]] = {i: [] for i in ids}
    a = t.annotations
    for batch in chunks(ids):
        rows = conn.execute(
            sa.select(a, t.items.c.kind)
            .join(t.items, t.items.c.id == a.c.item_id)
            .where(a.c.item_id.in_(batch), a.c.role.in_(list(roles)))
            .order_by(a.c.item_id, a.c.version, a.c.id)
        )
        for r in rows:
            found[r.item_id].append(annotation_from_row(r))
    return found


def heads(conn: sa.Connection, item_ids: Sequence[str]) -> dict[str, tuple[int, int | None]]:
    """Per item: its head version and the version of its latest revision with content."""
    rev = t.revisions
    found: dict[str, tuple[int, int | None]] = {}
    for batch in chunks(item_ids):
        head = sa.func.max(rev.c.version)
        content = sa.func.max(sa.case((rev.c.body.is_not(None), rev.c.version)))
        rows = conn.execute(
            sa.select(rev.c.item_id, head, content).where(rev.c.item_id.in_(batch)).group_by(rev.c.item_id)
        )
        found.update({r[0]: (r[1], r[2]) for r in rows})
    return found


def _at_versions(conn: sa.Connection, versions: dict[str, int], column: sa.ColumnElement) -> dict[str, Any]:
    """`column` of each item's revision at the given version. Selected by item id (the primary key's
    first column: an index seek) and filtered here, because SQLite scans the whole table for a
    row-value IN of (item_id, version) pairs."""
    rev = t.revisions
    found: dict[str, Any] = {}
    for batch in chunks(list(versions)):
        rows = conn.execute(
            sa.select(rev.c.item_id, rev.c.version, column).where(
                rev.c.item_id.in_(batch), rev.c.body.is_not(None)
            )
        )
        found.update({r[0]: r[2] for r in rows if versions[r[0]] == r[1]})
    return found


def body_field(conn: sa.Connection, versions: dict[str, int], field: str) -> dict[str, Any]:
    """One top-level field of each item's body at the given version (the JSON is cut out in SQL, so
    reading a conversation's metadata does not parse all its turns)."""
    return _at_versions(conn, versions, t.revisions.c.body[field])


def latest_bodies(conn: sa.Connection, item_ids: Sequence[str]) -> dict[str, tuple[int, dict[str, Any]]]:
    """Per item: (head version, content of its latest revision with content)."""
    versions = heads(conn, item_ids)
    wanted = {i: v[1] for i, v in versions.items() if v[1] is not None}
    bodies = _at_versions(conn, wanted, t.revisions.c.body)
    return {i: (versions[i][0], body) for i, body in bodies.items()}
