"""SPWD, Var Div and Coverage as seed 000 (Table 5) reports them."""

from __future__ import annotations

import numpy as np
import pytest

from evalcore.specs.metrics import coverage, coverage_share, spwd, var_div


def test_spwd_by_hand():
    # Three orthogonal directions: every pair has cosine 0, distance 1; scale does not matter.
    assert spwd(np.diag([1.0, 5.0, 0.2])) == pytest.approx(3.0)
    # Opposite vectors: 1 - (-1) = 2; identical vectors: 0.
    assert spwd(np.array([[1.0, 0.0], [-3.0, 0.0]])) == pytest.approx(2.0)
    assert spwd(np.array([[1.0, 1.0], [2.0, 2.0]])) == pytest.approx(0.0)
    # 60 degrees apart: 1 - cos 60 = 0.5.
    assert spwd(np.array([[1.0, 0.0], [0.5, np.sqrt(3) / 2]])) == pytest.approx(0.5)


def test_var_div_by_hand():
    # e1, e2: mean (0.5, 0.5), population variance 0.25 per dimension.
    assert var_div(np.array([[1.0, 0.0], [0.0, 1.0]])) == pytest.approx(0.5)
    # Normalised first: (2, 0) and (0, 3) are the same directions as above.
    assert var_div(np.array([[2.0, 0.0], [0.0, 3.0]])) == pytest.approx(0.5)
    # Raw: variances (1, 2.25).
    assert var_div(np.array([[2.0, 0.0], [0.0, 3.0]]), normalize=False) == pytest.approx(3.25)
    assert var_div(np.array([[1.0, 0.0], [-1.0, 0.0]])) == pytest.approx(1.0)


def test_fewer_than_two_specs_score_zero():
    assert spwd(np.zeros((0, 3))) == 0.0
    assert spwd(np.array([[1.0, 2.0]])) == 0.0
    assert var_div(np.zeros((0, 3))) == 0.0
    assert var_div(np.array([[1.0, 2.0]])) == 0.0


def test_zero_vector_is_refused():
    with pytest.raises(ValueError, match="zero"):
        spwd(np.array([[0.0, 0.0], [1.0, 0.0]]))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("k", "d"), [(2, 3), (30, 64), (30, 384), (100, 16)])
def test_var_div_is_two_spwd_over_k_squared(seed, k, d):
    # The identity behind Table 5 (Var Div = 2 SPWD / k^2 in 17 of 18 rows), on unnormalised data.
    x = np.random.default_rng(seed).normal(loc=0.3, size=(k, d))
    assert var_div(x) == pytest.approx(2 * spwd(x) / k**2, rel=1e-10)
    # SPWD from its definition, pair by pair.
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    by_pairs = sum(1 - u[i] @ u[j] for i in range(k) for j in range(i + 1, k))
    assert spwd(x) == pytest.approx(by_pairs, rel=1e-10)


def test_coverage_counts_unique_documents():
    selected = [{"a", "b"}, {"b"}, set(), ["c", "c"]]
    assert coverage(selected) == 3
    assert coverage([]) == 0
    # Ids outside the collection do not count.
    assert coverage(selected, all_doc_ids=["a", "b", "z"]) == 2
    assert coverage_share(selected, ["a", "b", "c", "d"]) == pytest.approx(0.75)
    assert coverage_share(selected, []) == 0.0
