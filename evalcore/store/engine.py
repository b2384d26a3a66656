"""Opening a database: the URL from settings, SQLite pragmas, and the PostgreSQL driver."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event

from evalcore.errors import UsageError
from evalcore.store import secrets


def redact(url: str) -> str:
    """The URL with any password replaced, for pages and logs (`secrets.mask_url`)."""
    return secrets.mask_url(url)


def _enable_wal(cursor: sqlite3.Cursor, wait_seconds: float = 30.0) -> None:
    """Switch to WAL. On a new file opened by several connections at once the switch can fail with 'locked'
    at once (SQLite's busy timeout does not cover it), so retry for as long as the busy timeout would wait."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _redact_credentials(engine: sa.Engine) -> None:
    """Every text parameter of every statement passes through `secrets.redact_parameters`: whichever
    module writes a server's error or reply, a credential value never reaches a table (nor the WAL)."""
    secrets.install_log_redaction()

    @event.listens_for(engine, "before_cursor_execute", retval=True)
    def _redact(_conn, _cursor, statement, parameters, _context, _executemany):
        return statement, secrets.redact_parameters(parameters)


def create_engine(url: str) -> sa.Engine:
    """An engine for `url`; SQLite gets WAL, foreign keys, a busy timeout and real transactions. Neither
    kind ever stores a credential value (`_redact_credentials`)."""
    authority = url.partition("://")[2].partition("/")[0]
    if authority.count("@") > 1:  # SQLAlchemy would take part of the password for the host, and say so
        raise UsageError(f"the store URL {secrets.mask_url(url)} has an '@' in its password: write it as %40")
    try:
        parsed = sa.make_url(url)
    except (sa.exc.ArgumentError, ValueError) as exc:  # their messages quote the URL, password and all
        raise UsageError(
            f"the store URL {secrets.mask_url(url)} cannot be read: {secrets.mask_url(str(exc))}"
        ) from None
    if parsed.get_backend_name() != "sqlite":
        engine = sa.create_engine(url, pool_pre_ping=True, future=True)
        _redact_credentials(engine)
        return engine
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, connect_args={"timeout": 30}, future=True)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        # Let SQLAlchemy own BEGIN/COMMIT so transactions (and DDL in migrations) are really atomic.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        _enable_wal(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        # Writers take the lock up front: a deferred BEGIN that upgrades later can fail at once with BUSY.
        immediate = conn.get_execution_options().get("evalcore_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    _redact_credentials(engine)
    return engine
