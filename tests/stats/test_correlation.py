"""Pearson's r, p-value and interval (seed 000, Table 6) against scipy on fixtures."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats

from evalcore.stats.correlation import pearson

JUDGE = [0.91, 0.12, 0.78, 0.35, 0.66, 0.05, 0.88, 0.42, 0.97, 0.21, 0.58, 0.73]
HUMAN = [1, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0, 1]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_r_and_p_match_scipy(seed):
    rng = random.Random(seed)
    x = [rng.random() for _ in range(40)]
    y = [v + rng.gauss(0, 0.4) for v in x]
    ours, theirs = pearson(x, y), stats.pearsonr(x, y)
    assert ours.r == pytest.approx(theirs.statistic, abs=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9)
    low, high = theirs.confidence_interval(0.95)  # scipy's Fisher interval
    assert (ours.low, ours.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))


def test_a_judge_score_against_a_human_decision_is_the_point_biserial_r():
    ours = pearson(JUDGE, HUMAN)
    assert ours.r == pytest.approx(stats.pointbiserialr(HUMAN, JUDGE).statistic, abs=1e-12)
    assert ours.n == 12 and ours.p_value < 0.01 and ours.low < ours.r < ours.high


def test_too_few_or_constant_pairs_give_no_r():
    assert math.isnan(pearson([0.1, 0.2, 0.3], [0, 1, 1]).r)
    assert not pearson([0.1, 0.2, 0.3, 0.4, 0.5], [1, 1, 1, 1, 1]).defined
    with pytest.raises(ValueError):
        pearson([0.1], [1, 0])
