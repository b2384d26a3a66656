"""The diversity map as a stored job (issue 15, item 3): computed once, updated in place for new and
reworded specs, refitted on request, and stale as soon as a spec changes."""

import numpy as np
import pytest

from evalcore.inputs import import_project
from evalcore.jobs import resume
from evalcore.models import RunStatus, SpecStatus
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.projection import place_by_neighbours
from evalcore.specs.spec_map import (
    MAP_KIND,
    Curve,
    curve_gaps,
    map_changes,
    map_status,
    read_map,
    start_map,
)
from evalcore.specs.store_ops import add_human_spec, edit_spec, get_spec, review_spec

PROJECT = "ridgeline_support"
TOPICS = ["returns", "opening hours", "bike fitting", "gift cards", "warranty", "delivery", "rentals",
          "repairs", "memberships", "trade-ins"]  # fmt: skip


def _draft(topic: str) -> SpecDraft:
    return SpecDraft(scenario=f"Question about {topic}", given="a customer of the shop",
                     when=f"the customer asks about {topic}", then="the assistant answers from the documents",
                     category="product information")  # fmt: skip


@pytest.fixture
def project(sqlite_store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    import_project(sqlite_store, "data/sample")
    for topic in TOPICS:
        add_human_spec(sqlite_store, PROJECT, _draft(topic), "ana")
    return sqlite_store


def _compute(store, refit=False):
    run = start_map(store, PROJECT, refit=refit)
    assert map_status(store, PROJECT).job.id == run.id  # pending until a worker takes it
    resume(store.url, run.id)  # what the queue worker calls
    status = map_status(store, PROJECT)
    assert store.run(run.id).status == RunStatus.finished and status.job is None
    assert status.latest == run.id and status.failed is None
    return read_map(store, run.id)


def test_a_map_is_stored_then_updated_in_place_and_refitted(project):
    first = _compute(project)
    assert first.method == "PCA" and len(first.points) == 10 and first.placed == 0
    assert first.fitted_by == first.run_id and len(first.versions) == 10
    assert {c.method for c in first.curves} == {"greedy", "random", "maxmin"}
    assert not map_changes(project, PROJECT, first)

    ids = [p.id for p in first.points]
    edit_spec(project, ids[0], "ana", 1, scenario="Question about returning a worn helmet")
    add_human_spec(project, PROJECT, _draft("bike lights"), "ana")
    review_spec(project, ids[1], "ana", 1, SpecStatus.accepted)
    changes = map_changes(project, PROJECT, first)
    assert (changes.added, changes.changed, changes.removed) == (1, 2, 0)

    second = _compute(project)
    before = {p.id: p for p in first.points}
    after = {p.id: p for p in second.points}
    assert len(after) == 11 and second.fitted_by == first.run_id and second.placed == 2
    assert after[ids[0]].placed and after[ids[0]].scenario == "Question about returning a worn helmet"
    for spec_id in ids[1:]:  # unchanged texts (an acceptance included) keep their place
        assert (after[spec_id].x, after[spec_id].y) == (before[spec_id].x, before[spec_id].y)
        assert not after[spec_id].placed
    assert not map_changes(project, PROJECT, second)

    review_spec(
        project, ids[2], "ana", get_spec(project, PROJECT, ids[2]).version, SpecStatus.rejected, "dup"
    )
    third = _compute(project, refit=True)
    assert third.fitted_by == third.run_id and third.placed == 0
    assert ids[2] not in {p.id for p in third.points} and ids[2] in third.versions
    assert len(project.runs(PROJECT, kind=MAP_KIND)) == 3


def test_a_new_point_lands_among_its_nearest_fitted_neighbours():
    fitted = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    points = np.array([[10.0, 0.0], [0.0, 10.0], [5.0, 5.0]])
    np.testing.assert_allclose(
        place_by_neighbours(fitted, points, np.array([[2.0, 0.0]]), k=1), [[10.0, 0.0]]
    )
    # k = 2: the two most similar (cosine 1 and 0.707), weighted by similarity
    placed = place_by_neighbours(fitted, points, np.array([[1.0, 0.0]]), k=2)
    w = np.array([1.0, 0.7 / np.hypot(0.7, 0.7)]) + 1e-6
    np.testing.assert_allclose(placed, [(w[0] * points[0] + w[1] * points[2]) / w.sum()])


def test_curve_gaps_are_each_method_minus_random_at_the_same_k():
    curves = [Curve(method="random", k=5, spwd=10, var_div=0.5, coverage=3),
              Curve(method="greedy", k=5, spwd=14, var_div=0.75, coverage=5),
              Curve(method="maxmin", k=5, spwd=12, var_div=0.25, coverage=3),
              Curve(method="greedy", k=9, spwd=1, var_div=1, coverage=1)]  # fmt: skip
    gaps = {c.method: c for c in curve_gaps(curves)}
    assert set(gaps) == {"greedy", "maxmin"}  # k = 9 has no Random to compare with
    assert (gaps["greedy"].spwd, gaps["greedy"].var_div, gaps["greedy"].coverage) == (4, 0.25, 2)
    assert (gaps["maxmin"].spwd, gaps["maxmin"].var_div, gaps["maxmin"].coverage) == (2, -0.25, 0)
