"""Selection of test specs from a candidate pool: greedy log-det diversity + document coverage.

Seed 000 ("Evaluating Compound AI Systems through Behaviors, Not Benchmarks"), Section 3.1,
Appendix A.4/A.5 and Algorithm 1 (generate-then-select): from m candidate specs with embeddings e_i and
document sets D_i, pick k maximising

    F(S) = log det(K_S + lambda * I) + alpha * |union of D_s for s in S|,
    K_ij = exp(-gamma * ||e_i - e_j||^2),  lambda = 1,

greedily (both terms are monotone submodular, so greedy is a (1 - 1/e)-approximation). The paper gives
neither alpha nor gamma; the defaults below are ours and are explained where they are defined.

Everything here is a pure function of numpy arrays and Python sets: no store access, no model calls. The
baselines of Table 5 (Random, Max-Min) live here too, so the dashboard and the benchmark compare like with
like. Indices always refer to rows of the full candidate matrix.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

# lambda of log det(K_S + lambda I): Algorithm 1, step 5 fixes it to 1. With K_jj = 1 this bounds the
# residual variance of any candidate to [lambda, 1 + lambda] = [1, 2], so every log-det gain is in
# [0, log 2]: 0 for an exact duplicate of a selected spec, log 2 for a spec orthogonal (in kernel space)
# to everything selected.
LAMBDA = 1.0

# alpha: the worth of covering one new document, in log-det units. The paper gives no value. Ours is half
# the largest possible diversity gain, 0.5 * log 2 ~= 0.347, the middle of the [0, log 2] range every
# log-det gain lies in: one new document is worth about one typical diversity gain (with the median-
# heuristic gamma, benchmarks/selection.py measures a mean log-det gain per greedy step of ~0.5 on its
# clustered pool, from log 2 at the first pick down to ~0.45 at the 30th). Consequences: a spec bringing
# two new documents more than another always wins (no log-det difference can exceed log 2 ~= 2 * alpha),
# and among specs bringing equally many new documents diversity decides. On the benchmark pool any alpha
# in [0.05, 2] gives the same selection, and alpha = 0 (pure diversity) gains ~1.5% SPWD but loses a third
# of the coverage. Raise alpha to favour coverage; 0 turns coverage off.
DEFAULT_ALPHA = 0.5 * math.log(2.0)

# Above this many candidates the median heuristic uses a fixed, seeded subsample of rows: the median of
# ~500,000 pairwise distances is as good as the exact one and avoids an m x m matrix.
_GAMMA_SAMPLE = 1000

# Scores within this (relative) tolerance of the best count as tied, so the lowest index wins in both the
# incremental and the naive implementation although they round differently (differences ~1e-13).
_TIE_TOL = 1e-9


@dataclass(frozen=True)
class SelectionResult:
    """The outcome of a greedy selection.

    indices: rows of the candidate matrix in pick order (locked ones first).
    gains: the marginal gain of F at each pick (same order); they sum to `objective`.
    objective: F(S) of the selected set.
    log_det: the diversity term log det(K_S + I).
    coverage: the number of distinct documents covered (the coverage term before alpha).
    alpha, gamma: the values actually used (gamma resolved from the median heuristic when not given).
    log_det_gains: the diversity part of each gain (gains minus alpha * new documents).
    """

    indices: list[int]
    gains: list[float]
    objective: float
    log_det: float = 0.0
    coverage: int = 0
    alpha: float = DEFAULT_ALPHA
    gamma: float = 1.0
    log_det_gains: list[float] = field(default_factory=list)


def median_heuristic_gamma(embeddings: np.ndarray) -> float:
    """The default RBF gamma: 1 / median squared pairwise Euclidean distance among the candidates.

    Why: it puts the kernel value of a typical pair at exp(-1) ~= 0.37, so near-duplicates score close to
    1 and unrelated specs close to 0 and log det actually discriminates; it is invariant to the scale of
    the embeddings. The alternative gamma = 1/d is far too small for unit-normalised sentence embeddings
    (squared distances are <= 4, so with d = 384 every K_ij >= exp(-4/384) ~= 0.99: almost rank one).
    Above 1000 candidates a fixed seeded subsample of 1000 rows is used (deterministic). Falls back to 1.0
    when there are fewer than two distinct points.
    """
    x = _as_matrix(embeddings)
    if len(x) > _GAMMA_SAMPLE:
        rows = np.sort(np.random.default_rng(0).choice(len(x), size=_GAMMA_SAMPLE, replace=False))
        x = x[rows]
    if len(x) < 2:
        return 1.0
    sq = _pairwise_sq_dists(x)
    upper = sq[np.triu_indices(len(x), k=1)]
    positive = upper[upper > 0]
    if positive.size == 0:
        return 1.0
    return float(1.0 / np.median(positive))


def rbf_kernel(embeddings: np.ndarray, gamma: float) -> np.ndarray:
    """K_ij = exp(-gamma * ||e_i - e_j||^2) for all pairs of rows (n x n). Use for small n only."""
    x = _as_matrix(embeddings)
    return np.exp(-gamma * _pairwise_sq_dists(x))


def objective(
    embeddings: np.ndarray,
    doc_sets: Sequence[Iterable[Hashable]] | None,
    indices: Sequence[int],
    alpha: float = DEFAULT_ALPHA,
    gamma: float | None = None,
) -> float:
    """F(S) = log det(K_S + I) + alpha * |union of D_s| (seed 000, Appendix A.4), computed directly.

    `embeddings` is the full candidate matrix and `indices` the selected rows, so that gamma=None resolves
    to the same median-heuristic value greedy_select uses. `doc_sets[i]` is the set of document ids of
    candidate i; None means no coverage term. The empty set scores 0.
    """
    x = _as_matrix(embeddings)
    idx = _check_indices(indices, len(x), "indices")
    alpha = _check_alpha(alpha)
    g = median_heuristic_gamma(x) if gamma is None else _check_gamma(gamma)
    log_det = 0.0
    if idx:
        # K_S + I is positive definite (eigenvalues >= 1), so the sign is always +1.
        log_det = float(np.linalg.slogdet(rbf_kernel(x[idx], g) + LAMBDA * np.eye(len(idx)))[1])
    covered: set[Hashable] = set()
    if doc_sets is not None:
        _check_doc_sets(doc_sets, len(x))
        for i in idx:
            covered.update(doc_sets[i])
    return log_det + alpha * len(covered)


def greedy_select(
    embeddings: np.ndarray,
    doc_sets: Sequence[Iterable[Hashable]] | None,
    k: int,
    alpha: float = DEFAULT_ALPHA,
    gamma: float | None = None,
    locked: Sequence[int] = (),
) -> SelectionResult:
    """Greedy maximisation of F(S) = log det(K_S + I) + alpha * |union D_s| (seed 000, Algorithm 1).

    embeddings: m x d candidate embeddings. doc_sets: m iterables of document ids (None: no coverage
    term). k: how many to select; capped at m. alpha, gamma: see DEFAULT_ALPHA and median_heuristic_gamma
    (gamma=None uses the median heuristic). locked: indices that are always selected, first and in the
    given order (locked and human-written specs); they count toward k, and if there are more locked than
    k all of them are returned anyway (a lock is never dropped silently). Duplicates are ignored.

    Fast greedy DPP-MAP (Chen, Zhang & Zhou, NeurIPS 2018): for every candidate j we keep the row c_j of
    the Cholesky factor of K_S + I restricted to S, and its residual variance d_j^2 = (K_jj + 1) - ||c_j||^2.
    The log-det gain of adding j is exactly log(d_j^2). After picking i, e = (K[:, i] - C c_i) / d_i gives
    every candidate's next Cholesky entry: c_j <- [c_j, e_j], d_j^2 -= e_j^2. A step costs O(m d) for the
    kernel column (computed on demand; no m x m matrix) plus O(m t), so O(m k (d + k)) in all. Coverage
    gains (alpha * number of new documents) are kept up to date through a document -> candidates index.
    Ties (within a relative 1e-9) go to the lowest index.
    """
    x = _as_matrix(embeddings)
    m = len(x)
    k = _check_k(k)
    locked_idx = _check_indices(locked, m, "locked")
    alpha = _check_alpha(alpha)
    g = median_heuristic_gamma(x) if gamma is None else _check_gamma(gamma)
    n_pick = min(m, max(k, len(locked_idx)))
    cover = _Coverage(doc_sets, m)

    sq_norms = np.einsum("ij,ij->i", x, x)
    chol = np.zeros((m, n_pick))
    d2 = np.full(m, 1.0 + LAMBDA)  # K_jj + lambda, the residual variance with nothing selected
    selected = np.zeros(m, dtype=bool)
    indices: list[int] = []
    gains: list[float] = []
    log_det_gains: list[float] = []

    for t in range(n_pick):
        if t < len(locked_idx):
            i = locked_idx[t]
        else:
            score = np.log(d2) + alpha * cover.new_count
            score[selected] = -np.inf
            i = _argmax_lowest(score)
        ld_gain = float(np.log(d2[i]))
        gain = ld_gain + alpha * float(cover.new_count[i])
        indices.append(i)
        gains.append(gain)
        log_det_gains.append(ld_gain)
        selected[i] = True
        cover.add(i)
        if t + 1 == n_pick:
            break
        col = _kernel_column(x, sq_norms, i, g)
        e = (col - chol[:, :t] @ chol[i, :t]) / math.sqrt(d2[i])
        chol[:, t] = e
        # Selected rows go to ~0 (and are masked); unselected ones stay >= lambda in exact arithmetic.
        # The floor keeps log() finite for the masked rows.
        d2 = np.maximum(d2 - e * e, 1e-300)

    log_det = float(sum(log_det_gains))
    return SelectionResult(
        indices=indices,
        gains=gains,
        objective=float(sum(gains)),
        log_det=log_det,
        coverage=cover.covered_count,
        alpha=alpha,
        gamma=g,
        log_det_gains=log_det_gains,
    )


def naive_greedy_select(
    embeddings: np.ndarray,
    doc_sets: Sequence[Iterable[Hashable]] | None,
    k: int,
    alpha: float = DEFAULT_ALPHA,
    gamma: float | None = None,
    locked: Sequence[int] = (),
) -> SelectionResult:
    """The same greedy as greedy_select, computed the obvious way: at every step, for every unselected
    candidate j, slogdet(K_{S+j} + I) - slogdet(K_S + I) + alpha * |D_j minus covered|.

    O(m k^4) in all. It exists as the reference greedy_select is tested and benchmarked against; same
    arguments, same tie-breaking, same result up to rounding.
    """
    x = _as_matrix(embeddings)
    m = len(x)
    k = _check_k(k)
    locked_idx = _check_indices(locked, m, "locked")
    alpha = _check_alpha(alpha)
    g = median_heuristic_gamma(x) if gamma is None else _check_gamma(gamma)
    n_pick = min(m, max(k, len(locked_idx)))
    sets: list[set[Hashable]] | None = None
    if doc_sets is not None:
        _check_doc_sets(doc_sets, m)
        sets = [set(s) for s in doc_sets]

    sq_norms = np.einsum("ij,ij->i", x, x)
    cols = np.zeros((m, n_pick))  # kernel columns of the selected candidates, in pick order
    covered: set[Hashable] = set()
    selected = np.zeros(m, dtype=bool)
    indices: list[int] = []
    gains: list[float] = []
    log_det_gains: list[float] = []
    base_log_det = 0.0

    for t in range(n_pick):
        # K_{S+j} + I for a candidate j: the fixed K_S + I block, and j's row/column written in per j.
        buf = np.empty((t + 1, t + 1))
        buf[:t, :t] = cols[indices, :t] + LAMBDA * np.eye(t)
        buf[t, t] = 1.0 + LAMBDA
        new_docs = [len(s - covered) for s in sets] if sets is not None else [0] * m
        if t < len(locked_idx):
            i = locked_idx[t]
        else:
            score = np.full(m, -np.inf)
            for j in range(m):
                if not selected[j]:
                    score[j] = _naive_log_det(buf, cols[j, :t]) - base_log_det + alpha * new_docs[j]
            i = _argmax_lowest(score)
        ld_gain = _naive_log_det(buf, cols[i, :t]) - base_log_det
        gain = ld_gain + alpha * new_docs[i]
        indices.append(i)
        gains.append(gain)
        log_det_gains.append(ld_gain)
        base_log_det += ld_gain
        selected[i] = True
        if sets is not None:
            covered |= sets[i]
        cols[:, t] = _kernel_column(x, sq_norms, i, g)

    return SelectionResult(
        indices=indices,
        gains=gains,
        objective=float(sum(gains)),
        log_det=float(base_log_det),
        coverage=len(covered),
        alpha=alpha,
        gamma=g,
        log_det_gains=log_det_gains,
    )


def random_select(m: int, k: int, seed: int | None = 0, locked: Sequence[int] = ()) -> list[int]:
    """The Random baseline of Table 5: the locked indices first (in order), then a uniformly random
    sample without replacement of the rest, to k in all (capped at m; all locked kept even beyond k).

    Deterministic for a given seed (numpy's default_rng).
    """
    if m < 0:
        raise ValueError(f"m must be >= 0, got {m}")
    k = _check_k(k)
    locked_idx = _check_indices(locked, m, "locked")
    n_pick = min(m, max(k, len(locked_idx)))
    taken = set(locked_idx)
    rest = np.array([j for j in range(m) if j not in taken], dtype=int)
    order = np.random.default_rng(seed).permutation(rest)
    return locked_idx + [int(j) for j in order[: n_pick - len(locked_idx)]]


def maxmin_select(
    embeddings: np.ndarray, k: int, start: int | None = None, locked: Sequence[int] = ()
) -> list[int]:
    """The Max-Min baseline of Table 5: farthest-point traversal (Gonzalez 1985) in Euclidean distance.

    Start: the locked indices (in order) if any, else `start` if given, else the candidate farthest from
    the centroid. The paper does not say how Max-Min starts; farthest-from-centroid is deterministic
    without a seed, and it starts on the periphery where farthest-point traversal would go next anyway
    (the traversal is a 2-approximation of max-min dispersion from any start). Then repeatedly take the
    candidate whose minimum distance to the selected set is largest (ties: lowest index), to k in all
    (capped at m; all locked kept even beyond k). Ignores documents, as the paper's baseline does.
    """
    x = _as_matrix(embeddings)
    m = len(x)
    k = _check_k(k)
    locked_idx = _check_indices(locked, m, "locked")
    n_pick = min(m, max(k, len(locked_idx)))
    if n_pick == 0:
        return []
    if locked_idx:
        chosen = list(locked_idx)
    elif start is not None:
        chosen = _check_indices([start], m, "start")
    else:
        dist_to_centroid = np.einsum("ij,ij->i", x - x.mean(axis=0), x - x.mean(axis=0))
        chosen = [int(np.argmax(dist_to_centroid))]
    min_d = np.full(m, np.inf)
    for c in chosen:
        min_d = np.minimum(min_d, np.einsum("ij,ij->i", x - x[c], x - x[c]))
    min_d[chosen] = -np.inf
    while len(chosen) < n_pick:
        i = int(np.argmax(min_d))  # argmax returns the first maximum: lowest index on ties
        chosen.append(i)
        min_d = np.minimum(min_d, np.einsum("ij,ij->i", x - x[i], x - x[i]))
        min_d[i] = -np.inf
    return chosen


# --- internals ---------------------------------------------------------------------------------------


class _Coverage:
    """Number of not-yet-covered documents per candidate, updated in O(total membership) overall."""

    def __init__(self, doc_sets: Sequence[Iterable[Hashable]] | None, m: int) -> None:
        self.new_count = np.zeros(m)
        self.covered_count = 0
        self._cand_docs: list[list[int]] = [[] for _ in range(m)]
        self._doc_cands: list[list[int]] = []
        self._covered: list[bool] = []
        if doc_sets is None:
            return
        _check_doc_sets(doc_sets, m)
        ids: dict[Hashable, int] = {}
        for j, docs in enumerate(doc_sets):
            for doc in set(docs):
                if doc not in ids:
                    ids[doc] = len(ids)
                    self._doc_cands.append([])
                self._cand_docs[j].append(ids[doc])
                self._doc_cands[ids[doc]].append(j)
            self.new_count[j] = len(self._cand_docs[j])
        self._covered = [False] * len(ids)

    def add(self, i: int) -> None:
        for doc in self._cand_docs[i]:
            if not self._covered[doc]:
                self._covered[doc] = True
                self.covered_count += 1
                for j in self._doc_cands[doc]:
                    self.new_count[j] -= 1


def _as_matrix(embeddings: np.ndarray) -> np.ndarray:
    x = np.asarray(embeddings, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"embeddings must be a 2-D array (candidates x dimensions), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("embeddings contain NaN or infinite values")
    return x


def _pairwise_sq_dists(x: np.ndarray) -> np.ndarray:
    sq = np.einsum("ij,ij->i", x, x)
    d = sq[:, None] + sq[None, :] - 2.0 * (x @ x.T)
    np.fill_diagonal(d, 0.0)
    return np.maximum(d, 0.0)  # rounding can make tiny distances negative


def _kernel_column(x: np.ndarray, sq_norms: np.ndarray, i: int, gamma: float) -> np.ndarray:
    d = np.maximum(sq_norms + sq_norms[i] - 2.0 * (x @ x[i]), 0.0)
    d[i] = 0.0
    return np.exp(-gamma * d)


def _naive_log_det(buf: np.ndarray, k_col: np.ndarray) -> float:
    t = len(k_col)
    buf[:t, t] = k_col
    buf[t, :t] = k_col
    return float(np.linalg.slogdet(buf)[1])


def _argmax_lowest(score: np.ndarray) -> int:
    best = float(score.max())
    tol = _TIE_TOL * max(1.0, abs(best))
    return int(np.flatnonzero(score >= best - tol)[0])


def _check_k(k: int) -> int:
    if isinstance(k, bool) or int(k) != k or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    return int(k)


def _check_gamma(gamma: float) -> float:
    if not (math.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be a positive number, got {gamma!r}")
    return float(gamma)


def _check_alpha(alpha: float) -> float:
    # A negative alpha would reward leaving documents uncovered and make F non-monotone, voiding the
    # greedy's (1 - 1/e) guarantee.
    if not (math.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"alpha must be a non-negative number, got {alpha!r}")
    return float(alpha)


def _check_indices(indices: Iterable[int], m: int, what: str) -> list[int]:
    out: list[int] = []
    seen: set[int] = set()
    for raw in indices:
        i = int(raw)
        if i != raw or not 0 <= i < m:
            raise ValueError(f"{what}: index {raw!r} is not a candidate (there are {m})")
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


def _check_doc_sets(doc_sets: Sequence[Iterable[Hashable]], m: int) -> None:
    if len(doc_sets) != m:
        raise ValueError(f"doc_sets has {len(doc_sets)} entries for {m} candidates")
