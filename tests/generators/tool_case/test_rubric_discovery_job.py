"""Rubric discovery as a job (evalcore.generators.tool_case.discovery): one unit that stores a rubric set,
run by a worker from the queue as the Tool cases page starts it; on the sample generated with one
conversation per situation (one POS of 26) the training part gets its POS conversation and says so; a
project with no conversation of a label is a one-line refusal that records nothing; a model step without
usable output fails the unit with its reason (no traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest
from queue_support import work_the_queue

from evalcore.errors import UsageError
from evalcore.generators.tool_case.discovery import (
    RUN_KIND,
    create_discovery,
    discovered,
    discovery_runs,
    execute_discovery,
)
from evalcore.generators.tool_case.evaluation import labels_of
from evalcore.generators.tool_case.job import generate_toolcases
from evalcore.generators.tool_case.rubrics import project_rubric_sets
from evalcore.inputs import import_project
from evalcore.jobs import failed_units
from evalcore.jobs.queue import enqueue
from evalcore.models import RunStatus
from evalcore.store import Store

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def project(tmp_path, monkeypatch) -> tuple[Store, str]:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    store = Store(f"sqlite:///{tmp_path / 'd.db'}")
    pid = import_project(store, ROOT / "data" / "sample").project_id
    # One conversation per situation, so one POS of 26: the training part must be given it.
    generate_toolcases(store, pid, pos_share=None)
    return store, pid


def test_a_queued_discovery_stores_a_rubric_set_learnt_on_both_labels(project):
    store, pid = project
    run = create_discovery(store, pid, all_conversations=True)
    assert run.status == RunStatus.pending and run.kind == RUN_KIND
    train = [store.current(i).body for i in run.params["conversations"]]
    assert {"POS", "NEG"} <= {(c["metadata"]["labels"]["overall"]) for c in train}
    moved = "the training part had no POS conversation: 1 of the 1 moved into it (none held out)"
    assert run.warnings == [moved]
    enqueue(store, run.id)
    work_the_queue(store.url)
    assert store.run(run.id).status == RunStatus.finished
    item, rubrics = discovered(store, run.id)
    assert [s.item_id for s in project_rubric_sets(store, pid)] == [item]
    assert {r.polarity for r in rubrics.rubrics} == {"POS", "NEG"}
    assert set(rubrics.trained_on) == set(run.params["conversations"])
    assert discovery_runs(store, pid)[0].id == run.id
    execute_discovery(store, run.id)  # a second start finds the unit done: no second set
    assert len(project_rubric_sets(store, pid)) == 1


def test_bad_options_and_a_missing_label_are_one_line_and_record_nothing(project, monkeypatch):
    store, pid = project
    for options, message in (
        ({"method": "magic"}, "method must be scope or spur"),
        ({"without": ["XX"]}, "leave out AD, RW or MB, not XX"),
        ({"train_share": 0}, "the training share must be in"),
        ({}, "no gold or silver tool-case conversation"),
    ):
        with pytest.raises(UsageError, match=message) as caught:
            create_discovery(store, pid, **options)
        assert "\n" not in str(caught.value)
    import evalcore.generators.tool_case.discovery as discovery

    monkeypatch.setattr(discovery, "labels_of", lambda c: ("NEG", labels_of(c)[1]))
    with pytest.raises(UsageError, match="no POS conversation among the 26 labelled tool cases"):
        create_discovery(store, pid, all_conversations=True)
    assert not discovery_runs(store, pid)


def test_a_step_without_usable_output_fails_the_unit_with_its_reason(project, monkeypatch):
    store, pid = project
    run = create_discovery(store, pid, method="spur", all_conversations=True)
    import evalcore.generators.tool_case.discovery as discovery
    from evalcore.generators.tool_case.scope import RubricStepFailed

    def broken(*args, **kwargs):
        raise RubricStepFailed("summarise_rubrics: the reply was not JSON\nsecond line")

    monkeypatch.setattr(discovery, "discover_rubrics", broken)
    execute_discovery(store, run.id)
    assert discovered(store, run.id) is None
    assert failed_units(store, run.id) == {"discover": "summarise_rubrics: the reply was not JSON"}
    assert not project_rubric_sets(store, pid)
