"""Quality metrics of a selected set of specs: SPWD, Var Div and Coverage (seed 000, RQ2, Table 5).

The paper names the metrics ("(1) SPWD (Sum of Pairwise Distances) for overall semantic diversity;
(2) Var Div (Variance Diversity) (Jović et al., 2015) for variance in semantic space of embeddings; and
(3) Coverage (number of unique documents covered)") but gives no formulas. The definitions below are the
ones that reproduce Table 5: there Var Div = 2 * SPWD / k^2 (k = 30) in 17 of 18 rows, which is an
identity exactly when SPWD sums cosine distances and Var Div sums per-dimension population variances of
unit-normalised embeddings:

    sum_{i<j} (1 - u_i.u_j) = k^2/2 * (1 - ||mean u||^2)   and   sum_dims Var = 1 - ||mean u||^2.

The paper's embedding models (text-embedding-3-small, all-mpnet-base-v2) return unit vectors, so
normalising first changes nothing for them and keeps the metrics comparable for any other model.
Pure numpy; higher is better for all three.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

import numpy as np


def spwd(embeddings: np.ndarray) -> float:
    """SPWD, Sum of Pairwise Distances (seed 000, Section 4 RQ2, Table 5).

    SPWD = sum over unordered pairs i < j of (1 - cos(e_i, e_j)), the cosine distance, i.e. of
    (1 - u_i . u_j) with u = e / ||e||. 0 for fewer than two specs; at most k^2/2 (reached when the mean
    of the unit vectors is 0). Raises ValueError on a zero vector (its cosine is undefined).
    """
    u = _unit_rows(embeddings)
    k = len(u)
    if k < 2:
        return 0.0
    gram = u @ u.T
    return float(np.sum(1.0 - gram[np.triu_indices(k, k=1)]))


def var_div(embeddings: np.ndarray, normalize: bool = True) -> float:
    """Var Div, Variance Diversity (seed 000, Section 4 RQ2, Table 5; Jović et al., 2015).

    Var Div = sum over dimensions of the population variance (ddof = 0) of that coordinate across the
    selected specs' unit-normalised embeddings = 1 - ||mean of the unit vectors||^2, in [0, 1]. With
    normalize=True (default) it equals 2 * spwd / k^2, the identity Table 5 satisfies; normalize=False
    uses the raw embeddings. 0 for fewer than two specs.
    """
    x = _unit_rows(embeddings) if normalize else _matrix(embeddings)
    if len(x) < 2:
        return 0.0
    return float(np.var(x, axis=0).sum())


def coverage(
    doc_sets_selected: Iterable[Iterable[Hashable]], all_doc_ids: Iterable[Hashable] | None = None
) -> int:
    """Coverage (seed 000, Section 4 RQ2, Table 5: "number of unique documents covered"; Appendix A.4,
    f_Coverage(T_S) = |union of D_s for s in T_S|).

    A count, as in the paper (Table 5 reports 335, 170, 10, ...), not a share: the number of distinct
    document ids in the union of the selected specs' document sets. If `all_doc_ids` (the collection D)
    is given, only ids in it count, since D_s is a subset of D; see coverage_share for the fraction.
    """
    union: set[Hashable] = set()
    for docs in doc_sets_selected:
        union.update(docs)
    if all_doc_ids is not None:
        union &= set(all_doc_ids)
    return len(union)


def coverage_share(doc_sets_selected: Iterable[Iterable[Hashable]], all_doc_ids: Iterable[Hashable]) -> float:
    """coverage(...) divided by the size of the collection: the share of the documents covered, in [0, 1].

    Not a metric of the paper (which reports the count); it is what a dashboard shows next to the count.
    0.0 for an empty collection.
    """
    collection = set(all_doc_ids)
    if not collection:
        return 0.0
    return coverage(doc_sets_selected, collection) / len(collection)


def _matrix(embeddings: np.ndarray) -> np.ndarray:
    x = np.asarray(embeddings, dtype=float)
    if x.ndim == 1 and x.size == 0:
        return x.reshape(0, 0)
    if x.ndim != 2:
        raise ValueError(f"embeddings must be a 2-D array (specs x dimensions), got shape {x.shape}")
    return x


def _unit_rows(embeddings: np.ndarray) -> np.ndarray:
    x = _matrix(embeddings)
    norms = np.linalg.norm(x, axis=1)
    if np.any(norms == 0):
        raise ValueError("a zero embedding has no direction; cosine distance is undefined")
    return x / norms[:, None]
