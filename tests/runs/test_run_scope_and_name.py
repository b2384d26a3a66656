"""Runs as named experiments that leave out the items annotators rejected unless asked to play them."""

from __future__ import annotations

from runs_support import sample_project

from evalcore.items.store_ops import KIND
from evalcore.models import Annotation
from evalcore.runs import create_run
from evalcore.runs.control import run_label
from evalcore.runs.items import item_key, select_keys


def test_a_rejected_conversation_is_not_played_unless_included(sqlite_store):
    store = sqlite_store
    pid, ids = sample_project(store)
    rejected = ids[1]
    store.annotate(
        rejected,
        [Annotation(item_kind="conversation", item_id=rejected, label="reject", author="ann")],
        "ann",
        1,
    )
    kept = select_keys(store, pid)
    assert item_key(KIND, rejected) not in kept and len(kept) == len(ids) - 1
    assert select_keys(store, pid, include_rejected=True) == [item_key(KIND, i) for i in ids]
    run = create_run(store, pid, "demo", judge="offline")
    assert item_key(KIND, rejected) not in run.params["items"]
    assert run.params["filters"]["include_rejected"] is False
    every = create_run(store, pid, "demo", judge="offline", include_rejected=True)
    assert item_key(KIND, rejected) in every.params["items"]


def test_a_run_is_a_named_experiment_with_notes(sqlite_store):
    store = sqlite_store
    pid, _ = sample_project(store)
    named = create_run(store, pid, "demo", judge="offline", name="new prompt", notes="shorter answers")
    assert (named.params["name"], named.params["notes"]) == ("new prompt", "shorter answers")
    assert run_label(store.run(named.id)).startswith("new prompt: demo · judged by offline · ")
    plain = create_run(store, pid, "demo", judge="offline")
    assert plain.params["name"] == f"demo · demo · {plain.started_at:%Y-%m-%d}"
