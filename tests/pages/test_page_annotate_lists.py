"""Annotate's queue at a team's scale (issue 28): a project of many specs gets a search above the Spec
filter, which lists the first matches only; the team's progress and the guidelines (over the queue) are
drawn once their section is opened."""

from __future__ import annotations

from pathlib import Path

from page_app import open_page

from evalcore.inputs import import_project
from evalcore.review import assign_items
from evalcore.specs.generation import generate_specs
from evalcore.specs.store_ops import list_specs
from evalcore.store import DATABASE_URL_ENV, Store
from pages import _pickers as pickers
from tests.annotation_data import add_conversations

ROOT = Path(__file__).resolve().parents[2]


def test_many_specs_get_a_search_above_the_filter_and_the_filter_keeps_its_spec(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'lists.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setattr(pickers, "LISTED", 2)
    store = Store(url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    generate_specs(store, pid, m=5)
    specs = {v.spec.id: v.spec.scenario for v in list_specs(store, pid)}
    ids = list(specs)
    add_conversations(store, pid, len(ids), spec_ids=ids)
    at = open_page("pages/annotate.py", "ann")
    spec_filter = at.selectbox(key="q_spec")
    assert len(spec_filter.options) == 3, "any, and the first two specs"
    last = ids[-1]
    at.text_input(key="q_spec_find").input(specs[last]).run()
    assert at.selectbox(key="q_spec").options[1] == specs[last].replace("\\", ""), "the search finds it"
    at.selectbox(key="q_spec").set_value(last).run()
    assert list(at.dataframe[0].value["spec"]) == [specs[last]], "the queue is filtered by it"
    at.text_input(key="q_spec_find").input("").run()
    assert at.selectbox(key="q_spec").value == last, "a search that leaves it out keeps the filter"
    assert len(at.dataframe[0].value) == 1
    store.close()


def test_the_team_progress_and_the_guidelines_are_drawn_once_their_section_is_opened(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'team.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    add_conversations(store, pid, 4)
    assign_items(store, pid, ["ann", "bea"], 2, "lee")
    at = open_page("pages/annotate.py", "ann")
    assert len(at.dataframe) == 1, "the queue only"
    assert not at.sidebar.markdown, "the guidelines are closed over the queue: not drawn"
    at.session_state["annotate_team"] = True
    at.run()
    team = at.dataframe[1].value
    assert set(team["annotator"]) == {"ann", "bea"}
    at.session_state["annotate_rules:False"] = True
    at.run()
    assert any(m.value.startswith("#") for m in at.sidebar.markdown), "the project's guidelines.md"
    store.close()
