"""Runs (jobs) in the store: the fixed record in `body`, the moving parts in columns, warnings appended.

The body holds what a run was started with (kind, parameters, target, budget, code version). What changes
while it runs is written column by column, each write touching only its own column: status, the stop
request, the stop reason, the end, the judge and the spend; warnings are rows appended to `run_warnings`.
So a worker saving a warning never erases a stop request saved in between, and `Store.run()` still returns
one complete `Run`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from evalcore.errors import NotFoundError
from evalcore.models import Run, RunStatus
from evalcore.models.common import content_hash, now_utc
from evalcore.store import schema as t
from evalcore.store.sql import insert_ignore, locked

# Fields of `Run` kept in columns (or rows), not in the body.
MOVING = {"status", "stopped_reason", "finished_at", "judge", "warnings"}
LIVE = (RunStatus.running.value, RunStatus.pending.value)


def lock_run(conn: sa.Connection, run_id: str) -> sa.Row | None:
    """The run's row, locked until the transaction ends (PostgreSQL; a SQLite writer holds the whole file)."""
    return conn.execute(locked(conn, sa.select(t.runs).where(t.runs.c.id == run_id))).first()


def _warning_rows(run_id: str, messages: Iterable[str]) -> list[dict[str, Any]]:
    stamp = now_utc()
    return [
        {"run_id": run_id, "digest": content_hash(m), "message": m, "created_at": stamp}
        for m in dict.fromkeys(messages)
    ]


def _from_row(row: sa.Row, warnings: list[str]) -> Run:
    body = {k: v for k, v in row.body.items() if k not in MOVING}
    return Run.model_validate(
        {
            **body,
            "status": row.status,
            "stopped_reason": row.stopped_reason,
            "finished_at": row.finished_at,
            "judge": row.judge if row.judge is not None else row.body.get("judge"),
            "warnings": warnings,
        }
    )


class RunTables:
    """The runs part of the Store facade (mixed into `Store`)."""

    write: Any
    read: Any
    _using: Any

    def start_run(self, project_id: str, run: Run, *, pending: bool = False) -> Run:
        """Record a run (job) as running, or `pending` (recorded, not started yet); if a run with this id
        exists, mark it so again (a resume).

        A resume clears the stop request and reason; its parameters are merged into those stored (a key
        recorded by another worker, such as a plan, is never dropped) and its budget replaces the stored one.
        """
        stamp = now_utc()
        with self.write() as c:
            row = lock_run(c, run.id)
            columns = {
                "status": (RunStatus.pending if pending else RunStatus.running).value,
                "stop_requested": None,
                "stopped_reason": None,
                "finished_at": None,
                "updated_at": stamp,
            }
            if run.judge is not None:
                columns["judge"] = run.judge
            if row is None:
                body = run.model_dump(mode="json", exclude=MOVING)
                c.execute(
                    sa.insert(t.runs).values(
                        id=run.id,
                        project_id=project_id,
                        kind=run.kind,
                        started_at=run.started_at,
                        body=body,
                        **columns,
                    )
                )
            else:
                body = {**row.body, "params": {**row.body.get("params", {}), **run.params}}
                body["budget"] = run.budget
                c.execute(sa.update(t.runs).where(t.runs.c.id == run.id).values(body=body, **columns))
            if run.warnings:
                insert_ignore(c, t.run_warnings, _warning_rows(run.id, run.warnings))
        return self.run(run.id)

    def update_run(self, run: Run) -> None:
        """Save what `run` says of its status, stop reason, end, judge, parameters, budget and warnings.

        Column by column, under the run's lock: parameters are merged, warnings appended, and a stop
        request saved by someone else is kept (only `request_stop` and a resume touch it).
        """
        with self.write() as c:
            row = lock_run(c, run.id)
            if row is None:
                raise NotFoundError(f"no run '{run.id}' in the store")
            body = {**row.body, "params": {**row.body.get("params", {}), **run.params}, "budget": run.budget}
            c.execute(
                sa.update(t.runs)
                .where(t.runs.c.id == run.id)
                .values(
                    status=run.status.value,
                    stopped_reason=run.stopped_reason,
                    finished_at=run.finished_at,
                    judge=run.judge,
                    body=body,
                    updated_at=now_utc(),
                )
            )
            if run.warnings:
                insert_ignore(c, t.run_warnings, _warning_rows(run.id, run.warnings))

    def update_run_params(self, run_id: str, changes: dict[str, Any]) -> None:
        """Merge `changes` into the run's parameters (under its lock; other keys are kept)."""
        with self.write() as c:
            row = lock_run(c, run_id)
            if row is None:
                raise NotFoundError(f"no run '{run_id}' in the store")
            body = {**row.body, "params": {**row.body.get("params", {}), **changes}}
            c.execute(sa.update(t.runs).where(t.runs.c.id == run_id).values(body=body, updated_at=now_utc()))

    def set_run_judge(self, run_id: str, judge: str) -> None:
        """Record the run's judge (one column)."""
        with self.write() as c:
            c.execute(
                sa.update(t.runs).where(t.runs.c.id == run_id).values(judge=judge, updated_at=now_utc())
            )

    def add_run_warning(self, run_id: str, message: str) -> None:
        """Append a warning to the run (once: the same message twice is kept once)."""
        with self.write() as c:
            insert_ignore(c, t.run_warnings, _warning_rows(run_id, [message]))

    def request_stop(self, run_id: str, reason: str) -> bool:
        """Mark a pending or running run stopped with `reason`, and ask whoever plays it to stop.

        True when the run was live. The request is a column: every worker of the run, in any process,
        reads it between units. A run whose worker died is stopped all the same, and can be resumed.
        """
        with self.write() as c:
            done = c.execute(
                sa.update(t.runs)
                .where(t.runs.c.id == run_id, t.runs.c.status.in_(LIVE))
                .values(
                    stop_requested=reason,
                    status=RunStatus.stopped.value,
                    stopped_reason=reason,
                    finished_at=now_utc(),
                    updated_at=now_utc(),
                )
            )
        return bool(done.rowcount)

    def stop_requested(self, run_id: str) -> str | None:
        """The stop request of a run (who or what asked), if any."""
        with self.read() as c:
            return c.scalar(sa.select(t.runs.c.stop_requested).where(t.runs.c.id == run_id))

    def finish_run(
        self, run_id: str, status: RunStatus, reason: str | None = None, *, conn: sa.Connection | None = None
    ) -> None:
        """Record how a run ended (status, reason, end time); a stop request keeps its own reason."""
        values: dict[str, Any] = {"status": status.value, "finished_at": now_utc(), "updated_at": now_utc()}
        with self._using(conn) as c:
            requested = c.scalar(sa.select(t.runs.c.stop_requested).where(t.runs.c.id == run_id))
            values["stopped_reason"] = requested if status == RunStatus.stopped and requested else reason
            c.execute(sa.update(t.runs).where(t.runs.c.id == run_id).values(**values))

    def run(self, run_id: str) -> Run:
        """One run, complete: its record with its current status, reason, judge and warnings."""
        with self.read() as c:
            row = c.execute(sa.select(t.runs).where(t.runs.c.id == run_id)).first()
            if row is None:
                raise NotFoundError(f"no run '{run_id}' in the store")
            warnings = _warnings(c, [run_id])
        return _from_row(row, warnings.get(run_id, []))

    def run_project(self, run_id: str) -> str:
        """The id of the project a run belongs to."""
        with self.read() as c:
            project_id = c.scalar(sa.select(t.runs.c.project_id).where(t.runs.c.id == run_id))
        if project_id is None:
            raise NotFoundError(f"no run '{run_id}' in the store")
        return project_id

    def runs(self, project_id: str, kind: str | None = None) -> list[Run]:
        """A project's runs, newest first."""
        query = sa.select(t.runs).where(t.runs.c.project_id == project_id)
        if kind:
            query = query.where(t.runs.c.kind == kind)
        with self.read() as c:
            rows = c.execute(query.order_by(t.runs.c.started_at.desc())).all()
            warnings = _warnings(c, [r.id for r in rows])
        return [_from_row(r, warnings.get(r.id, [])) for r in rows]


def _warnings(conn: sa.Connection, run_ids: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    w = t.run_warnings
    for start in range(0, len(run_ids), 500):
        rows = conn.execute(
            sa.select(w.c.run_id, w.c.message)
            .where(w.c.run_id.in_(run_ids[start : start + 500]))
            .order_by(w.c.id)
        )
        for run_id, message in rows:
            out.setdefault(run_id, []).append(message)
    return out
