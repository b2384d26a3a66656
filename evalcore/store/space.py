"""A store that cannot write because its disk is full: one line that says so, instead of a traceback.

SQLite reports a full disk as "database or disk is full" (SQLITE_FULL) or, when the write-ahead log cannot
grow, as "disk I/O error"; PostgreSQL as SQLSTATE 53100 (disk_full) or 53000 ("insufficient resources").
The transaction that hit it is rolled back whole by the database, so nothing of it was written.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from evalcore.errors import EvalcoreError

_SQLITE_FULL = ("database or disk is full", "disk i/o error")
_POSTGRES_FULL = {"53100", "53000"}


class StoreFullError(EvalcoreError):
    """The store's disk is full: the write was rolled back whole."""


def is_full(exc: BaseException) -> bool:
    """True when `exc` is a database error saying the store's disk is full."""
    if not isinstance(exc, sa.exc.DBAPIError):
        return False
    original = exc.orig
    if getattr(original, "sqlstate", None) in _POSTGRES_FULL:
        return True
    return any(sign in str(original).lower() for sign in _SQLITE_FULL)


@contextmanager
def reported_full(where: str) -> Iterator[None]:
    """Turn a full disk met in the block into a StoreFullError naming `where` (the store's masked URL)."""
    try:
        yield
    except sa.exc.DBAPIError as exc:
        if not is_full(exc):
            raise
        why = str(exc.orig).strip().splitlines()[0][:200]
        raise StoreFullError(
            f"the store {where} could not write ({why}): its disk is full or failing; nothing of this step "
            "was written: free some space and run it again"
        ) from None
