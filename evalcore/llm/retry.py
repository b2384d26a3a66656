"""Retries with exponential backoff and jitter, honouring Retry-After, around one provider call."""

from __future__ import annotations

import logging
import random
import re
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


# A server that cannot do what a request asks (llama.cpp's, vLLM's, some proxies') may say so with a 500:
# a message that names a request feature and says it is not supported. Asking again gets the same answer.
_REFUSAL = re.compile(r"not supported|unsupported|not implemented|must be one of|is not available", re.I)
_FEATURES = re.compile(
    r"response_format|json_schema|json_object|grammar|tool|temperature|seed|logprobs", re.I
)


def refuses_feature(error: ProviderError) -> bool:
    """True when a server error refuses a feature of the request for good (so it is not retried)."""
    return bool(_REFUSAL.search(error.message) and _FEATURES.search(error.message))


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
            if not e.retryable or refuses_feature(e) or attempt > policy.max_retries:
                raise ModelCallError(provider, model, e.status, e.message, attempt) from None
            wait = policy.delay(attempt, e.retry_after)
            if wait is None:
                message = f"{e.message} (the server asked to retry after {e.retry_after:.0f} s)"
                raise ModelCallError(provider, model, e.status, message, attempt) from None
            log.warning(
                "%s/%s: %s; retry %d of %d in %.2f s", provider, model, e, attempt, policy.max_retries, wait
            )
            sleep(wait)
