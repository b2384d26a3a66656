"""The Conversations page's views (issue 15, items 4 and 11): the charts count the filtered conversations
under the filters' own words, and the cached table follows every change made elsewhere."""

from pathlib import Path

import pandas as pd
import pytest
from page_app import open_page
from streamlit.testing.v1 import AppTest
from vega import Chart, charts

from evalcore.generators.doc_qa.browse import conversation_table, display_table
from evalcore.generators.doc_qa.job import generate_conversations
from evalcore.inputs import import_project
from evalcore.items.current import content_field
from evalcore.items.store_ops import list_conversations
from evalcore.models import Annotation
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.store_ops import add_human_spec, edit_spec, list_specs, review_spec
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "ridgeline_support"


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    url = f"sqlite:///{tmp_path / 'conversations.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    import_project(store, ROOT / "data" / "sample")
    draft = SpecDraft(scenario="Stock of an item at the Westbrook Station store", given="a customer",
                      when="the customer asks", then="the assistant answers from the documents",
                      category="product information",
                      documents=["about-us-and-stores", "inventory"])  # fmt: skip
    add_human_spec(store, PROJECT, draft, "ana")
    generate_conversations(store, PROJECT, specs="all", per_spec=2, d=1, turns=4, dense=False)
    generate_conversations(store, PROJECT, specs="all", per_spec=1, d=2, turns=4, dense=False)
    return store


def _charts(at: AppTest) -> dict[str, Chart]:
    return {chart.spec["title"]: chart for chart in charts(at)}


def test_the_charts_count_what_the_chain_length_filter_keeps(store):
    at = open_page("pages/conversations.py", "ana")
    next(m for m in at.multiselect if m.label == "Documents in chain").set_value([2]).run()
    assert not at.exception, at.exception
    shown = int({m.label: m.value for m in at.metric}["Conversations"])
    drawn = _charts(at)
    assert set(drawn) == {"Query types of the pairs", "Documents in chain", "Documents the answers cite"}
    bars = drawn["Documents in chain"]
    assert list(bars.table()["value"]) == ["2"] and bars.table()["count"].sum() == shown == 1
    assert drawn["Documents the answers cite"].table()["count"].sum() == shown
    assert bars.spec["encoding"]["x"]["title"] == "documents in chain"
    assert bars.spec["encoding"]["y"]["title"] == "conversations"
    table = at.dataframe[-1].value
    assert {"documents in chain", "documents cited", "judge score"} <= set(table.columns)
    assert not table.isna().any().any() and "None" not in set(table.astype(str).to_numpy().ravel())


def test_the_cached_table_follows_annotations_and_renames_made_elsewhere(store):
    at = open_page("pages/conversations.py", "ana")
    assert {m.label: m.value for m in at.metric}["Silver or gold"] == "3"  # the offline judge passed them
    view = list_conversations(store, PROJECT)[0]
    verdict = Annotation(item_kind="conversation", item_id=view.conversation.id, label="reject", author="ben")
    store.annotate(view.conversation.id, [verdict], "ben", view.version)
    spec_id = view.conversation.spec_id
    edit_spec(store, spec_id, "ben", 1, scenario="Stock at Westbrook Station, renamed")
    at.run()
    assert not at.exception, at.exception
    assert {m.label: m.value for m in at.metric}["Silver or gold"] == "2"
    assert set(at.dataframe[-1].value["spec"]) == {"Stock at Westbrook Station, renamed"}


def test_a_table_passed_on_is_brought_up_to_date_by_reading_only_what_changed(store, monkeypatch):
    import evalcore.generators.doc_qa.browse as browse

    before = conversation_table(store, PROJECT)
    view = list_conversations(store, PROJECT)[1]
    verdict = Annotation(item_kind="conversation", item_id=view.conversation.id, label="reject", author="ben")
    store.annotate(view.conversation.id, [verdict], "ben", view.version)
    edit_spec(store, view.conversation.spec_id, "ben", 1, scenario="Renamed since")
    read: list[str] = []
    real = browse.read_items
    monkeypatch.setattr(browse, "read_items", lambda s, ids: read.extend(ids) or real(s, ids))
    after = conversation_table(store, PROJECT, previous=before)
    assert read == [view.conversation.id], "only the annotated conversation is read again"
    pd.testing.assert_frame_equal(after, conversation_table(store, PROJECT))
    assert after.set_index("id").loc[view.conversation.id, "tier"] == "rejected"
    assert "Renamed since" in set(after["spec"]), "spec names are current on rows not read again"


def test_an_unjudged_conversation_reads_not_judged(store):
    table = conversation_table(store, PROJECT)
    shown = display_table(table.assign(judge_score=[None, *table["judge_score"][1:]]))
    assert shown["judge score"].iloc[0] == "not judged" and shown["judge score"].iloc[1] == "1.00"


def test_spec_scenarios_cut_from_sql_match_the_listing_after_edits(store):
    spec_id = list_specs(store, PROJECT)[0].spec.id
    edit_spec(store, spec_id, "ben", 1, scenario="Renamed")
    review_spec(store, spec_id, "ben", 2, "accepted")  # a later revision keeps the renamed content
    scenarios = content_field(store, PROJECT, "spec", "scenario")
    assert scenarios == {v.spec.id: v.spec.scenario for v in list_specs(store, PROJECT)}
    assert scenarios[spec_id] == "Renamed"
