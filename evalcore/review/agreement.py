"""Inter-annotator agreement (Cohen's kappa, Krippendorff's alpha) and overlapping work assignment.

Pure functions, no store access. The central shape is a label matrix: ``{annotator: {item_key: label}}``,
where an item an annotator did not label is simply absent (missing data). Labels can be any hashable
value; item keys are item ids at the conversation level and ``(item_id, turn_index)`` at the turn level.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import pandas as pd

from evalcore.items.tiers import ANNOTATOR, conversation_verdicts
from evalcore.models.items import Annotation, AnnotationLabel

LabelMatrix = dict[str, dict[Hashable, Hashable]]
T = TypeVar("T", bound=Hashable)


# ------------------------------------------------------------------ label matrices


def label_matrix(triples: Iterable[tuple[Hashable, str, Hashable]]) -> LabelMatrix:
    """Build ``{author: {item_key: label}}`` from ``(item_key, author, label)`` triples.

    Triples are read in order and a later triple for the same item and author replaces the earlier one,
    so a history of verdicts yields each author's latest. A ``None`` label is treated as missing.
    """
    matrix: LabelMatrix = {}
    for item, author, label in triples:
        row = matrix.setdefault(author, {})
        if label is None:
            row.pop(item, None)
        else:
            row[item] = label
    return {author: row for author, row in sorted(matrix.items()) if row}


def _by_item(annotations: Iterable[Annotation]) -> dict[tuple[str, str], list[Annotation]]:
    """Group annotations by (item_kind, item_id), keeping append order within each item."""
    groups: dict[tuple[str, str], list[Annotation]] = defaultdict(list)
    for a in annotations:
        groups[(a.item_kind, a.item_id)].append(a)
    return groups


def conversation_label_matrix(annotations: Iterable[Annotation]) -> LabelMatrix:
    """Annotator x item matrix of effective whole-item verdicts (``evalcore.items.tiers``), by item id.

    Leads are left out: an adjudication is made after seeing the annotators, so it is not an independent
    rating and would inflate agreement. Labels are the strings ``'accept'`` and ``'reject'``.
    """
    triples = [
        (item_id, author, str(label))
        for (_, item_id), history in _by_item(annotations).items()
        for author, label in conversation_verdicts(history).items()
    ]
    return label_matrix(triples)


def turn_label_matrix(annotations: Iterable[Annotation]) -> LabelMatrix:
    """Annotator x turn matrix of current turn verdicts, keyed by ``(item_id, turn_index)``; leads left out.

    A reopen clears the author's verdict on that turn; the label matrix treats it as missing.
    """
    triples = [
        ((a.item_id, a.turn_index), a.author, None if a.label == AnnotationLabel.reopen else str(a.label))
        for a in annotations
        if a.turn_index is not None and a.role == ANNOTATOR
    ]
    return label_matrix(triples)


# ------------------------------------------------------------------ Cohen's kappa


def cohen_kappa(labels_a: Mapping[Hashable, Hashable], labels_b: Mapping[Hashable, Hashable]) -> float:
    """Cohen's kappa of two annotators over the items both labelled: (p_o - p_e) / (1 - p_e).

    p_o is the share of shared items with equal labels; p_e the chance agreement from each annotator's own
    label distribution on those items. Returns NaN when undefined: no shared items, or p_e = 1 (both used
    one and the same label throughout, so there is no variation to agree on).
    """
    shared = [k for k in labels_a if k in labels_b]
    n = len(shared)
    if n == 0:
        return math.nan
    observed = sum(labels_a[k] == labels_b[k] for k in shared) / n
    count_a = Counter(labels_a[k] for k in shared)
    count_b = Counter(labels_b[k] for k in shared)
    expected = sum(count_a[c] * count_b[c] for c in count_a) / (n * n)
    if expected == 1:
        return math.nan
    return (observed - expected) / (1 - expected)


@dataclass(frozen=True)
class PairKappa:
    """Agreement of one pair of annotators on the items both labelled."""

    a: str
    b: str
    n: int
    observed: float
    kappa: float


def pairwise_kappa(matrix: Mapping[str, Mapping[Hashable, Hashable]]) -> list[PairKappa]:
    """Cohen's kappa for every pair of annotators (sorted by name), with the number of shared items.

    Pairs with no shared item are included with n = 0 and NaN, so a table shows the gap in the overlap.
    """
    pairs: list[PairKappa] = []
    for a, b in itertools.combinations(sorted(matrix), 2):
        shared = [k for k in matrix[a] if k in matrix[b]]
        observed = sum(matrix[a][k] == matrix[b][k] for k in shared) / len(shared) if shared else math.nan
        pairs.append(PairKappa(a, b, len(shared), observed, cohen_kappa(matrix[a], matrix[b])))
    return pairs


def pairwise_kappa_table(matrix: Mapping[str, Mapping[Hashable, Hashable]]) -> pd.DataFrame:
    """Pairwise kappa as a DataFrame with columns a, b, n, observed, kappa (one row per pair)."""
    rows = [vars(p) for p in pairwise_kappa(matrix)]
    return pd.DataFrame(rows, columns=["a", "b", "n", "observed", "kappa"])


# ------------------------------------------------------------------ Krippendorff's alpha


def krippendorff_alpha_nominal(matrix: Mapping[str, Mapping[Hashable, Hashable]]) -> float:
    """Krippendorff's alpha for nominal labels, any number of annotators, missing data allowed.

    Coincidence-matrix formula (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"): every
    unit with m_u >= 2 values contributes, for each ordered pair of values from different annotators,
    1 / (m_u - 1) to o[c, k]; n_c = sum_k o[c, k], n = sum_c n_c, and
    alpha = 1 - (n - 1) * sum_{c != k} o[c, k] / sum_{c != k} n_c * n_k.
    Units labelled by fewer than two annotators are not pairable and are left out. Returns NaN when
    undefined: no pairable unit, or a single value throughout (no expected disagreement).
    """
    units: dict[Hashable, list[Hashable]] = defaultdict(list)
    for row in matrix.values():
        for item, label in row.items():
            if label is not None:
                units[item].append(label)
    coincidences: Counter[tuple[Hashable, Hashable]] = Counter()
    for values in units.values():
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        for c, k in itertools.product(counts, repeat=2):
            # Ordered pairs of distinct annotators: n_c * n_k pairs, minus the self-pairs when c == k.
            pairs = counts[c] * (counts[k] - (c == k))
            coincidences[(c, k)] += pairs / (m - 1)
    marginals: Counter[Hashable] = Counter()
    for (c, _), o in coincidences.items():
        marginals[c] += o
    n = sum(marginals.values())
    if n == 0:
        return math.nan
    disagree_observed = sum(o for (c, k), o in coincidences.items() if c != k)
    disagree_expected = sum(marginals[c] * marginals[k] for c, k in itertools.permutations(marginals, 2))
    if disagree_expected == 0:
        return math.nan
    return 1 - (n - 1) * disagree_observed / disagree_expected


# ------------------------------------------------------------------ assignment


def assign(items: Sequence[T], annotators: Sequence[str], overlap: int, seed: int) -> dict[str, list[T]]:
    """Give each item to ``overlap`` distinct annotators with balanced loads, deterministically per seed.

    Items are taken in order; each goes to the least-loaded annotators, so loads never differ by more than
    one. Ties are broken first by how often a candidate already shares items with the annotators picked for
    this item (spreading overlap over all pairs, so every pair gets items for pairwise kappa), then by a
    seeded random draw. Each annotator's list keeps the input order of the items.
    """
    if overlap < 1:
        raise ValueError(f"overlap must be at least 1, got {overlap}")
    if len(set(annotators)) != len(annotators):
        raise ValueError("annotators must be distinct")
    if overlap > len(annotators):
        raise ValueError(f"overlap {overlap} needs at least {overlap} annotators, got {len(annotators)}")
    if len(set(items)) != len(items):
        raise ValueError("items must be distinct")
    rng = random.Random(seed)
    load = dict.fromkeys(annotators, 0)
    together: Counter[tuple[str, str]] = Counter()
    result: dict[str, list[T]] = {a: [] for a in annotators}
    for item in items:
        draw = {a: rng.random() for a in annotators}
        picked: list[str] = []
        for _ in range(overlap):
            # Load first: picking the least-loaded one at a time keeps max - min load <= 1 as an invariant.
            best = min(
                (a for a in annotators if a not in picked),
                key=lambda a: (load[a], sum(together[tuple(sorted((a, p)))] for p in picked), draw[a]),
            )
            picked.append(best)
        for a in picked:
            load[a] += 1
            result[a].append(item)
        for a, b in itertools.combinations(sorted(picked), 2):
            together[(a, b)] += 1
    return result
