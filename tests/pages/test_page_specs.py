"""The Spec review page with AppTest: edit, a stale save refused, lock, re-select."""

from pathlib import Path

import pytest
import sqlalchemy as sa
from page_app import open_page
from queue_support import work_the_queue
from streamlit.testing.v1 import AppTest

from evalcore.inputs import import_project
from evalcore.jobs import claims, failed_units
from evalcore.specs.generation import generate_specs, latest_generation
from evalcore.specs.selecting import select_specs
from evalcore.specs.store_ops import current_selection, edit_spec, get_spec, list_specs
from evalcore.store import DATABASE_URL_ENV, Store
from evalcore.store import schema as t
from evalcore.store.workers import worker_id
from pages import _pickers as pickers
from pages._common import md

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "ridgeline_support"


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    url = f"sqlite:///{tmp_path / 'specs.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    import_project(store, ROOT / "data" / "sample")
    generate_specs(store, PROJECT, m=20)
    return store


def _button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def test_the_page_lists_every_candidate_and_marks_offline_ones(store):
    at = open_page("pages/specs.py", "ana")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Candidates"] == str(len(list_specs(store, PROJECT)))
    assert any("offline provider" in c.value for c in at.caption)


def test_edit_saves_a_new_version_with_who(store):
    spec_id = list_specs(store, PROJECT)[0].spec.id
    at = open_page("pages/specs.py", "ana", state={"open_spec": spec_id})
    then = next(t for t in at.text_area if t.label == "Then")
    then.input("the assistant should quote the 14-day window for e-bikes")
    _button(at, "Save edit").click().run()
    assert not at.exception
    view = get_spec(store, PROJECT, spec_id)
    assert view.version == 2 and view.saved_by == "ana"
    assert view.spec.then == "the assistant should quote the 14-day window for e-bikes"


def test_a_stale_save_is_refused_naming_who_saved_in_between(store):
    spec_id = list_specs(store, PROJECT)[0].spec.id
    at = open_page("pages/specs.py", "ana", state={"open_spec": spec_id})
    edit_spec(store, spec_id, "ben", 1, scenario="Ben's version")
    next(t for t in at.text_area if t.label == "Then").input("ana's change")
    _button(at, "Save edit").click().run()
    errors = " ".join(e.value for e in at.error)
    assert "ben" in errors and "refused" in errors
    view = get_spec(store, PROJECT, spec_id)
    assert view.version == 2 and view.spec.scenario == "Ben's version"
    assert any(b.label == "Reload the current version" for b in at.button)


def test_lock_from_the_page(store):
    spec_id = list_specs(store, PROJECT)[3].spec.id
    at = open_page("pages/specs.py", "ana", state={"open_spec": spec_id})
    _button(at, "Lock (always selected)").click().run()
    assert get_spec(store, PROJECT, spec_id).spec.locked


def test_reselect_with_k_and_alpha(store):
    at = open_page("pages/specs.py", "ana")
    k_slider = next(s for s in at.slider if s.label == "How many to select (k)")
    k_slider.set_value(7)
    next(s for s in at.slider if s.label.startswith("Coverage weight")).set_value(1.0)
    _button(at, "Re-select").click().run()
    assert not at.exception
    assert len(current_selection(store, PROJECT)) == 7
    assert store.runs(PROJECT, kind="specs.select")[0].params["alpha"] == 1.0


def test_nobody_can_edit_without_a_name(store):
    spec_id = list_specs(store, PROJECT)[0].spec.id
    at = open_page("pages/specs.py", state={"open_spec": spec_id})
    _button(at, "Save edit").click().run()
    assert any("Type your name" in w.value for w in at.warning)
    assert get_spec(store, PROJECT, spec_id).version == 1


def test_a_failed_batch_is_listed_and_generated_again_with_the_retry_button(store):
    run = latest_generation(store, PROJECT)
    with store.write() as conn:  # as if the model's reply for the first batch could not be used
        for table in (t.run_units, t.job_claims):
            conn.execute(
                sa.update(table)
                .where(table.c.run_id == run.id, table.c.unit_key == "batch-0000")
                .values(status="failed")
            )
    at = open_page("pages/specs.py", "ana")
    assert any("1 model call(s) of the latest generation failed: batch-0000" in w.value for w in at.warning)
    _button(at, "Retry failed units").click().run()
    assert not at.exception, at.exception
    assert store.run(run.id).status.value == "pending", "handed to the workers, not run in the page"
    assert [r["status"] for r in work_the_queue(store.url)] == ["finished"]
    assert failed_units(store, run.id) == {}
    at.run()
    assert not any(b.label == "Retry failed units" for b in at.button)
    assert any(md(f"Run {run.id} finished") in s.value for s in at.success)


def test_generate_queues_a_run_a_worker_makes_and_the_page_shows_who_holds_it(store):
    before = len(list_specs(store, PROJECT))
    at = open_page("pages/specs.py", "ana")
    next(n for n in at.number_input if n.label == "How many candidates (m)").set_value(40)
    next(n for n in at.number_input if n.label == "Seed").set_value(7)  # past the fixture's 20: new specs
    _button(at, "Generate").click().run()
    assert not at.exception, at.exception
    run = latest_generation(store, PROJECT)
    assert (
        run.status.value == "pending" and run.params["m"] == 40 and len(list_specs(store, PROJECT)) == before
    )
    assert any("queued" in p.proto.text for p in at.get("progress"))
    assert any("Waiting for a worker" in c.value for c in at.caption)
    assert _button(at, "Generate").disabled, "one generation at a time from the page"
    worker = worker_id("page-test")
    assert claims.take(store, run.id, "batch-0000", worker, None)  # a worker has taken a unit
    at.run()
    assert any(c.value.startswith(md(f"held by {worker} since ")) for c in at.caption)
    claims.release(store, run.id, "batch-0000", worker)
    work_the_queue(store.url)
    at.run()
    assert not at.exception, at.exception
    assert any(md(f"Run {run.id} finished") in s.value for s in at.success)
    assert len(list_specs(store, PROJECT)) > before


def test_stop_a_queued_generation_then_resume_it(store):
    at = open_page("pages/specs.py", "ana")
    _button(at, "Generate").click().run()
    run = latest_generation(store, PROJECT)
    _button(at, "Stop").click().run()
    assert not at.exception, at.exception
    assert (
        store.run(run.id).status.value == "stopped" and "stopped by ana" in store.run(run.id).stopped_reason
    )
    assert [r["skipped"] for r in work_the_queue(store.url)] == [True], "the worker skips a stopped run"
    at.run()
    _button(at, "Resume the stopped generation").click().run()
    assert store.run(run.id).status.value == "pending"
    work_the_queue(store.url)
    assert store.run(run.id).status.value == "finished"


def test_previous_and_next_go_through_the_listed_specs_one_by_one(store):
    at = open_page("pages/specs.py", "ana")
    order = list(at.dataframe[0].value["id"])
    at.selectbox(key="open_spec").set_value(order[0]).run()
    assert any(c.value == f"1 of {len(order)} in the list" for c in at.caption)
    assert _button(at, "Previous").disabled, "nothing before the first"
    _button(at, "Next").click().run()
    assert at.session_state["open_spec"] == order[1]
    _button(at, "Next").click().run()
    assert at.session_state["open_spec"] == order[2]
    assert any(c.value == f"3 of {len(order)} in the list" for c in at.caption)
    _button(at, "Previous").click().run()
    assert at.session_state["open_spec"] == order[1] and not at.exception


def test_a_long_list_s_picker_lists_its_first_specs_and_the_open_one_and_search_reaches_the_rest(
    store, monkeypatch
):
    monkeypatch.setattr(pickers, "LISTED", 5)
    at = open_page("pages/specs.py", "ana")
    order = list(at.dataframe[0].value["id"])
    picker = at.selectbox(key="open_spec")
    assert len(picker.options) == 5 and "first 5 of 20" in picker.placeholder
    at.session_state["open_spec"] = order[4]
    at.run()
    _button(at, "Next").click().run()
    assert at.session_state["open_spec"] == order[5] and not at.exception, "Next goes past the listed"
    assert len(at.selectbox(key="open_spec").options) == 6, "the open spec is listed after the first five"
    far = get_spec(store, PROJECT, order[12]).spec.scenario
    at.text_input[0].input(far).run()
    assert order[12] in list(at.dataframe[0].value["id"])
    assert at.selectbox(key="open_spec").options[:1] == [far], "Search narrows the picker to any spec"


def test_closed_sections_draw_nothing_until_opened(store):
    select_specs(store, PROJECT, 5)
    at = open_page("pages/specs.py", "ana")
    labels = [b.label for b in at.button]
    assert "Re-select" not in labels and "Add spec" not in labels, "closed: their forms are not drawn"
    assert not any(d.label == "Download YAML" for d in at.get("download_button"))
    at.session_state["specs_generate"] = at.session_state["specs_add"] = True  # both opened
    at.run()
    assert {"Re-select", "Generate", "Add spec"} <= {b.label for b in at.button}
    hand_made = ("A hand-made one", "a customer", "they ask", "we answer")
    for field, value in zip(at.text_input[-4:], hand_made, strict=True):
        field.input(value)
    _button(at, "Add spec").click().run()
    assert not at.exception, at.exception
    [added] = [v.spec for v in list_specs(store, PROJECT) if v.spec.scenario == "A hand-made one"]
    assert at.session_state["open_spec"] == added.id, "the spec added is opened"
    assert any(s.value == md("A hand-made one") for s in at.subheader)
