"""Rows the model layer writes besides the cache: one per model call (table `model_calls`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import sqlalchemy as sa

from evalcore.models.common import now_utc
from evalcore.store import Store
from evalcore.store import schema as t
from evalcore.store.secrets import redact


@dataclass(frozen=True)
class CallRecord:
    """What one model call cost and how it went."""

    project_id: str | None
    run_id: str | None
    task: str | None
    role: str | None
    provider: str
    model: str
    tokens_in: int
    tokens_out: int
    cost_usd: float
    latency_ms: float
    cache_hit: bool
    attempts: int
    status: str  # ok | error
    error: str | None = None


def record_call(conn: sa.Connection, record: CallRecord) -> None:
    """Append a call row. The error is redacted before it is cut (the store redacts what it writes, but
    a credential cut in two would no longer be recognised)."""
    values = asdict(record)
    if values["error"]:
        values["error"] = redact(values["error"])[:2000]
    conn.execute(sa.insert(t.model_calls).values(**values, created_at=now_utc()))


def run_spend(store: Store, run_id: str) -> tuple[float, int]:
    """Money and tokens (in + out) a run has spent on calls not served from the cache."""
    calls = t.model_calls
    with store.read() as conn:
        row = conn.execute(
            sa.select(
                sa.func.coalesce(sa.func.sum(calls.c.cost_usd), 0.0),
                sa.func.coalesce(sa.func.sum(calls.c.tokens_in + calls.c.tokens_out), 0),
            ).where(calls.c.run_id == run_id, calls.c.cache_hit.is_(False))
        ).one()
    return float(row[0]), int(row[1])


def calls(store: Store, *, project_id: str | None = None, run_id: str | None = None) -> list[CallRecord]:
    """Recorded calls, oldest first, filtered by project and/or run."""
    query = sa.select(t.model_calls).order_by(t.model_calls.c.id)
    if project_id is not None:
        query = query.where(t.model_calls.c.project_id == project_id)
    if run_id is not None:
        query = query.where(t.model_calls.c.run_id == run_id)
    fields = set(CallRecord.__dataclass_fields__)
    with store.read() as conn:
        rows = conn.execute(query).mappings().all()
    return [CallRecord(**{k: v for k, v in row.items() if k in fields}) for row in rows]
