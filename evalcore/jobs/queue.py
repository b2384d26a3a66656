"""The queue that carries jobs to worker processes: huey on SQLite, PostgreSQL or Redis (DESIGN.md, Layers).

A page or the CLI starts a job by enqueueing its run (`enqueue(store, run_id)`); a worker process
(`evalcore worker`, or the one `evalcore serve` starts) takes the task and calls `jobs.resume(url, run_id)`,
so the queue carries nothing but the store's URL and the run's id. Where the queue lives:
`EVALCORE_QUEUE_URL` when set (sqlite:///file, postgresql://..., redis://...), else a SQLite file beside a
SQLite store (`store.db` -> `store.queue.db`), or the store's own PostgreSQL database (huey's tables,
prefixed `huey_`): nothing else to install in either case. Retries of a failed task, task locks and
result storage are huey's.

huey takes a task off the queue before it runs it, so a worker killed mid-job takes its task with it.
The units it held are safe (their claims expire, or are taken at once from a dead process of this
machine), but nothing would resume the run: every worker therefore sweeps the store now and then
(`recover`) and enqueues each queued run that no live worker holds and no pending task names.
huey is imported only when a queue is opened, so the CLI's --help stays fast.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from evalcore.auth.audit import authorized
from evalcore.auth.roles import Actor, job_permission
from evalcore.errors import EvalcoreError
from evalcore.jobs import claims
from evalcore.jobs.entry import ENTRY, resume
from evalcore.models import RunStatus
from evalcore.models.common import now_utc
from evalcore.store import Store
from evalcore.store import schema as t
from evalcore.store.secrets import mask_url

if TYPE_CHECKING:
    from huey import Huey

QUEUE_URL_ENV = "EVALCORE_QUEUE_URL"
RECOVER_ENV = "EVALCORE_QUEUE_RECOVER_S"
# A sweep every 10 s finds a run whose worker died on this machine within seconds; a run held on another
# machine is found once its claims' lease (60 s) has run out.
DEFAULT_RECOVER_S = 10.0
QUEUED_AT = "queued_at"  # the run parameter set by `enqueue`: only such runs are recovered by a sweep
# A job that raised (a database that went away, a provider down for a while) is tried again twice by
# huey, a minute apart; a configuration error fails the run each time and costs nothing.
RETRIES, RETRY_DELAY_S = 2, 60
QUEUE_NAME = "evalcore"


def recover_seconds() -> float:
    """How often a worker sweeps for runs whose worker died (EVALCORE_QUEUE_RECOVER_S, default 10)."""
    return float(os.environ.get(RECOVER_ENV) or DEFAULT_RECOVER_S)


def queue_url_for(store_url: str) -> str:
    """The queue of a store: EVALCORE_QUEUE_URL, else beside a SQLite store or in its PostgreSQL database."""
    if configured := os.environ.get(QUEUE_URL_ENV):
        return configured
    url = sa.make_url(store_url)
    if url.get_backend_name() == "sqlite":
        if not url.database or url.database == ":memory:":
            raise EvalcoreError("an in-memory store has no queue: set EVALCORE_QUEUE_URL or use a store file")
        path = Path(url.database)
        return f"sqlite:///{path.with_name(path.stem + '.queue.db')}"
    return store_url


def display_url(url: str) -> str:
    """A queue URL to print: its password hidden."""
    return mask_url(url)


def resume_job(store_url: str, run_id: str) -> dict[str, Any]:
    """The one task of the queue: resume the run's job, unless it ended or someone (a person, the budget)
    stopped it since it was queued. A run stopped by an error is resumed: that is huey's retry of it."""
    store = Store(store_url)
    try:
        status, asked = store.run(run_id).status, store.stop_requested(run_id)
    finally:
        store.close()
    if status in (RunStatus.finished, RunStatus.failed) or asked:
        return {"run": run_id, "status": status.value, "skipped": True}
    _interrupt_once()
    try:
        outcome = resume(store_url, run_id)
    except KeyboardInterrupt:  # the worker is shutting down: the job is not stopped, only paused
        store = Store(store_url)
        try:
            # Unless someone stopped it, or it ended meanwhile (its last unit committed by another worker).
            ended = store.run(run_id).status in (RunStatus.finished, RunStatus.failed)
            if not ended and not store.stop_requested(run_id):
                _mark_pending(store, run_id)  # the next worker's sweep resumes it
        finally:
            store.close()
        raise
    run = getattr(outcome, "run", None)
    return {"run": run_id, "status": run.status.value if run is not None else None, "skipped": False}


def _interrupt_once() -> None:
    """In a worker process, the first SIGTERM interrupts the job (huey raises KeyboardInterrupt) and later
    ones are ignored: the consumer's exit sends a second one that must not cut the job's cleanup short
    (units in flight released, the run marked pending)."""
    if threading.current_thread() is not threading.main_thread():
        return  # huey's thread workers: signals reach the consumer's main thread only

    def interrupt(signum: int, _frame: object) -> None:
        signal.signal(signum, signal.SIG_IGN)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


class JobQueue:
    """The huey queue of one store, with its `resume_job` task registered."""

    def __init__(self, store_url: str, queue_url: str | None = None) -> None:
        self.store_url = store_url
        self.url = queue_url or queue_url_for(store_url)
        self.huey = _open_huey(self.url)
        self.task = self.huey.task(retries=RETRIES, retry_delay=RETRY_DELAY_S, name="resume_job")(
            self._resume
        )

    def _resume(self, store_url: str, run_id: str) -> dict[str, Any]:
        """`resume_job` on this worker's own store when the task names it: a task carries the store's URL
        with its password masked (the queue may sit on another server), so the worker supplies it."""
        return resume_job(self.store_url if self._names_this_store(store_url) else store_url, run_id)

    def _names_this_store(self, store_url: str) -> bool:
        return mask_url(store_url) == mask_url(self.store_url)

    def enqueue(self, run_id: str, workers: int = 1) -> list[str]:
        """Queue the run for `workers` workers at once (they share its units by their claims); returns
        the tasks' ids. A task never holds the store's password."""
        return [self.task(mask_url(self.store_url), run_id).id for _ in range(max(1, workers))]

    def pending_runs(self) -> set[str]:
        """Ids of the runs of this store that a task waiting in the queue names."""
        return {
            task.args[1]
            for task in self.huey.pending()
            if task.name == "resume_job" and task.args and self._names_this_store(task.args[0])
        }


@functools.cache
def open_queue(store_url: str, queue_url: str | None = None) -> JobQueue:
    """The queue of a store, opened once per process (a page enqueues on every click)."""
    return JobQueue(store_url, queue_url)


def enqueue(
    store: Store,
    run_id: str,
    workers: int = 1,
    *,
    budget: dict[str, float] | None = None,
    concurrency: int | None = None,
    retry_failed: bool = False,
    actor: Actor | None = None,
) -> list[str]:
    """Hand a run's job to `workers` workers: mark it pending (which clears an earlier stop), record when
    it was queued, and queue its tasks. A stop asked before a worker takes it is kept: the task skips it.
    The actor must hold the job's start permission (a run against a target is a lead's).

    `budget`, `concurrency` and `retry_failed` are what a job started in the foreground would have been
    given: they are recorded with the run (failed units given back), so the worker applies them."""
    run = store.run(run_id)
    target = f"{run_id} ({run.kind})"
    with authorized(store, actor, job_permission(run.kind), "job.start", target=target):
        if not run.params.get(ENTRY):
            raise EvalcoreError(f"run {run_id} records no job function: a worker could not resume it")
        if budget:
            store.update_run(run.model_copy(update={"budget": budget}))
        if concurrency:
            store.update_run_params(run_id, {"concurrency": int(concurrency)})
        if retry_failed:
            claims.retry_failed(store, run_id)
        _mark_pending(store, run_id)
        store.update_run_params(run_id, {QUEUED_AT: now_utc().isoformat()})
        return open_queue(store.url).enqueue(run_id, workers)


def _mark_pending(store: Store, run_id: str) -> None:
    """Record the run as pending again (a resume in the store's terms: its stop request is cleared)."""
    with store.read() as conn:
        project_id = conn.scalar(sa.select(t.runs.c.project_id).where(t.runs.c.id == run_id))
    store.start_run(project_id, store.run(run_id), pending=True)


def orphaned_runs(store: Store, quiet_for: float) -> list[str]:
    """Queued runs, pending or running, that no live worker holds and whose claims have not moved for
    `quiet_for` seconds (a worker between two units, or still planning, is not an orphan)."""
    r, c = t.runs, t.job_claims
    live = (RunStatus.pending.value, RunStatus.running.value)
    with store.read() as conn:
        runs = conn.execute(sa.select(r.c.id, r.c.body).where(r.c.status.in_(live))).all()
    horizon = now_utc() - timedelta(seconds=quiet_for)
    orphans = []
    for run_id, body in runs:
        queued_at = ((body or {}).get("params") or {}).get(QUEUED_AT)
        if not queued_at:
            continue  # started in the foreground (CLI) or by an older page: not the queue's to resume
        states = claims.unit_states(store, run_id)
        now = now_utc()
        if any(s.status == "claimed" and not s.takeable(now) for s in states.values()):
            continue
        with store.read() as conn:
            moved = conn.scalar(sa.select(sa.func.max(c.c.updated_at)).where(c.c.run_id == run_id))
        last = max(filter(None, [moved, datetime.fromisoformat(queued_at)]))
        if last < horizon:
            orphans.append(run_id)
    return orphans


def recover(store: Store, queue: JobQueue) -> list[str]:
    """Enqueue every orphaned run that no waiting task names; returns their ids."""
    waiting = queue.pending_runs()
    found = [run_id for run_id in orphaned_runs(store, recover_seconds()) if run_id not in waiting]
    for run_id in found:
        queue.enqueue(run_id)
    return found


def _open_huey(url: str) -> Huey:
    """A huey instance for a queue URL (huey imported here, not at module import)."""
    import huey

    parsed = sa.make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if not parsed.database:
            raise EvalcoreError(f"the queue URL {display_url(url)} names no file")
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        return huey.SqliteHuey(QUEUE_NAME, filename=parsed.database, utc=True)
    if backend == "postgresql":
        import psycopg

        dsn = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
        for attempt in range(3):
            try:
                return huey.PostgresHuey(QUEUE_NAME, dsn=dsn, utc=True)
            except psycopg.errors.UniqueViolation:
                # Two workers starting at once both run huey's CREATE TABLE IF NOT EXISTS, and PostgreSQL
                # lets one of them fail on the catalog; the tables exist now, so the next try passes.
                if attempt == 2:
                    raise
    if backend in ("redis", "rediss"):
        from huey.exceptions import ConfigurationError

        try:
            return huey.RedisHuey(QUEUE_NAME, url=url, utc=True)
        except ConfigurationError as exc:  # huey's Redis storage needs the client, which we do not install
            raise EvalcoreError(
                f"the queue URL {display_url(url)} needs the redis package: uv pip install redis"
            ) from exc
    raise EvalcoreError(
        f"unsupported queue URL {display_url(url)}: use sqlite:///FILE, postgresql://... or redis://..."
    )
