"""Paired statistics for comparing two runs on the same items (issue 27): McNemar's exact test on the
discordant counts, and pass^k over repeated trials as tau-bench defines it. Pure functions, no store."""

from __future__ import annotations

import math
from collections.abc import Sequence


def _binom_pmf(i: int, n: int) -> float:
    """P(X = i) for X ~ Binomial(n, 1/2), computed in log space so n in the thousands does not overflow."""
    log_p = math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2.0)
    return math.exp(log_p)


def mcnemar_exact(broken: int, fixed: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts of two paired runs.

    ``broken`` = items that passed in the baseline and fail now; ``fixed`` = the reverse. Under the null
    hypothesis each discordant item is a fair coin, so the p-value is the two-sided exact binomial test of
    ``broken`` successes in ``broken + fixed`` trials at p = 1/2. With p = 1/2 the distribution is
    symmetric, so "as or less likely than the observed count" (scipy's two-sided rule) is the two tails at
    ``min(b, f)`` and ``max(b, f)``. No discordant items means no evidence of change: p = 1.
    """
    if broken < 0 or fixed < 0:
        raise ValueError(f"discordant counts must be non-negative, got broken={broken}, fixed={fixed}")
    n = broken + fixed
    if n == 0:
        return 1.0
    low = min(broken, fixed)
    if 2 * low == n:
        return 1.0
    tail = math.fsum(_binom_pmf(i, n) for i in range(low + 1))
    return min(1.0, 2.0 * tail)


def pass_hat_k(successes: Sequence[tuple[int, int]], k: int) -> float:
    """tau-bench's pass^k: mean over tasks of C(c, k) / C(n, k), for (c successes, n trials) per task.

    It is the chance that k trials of a task drawn at random all succeed, estimated without bias from n >= k
    trials. Every task needs at least k trials, otherwise the estimate is undefined for it.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not successes:
        raise ValueError("pass^k needs at least one task")
    total = 0.0
    for index, (c, n) in enumerate(successes):
        if not 0 <= c <= n:
            raise ValueError(f"task {index}: {c} successes out of {n} trials")
        if n < k:
            raise ValueError(f"task {index} has {n} trials, fewer than k={k}")
        total += math.comb(c, k) / math.comb(n, k)
    return total / len(successes)


def wilson_interval(failures: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval (95% by default) of a failure rate, failures out of n; (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = failures / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
