"""A store too busy to take a write in time: one line that says so, instead of a traceback.

SQLite lets one writer at a time in and makes the others wait up to its busy timeout (30 s here, see
`engine.py`); on a machine short of CPU a writer can be passed over until then and gets "database is
locked". PostgreSQL reports a lock it could not get in time as SQLSTATE 55P03 and a deadlock it broke as
40P01. Either way the transaction was rolled back whole, so nothing of it was written and it can be tried
again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from evalcore.errors import EvalcoreError

_SQLITE_BUSY = ("database is locked", "database is busy")
_POSTGRES_BUSY = {"55P03", "40P01"}


class StoreBusyError(EvalcoreError):
    """The store was too busy to take the write: it was rolled back whole and can be tried again."""


def is_busy(exc: BaseException) -> bool:
    """True when `exc` is a database error saying the store could not take a write in time."""
    if not isinstance(exc, sa.exc.DBAPIError):
        return False
    original = exc.orig
    if getattr(original, "sqlstate", None) in _POSTGRES_BUSY:
        return True
    return any(sign in str(original).lower() for sign in _SQLITE_BUSY)


@contextmanager
def reported_busy(where: str) -> Iterator[None]:
    """Turn a busy store met in the block into a StoreBusyError naming `where` (the store's masked URL)."""
    try:
        yield
    except sa.exc.DBAPIError as exc:
        if not is_busy(exc):
            raise
        raise StoreBusyError(
            f"the store {where} was too busy with other writers to take this in time; nothing of it was "
            "written: try again"
        ) from None
