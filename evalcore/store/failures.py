"""A store that cannot take a step (too busy, disk full, out of reach): one line that says so, instead of a
traceback.

In each case the database rolls the transaction in hand back whole, so nothing of it was written and the step
can be tried again; the three differ only in how the driver says so and in what the person should do next.

- Too busy: SQLite lets one writer in at a time and makes the others wait up to its busy timeout (30 s here,
  see `engine.py`); on a machine short of CPU a writer can be passed over until then and gets "database is
  locked". PostgreSQL reports a lock it could not get in time as SQLSTATE 55P03 and a deadlock it broke as
  40P01.
- Disk full: SQLite says "database or disk is full" (SQLITE_FULL) or, when the write-ahead log cannot grow,
  "disk I/O error"; PostgreSQL SQLSTATE 53100 (disk_full) or 53000 ("insufficient resources").
- Out of reach (a PostgreSQL server restarting, stopped or unreachable): SQLSTATE classes 08 (connection
  exception) and 57P (operator intervention: admin shutdown, crash shutdown, cannot connect now).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

import sqlalchemy as sa

from evalcore.errors import EvalcoreError

_SQLITE_BUSY = ("database is locked", "database is busy")
_POSTGRES_BUSY = {"55P03", "40P01"}
_SQLITE_FULL = ("database or disk is full", "disk i/o error")
_POSTGRES_FULL = {"53100", "53000"}
_LOST = ("08", "57P")


class StoreBusyError(EvalcoreError):
    """The store was too busy to take the write: it was rolled back whole and can be tried again."""


class StoreFullError(EvalcoreError):
    """The store's disk is full: the write was rolled back whole."""


class StoreUnreachableError(EvalcoreError):
    """The store's server could not be reached, or dropped the connection: the step was rolled back."""


def _says(exc: sa.exc.DBAPIError, states: set[str], signs: tuple[str, ...]) -> bool:
    if getattr(exc.orig, "sqlstate", None) in states:
        return True
    return any(sign in str(exc.orig).lower() for sign in signs)


def is_busy(exc: BaseException) -> bool:
    """True when `exc` is a database error saying the store could not take a write in time."""
    return isinstance(exc, sa.exc.DBAPIError) and _says(exc, _POSTGRES_BUSY, _SQLITE_BUSY)


def is_full(exc: BaseException) -> bool:
    """True when `exc` is a database error saying the store's disk is full."""
    return isinstance(exc, sa.exc.DBAPIError) and _says(exc, _POSTGRES_FULL, _SQLITE_FULL)


def is_unreachable(exc: BaseException) -> bool:
    """True when `exc` is a database error of a connection that failed or was lost."""
    if not isinstance(exc, sa.exc.DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    state = getattr(exc.orig, "sqlstate", None)
    if state:
        return state.startswith(_LOST)
    # psycopg raises connection failures without a SQLSTATE ("connection failed: ...").
    return isinstance(exc, sa.exc.OperationalError) and "connection" in str(exc.orig).lower()


def _why(exc: sa.exc.DBAPIError) -> str:
    return " ".join(str(exc.orig).split())[:200]


@contextmanager
def _reported(
    matches: Callable[[BaseException], bool], error: Callable[[sa.exc.DBAPIError], EvalcoreError]
) -> Iterator[None]:
    try:
        yield
    except sa.exc.DBAPIError as exc:
        if not matches(exc):
            raise
        raise error(exc) from None


def reported_busy(where: str) -> AbstractContextManager[None]:
    """Turn a busy store met in the block into a StoreBusyError naming `where` (the store's masked URL)."""
    return _reported(
        is_busy,
        lambda exc: StoreBusyError(
            f"the store {where} was too busy with other writers to take this in time; nothing of it was "
            "written: try again"
        ),
    )


def reported_full(where: str) -> AbstractContextManager[None]:
    """Turn a full disk met in the block into a StoreFullError naming `where` (the store's masked URL)."""
    return _reported(
        is_full,
        lambda exc: StoreFullError(
            f"the store {where} could not write ({_why(exc)}): its disk is full or failing; nothing of this "
            "step was written: free some space and run it again"
        ),
    )


def reported_unreachable(where: str) -> AbstractContextManager[None]:
    """Turn a lost or refused connection met in the block into a StoreUnreachableError naming `where`."""
    return _reported(
        is_unreachable,
        lambda exc: StoreUnreachableError(
            f"the store {where} could not be reached ({_why(exc)}); nothing of this step was written: run "
            "it again once the store is back (a job resumes from its last finished unit)"
        ),
    )
