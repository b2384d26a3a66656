"""The core of ModelClient: one model call with cache, budget, retries and accounting, and the run's notes.

`CallCore._call` is the only place a provider is called for a completion: the cache is looked up, the
budget reserved, the provider called with retries, and the response cached and the call recorded in one
transaction. `ModelClient` (client.py) builds tasks, batches and embeddings on top of it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import sqlalchemy as sa

from evalcore.errors import NotFoundError
from evalcore.llm.accounting import Budget, BudgetTracker, PriceTable, StoreBudget, estimate_tokens
from evalcore.llm.cache import cache_get, cache_key, cache_put, reject_cached
from evalcore.llm.providers import Provider
from evalcore.llm.records import CallRecord, record_call
from evalcore.llm.registry import Registry
from evalcore.llm.retry import RetryPolicy, with_retries
from evalcore.llm.types import BudgetExceeded, Completion, ModelCallError, Request
from evalcore.models import Run
from evalcore.store import Store

log = logging.getLogger("evalcore.llm")
DEFAULT_CONCURRENCY = 8
_WRITE_LOCKS: weakref.WeakKeyDictionary[Store, threading.Lock] = weakref.WeakKeyDictionary()
_WRITE_LOCKS_GUARD = threading.Lock()


def _write_lock(store: Store) -> threading.Lock:
    with _WRITE_LOCKS_GUARD:
        return _WRITE_LOCKS.setdefault(store, threading.Lock())


class CallCore:
    """Settings, budget and the single-call path shared by everything ModelClient does."""

    def __init__(
        self,
        store: Store,
        project_id: str | None = None,
        run_id: str | None = None,
        budget: Budget | dict[str, Any] | None = None,
        *,
        registry: Registry | None = None,
        retry: RetryPolicy | None = None,
        concurrency: int | None = None,
    ) -> None:
        self.store, self.project_id, self.run_id = store, project_id, run_id
        settings = store.project(project_id).settings if project_id else {}
        self.registry = registry or Registry(settings)
        self.prices = PriceTable(settings.get("prices"))
        options = settings.get("llm") or {}
        self.retry = retry or RetryPolicy(max_retries=int(options.get("max_retries", 4)))
        env_concurrency = os.environ.get("EVALCORE_LLM_CONCURRENCY")
        self.concurrency = int(
            concurrency or options.get("concurrency") or env_concurrency or DEFAULT_CONCURRENCY
        )
        run = self.current_run()
        chosen = Budget.parse(budget) or Budget.parse(run.budget if run else None)
        chosen = chosen or Budget.parse(settings.get("budget"))
        # A run's budget lives in the store: every process working the run shares it, and a resumed
        # run keeps what it spent.
        self.budget: StoreBudget | BudgetTracker = (
            StoreBudget(store, run.id, chosen) if run is not None else BudgetTracker(chosen)
        )
        self.stopped_reason: str | None = None
        self.warnings: list[str] = []
        self.sleep: Callable[[float], None] = time.sleep
        self._lock = threading.Lock()

    # ------------------------------------------------------------ the call

    def _call(self, provider: Provider, model: str, request: Request, role: str | None) -> Completion:
        """One call: cache lookup, budget check, retries, then cache write and accounting together."""
        started = time.perf_counter()
        key = cache_key(provider.cache_tag, model, request) if provider.cacheable else None
        cached = cache_get(self.store, key) if key else None
        if cached is not None:
            latency = (time.perf_counter() - started) * 1000
            tokens = (cached.tokens_in, cached.tokens_out)
            self._record(provider, model, request.task, role, tokens, 0.0, latency, hit=True, attempts=0)
            return Completion(cached, provider.name, model, True, 0.0, latency, 0)
        reservation = self.reserve(provider, model, *estimate_tokens(request))
        try:
            response, attempts = with_retries(
                lambda: provider.generate(model, request), self.retry, provider.name, model, self.sleep
            )
        except BaseException as e:
            self.settle(reservation, 0.0, 0)  # always release: other workers may be waiting on it
            if isinstance(e, ModelCallError):
                latency = (time.perf_counter() - started) * 1000
                self._record(
                    provider, model, request.task, role, (0, 0), 0.0, latency, False, e.attempts, str(e)
                )
            raise
        tokens = (response.tokens_in, response.tokens_out)
        cost = self._cost(provider, model, *tokens)
        self.settle(reservation, cost, sum(tokens) if provider.priced else 0)
        latency = (time.perf_counter() - started) * 1000
        with self.writing() as conn:  # the cache entry and its accounting row commit together
            if key:
                cache_put(conn, key, provider.name, model, response)
            self._record(
                provider, model, request.task, role, tokens, cost, latency, False, attempts, conn=conn
            )
        return Completion(response, provider.name, model, False, cost, latency, attempts)

    def reserve(self, provider: Provider, model: str, tokens_in: int, tokens_out: int) -> Any:
        """Hold budget for a call of at most these tokens; stops the run and raises if it may not fit."""
        if not provider.priced:  # offline and local models are free and do not count against budgets
            return None
        try:
            return self.budget.reserve(self.prices.cost(model, tokens_in, tokens_out), tokens_in + tokens_out)
        except BudgetExceeded as e:
            self._stop_for_budget(str(e))
            raise

    def reject(self, provider: Provider, model: str, requests: list[Request]) -> None:
        """Never replay the cached replies to these requests: their task could not use them."""
        if provider.cacheable:
            for request in requests:
                reject_cached(self.store, cache_key(provider.cache_tag, model, request))

    def settle(self, reservation: Any, usd: float, tokens: int) -> None:
        """Replace a reservation from `reserve` by what the call really cost."""
        if reservation is not None or usd or tokens:  # an unpriced call held nothing and cost nothing
            self.budget.settle(reservation, usd, tokens)

    def _cost(self, provider: Provider, model: str, tokens_in: int, tokens_out: int) -> float:
        if not provider.priced:
            return 0.0
        if self.prices.lookup(model) is None:
            self.warn(
                f"no price known for {provider.name}/{model}: its calls count as $0; set one in Settings"
            )
        return self.prices.cost(model, tokens_in, tokens_out)

    def _record(
        self,
        provider: Provider,
        model: str,
        task: str | None,
        role: str | None,
        tokens: tuple[int, int],
        cost: float,
        latency: float,
        hit: bool,
        attempts: int,
        error: str | None = None,
        conn: sa.Connection | None = None,
    ) -> None:
        status = "error" if error else "ok"
        record = CallRecord(self.project_id, self.run_id, task, role, provider.name, model, *tokens,
                            cost, latency, hit, attempts, status, error)  # fmt: skip
        if conn is not None:
            record_call(conn, record)
            return
        with self.writing() as c:
            record_call(c, record)

    @contextmanager
    def writing(self) -> Iterator[sa.Connection]:
        """A write transaction; on SQLite taken by one thread of this process at a time.

        SQLite admits one writer: threads queueing on a Python lock hand over at once, where SQLite's
        busy handler makes them sleep in growing steps (steadier batch throughput in the benchmark).
        """
        lock = _write_lock(self.store) if self.store.dialect == "sqlite" else nullcontext()
        with lock, self.store.write() as conn:
            yield conn

    # ------------------------------------------------------------- the run

    def current_run(self) -> Run | None:
        """The run this client accounts to, as stored now (None without a run)."""
        if not self.run_id:
            return None
        try:
            return self.store.run(self.run_id)
        except NotFoundError:
            return None

    def warn(self, message: str) -> None:
        """Record a warning once, on this client and on its run (appended: the page shows the run's)."""
        with self._lock:
            if message in self.warnings:
                return
            self.warnings.append(message)
            log.warning(message)
            run = self.current_run()
            if run is not None:
                self.store.add_run_warning(run.id, message)

    def _stop_for_budget(self, message: str) -> None:
        """Stop the run for budget (once): a stop request every worker of the run, in any process, reads."""
        with self._lock:
            if self.stopped_reason:
                return
            self.stopped_reason = "budget"
            log.warning(message)
            run = self.current_run()
            if run is not None:
                self.store.add_run_warning(run.id, message)
                self.store.request_stop(run.id, "budget")
