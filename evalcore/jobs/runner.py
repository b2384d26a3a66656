"""The job loop: claim units, work them on a few threads, commit each with its claim, stop when asked.

`run_units(store, run_id, keys, work)` is the loop of every long job. It claims the units of `keys` not
finished yet, one by one and atomically (jobs/claims.py), hands each to `work(claim)` on a thread pool,
and renews its claims while they are worked. `work` writes its result through `claim.commit()`: the
result, the unit's record in `run_units` and the claim's end commit in one transaction. Between units it
reads the run's stop request (a column any process may set: a person, the budget); a unit that cannot
go on raises `UnitStopped`, which releases its claim. Nothing lives only in memory: another process
started on the same run takes the units nobody holds, and the last worker to finish sets the run's end.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field

from evalcore.errors import EvalcoreError
from evalcore.jobs import claims
from evalcore.jobs.control import PROGRESS_TOTAL, committed_records
from evalcore.models import Run, RunStatus
from evalcore.models.common import now_utc
from evalcore.store import Store
from evalcore.store.store import UnitWriter
from evalcore.store.workers import worker_id

log = logging.getLogger("evalcore.jobs")
POLL_SECONDS = 0.5  # how often the loop reads the stop request while units are worked


class UnitStopped(EvalcoreError):
    """A unit cannot go on (the budget is spent, a stop was asked): it is released, and the job stops."""


class Claim:
    """A unit this worker holds: its key, and how to commit what it produced."""

    def __init__(self, store: Store, run_id: str, key: str, worker: str, job: _Loop) -> None:
        self.store, self.run_id, self.key, self.worker = store, run_id, key, worker
        self._job = job
        self.closed = False

    @property
    def stopping(self) -> bool:
        """True once the job is stopping: a unit of several steps stops before its next one."""
        return self._job.halt.is_set()

    @contextmanager
    def commit(self, record: str | None = None) -> Iterator[UnitWriter]:
        """One transaction: what the block writes, the record (key `record`, default the unit's own key)
        and, for the unit's own record, the end of the claim (done, or failed if the block called `fail`).

        A unit of several steps (the turns of a conversation) commits one record per step; its claim ends
        when `work` returns. ClaimLost, and nothing written, if another worker took the unit over.
        """
        own = record is None
        with self.store.unit(self.run_id, record or self.key) as writer:
            claims.hold(writer.conn, self.run_id, self.key, self.worker)
            if self._job.aborted.is_set():  # checked holding the write: nothing commits after an error
                raise UnitStopped("the job was interrupted")
            try:
                yield writer
            except UnitStopped:
                raise
            except BaseException:
                self._job.aborted.set()  # still inside the transaction: no other unit commits after it
                raise
            if own:
                claims.close(writer.conn, self.run_id, self.key, self.worker, writer.status)
                self.closed = True
                if writer.status == "failed":
                    self._job.failed.append(self.key)
        self._job.events.put(record or self.key)

    def _end(self) -> None:
        """After `work` returned: a unit that committed no record of its own is done."""
        if not self.closed:
            with self.store.write() as conn:
                claims.hold(conn, self.run_id, self.key, self.worker)
                claims.close(conn, self.run_id, self.key, self.worker, "done")
            self.closed = True


@dataclass
class JobReport:
    """What one call of `run_units` did, and where the run stands after it."""

    run: Run
    total: int  # units of the job
    skipped: int  # finished before this call
    done: int = 0  # finished by this call (failed ones included)
    failed: list[str] = field(default_factory=list)  # units that failed in this call
    stopped: str | None = None  # why the job stopped before the end, if it did
    others: int = 0  # units other live workers still hold


@dataclass
class _Loop:
    halt: threading.Event = field(default_factory=threading.Event)
    aborted: threading.Event = field(default_factory=threading.Event)  # an error: units in flight are dropped
    reason: str | None = None
    failed: list[str] = field(default_factory=list)
    events: queue.Queue[str] = field(default_factory=queue.Queue)

    def stop(self, reason: str) -> None:
        if not self.halt.is_set():
            self.reason = reason
            self.halt.set()


def run_units(
    store: Store,
    run_id: str,
    keys: Sequence[str],
    work: Callable[[Claim], None],
    *,
    concurrency: int = 1,
    on_progress: Callable[[int, int], None] | None = None,
    progress_total: int | None = None,
) -> JobReport:
    """Work the run's unfinished units among `keys` (see the module docstring) and record how it ended.

    `on_progress(done, total)` is called in the caller's thread as records commit, counting the records
    committed before; `total` is `progress_total` (records of a run whose units have several steps) or
    the number of units. An exception raised there or by `work` stops the job (its claims released, the
    run marked stopped) and propagates.
    """
    worker = worker_id(uuid.uuid4().hex[:8])  # one per call: two loops of one process are two workers
    loop = _Loop()
    states = claims.unit_states(store, run_id)
    report, total, done_records = _begin(store, run_id, keys, states, progress_total)
    if on_progress:
        on_progress(done_records, total)
    beat = _heartbeat(store, worker)

    workers = max(1, concurrency)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"evalcore-job-{run_id}")
    running: dict[Future[None], Claim] = {}
    candidates = _takeable(keys, states)
    polled = 0.0
    try:
        while True:
            wants = bool(candidates) and len(running) < workers
            if not loop.halt.is_set() and (wants or time.monotonic() - polled > POLL_SECONDS):
                polled = time.monotonic()  # read before every claim: a stop asked now takes no new unit
                if requested := store.stop_requested(run_id):
                    loop.stop(requested)
            while candidates and len(running) < workers and not loop.halt.is_set():
                key, seen = candidates.pop(0)
                if claims.take(store, run_id, key, worker, seen):
                    claim = Claim(store, run_id, key, worker, loop)
                    running[pool.submit(_execute, work, claim, loop)] = claim
            if not running:
                if loop.halt.is_set() or not (
                    candidates := _takeable(keys, claims.unit_states(store, run_id))
                ):
                    break
                continue
            ready, _ = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in ready:
                claim = running.pop(future)
                future.result()  # a bug in a unit surfaces here
                report.done += claim.closed
            while not loop.events.empty():
                loop.events.get()
                done_records += 1
                if on_progress:
                    on_progress(done_records, total)
    except BaseException as e:
        loop.aborted.set()
        loop.stop(f"interrupted: {type(e).__name__}: {e}" if str(e) else f"interrupted: {type(e).__name__}")
        _abandon(store, run_id, worker, pool, running)
        beat.set()
        _finish(store, run_id, keys, worker, loop)
        raise
    pool.shutdown(wait=True)
    beat.set()
    report.failed = list(loop.failed)
    report.run, report.stopped, report.others = _finish(store, run_id, keys, worker, loop)
    return report


def _execute(work: Callable[[Claim], None], claim: Claim, loop: _Loop) -> None:
    """Work one claimed unit (in a pool thread): a stopped unit gives its claim back and stops the loop;
    an error gives it back too and aborts the loop (units in flight commit nothing more)."""
    try:
        work(claim)
        claim._end()
    except UnitStopped as e:
        claims.release(claim.store, claim.run_id, claim.key, claim.worker)
        loop.stop(str(e))
    except BaseException:
        loop.aborted.set()
        claims.release(claim.store, claim.run_id, claim.key, claim.worker)
        raise


def _begin(
    store: Store,
    run_id: str,
    keys: Sequence[str],
    states: dict[str, claims.UnitState],
    progress_total: int | None,
) -> tuple[JobReport, int, int]:
    """The report of a call about to work the run (its units, how many were finished before), the total
    its progress counts to (kept in the run's parameters) and the records committed so far."""
    finished = sum(1 for k in keys if k in states and states[k].status in claims.FINISHED)
    report = JobReport(store.run(run_id), len(keys), finished)
    total = progress_total if progress_total is not None else len(keys)
    done_records = committed_records(store, run_id)
    if report.run.params.get(PROGRESS_TOTAL) != total:
        store.update_run_params(run_id, {PROGRESS_TOTAL: total})
    return report, total, done_records


def _takeable(
    keys: Sequence[str], states: dict[str, claims.UnitState]
) -> list[tuple[str, claims.UnitState | None]]:
    """The units among `keys` a worker may claim now (never claimed, or released, or their lease ran out),
    each with the state it was seen in (a claim succeeds only if that is still its state)."""
    now = now_utc()
    return [(k, states.get(k)) for k in keys if k not in states or states[k].takeable(now)]


def _abandon(
    store: Store, run_id: str, worker: str, pool: ThreadPoolExecutor, running: dict[Future[None], Claim]
) -> None:
    """After an error or an interrupt: units in flight end first, none commits now (the loop is aborted),
    a unit of several steps stops at its next step, and each releases its claim; units claimed but never
    started are given back here, so a resume right after takes them all at once."""
    pool.shutdown(wait=True, cancel_futures=True)
    for future, claim in running.items():
        if future.cancelled():  # claimed, never started: give it back
            claims.release(store, run_id, claim.key, worker)


def _heartbeat(store: Store, worker: str) -> threading.Event:
    """Renew this worker's leases every third of a lease until the returned event is set."""
    done = threading.Event()

    def beat() -> None:
        while not done.wait(claims.lease_seconds() / 3):
            try:
                claims.renew(store, worker)
            except Exception:  # a busy database must not kill the heartbeat; the next beat retries
                log.exception("could not renew the claims of %s", worker)

    threading.Thread(target=beat, name="evalcore-job-heartbeat", daemon=True).start()
    return done


def _finish(
    store: Store, run_id: str, keys: Sequence[str], worker: str, loop: _Loop
) -> tuple[Run, str | None, int]:
    """Record the run's end as the store sees it now: finished (or failed when every unit failed) when
    all units are finished; left running while other live workers hold units; else stopped, with the
    reason (a stop request keeps its own)."""
    now = now_utc()
    states = claims.unit_states(store, run_id)
    mine = [states.get(k) for k in keys]
    others = sum(1 for s in mine if s is not None and s.held_by_other(worker, now))
    if all(s is not None and s.status in claims.FINISHED for s in mine):
        every_failed = bool(keys) and all(s is not None and s.status == "failed" for s in mine)
        store.finish_run(run_id, RunStatus.failed if every_failed else RunStatus.finished,
                         "every unit failed; retry the failed units" if every_failed else None)  # fmt: skip
        return store.run(run_id), None, 0
    requested = store.stop_requested(run_id)
    if others and not requested:
        return store.run(run_id), loop.reason, others
    reason = requested or loop.reason or "interrupted"
    store.finish_run(run_id, RunStatus.stopped, reason)
    return store.run(run_id), reason, others
