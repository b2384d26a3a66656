"""McNemar's exact test against scipy's exact binomial test; pass^k against a hand-computed fixture."""

import math

import pytest
from scipy.stats import binomtest

from evalcore.stats.paired import mcnemar_exact, pass_hat_k, wilson_interval

DISCORDANT = [(0, 0), (1, 0), (0, 5), (3, 3), (7, 2), (2, 9), (12, 1), (30, 18), (100, 71), (500, 460)]


@pytest.mark.parametrize(("broken", "fixed"), DISCORDANT)
def test_mcnemar_matches_scipy_binomtest(broken, fixed):
    n = broken + fixed
    expected = 1.0 if n == 0 else binomtest(broken, n, 0.5, alternative="two-sided").pvalue
    assert mcnemar_exact(broken, fixed) == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_mcnemar_hand_value():
    # 5 broken, 0 fixed: 2 * (1/2)^5 = 0.0625.
    assert mcnemar_exact(5, 0) == pytest.approx(0.0625)


def test_mcnemar_rejects_negative_counts():
    with pytest.raises(ValueError, match="non-negative"):
        mcnemar_exact(-1, 2)


def test_pass_hat_k_hand_fixture():
    # Task A: 4 of 4 -> 1 for every k. Task B: 2 of 4 -> k=1: 2/4, k=2: C(2,2)/C(4,2) = 1/6, k=3: 0.
    # Task C: 3 of 4 -> k=1: 3/4, k=2: C(3,2)/C(4,2) = 3/6, k=3: C(3,3)/C(4,3) = 1/4.
    tasks = [(4, 4), (2, 4), (3, 4)]
    assert pass_hat_k(tasks, 1) == pytest.approx((1 + 0.5 + 0.75) / 3)
    assert pass_hat_k(tasks, 2) == pytest.approx((1 + 1 / 6 + 0.5) / 3)
    assert pass_hat_k(tasks, 3) == pytest.approx((1 + 0 + 0.25) / 3)
    assert pass_hat_k(tasks, 4) == pytest.approx(1 / 3)


def test_pass_hat_k_needs_k_trials():
    with pytest.raises(ValueError, match="fewer than k=3"):
        pass_hat_k([(2, 2)], 3)


def test_wilson_interval_contains_rate():
    low, high = wilson_interval(10, 100)
    assert low < 0.1 < high
    assert math.isclose(low, 0.0552, abs_tol=1e-3) and math.isclose(high, 0.1744, abs_tol=1e-3)
