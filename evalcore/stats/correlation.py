"""Pearson's correlation with its p-value and interval (seed 000, Table 6: "Pearson correlation
coefficients between LLM evaluators & human judgments"). Pure functions on numbers.

r is the sample correlation; its two-sided p-value is that of t = r * sqrt((n - 2) / (1 - r^2)) under
Student's t with n - 2 degrees of freedom (the test of zero correlation); the 95% interval is Fisher's:
tanh(atanh(r) -+ 1.96 / sqrt(n - 3)). With a 0/1 human decision on one side this is the point-biserial
correlation, which is what Pearson's r is on such data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy.special import betainc

Z95 = 1.959963984540054
MIN_ITEMS = 5  # fewer pairs give an r that says nothing (and no interval: Fisher's needs n > 3)


@dataclass(frozen=True)
class Correlation:
    """Pearson's r of n pairs, its two-sided p-value and 95% interval; nan where it cannot be computed
    (fewer than MIN_ITEMS pairs, or one side constant)."""

    r: float
    p_value: float
    low: float
    high: float
    n: int

    @property
    def defined(self) -> bool:
        """Whether r could be computed."""
        return not math.isnan(self.r)


def _t_two_sided(t: float, df: int) -> float:
    """P(|T| >= |t|) for Student's t with `df` degrees of freedom (the regularised incomplete beta)."""
    if math.isinf(t):
        return 0.0
    return float(betainc(df / 2, 0.5, df / (df + t * t)))


def pearson(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Pearson's r of the pairs (x[i], y[i]), with its p-value and Fisher interval."""
    if len(x) != len(y):
        raise ValueError(f"need pairs: {len(x)} x values and {len(y)} y values")
    n = len(x)
    nan = Correlation(math.nan, math.nan, math.nan, math.nan, n)
    if n < MIN_ITEMS:
        return nan
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return nan
    r = max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))
    if abs(r) == 1.0:
        return Correlation(r, 0.0, r, r, n)
    t = r * math.sqrt((n - 2) / (1 - r * r))
    half = Z95 / math.sqrt(n - 3)
    return Correlation(
        r, _t_two_sided(t, n - 2), math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half), n
    )
