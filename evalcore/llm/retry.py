"""Retries with exponential backoff and jitter, honouring Retry-After, around one provider call."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from evalcore.llm.types import ModelCallError, ProviderError

log = logging.getLogger("evalcore.llm")
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry transient failures (429, 5xx, timeouts, garbled replies)."""

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 120.0  # a server asking for a longer wait is treated as a hard failure

    def delay(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before retry number `attempt` (1-based); None when we should give up."""
        if retry_after is not None:
            if retry_after > self.max_retry_after:
                return None
            # At least what the server asked; a little jitter so parallel workers do not retry in lockstep.
            return retry_after + random.uniform(0.0, 0.1 + 0.1 * retry_after)
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return backoff * random.uniform(0.5, 1.0)


def with_retries(
    call: Callable[[], T],
    policy: RetryPolicy,
    provider: str,
    model: str,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[T, int]:
    """`call()`'s result and the number of attempts; a ModelCallError once retries are spent."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return call(), attempt
        except ProviderError as e:
            if not e.retryable or attempt > policy.max_retries:
                raise ModelCallError(provider, model, e.status, e.message, attempt) from None
            wait = policy.delay(attempt, e.retry_after)
            if wait is None:
                message = f"{e.message} (the server asked to retry after {e.retry_after:.0f} s)"
                raise ModelCallError(provider, model, e.status, message, attempt) from None
            log.warning(
                "%s/%s: %s; retry %d of %d in %.2f s", provider, model, e, attempt, policy.max_retries, wait
            )
            sleep(wait)
