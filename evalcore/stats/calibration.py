"""Calibrate the silver filter: choose the LLM-judge threshold that reaches a target precision on gold.

Seed 004 (TRACE) keeps as silver the items that pass an LLM judge tuned for precision on the gold
subset (precision 0.91 there). Here a judge score in [0, 1] is compared with the human gold label on the
items that have both; an item is predicted to pass when ``score >= threshold``. Pure functions, no store.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True)
class CurvePoint:
    """Precision and recall of the rule ``score >= threshold`` on the gold items.

    ``recall`` is NaN when the gold items hold no positive; ``selected`` = tp + fp.
    """

    threshold: float
    precision: float
    recall: float
    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def selected(self) -> int:
        """How many gold items pass the threshold (the denominator of precision)."""
        return self.tp + self.fp


class ThresholdChoice(NamedTuple):
    """The chosen threshold, its precision and recall on gold, and n = the gold items at or above it."""

    threshold: float
    precision: float
    recall: float
    n: int


def paired(scores: Mapping[Hashable, float], gold: Mapping[Hashable, bool]) -> tuple[list[float], list[bool]]:
    """Scores and gold labels of the items present in both mappings, aligned, in ``scores`` order."""
    keys = [k for k in scores if k in gold]
    return [scores[k] for k in keys], [gold[k] for k in keys]


def _validate(scores: Sequence[float], labels: Sequence[bool]) -> list[tuple[float, bool]]:
    """Check lengths and ranges; a NaN or out-of-range score is a caller bug, not something to guess at."""
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} scores but {len(labels)} labels")
    pairs: list[tuple[float, bool]] = []
    for i, (s, y) in enumerate(zip(scores, labels, strict=True)):
        s = float(s)
        if math.isnan(s) or not 0.0 <= s <= 1.0:
            raise ValueError(f"score {i} is {s}; judge scores must be in [0, 1] (leave unscored items out)")
        if y not in (True, False):
            raise ValueError(f"label {i} is {y!r}; gold labels must be booleans")
        pairs.append((s, bool(y)))
    return pairs


def precision_recall_curve(scores: Sequence[float], labels: Sequence[bool]) -> list[CurvePoint]:
    """Precision and recall at each distinct score used as threshold, thresholds ascending.

    Thresholds between two observed scores select the same items as the next observed score, so the
    observed scores are the only thresholds worth listing. Empty input gives an empty curve.
    """
    pairs = _validate(scores, labels)
    positives = sum(y for _, y in pairs)
    negatives = len(pairs) - positives
    # Walk from the highest score down, accumulating tp/fp; one point per distinct score.
    pairs.sort(key=lambda p: p[0], reverse=True)
    points: list[CurvePoint] = []
    tp = fp = 0
    for i, (s, y) in enumerate(pairs):
        tp += y
        fp += not y
        if i + 1 < len(pairs) and pairs[i + 1][0] == s:
            continue
        recall = tp / positives if positives else math.nan
        points.append(CurvePoint(s, tp / (tp + fp), recall, tp, fp, positives - tp, negatives - fp))
    points.reverse()
    return points


def threshold_for_precision(
    scores: Sequence[float], labels: Sequence[bool], target_precision: float
) -> ThresholdChoice | None:
    """The lowest threshold whose precision on gold reaches ``target_precision``, or None if none does.

    Recall can only fall as the threshold rises, so the lowest qualifying threshold has the highest recall
    among them; precision is not monotone, so every threshold is checked, not just the first crossing.
    ``n`` is the number of gold items at or above the threshold, the sample the precision rests on.
    """
    if not 0.0 < target_precision <= 1.0:
        raise ValueError(f"target_precision must be in (0, 1], got {target_precision}")
    for point in precision_recall_curve(scores, labels):
        if point.precision >= target_precision:
            return ThresholdChoice(point.threshold, point.precision, point.recall, point.selected)
    return None
