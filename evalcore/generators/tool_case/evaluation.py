"""SPUR against SCOPE as Table 3, and SCOPE's ablations as Table 4 (seed 004, Section 4, Appendix F).

k-fold cross-validation (default 5): each fold shuffles the labelled conversations (stratified by label)
and splits them 40/60 into training and test (Section 4.1: 206 training, 310 test of 516). Rubrics are
learnt on the training part only; the test part is scored. Accuracy, F1, precision and recall take POS as
the positive class, on three subsets: Easy (the user's satisfaction agrees with the label), Hard-Negative
(the user is satisfied but the conversation is NEG; only accuracy applies, as the seed notes) and Overall.
Each figure is the mean over folds with its standard deviation (Table 9).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from evalcore.generators.tool_case.rubrics import estimate_label
from evalcore.generators.tool_case.scope import Options, discover_rubrics, score_conversation
from evalcore.llm.client import ModelClient
from evalcore.models import Conversation

TRAIN_SHARE = 0.4  # Section 4.1: "split 40/60"
DEFAULT_FOLDS = 5
SUBSETS = ("Easy", "Hard Neg.", "Overall")
METRICS = ("accuracy", "f1", "precision", "recall")
MAIN = (("SPUR", "spur", Options()), ("SCOPE", "scope", Options()))
ABLATIONS = tuple(
    (o.label, "scope", o)
    for o in (Options(area_discovery=False), Options(weights=False), Options(make_or_break=False))
)


def labels_of(conversation: Conversation) -> tuple[str, bool]:
    """(overall label, user satisfied) a labelled conversation carries."""
    labels = conversation.metadata.get("labels") or {}
    return str(labels.get("overall")), bool(labels.get("user_satisfied"))


def subset_of(conversation: Conversation) -> str:
    """'Easy' or 'Hard Neg.' (Table 3); dissatisfied POS conversations belong to Overall only."""
    label, satisfied = labels_of(conversation)
    if satisfied and label == "NEG":
        return "Hard Neg."
    return "Easy" if satisfied == (label == "POS") else "Other"


def metrics(pairs: Sequence[tuple[str, str]]) -> dict[str, float | None]:
    """Accuracy, F1, precision and recall of (truth, prediction) pairs, POS the positive class; None where
    undefined (no POS prediction, no POS truth)."""
    if not pairs:
        return dict.fromkeys(METRICS)
    tp = sum(t == p == "POS" for t, p in pairs)
    fp = sum(t == "NEG" and p == "POS" for t, p in pairs)
    fn = sum(t == "POS" and p == "NEG" for t, p in pairs)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else None
    if precision is not None and recall is not None and not (precision and recall):
        f1 = 0.0
    return {
        "accuracy": sum(t == p for t, p in pairs) / len(pairs),
        "f1": f1,
        "precision": precision,
        "recall": recall,
    }


def split(
    conversations: list[Conversation], fold: int, seed: int, share: float = TRAIN_SHARE
) -> tuple[list[Conversation], list[Conversation]]:
    """Training and test conversations of one fold: each label shuffled and cut at `share` (40/60)."""
    rng = random.Random(seed * 1000 + fold)
    train: list[Conversation] = []
    test: list[Conversation] = []
    for label in ("POS", "NEG"):
        group = [c for c in conversations if labels_of(c)[0] == label]
        rng.shuffle(group)
        cut = round(len(group) * share)
        train += group[:cut]
        test += group[cut:]
    return train, test


@dataclass
class Comparison:
    """Per method, subset and metric: the value of every fold."""

    folds: int
    sizes: dict[str, int] = field(default_factory=dict)  # test conversations per subset, summed over folds
    values: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    rubric_counts: dict[str, list[int]] = field(default_factory=dict)

    def add(self, method: str, subset: str, found: dict[str, float | None]) -> None:
        slot = self.values.setdefault(method, {}).setdefault(subset, {})
        for name, value in found.items():
            if value is not None:
                slot.setdefault(name, []).append(value)

    def cell(self, method: str, subset: str, metric: str) -> tuple[float, float] | None:
        """Mean and standard deviation over folds, or None (N/A)."""
        got = self.values.get(method, {}).get(subset, {}).get(metric)
        if not got or (subset == "Hard Neg." and metric != "accuracy"):
            return None
        return statistics.fmean(got), statistics.pstdev(got)

    def table(self, methods: Sequence[str], subsets: Sequence[str] = SUBSETS) -> list[str]:
        """Markdown rows as Table 3 / Table 9: subset, model, then 'mean (sd)' or N/A per metric."""
        rows = ["| Data Subset | Model | Acc. | F1 | Pre. | Rec. |", "|---|---|---|---|---|---|"]
        for subset in subsets:
            for method in methods:
                cells = []
                for metric in METRICS:
                    got = self.cell(method, subset, metric)
                    cells.append("N/A" if got is None else f"{got[0]:.2f} ({got[1]:.2f})")
                rows.append(f"| {subset} | {method} | " + " | ".join(cells) + " |")
        return rows


def compare(
    llm: ModelClient,
    conversations: list[Conversation],
    *,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    ablations: bool = True,
    model: str | None = None,
    on_fold: Callable[[int, int], None] | None = None,
) -> Comparison:
    """Table 3 (SPUR, SCOPE) and, with `ablations`, Table 4's SCOPE variants, over `folds` folds."""
    variants = MAIN + (ABLATIONS if ablations else ())
    result = Comparison(folds)
    for fold in range(folds):
        train, test = split(conversations, fold, seed)
        for name, method, options in variants:
            rubrics = discover_rubrics(llm, train, method, options=options, model=model, seed=seed + fold)  # type: ignore[arg-type]
            result.rubric_counts.setdefault(name, []).append(len(rubrics.rubrics))
            pairs: dict[str, list[tuple[str, str]]] = {s: [] for s in SUBSETS}
            for conversation in test:
                scores = score_conversation(llm, rubrics, conversation, model=model, seed=seed + fold)
                predicted, _ = estimate_label(rubrics, scores)
                truth = labels_of(conversation)[0]
                pairs["Overall"].append((truth, predicted))
                if (subset := subset_of(conversation)) in pairs:
                    pairs[subset].append((truth, predicted))
            for subset, found in pairs.items():
                result.add(name, subset, metrics(found))
                if name == "SPUR":
                    result.sizes[subset] = result.sizes.get(subset, 0) + len(found)
        if on_fold:
            on_fold(fold + 1, folds)
    return result
