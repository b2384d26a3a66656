"""A review saved while another writer holds SQLite's write lock past the busy timeout: one line that
says the store was busy and nothing was written (issue 34: the save escaped the page as a traceback and
the annotator waited on a page that never answered)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from evalcore.inputs import import_project
from evalcore.review import ItemVerdict, save_review
from evalcore.store import Store
from evalcore.store.failures import StoreBusyError, is_busy
from tests.annotation_data import add_conversations

ROOT = Path(__file__).resolve().parents[2]


def test_a_save_the_store_is_too_busy_to_take_says_so_and_writes_nothing(sqlite_store: Store):
    pid = import_project(sqlite_store, ROOT / "data" / "sample").project_id
    [item] = add_conversations(sqlite_store, pid, 1)
    # A short busy timeout for this store's connections (30 s in use), set after the engine's own.
    event.listen(sqlite_store.engine, "connect", lambda conn, _: conn.execute("PRAGMA busy_timeout=200"))
    sqlite_store.engine.dispose()
    holder = sqlite3.connect(sqlite_store.engine.url.database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer, holding the lock
    try:
        with pytest.raises(StoreBusyError) as raised:
            save_review(sqlite_store, item, "ann", 1, item=ItemVerdict(label="accept"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    message = str(raised.value)
    assert "\n" not in message and "too busy" in message and "nothing of it was written" in message
    assert [r.version for r in sqlite_store.history(item)] == [1]
    assert save_review(sqlite_store, item, "ann", 1, item=ItemVerdict(label="accept")).version == 2


def test_only_a_busy_store_is_busy():
    locked = sa.exc.OperationalError("BEGIN IMMEDIATE", {}, sqlite3.OperationalError("database is locked"))
    other = sa.exc.OperationalError("SELECT 1", {}, sqlite3.OperationalError("no such table: x"))
    assert is_busy(locked) and not is_busy(other) and not is_busy(ValueError("database is locked"))
