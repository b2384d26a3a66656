"""Project-level reports on the annotations: agreement between annotators, the adjudication queue,
and the calibration of the silver filter (the LLM judge) against gold (seed 004)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd
import sqlalchemy as sa

from evalcore.items.state import refresh_states
from evalcore.items.tiers import ROLES
from evalcore.models import Annotation
from evalcore.review.agreement import (
    conversation_label_matrix,
    krippendorff_alpha_nominal,
    pairwise_kappa_table,
    turn_label_matrix,
)
from evalcore.review.queue import CONVERSATION
from evalcore.stats.calibration import (
    CurvePoint,
    ThresholdChoice,
    precision_recall_curve,
    threshold_for_precision,
)
from evalcore.stats.correlation import Correlation, pearson
from evalcore.store import Store
from evalcore.store import schema as t
from evalcore.store.store import annotation_from_row

PAGE = 5000


def project_annotations(store: Store, project_id: str, kind: str = CONVERSATION) -> Iterator[Annotation]:
    """Every verdict (annotators' and leads') on the project's items of one kind, item by item in append
    order, read in pages."""
    a, i = t.annotations, t.items
    last = 0
    while True:
        with store.read() as conn:
            rows = conn.execute(
                sa.select(a, i.c.kind)
                .join(i, i.c.id == a.c.item_id)
                .where(i.c.project_id == project_id, i.c.kind == kind, a.c.role.in_(ROLES), a.c.id > last)
                .order_by(a.c.id)
                .limit(PAGE)
            ).all()
        yield from (annotation_from_row(r) for r in rows)
        if len(rows) < PAGE:
            return
        last = rows[-1].id


def annotation_stamp(store: Store, project_id: str) -> tuple[int, int]:
    """(number of annotations, highest row id) of the project: changes whenever an annotation is added,
    so a page can cache a report on it."""
    a, i = t.annotations, t.items
    with store.read() as conn:
        n, top = conn.execute(
            sa.select(sa.func.count(), sa.func.max(a.c.id))
            .join(i, i.c.id == a.c.item_id)
            .where(i.c.project_id == project_id)
        ).one()
    return int(n), int(top or 0)


MIN_SHARED = 5
"""Fewest items labelled by two annotators before their agreement is shown as a number: on one or two
items kappa is 0, 1 or undefined by accident, and reads as a verdict on the annotators."""

PAIR_LABELS = {
    "a": "annotator A",
    "b": "annotator B",
    "n": "shared",
    "observed": "observed agreement",
    "kappa": "Cohen's kappa",
}
"""Headers of the pair table (`LevelAgreement.pairs`) as pages show it."""


def agreement_text(value: float | None, shared: int) -> str:
    """'0.42', or 'n/a' when the value is undefined or rests on fewer than `MIN_SHARED` shared items."""
    if value is None or math.isnan(value) or shared < MIN_SHARED:
        return "n/a"
    return f"{value:.2f}"


def shown_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pair table as a page shows it: agreement as text, kappa 'n/a' below `MIN_SHARED` shared
    items (observed agreement only when there is no shared item), headers from `PAIR_LABELS`."""
    out = pairs.copy()
    # A share of equal labels means what it says on any number of items: 'n/a' only with none shared.
    out["observed"] = [
        "n/a" if not n or math.isnan(v) else f"{v:.2f}"
        for v, n in zip(pairs["observed"], pairs["n"], strict=True)
    ]
    out["kappa"] = [agreement_text(v, n) for v, n in zip(pairs["kappa"], pairs["n"], strict=True)]
    return out.rename(columns=PAIR_LABELS)


@dataclass(frozen=True)
class LevelAgreement:
    """Agreement at one level (whole conversations or turns).

    ``overall`` is Cohen's kappa when exactly two annotators labelled, Krippendorff's alpha (nominal)
    for more; ``alpha`` is always given. ``pairable`` counts the units labelled by at least two people;
    ``shared`` the items ``overall`` rests on (the pair's shared items for kappa, ``pairable`` for alpha).
    """

    level: str
    annotators: list[str]
    units: int
    pairable: int
    overall_name: str
    overall: float
    alpha: float
    pairs: pd.DataFrame
    shared: int = 0

    @property
    def headline(self) -> str:
        """``overall`` as shown: two decimals, or 'n/a' (see `agreement_text`)."""
        return agreement_text(self.overall, self.shared)

    @property
    def too_few(self) -> str | None:
        """Why ``headline`` is 'n/a' for lack of shared items, or None when it is not."""
        if self.shared >= MIN_SHARED or not self.annotators:
            return None
        unit = "turns" if self.level == "turn" else "conversations"
        return (
            f"{self.overall_name} needs at least {MIN_SHARED} {unit} labelled by two annotators; "
            f"{self.shared:,} so far. Raise the overlap when assigning."
        )


def _level(level: str, matrix: dict) -> LevelAgreement:
    units: dict = {}
    for row in matrix.values():
        for unit in row:
            units[unit] = units.get(unit, 0) + 1
    pairs = pairwise_kappa_table(matrix)
    alpha = krippendorff_alpha_nominal(matrix)
    names = sorted(matrix)
    pairable = sum(n >= 2 for n in units.values())
    if len(names) == 2:
        name, overall, shared = "Cohen's kappa", float(pairs["kappa"].iloc[0]), int(pairs["n"].iloc[0])
    else:
        name, overall, shared = "Krippendorff's alpha", alpha, pairable
    return LevelAgreement(level, names, len(units), pairable, name, overall, alpha, pairs, shared)


def agreement_report(store: Store, project_id: str, kind: str = CONVERSATION) -> dict[str, LevelAgreement]:
    """Agreement on whole-conversation verdicts and on turn verdicts (leads left out: an adjudication
    is not an independent rating)."""
    history = list(project_annotations(store, project_id, kind))
    return {
        "conversation": _level("conversation", conversation_label_matrix(history)),
        "turn": _level("turn", turn_label_matrix(history)),
    }


@dataclass(frozen=True)
class Disagreement:
    """An item awaiting a lead's decision: who accepted, who rejected, and why."""

    item_id: str
    generator: str | None
    accepted_by: list[str]
    rejected_by: list[str]
    reasons: list[str]
    judge_score: float | None


def adjudication_queue(
    store: Store, project_id: str, kind: str = CONVERSATION, limit: int = 200
) -> list[Disagreement]:
    """Items where annotators disagree and no lead has decided, oldest first."""
    refresh_states(store, project_id, kind)
    s, i = t.annotation_states, t.items
    with store.read() as conn:
        rows = conn.execute(
            sa.select(s.c.item_id, i.c.generator, s.c.detail, s.c.judge_score)
            .join(i, i.c.id == s.c.item_id)
            .where(s.c.project_id == project_id, s.c.kind == kind, s.c.needs_adjudication.is_(True))
            .order_by(i.c.created_at, i.c.id)
            .limit(limit)
        ).all()
    return [
        Disagreement(
            r.item_id,
            r.generator,
            r.detail["accepted_by"],
            r.detail["rejected_by"],
            r.detail["reasons"],
            r.judge_score,
        )
        for r in rows
    ]


@dataclass(frozen=True)
class Calibration:
    """The judge against gold: the curve, the threshold reaching the target precision (None when no
    threshold does), the number of items with both a human decision and a judge score, and how the
    judge's own pass/fail verdict scores on the same items."""

    points: list[CurvePoint]
    choice: ThresholdChoice | None
    target_precision: float
    n: int
    positives: int
    judge_precision: float
    judge_recall: float

    def frame(self) -> pd.DataFrame:
        """The curve as a table: threshold, precision, recall, selected, tp, fp, fn, tn."""
        columns = ["threshold", "precision", "recall", "selected", "tp", "fp", "fn", "tn"]
        return pd.DataFrame([{c: getattr(p, c) for c in columns} for p in self.points], columns=columns)


def _judged_and_decided(store: Store, project_id: str, kind: str) -> list[sa.Row]:
    """(judge_score, judge_passed, human_label) of the items people decided that the judge scored."""
    refresh_states(store, project_id, kind)
    s = t.annotation_states
    with store.read() as conn:
        return list(
            conn.execute(
                sa.select(s.c.judge_score, s.c.judge_passed, s.c.human_label).where(
                    s.c.project_id == project_id,
                    s.c.kind == kind,
                    s.c.human_label.is_not(None),
                    s.c.judge_score.is_not(None),
                )
            ).all()
        )


def judge_human_correlation(store: Store, project_id: str, kind: str = CONVERSATION) -> Correlation:
    """Seed 000's Table 6: Pearson's r between the judge's score and the people's decision (accepted 1,
    rejected 0) on the items that have both, with its p-value, 95% interval and number of items."""
    rows = _judged_and_decided(store, project_id, kind)
    return pearson(
        [float(r.judge_score) for r in rows], [1.0 if r.human_label == "accept" else 0.0 for r in rows]
    )


def silver_calibration(
    store: Store, project_id: str, target_precision: float = 0.9, kind: str = CONVERSATION
) -> Calibration:
    """Precision and recall of the rule "judge_score >= threshold" against the human decision (gold =
    accepted by people, rejected = the negative class) on the items that have both; disagreements and
    items nobody decided are left out."""
    rows = _judged_and_decided(store, project_id, kind)
    scores = [r.judge_score for r in rows]
    labels = [r.human_label == "accept" for r in rows]
    passed = [(bool(r.judge_passed), r.human_label == "accept") for r in rows if r.judge_passed is not None]
    tp = sum(p and y for p, y in passed)
    selected = sum(p for p, _ in passed)
    positives = sum(y for _, y in passed)
    return Calibration(
        points=precision_recall_curve(scores, labels),
        choice=threshold_for_precision(scores, labels, target_precision) if rows else None,
        target_precision=target_precision,
        n=len(rows),
        positives=sum(labels),
        judge_precision=tp / selected if selected else math.nan,
        judge_recall=tp / positives if positives else math.nan,
    )
