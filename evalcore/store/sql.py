"""SQL that is written differently on SQLite and PostgreSQL: insert-or-skip, and locking a row."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa


def _insert(conn: sa.Connection, table: sa.Table) -> Any:
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert(table).on_conflict_do_nothing()


def insert_ignore(
    conn: sa.Connection, table: sa.Table, values: dict[str, Any] | list[dict[str, Any]]
) -> None:
    """INSERT that skips rows a primary or unique key already holds."""
    conn.execute(_insert(conn, table), values)


def insert_new(conn: sa.Connection, table: sa.Table, values: dict[str, Any]) -> bool:
    """INSERT one row unless its key is taken; True when this call inserted it (the atomic "first wins").

    Told by RETURNING, not rowcount: psycopg reports -1 for a skipped-or-not INSERT ... ON CONFLICT.
    """
    statement = _insert(conn, table).returning(*table.primary_key.columns)
    return conn.execute(statement, values).first() is not None


def locked(conn: sa.Connection, query: sa.Select) -> sa.Select:
    """`query` taking a row lock until the transaction ends (PostgreSQL's FOR UPDATE; a SQLite write
    transaction already holds the whole database)."""
    return query.with_for_update() if conn.dialect.name == "postgresql" else query
