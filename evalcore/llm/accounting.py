"""What calls cost, and budgets that stop a run before the call that would exceed them.

Prices are list prices in USD per million tokens (input, output), matched by the longest model-name
prefix ("gpt-4o-mini-2024-07-18" -> "gpt-4o-mini"). A project overrides or adds prices with the setting
`prices`: {"my-model": {"input": 0.5, "output": 1.5}}. Offline and local models cost nothing.

A budget ({"usd": 2.0} and/or {"tokens": 500000}) is checked before each call against what the run has
spent (cache hits are free), what calls in flight may spend, and an upper bound for the next call
(prompt characters / 3 + max_tokens). So a run never goes past it, even with calls in parallel. A run's
budget is kept in the store (`StoreBudget`), so it holds across every process that works the run; a
client without a run keeps its budget in memory (`BudgetTracker`).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import sqlalchemy as sa

from evalcore.llm.types import BudgetExceeded, Request
from evalcore.models.common import now_utc
from evalcore.store import Store
from evalcore.store import schema as t
from evalcore.store.sql import locked
from evalcore.store.workers import is_dead, worker_id

log = logging.getLogger(__name__)

PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-opus-4": (15.00, 75.00),
    "claude-opus-4-5": (5.00, 25.00),
    "text-embedding-3-small": (0.02, 0.0),
    "text-embedding-3-large": (0.13, 0.0),
}


# A reservation outlives any call with its retries (timeouts x attempts); a process that died holding one
# on this machine is seen at once, one on another machine after this long.
RESERVATION_S = 900.0
WAIT_S = 0.05  # how often a call waiting on calls in flight (in any process) looks again


class PriceTable:
    """Prices per model: the built-in list overlaid with a project's `prices` setting."""

    def __init__(self, overrides: dict[str, Any] | None = None) -> None:
        self.prices = dict(PRICES)
        for model, price in (overrides or {}).items():
            self.prices[model] = (float(price.get("input", 0.0)), float(price.get("output", 0.0)))

    def lookup(self, model: str) -> tuple[float, float] | None:
        """(input, output) USD per million tokens, or None when the model has no known price."""
        if model in self.prices:
            return self.prices[model]
        matches = [name for name in self.prices if model.startswith(name)]
        return self.prices[max(matches, key=len)] if matches else None

    def cost(self, model: str, tokens_in: int, tokens_out: int) -> float:
        """USD for a call; 0 (with a warning in the log) when the price is unknown."""
        price = self.lookup(model)
        if price is None:
            return 0.0
        return (tokens_in * price[0] + tokens_out * price[1]) / 1_000_000


def estimate_tokens(request: Request) -> tuple[int, int]:
    """An upper bound of (tokens in, tokens out) for a request, before it is made."""
    chars = sum(len(m.content) + 8 for m in request.messages) + len(str(request.schema or ""))
    return math.ceil(chars / 3), request.max_tokens


@dataclass(frozen=True)
class Budget:
    """Limits for a run; None means no limit."""

    usd: float | None = None
    tokens: int | None = None

    @classmethod
    def parse(cls, value: Budget | dict[str, Any] | None) -> Budget | None:
        """A Budget from {'usd': .., 'tokens': ..}, or None when there is no limit."""
        if value is None or isinstance(value, Budget):
            return value if (value is None or value.usd is not None or value.tokens is not None) else None
        usd, tokens = value.get("usd"), value.get("tokens")
        if usd is None and tokens is None:
            return None
        return cls(float(usd) if usd is not None else None, int(tokens) if tokens is not None else None)

    def describe(self) -> str:
        """E.g. '$2.00 and 500000 tokens'."""
        parts = ([f"${self.usd:.2f}"] if self.usd is not None else []) + (
            [f"{self.tokens} tokens"] if self.tokens is not None else []
        )
        return " and ".join(parts) or "no limit"


def _check(
    budget: Budget | None, spent: tuple[float, int], held: tuple[float, int], call: tuple[float, int]
) -> str:
    """'fits', 'wait' (it would fit but for calls in flight) or 'exceeded', and why in the last case."""
    if budget is None:
        return "fits"

    def fits(extra: tuple[float, int]) -> bool:
        ok_usd = budget.usd is None or spent[0] + extra[0] + call[0] <= budget.usd
        return ok_usd and (budget.tokens is None or spent[1] + extra[1] + call[1] <= budget.tokens)

    if fits(held):
        return "fits"
    return "wait" if fits((0.0, 0)) else "exceeded"


def _exceeded(budget: Budget | None, spent: tuple[float, int], call: tuple[float, int]) -> BudgetExceeded:
    assert budget is not None
    return BudgetExceeded(
        f"stopped before exceeding the budget of {budget.describe()}: spent ${spent[0]:.4f} / {spent[1]} "
        f"tokens, the next call may cost up to ${call[0]:.4f} / {call[1]} tokens"
    )


class BudgetTracker:
    """Spent + reserved against a budget in this process's memory: for a client without a run."""

    def __init__(self, budget: Budget | None, spent_usd: float = 0.0, spent_tokens: int = 0) -> None:
        self.budget = budget
        self.spent_usd, self.spent_tokens = spent_usd, spent_tokens
        self._reserved_usd, self._reserved_tokens = 0.0, 0
        self._changed = threading.Condition()

    def reserve(self, usd: float, tokens: int) -> tuple[float, int]:
        """Hold room for a call's upper bound; raises BudgetExceeded if it cannot fit.

        When it would fit but for calls still in flight, wait for them: they usually cost far less than
        their reservation, so stopping then would end the run early.
        """
        with self._changed:
            while True:
                spent = (self.spent_usd, self.spent_tokens)
                verdict = _check(
                    self.budget, spent, (self._reserved_usd, self._reserved_tokens), (usd, tokens)
                )
                if verdict == "fits":
                    break
                if verdict == "exceeded":
                    raise _exceeded(self.budget, spent, (usd, tokens))
                self._changed.wait()
            self._reserved_usd += usd
            self._reserved_tokens += tokens
            return usd, tokens

    def settle(self, reservation: tuple[float, int], usd: float, tokens: int) -> None:
        """Replace a reservation by what the call really cost (0 when it failed without a reply)."""
        with self._changed:
            self._reserved_usd -= reservation[0]
            self._reserved_tokens -= reservation[1]
            self.spent_usd += usd
            self.spent_tokens += tokens
            self._changed.notify_all()


class StoreBudget:
    """A run's budget kept in the store, so it holds across the processes that work the run.

    What the run spent is on its row (`spent_usd`, `spent_tokens`); each call in flight holds a row of
    `budget_reservations` for its upper bound, taken under the run's lock before the call and replaced by
    the real cost after it. A reservation whose process died, or older than RESERVATION_S, no longer
    counts. Every call is settled here, budget or not, so a run's spend is always on its row.
    """

    def __init__(self, store: Store, run_id: str, budget: Budget | None) -> None:
        self.store, self.run_id, self.budget = store, run_id, budget

    @property
    def spent_usd(self) -> float:
        """USD the run has spent (every process)."""
        return self._spent()[0]

    @property
    def spent_tokens(self) -> int:
        """Tokens the run has spent (every process)."""
        return self._spent()[1]

    def _spent(self, conn: sa.Connection | None = None) -> tuple[float, int]:
        query = sa.select(t.runs.c.spent_usd, t.runs.c.spent_tokens).where(t.runs.c.id == self.run_id)
        if conn is not None:  # inside a reservation: the run's row stays locked until it commits
            row = conn.execute(locked(conn, query)).one()
        else:
            with self.store.read() as c:
                row = c.execute(query).one()
        return float(row[0]), int(row[1])

    def reserve(self, usd: float, tokens: int) -> int | None:
        """Hold room for a call's upper bound (the reservation's id, None without a budget); raises
        BudgetExceeded if it cannot fit, and waits while it fits but for calls in flight."""
        if self.budget is None:
            return None
        r = t.budget_reservations
        while True:
            with self.store.write() as conn:
                spent = self._spent(conn)
                held = self._held(conn)
                verdict = _check(self.budget, spent, held, (usd, tokens))
                if verdict == "exceeded":
                    raise _exceeded(self.budget, spent, (usd, tokens))
                if verdict == "fits":
                    expires = now_utc() + timedelta(seconds=RESERVATION_S)
                    values = {"run_id": self.run_id, "holder": worker_id(), "usd": usd, "tokens": tokens,
                              "expires_at": expires}  # fmt: skip
                    return int(conn.execute(sa.insert(r).values(**values)).inserted_primary_key[0])
            time.sleep(WAIT_S)

    def _held(self, conn: sa.Connection) -> tuple[float, int]:
        """What live reservations hold; those of dead processes or past their expiry are dropped."""
        r = t.budget_reservations
        rows = conn.execute(
            sa.select(r.c.id, r.c.holder, r.c.usd, r.c.tokens, r.c.expires_at).where(
                r.c.run_id == self.run_id
            )
        ).all()
        now = now_utc()
        stale = [row.id for row in rows if row.expires_at < now or is_dead(row.holder)]
        if stale:
            conn.execute(sa.delete(r).where(r.c.id.in_(stale)))
        live = [row for row in rows if row.id not in stale]
        return sum(row.usd for row in live), sum(row.tokens for row in live)

    def settle(self, reservation: int | None, usd: float, tokens: int) -> None:
        """Replace a reservation by what the call really cost (0 when it failed without a reply)."""
        if reservation is None and not usd and not tokens:
            return
        with self.store.write() as conn:
            # The run's row first, as `reserve` takes it: the two never wait on each other in a cycle.
            self._spent(conn)
            if reservation is not None:
                conn.execute(
                    sa.delete(t.budget_reservations).where(t.budget_reservations.c.id == reservation)
                )
            if usd or tokens:
                conn.execute(
                    sa.update(t.runs)
                    .where(t.runs.c.id == self.run_id)
                    .values(spent_usd=t.runs.c.spent_usd + usd, spent_tokens=t.runs.c.spent_tokens + tokens)
                )
