"""A breakdown detector scored against human labels (seed 002, Section 4.1; issue 18, item 7).

The human label of a target turn is the annotators' majority, as the seed consolidates DBDC's labels: a
breakdown when more than half of those who labelled the turn say so (a tie is no breakdown); its types
are those named by at least half of the annotators who call it a breakdown. Against it, the detector's
decision gives accuracy, precision, recall and F1 for the breakdown class (Table 1 of the seed). Its
types are scored on the human breakdown turns that name a type, with DBDC5's exact match and average
turn-level F1 and the seed's superset and partial match (Table 2), and per type (precision, recall, F1
over the labelled turns). Titles are compared without case, as ChatChecker counts them; a detector's
title outside the taxonomy is kept as given (and so matches no human type).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from evalcore.generators.simulation.records import BreakdownAnnotation, BreakdownDecision
from evalcore.generators.simulation.store_ops import run_dialogues
from evalcore.items.sql import annotations_of
from evalcore.models import TurnRole
from evalcore.review.breakdown_labels import BREAKDOWN_ROLE, BreakdownLabel, current_labels, label_titles
from evalcore.store import Store

_CANONICAL = {title.lower(): title for title in label_titles(True)}


@dataclass(frozen=True)
class LabelledTurn:
    """One target turn with the detector's verdict and the annotators' labels."""

    conversation_id: str
    dialogue_id: str
    turn_index: int
    detector: BreakdownAnnotation
    labels: dict[str, BreakdownLabel]  # by annotator

    @property
    def human_breakdown(self) -> bool:
        """The majority's decision: more than half of the annotators call it a breakdown."""
        return 2 * sum(label.breakdown for label in self.labels.values()) > len(self.labels)

    @property
    def human_types(self) -> set[str]:
        """Types named by at least half of the annotators who call the turn a breakdown (none if the
        majority does not)."""
        if not self.human_breakdown:
            return set()
        broken = [label for label in self.labels.values() if label.breakdown]
        named = [title for label in broken for title in set(label.types)]
        return {title for title in named if 2 * named.count(title) >= len(broken)}

    @property
    def detector_breakdown(self) -> bool:
        """The detector's decision."""
        return self.detector.decision == BreakdownDecision.breakdown

    @property
    def detector_types(self) -> set[str]:
        """The detector's types for a breakdown, by the taxonomy's titles (others as given)."""
        if not self.detector_breakdown:
            return set()
        return {_CANONICAL.get(t.strip().lower(), t) for t in self.detector.breakdown_types}


@dataclass(frozen=True)
class TypeScore:
    """Agreement on one breakdown type over the labelled turns."""

    title: str
    human: int  # turns whose human label names it
    detector: int  # turns the detector gives it
    both: int
    precision: float | None
    recall: float | None
    f1: float | None


@dataclass(frozen=True)
class DetectorQuality:
    """How well the detector's decisions and types agree with the human labels of one run."""

    run_id: str
    labelled_turns: int  # target turns with a human label and a detector verdict
    dialogues: int  # dialogues with such a turn
    annotators: list[str]
    true_positives: int
    false_positives: int
    false_negatives: int
    true_negatives: int
    accuracy: float | None
    precision: float | None
    recall: float | None
    f1: float | None
    typed_turns: int  # human breakdown turns naming a type: where types are scored
    exact_match: float | None
    superset_match: float | None
    partial_match: float | None
    average_type_f1: float | None
    per_type: list[TypeScore] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Plain values (for JSON)."""
        return asdict(self)


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return _ratio(2 * precision * recall, precision + recall) or 0.0


def score_detector(run_id: str, turns: Sequence[LabelledTurn]) -> DetectorQuality:
    """The detector's scores on labelled turns (see the module docstring); None where undefined."""
    pairs = [(t.human_breakdown, t.detector_breakdown) for t in turns]
    tp = sum(h and d for h, d in pairs)
    fp = sum(d and not h for h, d in pairs)
    fn = sum(h and not d for h, d in pairs)
    tn = len(pairs) - tp - fp - fn
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    typed = [t for t in turns if t.human_types]
    exact = superset = partial = 0
    turn_f1: list[float] = []
    for t in typed:
        gold, found = t.human_types, t.detector_types
        hit = len(gold & found)
        exact += gold == found
        superset += gold <= found
        partial += hit > 0
        turn_f1.append(_f1(_ratio(hit, len(found)) or 0.0, hit / len(gold)) or 0.0)
    titles = sorted({x for t in turns for x in t.human_types | t.detector_types}, key=_order)
    per_type = []
    for title in titles:
        human = sum(title in t.human_types for t in turns)
        detector = sum(title in t.detector_types for t in turns)
        both = sum(title in t.human_types and title in t.detector_types for t in turns)
        p, r = _ratio(both, detector), _ratio(both, human)
        per_type.append(TypeScore(title, human, detector, both, p, r, _f1(p, r)))
    return DetectorQuality(
        run_id=run_id,
        labelled_turns=len(turns),
        dialogues=len({t.conversation_id for t in turns}),
        annotators=sorted({a for t in turns for a in t.labels}),
        true_positives=tp,
        false_positives=fp,
        false_negatives=fn,
        true_negatives=tn,
        accuracy=_ratio(tp + tn, len(pairs)),
        precision=precision,
        recall=recall,
        f1=_f1(precision, recall),
        typed_turns=len(typed),
        exact_match=_ratio(exact, len(typed)),
        superset_match=_ratio(superset, len(typed)),
        partial_match=_ratio(partial, len(typed)),
        average_type_f1=_ratio(sum(turn_f1), len(turn_f1)),
        per_type=per_type,
    )


_POSITION = {title: n for n, title in enumerate(label_titles(True))}


def _order(title: str) -> tuple[int, str]:
    """Taxonomy order, titles outside it last."""
    return (_POSITION.get(title, len(_POSITION)), title)


def labelled_turns(store: Store, run_id: str) -> list[LabelledTurn]:
    """The run's target turns that annotators labelled and the detector judged, in reading order."""
    _, dialogues = run_dialogues(store, run_id)
    with store.read() as conn:
        history = annotations_of(conn, [cid for cid, _ in dialogues], (BREAKDOWN_ROLE,))
    found = []
    for cid, dialogue in dialogues:
        by_turn: dict[int, dict[str, BreakdownLabel]] = {}
        for author, labels in current_labels(history[cid]).items():
            for index, label in labels.items():
                by_turn.setdefault(index, {})[author] = label
        for index, labels in sorted(by_turn.items()):
            turn = dialogue.turns[index] if index < len(dialogue.turns) else None
            if turn is None or turn.role != TurnRole.assistant or turn.breakdown is None:
                continue  # the detector left it unscored: nothing to compare
            found.append(LabelledTurn(cid, dialogue.dialogue_id, index, turn.breakdown, labels))
    return found


def detector_quality(store: Store, run_id: str) -> DetectorQuality:
    """The run's detector scored against its human breakdown labels."""
    return score_detector(run_id, labelled_turns(store, run_id))


def quality_columns(quality: DetectorQuality) -> dict[str, Any]:
    """A run's detector quality as a row of the runs table shows it: figures to two places, a dash where
    there is nothing to score yet (no human label, or no breakdown to find)."""

    def shown(value: float | None) -> str:
        return "—" if value is None else f"{value:.2f}"

    return {
        "human-labelled turns": quality.labelled_turns,
        "detector accuracy": shown(quality.accuracy),
        "precision": shown(quality.precision),
        "recall": shown(quality.recall),
        "F1": shown(quality.f1),
    }


def human_badge(turn: LabelledTurn) -> str:
    """The human label of a turn in one line: the majority's decision, its types, and the vote."""
    types = sorted(turn.human_types, key=_order)
    verdict = "breakdown" if turn.human_breakdown else "no breakdown"
    votes = sum(label.breakdown for label in turn.labels.values())
    return (
        f"human: {verdict}"
        + (f": {', '.join(types)}" if types else "")
        + (f" ({votes} of {len(turn.labels)} say breakdown)")
    )
