"""Greedy log-det + coverage selection (seed 000, Appendix A.4/A.5) and the Random / Max-Min baselines."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from evalcore.errors import EvalcoreError
from evalcore.models import Spec
from evalcore.models.common import Provenance, now_utc
from evalcore.specs.selecting import METHODS, Candidates, as_method, measure, metrics_by_k, pick
from evalcore.specs.selection import (
    DEFAULT_ALPHA,
    greedy_select,
    maxmin_select,
    median_heuristic_gamma,
    naive_greedy_select,
    objective,
    random_select,
    rbf_kernel,
)
from evalcore.specs.store_ops import SpecView


def _clustered(seed: int, m: int = 60, d: int = 8, clusters: int = 5, n_docs: int = 25):
    """Unit-normalised clustered embeddings and 0-3 documents per candidate, drawn from its cluster."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(clusters, d))
    labels = rng.integers(0, clusters, size=m)
    x = centers[labels] + 0.6 * rng.normal(size=(m, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    per_cluster = n_docs // clusters
    doc_sets = [
        {f"doc{lab * per_cluster + int(j)}" for j in rng.choice(per_cluster, size=rng.integers(0, 4))}
        for lab in labels
    ]
    return x, doc_sets


# --- the objective, by hand ---------------------------------------------------------------------------


def test_rbf_kernel_and_median_gamma_by_hand():
    x = np.array([[0.0], [1.0], [3.0]])  # squared distances 1, 9, 4
    k = rbf_kernel(x, gamma=0.5)
    assert k[0, 1] == pytest.approx(math.exp(-0.5))
    assert k[0, 2] == pytest.approx(math.exp(-4.5))
    assert k[1, 2] == pytest.approx(math.exp(-2.0))
    assert np.allclose(np.diag(k), 1.0)
    assert median_heuristic_gamma(x) == pytest.approx(1 / 4)


def test_objective_two_points_by_hand():
    x = np.array([[0.0, 0.0], [1.0, 0.0]])  # ||e1 - e2||^2 = 1
    a = math.exp(-1.0)  # gamma = 1
    # det([[2, a], [a, 2]]) = 4 - a^2; documents {x, y} and {y} cover 2.
    expected = math.log(4 - a * a) + 0.5 * 2
    assert objective(x, [{"x", "y"}, {"y"}], [0, 1], alpha=0.5, gamma=1.0) == pytest.approx(expected)
    # A single spec: log det([[2]]) = log 2, whatever gamma.
    assert objective(x, None, [1], gamma=7.0) == pytest.approx(math.log(2))


def test_objective_three_points_by_hand():
    x = np.array([[0.0], [1.0], [2.0]])
    a, b = math.exp(-1.0), math.exp(-4.0)  # gamma = 1: neighbours at 1, the ends at 4
    # det [[2,a,b],[a,2,a],[b,a,2]] expanded along the first row.
    det = 2 * (4 - a * a) - a * (2 * a - a * b) + b * (a * a - 2 * b)
    docs = [{"d1", "d2"}, {"d2"}, {"d3"}]
    got = objective(x, docs, [2, 0, 1], alpha=0.25, gamma=1.0)  # the order of indices does not matter
    assert got == pytest.approx(math.log(det) + 0.25 * 3)


def test_objective_of_empty_set_is_zero():
    x = np.eye(3)
    assert objective(x, [{"a"}, {"b"}, set()], [], alpha=1.0) == 0.0


def test_objective_default_gamma_is_median_heuristic_of_all_candidates():
    x, docs = _clustered(0)
    g = median_heuristic_gamma(x)
    assert objective(x, docs, [1, 5, 9]) == pytest.approx(objective(x, docs, [1, 5, 9], gamma=g))
    assert objective(x, docs, [1, 5, 9]) != pytest.approx(objective(x, docs, [1, 5, 9], gamma=10 * g))


# --- incremental greedy == naive greedy ----------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("with_docs", [False, True])
@pytest.mark.parametrize("locked", [(), (7, 3)])
def test_incremental_greedy_matches_naive(seed, with_docs, locked):
    x, docs = _clustered(seed)
    doc_sets = docs if with_docs else None
    fast = greedy_select(x, doc_sets, 12, locked=locked)
    slow = naive_greedy_select(x, doc_sets, 12, locked=locked)
    assert fast.indices == slow.indices
    assert np.allclose(fast.gains, slow.gains, atol=1e-9)
    assert fast.objective == pytest.approx(slow.objective, abs=1e-9)
    assert fast.coverage == slow.coverage
    # Both equal F computed from scratch on the selected set.
    assert fast.objective == pytest.approx(objective(x, doc_sets, fast.indices), abs=1e-9)
    assert fast.log_det == pytest.approx(objective(x, None, fast.indices), abs=1e-9)


@pytest.mark.parametrize("alpha", [0.0, 0.05, 2.0])
def test_incremental_matches_naive_for_other_alpha_and_gamma(alpha):
    x, docs = _clustered(11, m=40, d=5)
    fast = greedy_select(x, docs, 15, alpha=alpha, gamma=0.3)
    slow = naive_greedy_select(x, docs, 15, alpha=alpha, gamma=0.3)
    assert fast.indices == slow.indices
    assert fast.objective == pytest.approx(slow.objective, abs=1e-9)
    assert fast.gamma == slow.gamma == 0.3


def test_greedy_gains_never_increase_without_locks():
    # F is submodular, so the greedy's marginal gains are non-increasing.
    x, docs = _clustered(5)
    gains = greedy_select(x, docs, 25).gains
    assert all(later <= earlier + 1e-12 for earlier, later in itertools.pairwise(gains))


def test_greedy_hand_case_diversity_then_coverage():
    # Two near-duplicates (0, 1) and one far point (2).
    x = np.array([[0.0, 0.0], [0.01, 0.0], [3.0, 0.0]])
    # Pure diversity: ties on the first pick go to index 0, then the far point.
    assert greedy_select(x, None, 2, alpha=0.0, gamma=1.0).indices == [0, 2]
    # Candidate 1 brings two documents nobody else has: with enough alpha it goes first and, because
    # 2 only brings one new document and 0 none, 2 second.
    docs = [{"a"}, {"a", "b", "c"}, {"d"}]
    result = greedy_select(x, docs, 3, alpha=1.0, gamma=1.0)
    assert result.indices[:2] == [1, 2]
    assert result.coverage == 4
    assert result.gains[0] == pytest.approx(math.log(2) + 3.0)


def test_ties_go_to_lowest_index():
    x = np.ones((6, 3))  # all identical: every gain ties at every step
    assert greedy_select(x, None, 4).indices == [0, 1, 2, 3]
    assert naive_greedy_select(x, None, 4).indices == [0, 1, 2, 3]


def test_default_alpha_is_half_log_two():
    assert pytest.approx(0.5 * math.log(2)) == DEFAULT_ALPHA
    x, docs = _clustered(3)
    assert greedy_select(x, docs, 5).alpha == DEFAULT_ALPHA


# --- locked, k edge cases ------------------------------------------------------------------------------


def test_locked_are_first_in_order_and_count_toward_k():
    x, docs = _clustered(8)
    result = greedy_select(x, docs, 10, locked=[42, 5, 17])
    assert result.indices[:3] == [42, 5, 17]
    assert len(result.indices) == 10
    assert len(set(result.indices)) == 10


def test_locked_gain_is_its_real_marginal_gain():
    x, docs = _clustered(9)
    result = greedy_select(x, docs, 4, locked=[3, 4])
    assert result.gains[1] == pytest.approx(objective(x, docs, [3, 4]) - objective(x, docs, [3]))


def test_more_locked_than_k_keeps_every_lock():
    x, docs = _clustered(1)
    assert greedy_select(x, docs, 2, locked=[4, 9, 1]).indices == [4, 9, 1]
    assert greedy_select(x, docs, 0, locked=[6]).indices == [6]


def test_duplicate_locks_are_ignored_and_bad_locks_refused():
    x, docs = _clustered(1)
    picks = greedy_select(x, docs, 3, locked=[2, 2]).indices
    assert picks[0] == 2 and picks.count(2) == 1 and len(picks) == 3
    with pytest.raises(ValueError, match="locked"):
        greedy_select(x, docs, 3, locked=[len(x)])
    with pytest.raises(ValueError, match="locked"):
        greedy_select(x, docs, 3, locked=[-1])


def test_k_larger_than_m_returns_everything_and_k_zero_nothing():
    x, docs = _clustered(2, m=7)
    result = greedy_select(x, docs, 50)
    assert sorted(result.indices) == list(range(7))
    assert naive_greedy_select(x, docs, 50).indices == result.indices
    empty = greedy_select(x, docs, 0)
    assert empty.indices == [] and empty.gains == [] and empty.objective == 0.0
    with pytest.raises(ValueError):
        greedy_select(x, docs, -1)


def test_input_validation():
    x, docs = _clustered(2, m=7)
    with pytest.raises(ValueError, match="doc_sets"):
        greedy_select(x, docs[:-1], 3)
    with pytest.raises(ValueError, match="2-D"):
        greedy_select(x[0], None, 3)
    with pytest.raises(ValueError, match="gamma"):
        greedy_select(x, docs, 3, gamma=0.0)
    with pytest.raises(ValueError, match="alpha"):
        greedy_select(x, docs, 3, alpha=-0.1)
    bad = x.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        greedy_select(bad, docs, 3)


def test_empty_pool():
    assert greedy_select(np.zeros((0, 4)), [], 3).indices == []
    assert random_select(0, 3) == []
    assert maxmin_select(np.zeros((0, 4)), 3) == []


# --- baselines -----------------------------------------------------------------------------------------


def test_random_select_properties():
    picks = random_select(100, 20, seed=3, locked=[50, 7])
    assert picks[:2] == [50, 7]
    assert len(picks) == 20 and len(set(picks)) == 20
    assert all(0 <= i < 100 for i in picks)
    assert random_select(100, 20, seed=3, locked=[50, 7]) == picks
    assert random_select(100, 20, seed=4, locked=[50, 7]) != picks
    assert sorted(random_select(5, 10, seed=0)) == [0, 1, 2, 3, 4]
    assert random_select(5, 0, seed=0) == []


def test_maxmin_by_hand():
    x = np.array([[0.0], [1.0], [2.0], [10.0]])
    # Centroid 3.25: the farthest is 10 (index 3); then 0 (index 0, distance 10); then 2 (min distance 2
    # beats 1's 1); then 1.
    assert maxmin_select(x, 4) == [3, 0, 2, 1]
    assert maxmin_select(x, 2, start=1) == [1, 3]
    assert maxmin_select(x, 3, locked=[2]) == [2, 3, 0]


def test_maxmin_properties():
    x, _ = _clustered(6)
    picks = maxmin_select(x, 15, locked=[11, 4])
    assert picks[:2] == [11, 4]
    assert len(picks) == 15 and len(set(picks)) == 15
    assert maxmin_select(x, 15, locked=[11, 4]) == picks
    assert sorted(maxmin_select(x[:6], 10)) == list(range(6))
    assert maxmin_select(x, 0) == []
    # Every pick was the farthest point from those before it.
    for t in range(2, 15):
        chosen = x[picks[:t]]
        min_d = np.min(((x[:, None, :] - chosen[None, :, :]) ** 2).sum(-1), axis=1)
        assert min_d[picks[t]] == pytest.approx(min_d.max())


# --- curves over k (the Diversity page) ----------------------------------------------------------------


def _candidates(x: np.ndarray, doc_sets: list[set[str]], locked: list[int]) -> Candidates:
    specs = [
        Spec(id=f"s{i}", scenario=f"s{i}", given="g", when="w", then="t", documents=sorted(docs),
             locked=i in locked, provenance=Provenance(producer="offline"))
        for i, docs in enumerate(doc_sets)
    ]  # fmt: skip
    views = [SpecView(spec, 1, "test", now_utc()) for spec in specs]
    return Candidates(views, x, doc_sets, locked, "offline")


def test_curve_points_are_real_selections_with_more_locks_than_small_k():
    x, docs = _clustered(12)
    locked = [40, 3, 27, 8, 51, 19]
    candidates = _candidates(x, docs, locked)
    gamma = median_heuristic_gamma(x)
    points = metrics_by_k(candidates, [2, 4, 10, 20, 100], seeds=3)
    # k = 2 and 4 are below the six locks: no selection that small exists, so the curves start at 6;
    # k = 100 is above the 60 candidates: the selection of everything.
    assert sorted({p.k for p in points}) == [6, 10, 20, 60]
    for p in points:
        if p.method == "random":
            continue
        chosen = pick(candidates, p.k, p.method, DEFAULT_ALPHA, gamma, 0)
        assert len(chosen) == p.k
        real = measure(candidates, chosen)
        assert (p.spwd, p.var_div, p.coverage) == pytest.approx((real.spwd, real.var_div, real.coverage))
    # At k = number of locks every method selects exactly the locked set.
    at_start = {p.method: p for p in points if p.k == 6}
    assert len({(p.spwd, p.coverage) for p in at_start.values()}) == 1


def test_a_method_named_on_the_command_line_is_one_of_the_three_or_an_error():
    assert [as_method(name) for name in ("greedy", "random", "maxmin")] == list(METHODS)
    for wrong in ("Greedy", "max-min", ""):
        with pytest.raises(
            EvalcoreError, match=f"unknown selection method '{wrong}' \\(use greedy, random, maxmin\\)"
        ):
            as_method(wrong)
