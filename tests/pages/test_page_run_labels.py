"""Runs and Reports say things as they are (issue 15, items 5 and 9): a run's judge and status as the store
has them now, no raw 'None' in a table, a renamed spec under its current name, one query for the runs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from page_app import open_page
from runs_support import sample_project

from evalcore.jobs.control import committed_counts, committed_records
from evalcore.models.wording import without_ids
from evalcore.runs import create_run, execute_run, run_target
from evalcore.runs.control import run_label
from evalcore.specs.store_ops import edit_spec, list_specs
from evalcore.store import DATABASE_URL_ENV, Store
from pages._common import md

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    url = f"sqlite:///{tmp_path / 'labels.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    return Store(url)


def test_a_run_is_named_by_its_judge_and_status_as_they_are_now(store):
    pid, _ = sample_project(store)
    run = create_run(store, pid, "demo")  # no judge asked for: the judge role decides when it plays
    queued = run_label(store.run(run.id))
    assert "judged by the judge role" in queued and "· queued (" in queued and "None" not in queued
    execute_run(store, run.id)
    done = run_label(store.run(run.id))
    played = store.run(run.id)
    # The default name says target, model and day: the label goes on with what it does not say.
    assert done == (
        f"{played.params['name']}: judged by {played.judge} · {played.started_at:%H:%M} · finished ({run.id})"
    )
    assert played.params["name"] == f"demo · demo · {played.started_at:%Y-%m-%d}" and "None" not in done
    at = open_page("pages/runs.py")
    assert at.selectbox(key="watch_run").format_func(run.id) == without_ids(done), "named, no id"
    at = open_page("pages/reports.py")
    assert at.selectbox(key="report_run").format_func(run.id) == without_ids(done)


def test_runs_are_counted_in_one_query_as_progress_counts_them(store):
    pid, _ = sample_project(store)
    played = run_target(store, pid, "demo", judge="offline").run
    waiting = create_run(store, pid, "demo", judge="offline")
    counts = committed_counts(store, [played.id, waiting.id])
    assert counts == {played.id: committed_records(store, played.id)} and counts[played.id] > 0


def test_report_tables_show_no_raw_none(store):
    pid, _ = sample_project(store)
    run_target(store, pid, "demo", judge="offline")
    at = open_page("pages/reports.py")
    frames = []
    for tab in [t.label for t in at.tabs]:  # only the open tab's table is drawn: open each
        at.session_state["report_tab"] = tab
        at.run()
        frames += [d.value for d in at.dataframe]
    assert len(frames) == len(at.tabs)
    by_spec = frames[0]  # the first tab: its total row is named, not a blank spec
    assert by_spec["spec_label"].iloc[-1] == "All" and (by_spec["spec_label"] != "").all(), by_spec
    for frame in frames:
        cells = frame.astype(object)
        assert not cells.map(lambda v: v is None or (not isinstance(v, str) and pd.isna(v))).any().any()
        assert not cells.map(lambda v: str(v) in ("None", "nan", "<NA>")).any().any(), frame


def test_a_renamed_spec_shows_its_current_name_in_the_drill_down(store):
    pid, _ = sample_project(store)
    run_target(store, pid, "demo", judge="offline")
    at = open_page("pages/reports.py")
    at.selectbox(key="drill:by_spec").select_index(1).run()
    shown = next(c.value for c in at.caption if c.value.startswith("Spec: ")).removeprefix("Spec: ")
    spec = next(v for v in list_specs(store, pid) if md(v.spec.scenario) == shown)
    edit_spec(store, spec.spec.id, "ana", spec.version, scenario="Renamed while reading")
    at.run()
    assert not at.exception, at.exception
    assert "Renamed while reading" in set(at.dataframe[0].value["spec_label"])
    drill = at.selectbox(key="drill:by_spec")
    drill.select_index(next(i for i, o in enumerate(drill.options) if "Renamed while reading" in o)).run()
    assert f"Spec: {md('Renamed while reading')}" in [c.value for c in at.caption]
