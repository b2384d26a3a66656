"""What calls cost, and budgets that stop a run before the call that would exceed them.

Prices are list prices in USD per million tokens (input, output), matched by the longest model-name
prefix ("gpt-4o-mini-2024-07-18" -> "gpt-4o-mini"). A project overrides or adds prices with the setting
`prices`: {"my-model": {"input": 0.5, "output": 1.5}}. Offline and local models cost nothing.

A budget ({"usd": 2.0} and/or {"tokens": 500000}) is checked before each call against what the run has
spent (cache hits are free), what calls in flight may spend, and an upper bound for the next call
(prompt characters / 3 + max_tokens). So a run never goes past it, even with calls in parallel.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from typing import Any

from evalcore.llm.types import BudgetExceeded, Request

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


class BudgetTracker:
    """Spent + reserved against a budget, shared by the threads of one client."""

    def __init__(self, budget: Budget | None, spent_usd: float = 0.0, spent_tokens: int = 0) -> None:
        self.budget = budget
        self.spent_usd, self.spent_tokens = spent_usd, spent_tokens
        self._reserved_usd, self._reserved_tokens = 0.0, 0
        self._changed = threading.Condition()

    def _fits(self, usd: float, tokens: int, in_flight: bool) -> bool:
        b = self.budget
        if b is None:
            return True
        extra_usd, extra_tokens = (self._reserved_usd, self._reserved_tokens) if in_flight else (0.0, 0)
        ok_usd = b.usd is None or self.spent_usd + extra_usd + usd <= b.usd
        ok_tokens = b.tokens is None or self.spent_tokens + extra_tokens + tokens <= b.tokens
        return ok_usd and ok_tokens

    def reserve(self, usd: float, tokens: int) -> tuple[float, int]:
        """Hold room for a call's upper bound; raises BudgetExceeded if it cannot fit.

        When it would fit but for calls still in flight, wait for them: they usually cost far less than
        their reservation, so stopping then would end the run early.
        """
        with self._changed:
            while not self._fits(usd, tokens, in_flight=True):
                if not self._fits(usd, tokens, in_flight=False):
                    assert self.budget is not None
                    raise BudgetExceeded(
                        f"stopped before exceeding the budget of {self.budget.describe()}: spent "
                        f"${self.spent_usd:.4f} / {self.spent_tokens} tokens, the next call may cost up to "
                        f"${usd:.4f} / {tokens} tokens"
                    )
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
