"""Selecting specs from the candidates (seed 000, Algorithm 1) and measuring the selection (Table 5).

The candidates are every spec not rejected; locked and human-written specs are always selected and the
greedy continues from them. A selection is recorded as a finished run of kind `specs.select` whose one
unit holds the picked ids, so the current selection is derived from the store, never held in a page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from evalcore import jobs
from evalcore.errors import EvalcoreError
from evalcore.llm.client import ModelClient
from evalcore.models import Run, RunStatus, SpecStatus
from evalcore.models.common import now_utc
from evalcore.specs.metrics import coverage, spwd, var_div
from evalcore.specs.selection import (
    DEFAULT_ALPHA,
    greedy_select,
    maxmin_select,
    median_heuristic_gamma,
    random_select,
)
from evalcore.specs.store_ops import SELECT_KIND, SpecView, list_specs, spec_text
from evalcore.store import Store

Method = Literal["greedy", "random", "maxmin"]
METHODS: tuple[Method, ...] = ("greedy", "random", "maxmin")


@dataclass(frozen=True)
class Candidates:
    """The selection's inputs: candidate specs, their embeddings, their document sets, the locked rows."""

    views: list[SpecView]
    embeddings: np.ndarray
    doc_sets: list[set[str]]
    locked: list[int]
    embedding_model: str


@dataclass(frozen=True)
class Metrics:
    """Table 5's three figures for one selected set."""

    spwd: float
    var_div: float
    coverage: int


@dataclass(frozen=True)
class SelectionOutcome:
    """A recorded selection."""

    run: Run
    selected: list[str]
    metrics: Metrics


def _always(view: SpecView) -> bool:
    return view.spec.locked or view.spec.provenance.is_human


def spec_embedding_text(view: SpecView) -> str:
    """What is embedded for a spec: its Scenario / Given / When / Then."""
    return "\n".join(spec_text(view.spec).splitlines()[:4])


def load_candidates(store: Store, project_id: str, embedding_model: str | None = None) -> Candidates:
    """The non-rejected specs with embeddings (cached in the store) and document sets."""
    views = [v for v in list_specs(store, project_id) if v.spec.status != SpecStatus.rejected]
    if not views:
        raise EvalcoreError("no candidate specs yet: generate some first")
    client = ModelClient(store, project_id)
    embeddings = client.embed([spec_embedding_text(v) for v in views], model=embedding_model)
    _, _, model = client.registry.resolve("embedding", embedding_model)
    locked = [i for i, v in enumerate(views) if _always(v)]
    return Candidates(views, np.asarray(embeddings), [set(v.spec.documents) for v in views], locked, model)


def pick(
    candidates: Candidates, k: int, method: Method, alpha: float, gamma: float | None, seed: int
) -> list[int]:
    """Row indices chosen by one method (locked rows first, always)."""
    if method == "greedy":
        return greedy_select(
            candidates.embeddings, candidates.doc_sets, k, alpha, gamma, candidates.locked
        ).indices
    if method == "random":
        return random_select(len(candidates.views), k, seed, candidates.locked)
    if method == "maxmin":
        return maxmin_select(candidates.embeddings, k, locked=candidates.locked)
    raise EvalcoreError(f"unknown selection method '{method}' (use {', '.join(METHODS)})")


def as_method(name: str) -> Method:
    """The selection method called `name` (as typed on a command line); an unknown one is an error."""
    for method in METHODS:
        if method == name:
            return method
    raise EvalcoreError(f"unknown selection method '{name}' (use {', '.join(METHODS)})")


def measure(candidates: Candidates, indices: Sequence[int]) -> Metrics:
    """SPWD, Var Div and Coverage of the selected rows."""
    chosen = candidates.embeddings[list(indices)]
    docs = [candidates.doc_sets[i] for i in indices]
    return Metrics(spwd(chosen), var_div(chosen), coverage(docs))


# How many specs are selected by default, on the page and in the CLI alike.
DEFAULT_K = 30


def select_specs(
    store: Store,
    project_id: str,
    k: int = DEFAULT_K,
    *,
    alpha: float = DEFAULT_ALPHA,
    gamma: float | None = None,
    method: Method = "greedy",
    seed: int = 0,
    author: str = "evalcore",
) -> SelectionOutcome:
    """Select k specs and record the selection as the project's current one."""
    candidates = load_candidates(store, project_id)
    gamma = gamma or median_heuristic_gamma(candidates.embeddings)
    indices = pick(candidates, k, method, alpha, gamma, seed)
    ids = [candidates.views[i].spec.id for i in indices]
    metrics = measure(candidates, indices)
    params = {"k": k, "alpha": alpha, "gamma": gamma, "method": method, "seed": seed, "author": author,
              "embedding_model": candidates.embedding_model, "candidates": len(candidates.views)}  # fmt: skip
    run = jobs.create(store, project_id, SELECT_KIND, params, pending=False)
    with store.unit(run.id, "selection") as writer:
        writer.result = {"selected": ids, "metrics": metrics.__dict__}
    run = run.model_copy(update={"status": RunStatus.finished, "finished_at": now_utc()})
    store.update_run(run)
    return SelectionOutcome(run, ids, metrics)


@dataclass(frozen=True)
class CurvePoint:
    """The metrics of one method at one k."""

    method: str
    k: int
    spwd: float
    var_div: float
    coverage: float


def metrics_by_k(
    candidates: Candidates, ks: Sequence[int], alpha: float = DEFAULT_ALPHA, seeds: int = 10
) -> list[CurvePoint]:
    """SPWD, Var Div and Coverage against k for greedy, Random (mean of `seeds`) and Max-Min.

    Every point is a real selection of exactly k specs, the one `select_specs` would record at that k.
    Locked and human-written specs are in every selection, so no selection is smaller than the number of
    them (L): a requested k below L is moved to L, and one above the number of candidates m to m. The
    curves therefore start at k = L (where all three methods coincide, at the locked set) and end at m,
    and the points come back in increasing k, once each. An analyst reading "greedy at k = 5" with 12
    locked specs would otherwise see either a set nobody can select (5 of the 12 locks) or a 12-spec set
    drawn at x = 5.

    Greedy and Max-Min are prefix-consistent from L on (each pick after the locks depends only on the
    picks before it, not on k), so each is computed once up to the largest k and sliced.
    """
    m = len(candidates.views)
    smallest = min(len(candidates.locked), m)
    sizes = sorted({min(max(k, smallest), m) for k in ks})
    if not sizes:
        return []
    gamma = median_heuristic_gamma(candidates.embeddings)
    orders = {method: pick(candidates, sizes[-1], method, alpha, gamma, 0) for method in ("greedy", "maxmin")}
    points = []
    for k in sizes:
        for method, order in orders.items():
            metrics = measure(candidates, order[:k])
            points.append(CurvePoint(method, k, metrics.spwd, metrics.var_div, metrics.coverage))
        runs = [measure(candidates, random_select(m, k, s, candidates.locked)) for s in range(seeds)]
        points.append(
            CurvePoint(
                "random",
                k,
                float(np.mean([r.spwd for r in runs])),
                float(np.mean([r.var_div for r in runs])),
                float(np.mean([r.coverage for r in runs])),
            )
        )
    return points
