"""A store that cannot be reached (a PostgreSQL server restarting, stopped or out of reach): one line
that says so, instead of a traceback. The transaction in hand is rolled back by the server, so nothing of
it was written; a job run again resumes from its last finished unit."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from evalcore.errors import EvalcoreError

# SQLSTATE classes of a lost or refused connection: 08 (connection exception), 57P (operator intervention:
# admin shutdown, crash shutdown, cannot connect now).
_LOST = ("08", "57P")


class StoreUnreachableError(EvalcoreError):
    """The store's server could not be reached, or dropped the connection: the step was rolled back."""


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


@contextmanager
def reported_unreachable(where: str) -> Iterator[None]:
    """Turn a lost or refused connection met in the block into a StoreUnreachableError naming `where`."""
    try:
        yield
    except sa.exc.DBAPIError as exc:
        if not is_unreachable(exc):
            raise
        why = " ".join(str(exc.orig).split())[:200]
        raise StoreUnreachableError(
            f"the store {where} could not be reached ({why}); nothing of this step was written: run it "
            "again once the store is back (a job resumes from its last finished unit)"
        ) from None
