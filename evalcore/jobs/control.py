"""Controlling a job from a page or a shell: stop it, read its progress and its failed units.

A stop is a column of the run, not a signal to a process: it reaches every worker of the run, in any
process, between two units. Progress is read from the store, so a page shows it whoever works the run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from evalcore.auth.audit import authorized
from evalcore.auth.roles import Actor, job_permission
from evalcore.jobs.claims import unit_states
from evalcore.models import Run
from evalcore.models.common import now_utc
from evalcore.store import Store
from evalcore.store import schema as t

PROGRESS_TOTAL = "progress_total"  # the run parameter holding how many records the finished job has


def request_stop(store: Store, run_id: str, who: str = "a user", *, actor: Actor | None = None) -> Run:
    """Ask a job to stop: marked stopped now (reason 'stopped by WHO'); its workers stop between units.
    The actor must hold the job's stop permission; a signed-in actor is the WHO."""
    run = store.run(run_id)
    permission = job_permission(run.kind, stop=True)
    with authorized(store, actor, permission, "job.stop", target=f"{run_id} ({run.kind})") as acting:
        who = who if acting.local else acting.name
        store.request_stop(run_id, f"stopped by {who or 'a user'}")
    return store.run(run_id)


def _being_retried(run_id: str) -> sa.Select:
    """Keys of a run's units given back for a retry (their failed record stays until replaced)."""
    c = t.job_claims
    return sa.select(c.c.unit_key).where(c.c.run_id == run_id, c.c.status.in_(("pending", "claimed")))


def committed_records(store: Store, run_id: str) -> int:
    """How many records (units, or steps of units) a run has committed: what progress bars count. A
    failed unit given back for a retry counts again once its new record replaces the failed one."""
    u = t.run_units
    retried = (u.c.status == "failed") & u.c.unit_key.in_(_being_retried(run_id))
    with store.read() as conn:
        return int(conn.scalar(sa.select(sa.func.count()).where(u.c.run_id == run_id, ~retried)) or 0)


def committed_counts(store: Store, run_ids: list[str]) -> dict[str, int]:
    """`committed_records` of many runs in one query (a page listing runs asks once, not once per run);
    a run with no record is left out."""
    u, c = t.run_units, t.job_claims
    retried = (u.c.status == "failed") & sa.exists().where(
        c.c.run_id == u.c.run_id, c.c.unit_key == u.c.unit_key, c.c.status.in_(("pending", "claimed"))
    )
    query = sa.select(u.c.run_id, sa.func.count()).where(u.c.run_id.in_(run_ids), ~retried)
    query = query.group_by(u.c.run_id)
    with store.read() as conn:
        return {run_id: int(n) for run_id, n in conn.execute(query)}


def progress(store: Store, run: Run) -> tuple[int, int]:
    """(records committed, records when finished) of a run; the total is 0 before the job has planned."""
    return committed_records(store, run.id), int(run.params.get(PROGRESS_TOTAL) or 0)


def failed_units(store: Store, run_id: str) -> dict[str, str]:
    """The run's failed units with their errors, by key (a unit given back for a retry is not listed)."""
    u = t.run_units
    query = sa.select(u.c.unit_key, u.c.error).where(
        u.c.run_id == run_id, u.c.status == "failed", u.c.unit_key.not_in(_being_retried(run_id))
    )
    with store.read() as conn:
        return {key: error or "" for key, error in conn.execute(query.order_by(u.c.unit_key))}


@dataclass(frozen=True)
class Holder:
    """A live worker holding units of a run."""

    worker: str  # host:pid:nonce:loop (store/workers.py)
    units: int  # units it holds now
    since: datetime  # when it took its first unit of the run still recorded under its name


def holders(store: Store, run_id: str) -> list[Holder]:
    """The live workers holding units of the run, each with since when it works the run: the moment it
    claimed the earliest of the run's units that still name it (held now, or finished by it)."""
    c = t.job_claims
    now = now_utc()
    states = unit_states(store, run_id).values()
    held = Counter(s.claimed_by for s in states if s.status == "claimed" and not s.takeable(now))
    if not held:
        return []
    with store.read() as conn:
        first = dict(
            conn.execute(
                sa.select(c.c.claimed_by, sa.func.min(sa.func.coalesce(c.c.claimed_at, c.c.updated_at)))
                .where(c.c.run_id == run_id, c.c.claimed_by.in_(list(held)))
                .group_by(c.c.claimed_by)
            ).all()
        )
    return [Holder(worker, count, first[worker]) for worker, count in sorted(held.items())]


def held_by(store: Store, run_id: str) -> list[str]:
    """One line per live worker holding units of the run: 'held by WORKER since TIME UTC (N units)', for
    a job's page; empty when no live worker holds it."""
    return [
        f"held by {h.worker} since {h.since:%Y-%m-%d %H:%M:%S} UTC ({h.units} unit(s) in hand)"
        for h in holders(store, run_id)
    ]
