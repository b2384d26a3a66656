"""Claims on the units of a job (table `job_claims`): taken atomically, held by a lease, closed with the unit.

A unit is `claimed` by one worker before it is worked, then `done` or `failed` in the same transaction
that writes its result; `pending` is a unit released unfinished (a stop, a crash caught) or a failed one
given back by `retry_failed`. Taking a claim is one conditional statement, so of two workers exactly one
gets it: an INSERT that skips an existing row, or an UPDATE guarded by the `attempts` the taker saw. A
claim whose lease ran out, or whose worker's process is gone (store/workers.py), can be taken over; a
done unit never can.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa

from evalcore.errors import EvalcoreError
from evalcore.models.common import now_utc
from evalcore.store import Store
from evalcore.store import schema as t
from evalcore.store.sql import insert_ignore, insert_new
from evalcore.store.workers import is_dead

LEASE_ENV = "EVALCORE_JOB_LEASE_S"
# Long enough for a slow unit between two heartbeats (lease / 3); short enough that a unit held by a
# worker on another machine that died is taken over within a minute.
DEFAULT_LEASE_S = 60.0
FINISHED = ("done", "failed")


class ClaimLost(EvalcoreError):
    """This worker's claim on a unit expired and another worker took it: its result is not written."""


def lease_seconds() -> float:
    """The lease of a claim, in seconds (EVALCORE_JOB_LEASE_S, default 60)."""
    return float(os.environ.get(LEASE_ENV) or DEFAULT_LEASE_S)


@dataclass(frozen=True)
class UnitState:
    """Where one unit stands in the store."""

    status: str  # claimed | done | failed | pending
    claimed_by: str | None
    claimed_until: datetime | None
    attempts: int

    def takeable(self, now: datetime) -> bool:
        """True when a worker may claim it: released, or held by a lease that ran out or a dead worker."""
        if self.status == "pending":
            return True
        if self.status != "claimed":
            return False
        expired = self.claimed_until is None or self.claimed_until < now
        return expired or is_dead(self.claimed_by)

    def held_by_other(self, worker: str, now: datetime) -> bool:
        """True when another live worker holds it."""
        return self.status == "claimed" and self.claimed_by != worker and not self.takeable(now)


def unit_states(store: Store, run_id: str) -> dict[str, UnitState]:
    """Every claimed or finished unit of a run. A unit finished without a claim (written by `Store.unit`
    directly, or before claims existed) counts as finished."""
    c, u = t.job_claims, t.run_units
    with store.read() as conn:
        claims = conn.execute(
            sa.select(c.c.unit_key, c.c.status, c.c.claimed_by, c.c.claimed_until, c.c.attempts).where(
                c.c.run_id == run_id
            )
        ).all()
        records = conn.execute(sa.select(u.c.unit_key, u.c.status).where(u.c.run_id == run_id)).all()
    states = {key: UnitState(status, None, None, 1) for key, status in records}
    states.update({row[0]: UnitState(*row[1:]) for row in claims})
    return states


def take(store: Store, run_id: str, key: str, worker: str, seen: UnitState | None) -> bool:
    """Claim `key` for `worker` if it is still as `seen` (None: never claimed); True when it is ours."""
    now = now_utc()
    until = now + timedelta(seconds=lease_seconds())
    c = t.job_claims
    with store.write() as conn:
        if seen is None:
            values = {"run_id": run_id, "unit_key": key, "status": "claimed", "claimed_by": worker,
                      "claimed_until": until, "attempts": 1, "updated_at": now,
                      "claimed_at": now}  # fmt: skip
            return insert_new(conn, c, values)
        taken = conn.execute(
            sa.update(c)
            .where(c.c.run_id == run_id, c.c.unit_key == key, c.c.status == seen.status)
            .where(c.c.attempts == seen.attempts)
            .values(
                status="claimed",
                claimed_by=worker,
                claimed_until=until,
                attempts=c.c.attempts + 1,
                updated_at=now,
                claimed_at=now,
            )
        )
        return taken.rowcount == 1


def hold(conn: sa.Connection, run_id: str, key: str, worker: str) -> None:
    """Inside a unit's transaction: check the claim is still ours and extend it; ClaimLost if not."""
    c = t.job_claims
    now = now_utc()
    held = conn.execute(
        sa.update(c)
        .where(c.c.run_id == run_id, c.c.unit_key == key, c.c.claimed_by == worker, c.c.status == "claimed")
        .values(claimed_until=now + timedelta(seconds=lease_seconds()), updated_at=now)
    )
    if held.rowcount != 1:
        raise ClaimLost(f"unit {key} of run {run_id} was taken over by another worker")


def close(conn: sa.Connection, run_id: str, key: str, worker: str, status: str) -> None:
    """Inside a unit's transaction: mark our claim `done`, `failed` or `pending` (released)."""
    c = t.job_claims
    conn.execute(
        sa.update(c)
        .where(c.c.run_id == run_id, c.c.unit_key == key, c.c.claimed_by == worker, c.c.status == "claimed")
        .values(status=status, claimed_until=None, updated_at=now_utc())
    )


def release(store: Store, run_id: str, key: str, worker: str) -> None:
    """Give an unfinished unit back (status pending), so any worker may take it at once."""
    with store.write() as conn:
        close(conn, run_id, key, worker, "pending")


def renew(store: Store, worker: str) -> None:
    """Extend every lease this worker holds (its heartbeat)."""
    c = t.job_claims
    now = now_utc()
    with store.write() as conn:
        conn.execute(
            sa.update(c)
            .where(c.c.claimed_by == worker, c.c.status == "claimed")
            .values(claimed_until=now + timedelta(seconds=lease_seconds()), updated_at=now)
        )


def retry_failed(store: Store, run_id: str, keys: Iterable[str] | None = None) -> int:
    """Make a run's failed units claimable again (kept with their error until a retry replaces it).

    Returns how many. A failed unit recorded before claims existed gets its claim here.
    """
    c, u = t.job_claims, t.run_units
    now = now_utc()
    with store.write() as conn:
        failed = set(
            conn.scalars(sa.select(u.c.unit_key).where(u.c.run_id == run_id, u.c.status == "failed"))
        ) | set(conn.scalars(sa.select(c.c.unit_key).where(c.c.run_id == run_id, c.c.status == "failed")))
        if keys is not None:
            failed &= set(keys)
        if not failed:
            return 0
        rows = [{"run_id": run_id, "unit_key": k, "status": "pending", "attempts": 1, "updated_at": now}
                for k in sorted(failed)]  # fmt: skip
        insert_ignore(conn, c, rows)
        conn.execute(
            sa.update(c)
            .where(c.c.run_id == run_id, c.c.unit_key.in_(failed), c.c.status == "failed")
            .values(status="pending", claimed_by=None, claimed_until=None, updated_at=now)
        )
    return len(failed)


def count_failed(store: Store, run_id: str) -> int:
    """How many units of a run are failed (and not yet retried)."""
    return sum(1 for s in unit_states(store, run_id).values() if s.status == "failed")
