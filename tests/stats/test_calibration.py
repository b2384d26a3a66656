"""Silver calibration: precision/recall of judge thresholds on gold, checked on a hand-computed case."""

from __future__ import annotations

import math

import pytest

from evalcore.stats.calibration import (
    ThresholdChoice,
    paired,
    precision_recall_curve,
    threshold_for_precision,
)

# Ten gold items, five positive. Highest score first; precision/recall worked out by hand:
#   threshold  0.95  0.9  0.8   0.7   0.6  0.5   0.4   0.3    0.2   0.1
#   tp/fp      1/0   2/0  2/1   3/1   4/1  4/2   4/3   5/3    5/4   5/5
#   precision  1     1    2/3   3/4   4/5  2/3   4/7   5/8    5/9   1/2
#   recall     .2    .4   .4    .6    .8   .8    .8    1      1     1
SCORES = [0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
LABELS = [True, True, False, True, True, False, False, True, False, False]


def test_curve_matches_hand_computation():
    curve = precision_recall_curve(SCORES, LABELS)
    assert [p.threshold for p in curve] == sorted(SCORES)
    by_t = {p.threshold: p for p in curve}
    assert (by_t[0.6].tp, by_t[0.6].fp, by_t[0.6].fn, by_t[0.6].tn) == (4, 1, 1, 4)
    assert by_t[0.6].precision == pytest.approx(0.8)
    assert by_t[0.6].recall == pytest.approx(0.8)
    assert by_t[0.3].precision == pytest.approx(5 / 8)
    assert by_t[0.3].recall == 1.0
    assert by_t[0.1].precision == 0.5
    assert by_t[0.95].selected == 1


def test_curve_merges_tied_scores_and_ignores_input_order():
    curve = precision_recall_curve([0.5, 0.9, 0.5], [False, True, True])
    assert [(p.threshold, p.tp, p.fp) for p in curve] == [(0.5, 2, 1), (0.9, 1, 0)]


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (0.8, ThresholdChoice(0.6, 0.8, 0.8, 5)),
        # 0.7 reaches 0.75, but 0.6 is lower, also reaches it, and recalls more.
        (0.75, ThresholdChoice(0.6, 0.8, 0.8, 5)),
        (0.9, ThresholdChoice(0.9, 1.0, 0.4, 2)),
        (1.0, ThresholdChoice(0.9, 1.0, 0.4, 2)),
        # Precision is not monotone: it dips below 0.6 at 0.5 and 0.4, then 0.3 reaches 5/8 with recall 1.
        (0.6, ThresholdChoice(0.3, 5 / 8, 1.0, 8)),
        (0.5, ThresholdChoice(0.1, 0.5, 1.0, 10)),
    ],
)
def test_threshold_for_precision_picks_lowest_qualifying_threshold(target, expected):
    got = threshold_for_precision(SCORES, LABELS, target)
    assert got is not None
    assert got.threshold == expected.threshold
    assert got.n == expected.n
    assert got.precision == pytest.approx(expected.precision)
    assert got.recall == pytest.approx(expected.recall)


def test_unreachable_precision_is_none():
    # The top-scored item is a negative, so precision 1 is out of reach.
    assert threshold_for_precision([0.9, 0.8, 0.1], [False, True, True], 1.0) is None
    assert threshold_for_precision([], [], 0.9) is None
    assert threshold_for_precision([0.4, 0.2], [False, False], 0.5) is None


def test_recall_is_nan_without_gold_positives():
    curve = precision_recall_curve([0.3], [False])
    assert math.isnan(curve[0].recall)


def test_paired_keeps_items_with_both_score_and_gold():
    scores, labels = paired({"a": 0.9, "b": 0.2, "c": 0.5}, {"c": False, "a": True, "z": True})
    assert (scores, labels) == ([0.9, 0.5], [True, False])


@pytest.mark.parametrize(
    ("scores", "labels", "target", "message"),
    [
        ([0.5], [True, False], 0.9, "labels"),
        ([1.5], [True], 0.9, r"\[0, 1\]"),
        ([math.nan], [True], 0.9, r"\[0, 1\]"),
        ([0.5], ["yes"], 0.9, "booleans"),
        ([0.5], [True], 0.0, "target_precision"),
    ],
)
def test_bad_inputs_are_refused(scores, labels, target, message):
    with pytest.raises(ValueError, match=message):
        threshold_for_precision(scores, labels, target)
