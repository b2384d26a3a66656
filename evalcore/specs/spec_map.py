"""The diversity page's data, computed as a job and stored: the candidates' 2D map and the selection curves.

Fitting UMAP on 5,000 specs takes a minute and the curves (Greedy, Random, Max-Min against k) seconds, so
neither runs while a page renders (issue 15, item 3). A map is a run of kind `specs.map` (evalcore.jobs:
recorded, one unit, executed by a queue worker) whose unit result is a `SpecMap`: each candidate's
position with what the page shows of it, the version of every spec it reflects, and the curves.

A map is updated incrementally unless a refit is asked: a spec whose embedded text (Scenario / Given /
When / Then) is unchanged keeps its position, and a new or reworded spec is placed among them by its
nearest neighbours in embedding space (`projection.place_by_neighbours`), so the layout people learned does
not jump; the map says how many points were placed since the layout was fitted. A refit fits every
candidate again. `map_changes` compares the stored versions with the store's (one query) and tells the
page how stale the map is.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np
from pydantic import Field

from evalcore import jobs
from evalcore.errors import EvalcoreError
from evalcore.models import Run, RunStatus
from evalcore.models.common import Record, content_hash, now_utc
from evalcore.specs.projection import NEIGHBOURS, map_2d, place_by_neighbours
from evalcore.specs.selecting import load_candidates, metrics_by_k, spec_embedding_text
from evalcore.specs.store_ops import spec_versions
from evalcore.store import Store

MAP_KIND = "specs.map"
UNIT = "map"
# The k of the curves: small sets, where the methods differ most, and the usual sizes of a selection.
CURVE_KS = (2, 5, 10, 15, 20, 30, 40, 50, 75, 100)


class MapPoint(Record):
    """One candidate spec on the map, with what the page shows of it."""

    id: str = Field(description="Spec id.")
    x: float = Field(description="Horizontal position.")
    y: float = Field(description="Vertical position.")
    scenario: str = Field(description="The spec's scenario when the map was computed.")
    category: str = Field(description="Its category.")
    documents: list[str] = Field(default_factory=list, description="Documents it cites.")
    text_hash: str = Field(description="Hash of its embedded text: an unchanged text keeps its position.")
    placed: bool = Field(default=False, description="Placed by nearest neighbours, not fitted.")


class Curve(Record):
    """SPWD, Var Div and Coverage of one method's selection of k specs."""

    method: str = Field(description="greedy, random (mean of 10 seeds) or maxmin.")
    k: int = Field(description="Specs selected.")
    spwd: float = Field(description="Sum of pairwise distances.")
    var_div: float = Field(description="Variance diversity.")
    coverage: float = Field(description="Documents covered.")


class SpecMap(Record):
    """A stored map: the candidates' positions, the spec versions it reflects, and the selection curves."""

    run_id: str = Field(description="The map run that computed it.")
    method: str = Field(description="UMAP or PCA (too few candidates for UMAP).")
    fitted_by: str = Field(description="The run that fitted the layout (itself, or an earlier one).")
    fitted_at: datetime = Field(description="When the layout was fitted.")
    embedding_model: str = Field(description="Model of the embeddings.")
    points: list[MapPoint] = Field(description="Every candidate (specs not rejected).")
    versions: dict[str, int] = Field(description="Version of every spec, rejected ones included.")
    curves: list[Curve] = Field(default_factory=list, description="The methods' metrics against k.")

    @property
    def placed(self) -> int:
        """Points placed by nearest neighbours since the layout was fitted."""
        return sum(p.placed for p in self.points)


class MapChanges(Record):
    """How the specs differ from those a map reflects."""

    added: int = Field(default=0, description="Specs created since.")
    changed: int = Field(default=0, description="Specs saved since (edited, reviewed, locked).")
    removed: int = Field(default=0, description="Specs the map has that the store no longer has.")

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def start_map(store: Store, project_id: str, *, refit: bool = False) -> Run:
    """Record a map job (pending) for a worker: an update of the latest map, or a refit of every point
    when `refit` or when there is no map yet. Hand it to a worker with `jobs.queue.enqueue`."""
    params = {"project_id": project_id, "refit": refit}
    return jobs.create(store, project_id, MAP_KIND, params, entry=compute_map)


class MapStatus(Record):
    """Where a project's map stands: the job in a worker's hands, the latest map, the latest failure."""

    job: Run | None = Field(default=None, description="A map job queued or running.")
    latest: str | None = Field(default=None, description="Id of the latest finished map run.")
    failed: Run | None = Field(default=None, description="A map job that stopped after the latest map.")


def map_status(store: Store, project_id: str) -> MapStatus:
    """The project's map runs read once: what a page needs to show, start or wait for."""
    status = MapStatus()
    for run in store.runs(project_id, kind=MAP_KIND):  # newest first
        if run.status in (RunStatus.pending, RunStatus.running):
            status.job = status.job or run
        elif run.status == RunStatus.finished:
            status.latest = run.id
            break
        elif status.failed is None and status.job is None:
            status.failed = run
    return status


def read_map(store: Store, run_id: str) -> SpecMap:
    """The map a finished map run stored."""
    unit = store.finished_units(run_id, [UNIT]).get(UNIT)
    if not unit or unit["status"] != "done":
        raise EvalcoreError(f"map run {run_id} has no map: {unit['error'] if unit else 'not finished'}")
    return SpecMap.model_validate(unit["result"])


def map_changes(store: Store, project_id: str, spec_map: SpecMap) -> MapChanges:
    """What changed in the project's specs since `spec_map` was computed (one query)."""
    now = spec_versions(store, project_id)
    then = spec_map.versions
    return MapChanges(
        added=sum(1 for i in now if i not in then),
        changed=sum(1 for i, v in now.items() if i in then and then[i] != v),
        removed=sum(1 for i in then if i not in now),
    )


def compute_map(store: Store, run_id: str) -> SpecMap | None:
    """The map job (what a worker calls): compute the map and store it as the run's one unit. Returns the
    map, or None when the job stopped before it (a stop request)."""
    run = store.run(run_id)
    project_id = store.run_project(run_id)
    outcome: list[SpecMap] = []

    def work(claim: jobs.Claim) -> None:
        spec_map = build_map(store, project_id, run_id, refit=bool(run.params.get("refit")))
        with claim.commit() as writer:
            writer.result = spec_map.model_dump(mode="json")
        outcome.append(spec_map)

    store.start_run(project_id, run)
    report = jobs.run_units(store, run_id, [UNIT], work)
    if outcome:
        return outcome[0]
    if report.run.status == RunStatus.finished:
        return read_map(store, run_id)
    return None


def build_map(store: Store, project_id: str, run_id: str, *, refit: bool = False) -> SpecMap:
    """The map of the project's candidates now: the latest map updated (unchanged texts keep their
    position, the others placed by nearest neighbours), or every point fitted when `refit`, when there is
    no earlier map, or when too few points would stay to place the others by."""
    # Versions first: a spec saved while the map is computed makes it look stale, never up to date.
    versions = spec_versions(store, project_id)
    candidates = load_candidates(store, project_id)
    views = candidates.views
    hashes = [content_hash(spec_embedding_text(v)) for v in views]
    base_id = None if refit else map_status(store, project_id).latest
    base = read_map(store, base_id) if base_id else None
    kept: dict[int, tuple[float, float]] = {}
    if base is not None:
        before = {p.id: p for p in base.points}
        for i, (view, digest) in enumerate(zip(views, hashes, strict=True)):
            point = before.get(view.spec.id)
            if point is not None and point.text_hash == digest:
                kept[i] = (point.x, point.y)
    if base is None or len(kept) < NEIGHBOURS or base.embedding_model != candidates.embedding_model:
        points, method = map_2d(candidates.embeddings)
        placed: set[int] = set()
        fitted_by, fitted_at = run_id, now_utc()
    else:
        rows = sorted(kept)
        new = [i for i in range(len(views)) if i not in kept]
        points = np.zeros((len(views), 2))
        points[rows] = [kept[i] for i in rows]
        if new:
            fitted = candidates.embeddings[rows]
            points[new] = place_by_neighbours(fitted, points[rows], candidates.embeddings[new])
        placed = set(new) | {i for i, v in enumerate(views) if i in kept and before[v.spec.id].placed}
        method, fitted_by, fitted_at = base.method, base.fitted_by, base.fitted_at
    top = len(views)
    ks = sorted({k for k in CURVE_KS if k <= top} | {min(top, 30)})
    return SpecMap(
        run_id=run_id,
        method=method,
        fitted_by=fitted_by,
        fitted_at=fitted_at,
        embedding_model=candidates.embedding_model,
        points=[
            MapPoint(
                id=v.spec.id,
                x=float(x),
                y=float(y),
                scenario=v.spec.scenario,
                category=v.spec.category,
                documents=list(v.spec.documents),
                text_hash=digest,
                placed=i in placed,
            )
            for i, (v, digest, (x, y)) in enumerate(zip(views, hashes, points, strict=True))
        ],
        versions=versions,
        curves=[Curve(**point.__dict__) for point in metrics_by_k(candidates, ks)],
    )


def curve_gaps(curves: Sequence[Curve], baseline: str = "random") -> list[Curve]:
    """Each method's metrics minus the baseline's at the same k (the baseline itself left out): what a
    method adds over picking at random, which three overlapping curves hide."""
    base = {c.k: c for c in curves if c.method == baseline}
    return [
        Curve(
            method=c.method,
            k=c.k,
            spwd=c.spwd - base[c.k].spwd,
            var_div=c.var_div - base[c.k].var_div,
            coverage=c.coverage - base[c.k].coverage,
        )
        for c in curves
        if c.method != baseline and c.k in base
    ]
