"""Agreement statistics against published worked examples, label matrices, and work assignment."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from evalcore.models import Annotation, AnnotationLabel
from evalcore.review.agreement import (
    assign,
    cohen_kappa,
    conversation_label_matrix,
    krippendorff_alpha_nominal,
    label_matrix,
    pairwise_kappa,
    pairwise_kappa_table,
    turn_label_matrix,
)


def two_by_two(yes_yes: int, yes_no: int, no_yes: int, no_no: int) -> tuple[dict, dict]:
    """Two raters' labels from a 2x2 table (rows: rater A's label, columns: rater B's)."""
    a = ["yes"] * (yes_yes + yes_no) + ["no"] * (no_yes + no_no)
    b = ["yes"] * yes_yes + ["no"] * yes_no + ["yes"] * no_yes + ["no"] * no_no
    return dict(enumerate(a)), dict(enumerate(b))


# ------------------------------------------------------------------ Cohen's kappa


def test_kappa_classic_fifty_item_example():
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15 -> p_o = 0.7, p_e = 0.5, kappa = 0.4.
    assert cohen_kappa(*two_by_two(20, 5, 10, 15)) == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("table", "kappa"),
    # Same observed agreement 0.6, different marginals: the textbook illustration of chance correction.
    [((45, 15, 25, 15), 0.1304), ((25, 35, 5, 35), 0.2593)],
)
def test_kappa_equal_agreement_different_marginals(table, kappa):
    assert cohen_kappa(*two_by_two(*table)) == pytest.approx(kappa, abs=5e-5)


def test_kappa_perfect_chance_and_worse_than_chance():
    a = {1: "accept", 2: "reject", 3: "accept", 4: "reject"}
    assert cohen_kappa(a, dict(a)) == 1.0
    # Observed 0.5 equals chance 0.5 -> 0.
    assert cohen_kappa(a, {1: "accept", 2: "accept", 3: "reject", 4: "reject"}) == 0.0
    # Always opposite -> -1.
    assert cohen_kappa(a, {1: "reject", 2: "accept", 3: "reject", 4: "accept"}) == -1.0


def test_kappa_uses_only_shared_items_and_any_hashable_labels():
    a = {"x": (1, "a"), "y": (2, "b"), "z": (1, "a"), "only_a": (2, "b")}
    b = {"x": (1, "a"), "y": (2, "b"), "z": (1, "a"), "only_b": (1, "a")}
    assert cohen_kappa(a, b) == 1.0


def test_kappa_undefined_is_nan():
    assert math.isnan(cohen_kappa({1: "a"}, {2: "a"}))  # nothing shared
    assert math.isnan(cohen_kappa({1: "a", 2: "a"}, {1: "a", 2: "a"}))  # one label throughout


def test_pairwise_kappa_covers_all_pairs_with_counts():
    a, b = two_by_two(20, 5, 10, 15)
    matrix = {"bob": b, "alice": a, "carol": {100: "yes"}}
    pairs = pairwise_kappa(matrix)
    assert [(p.a, p.b, p.n) for p in pairs] == [
        ("alice", "bob", 50),
        ("alice", "carol", 0),
        ("bob", "carol", 0),
    ]
    assert pairs[0].kappa == pytest.approx(0.4)
    assert pairs[0].observed == pytest.approx(0.7)
    assert math.isnan(pairs[1].kappa)
    table = pairwise_kappa_table(matrix)
    assert list(table.columns) == ["a", "b", "n", "observed", "kappa"]
    assert len(table) == 3


# ------------------------------------------------------------------ Krippendorff's alpha


def matrix_from_rows(rows: dict[str, list]) -> dict:
    return {coder: {u: v for u, v in enumerate(values, 1) if v is not None} for coder, values in rows.items()}


def test_alpha_krippendorff_2011_nominal_example_with_missing_data():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 observers,
    # 12 units, values 1-5, missing data; unit 12 has a single value and is not pairable.
    rows = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    }
    assert krippendorff_alpha_nominal(matrix_from_rows(rows)) == pytest.approx(0.743, abs=5e-4)


def test_alpha_krippendorff_2011_binary_two_observers_example():
    # Same paper, example A: two observers, ten units, binary, no missing data: alpha = 0.095.
    rows = {"A": [0, 1, 0, 0, 0, 0, 0, 0, 1, 0], "B": [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]}
    assert krippendorff_alpha_nominal(matrix_from_rows(rows)) == pytest.approx(0.095, abs=5e-4)


def test_alpha_perfect_agreement_is_one_and_undefined_cases_are_nan():
    rows = {"A": ["a", "b", "a", None], "B": ["a", "b", "a", "b"], "C": [None, "b", "a", "b"]}
    assert krippendorff_alpha_nominal(matrix_from_rows(rows)) == 1.0
    assert math.isnan(krippendorff_alpha_nominal({"A": {1: "a"}, "B": {2: "a"}}))  # nothing pairable
    assert math.isnan(krippendorff_alpha_nominal({"A": {1: "a", 2: "a"}, "B": {1: "a", 2: "a"}}))


# ------------------------------------------------------------------ label matrices


def test_label_matrix_latest_triple_wins_and_none_is_missing():
    triples = [
        ("i1", "bob", "accept"),
        ("i1", "alice", "reject"),
        ("i1", "alice", "accept"),
        ("i2", "bob", "x"),
    ]
    triples.append(("i2", "bob", None))
    assert label_matrix(triples) == {"alice": {"i1": "accept"}, "bob": {"i1": "accept"}}


def ann(author, label, item="c1", turn=None, role="annotator") -> Annotation:
    return Annotation(
        item_kind="conversation",
        item_id=item,
        turn_index=turn,
        label=AnnotationLabel(label),
        author=author,
        role=role,
    )


def test_conversation_matrix_uses_effective_verdicts_and_leaves_leads_out():
    annotations = [
        ann("alice", "accept", "c1"),
        ann("bob", "reject", "c1"),
        ann("dana", "accept", "c1", role="lead"),
        ann("alice", "accept", "c2"),
        ann("alice", "reopen", "c2"),
        ann("bob", "reject", "c2", turn=1),  # implicit rejection of c2
    ]
    assert conversation_label_matrix(annotations) == {
        "alice": {"c1": "accept"},
        "bob": {"c1": "reject", "c2": "reject"},
    }


def test_turn_matrix_keys_by_item_and_turn():
    annotations = [
        ann("alice", "accept", "c1", turn=0),
        ann("alice", "reject", "c1", turn=1),
        ann("bob", "reject", "c1", turn=1),
        ann("bob", "accept", "c1", turn=0),
        ann("bob", "reopen", "c1", turn=0),
        ann("alice", "accept", "c1"),  # whole-conversation: not a turn
        ann("dana", "reject", "c1", turn=0, role="lead"),
    ]
    assert turn_label_matrix(annotations) == {
        "alice": {("c1", 0): "accept", ("c1", 1): "reject"},
        "bob": {("c1", 1): "reject"},
    }


# ------------------------------------------------------------------ assignment


def test_assign_gives_each_item_overlap_distinct_annotators_with_balanced_load():
    items = [f"c{i}" for i in range(10)]
    annotators = ["alice", "bob", "carol", "dan"]
    result = assign(items, annotators, overlap=2, seed=7)
    assert set(result) == set(annotators)
    per_item = Counter(item for got in result.values() for item in got)
    assert per_item == dict.fromkeys(items, 2)
    for got in result.values():
        assert len(got) == len(set(got))  # distinct annotators per item
        assert got == sorted(got, key=items.index)  # input order kept
    loads = sorted(len(got) for got in result.values())
    assert loads == [5, 5, 5, 5]
    uneven = assign(items[:7], annotators, overlap=3, seed=7)
    assert max(map(len, uneven.values())) - min(map(len, uneven.values())) <= 1
    assert sum(map(len, uneven.values())) == 21


def test_assign_spreads_overlap_over_every_pair():
    items = list(range(12))
    result = assign(items, ["a", "b", "c", "d"], overlap=2, seed=1)
    together = Counter(
        pair for item in items for pair in itertools.combinations([a for a in result if item in result[a]], 2)
    )
    # 12 items over 6 pairs: each pair shares items, so every pairwise kappa is defined.
    assert len(together) == 6
    assert all(count == 2 for count in together.values())


def test_assign_is_deterministic_per_seed():
    items = list(range(20))
    annotators = ["a", "b", "c", "d", "e"]
    assert assign(items, annotators, 2, seed=3) == assign(items, annotators, 2, seed=3)
    assert any(
        assign(items, annotators, 2, seed=s) != assign(items, annotators, 2, seed=3) for s in range(4, 9)
    )


@pytest.mark.parametrize(
    ("items", "annotators", "overlap", "message"),
    [
        ([1, 2], ["a", "b"], 3, "overlap 3"),
        ([1, 2], ["a", "b"], 0, "at least 1"),
        ([1, 1], ["a", "b"], 1, "items"),
        ([1, 2], ["a", "a"], 1, "annotators"),
    ],
)
def test_assign_refuses_impossible_requests(items, annotators, overlap, message):
    with pytest.raises(ValueError, match=message):
        assign(items, annotators, overlap, seed=0)
