"""The breakdown detector scored against reference labels (seed 002, Section 4.2: accuracy and F1 of the
breakdown decision, as ChatChecker reports against human annotators; issue 31, item 3): per assistant
turn, a predicted set of types against a labelled set, and the figures per type.

The labels may be people's (annotators' verdicts on turns) or another detector's (the published run's
model); the figures are the same, the report says whose labels they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from evalcore.generators.simulation.records import BreakdownAnnotation, Dialogue
from evalcore.generators.simulation.taxonomy import CHATBOT_CRASH_TITLE
from evalcore.models import TurnRole


@dataclass(frozen=True)
class TurnPair:
    """One assistant turn: the types the detector gave and the types of the label (empty = no breakdown)."""

    predicted: frozenset[str]
    labelled: frozenset[str]


@dataclass
class Counts:
    """True positives, false positives and false negatives of one decision."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float | None:
        """Share of the detector's positives the labels hold; None when it gave none."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        """Share of the labelled positives the detector found; None when there were none."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        """Harmonic mean of precision and recall; None when neither is defined, 0 when both are 0."""
        if self.tp + self.fp + self.fn == 0:
            return None
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn)


@dataclass
class DetectorScores:
    """The detector against the labels: the breakdown decision over all turns, and each type."""

    turns: int
    correct: int
    decision: Counts
    by_type: dict[str, Counts] = field(default_factory=dict)

    @property
    def accuracy(self) -> float | None:
        """Share of turns whose breakdown decision agrees with the label."""
        return self.correct / self.turns if self.turns else None


def score(pairs: Iterable[TurnPair]) -> DetectorScores:
    """Accuracy and counts of the breakdown decision, and counts per type (each type its own decision)."""
    out = DetectorScores(turns=0, correct=0, decision=Counts())
    for pair in pairs:
        said, truth = bool(pair.predicted), bool(pair.labelled)
        out.turns += 1
        out.correct += said == truth
        out.decision.tp += said and truth
        out.decision.fp += said and not truth
        out.decision.fn += truth and not said
        for title in pair.predicted | pair.labelled:
            counts = out.by_type.setdefault(title, Counts())
            counts.tp += title in pair.predicted and title in pair.labelled
            counts.fp += title in pair.predicted and title not in pair.labelled
            counts.fn += title in pair.labelled and title not in pair.predicted
    return out


def dialogue_pairs(labelled: Dialogue, predicted: Sequence[BreakdownAnnotation | None]) -> list[TurnPair]:
    """The assistant turns of a dialogue whose turns carry the labels, against one prediction per turn
    (a breakdown annotation or None, as detect_offline gives). Crashes are left out: a crash is recorded,
    not detected. Turns without a label are left out (nobody said)."""
    pairs = []
    for turn, guess in zip(labelled.turns, predicted, strict=True):
        if turn.role != TurnRole.assistant or turn.breakdown is None:
            continue
        if CHATBOT_CRASH_TITLE in turn.breakdown.breakdown_types:
            continue
        said = frozenset(guess.breakdown_types if guess is not None else []) - {CHATBOT_CRASH_TITLE}
        pairs.append(TurnPair(predicted=said, labelled=frozenset(turn.breakdown.breakdown_types)))
    return pairs
