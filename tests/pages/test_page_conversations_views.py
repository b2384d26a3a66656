"""The Conversations page's views (issue 15, items 4 and 11): the charts count the filtered conversations
under the filters' own words, and the cached table follows every change made elsewhere."""

from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa
from page_app import open_page
from streamlit.testing.v1 import AppTest
from summary_support import reads_whole
from vega import Chart, charts

from evalcore.generators.doc_qa.browse import conversation_table, display_table
from evalcore.generators.doc_qa.job import generate_conversations
from evalcore.inputs import import_project
from evalcore.items.current import content_field, read_item
from evalcore.items.store_ops import list_conversations
from evalcore.models import Annotation
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.store_ops import add_human_spec, edit_spec, list_specs, review_spec
from evalcore.store import DATABASE_URL_ENV, Store
from evalcore.store.schema import item_summaries

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
    assert set(drawn) == {"Query types of the pairs"}, "one count at a time, the others in their tabs"
    for tab in ("Documents in chain", "Documents cited"):
        at.session_state["conversation_counts"] = tab
        at.run()
        drawn |= _charts(at)
    assert set(drawn) == {"Query types of the pairs", "Documents in chain", "Documents the answers cite"}
    assert not at.exception, at.exception
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
    before = conversation_table(store, PROJECT)
    view = list_conversations(store, PROJECT)[1]
    verdict = Annotation(item_kind="conversation", item_id=view.conversation.id, label="reject", author="ben")
    store.annotate(view.conversation.id, [verdict], "ben", view.version)
    edit_spec(store, view.conversation.spec_id, "ben", 1, scenario="Renamed since")
    read = reads_whole(monkeypatch)
    after = conversation_table(store, PROJECT, previous=before)
    assert read == [view.conversation.id], "only the annotated conversation is read again"
    pd.testing.assert_frame_equal(after, conversation_table(store, PROJECT))
    assert after.set_index("id").loc[view.conversation.id, "tier"] == "rejected"
    assert "Renamed since" in set(after["spec"]), "spec names are current on rows not read again"


def test_a_restarted_server_reads_the_kept_summaries_and_follows_what_changed_since(store, monkeypatch):
    before = conversation_table(store, PROJECT)  # another server (or this one before a restart) read them
    read = reads_whole(monkeypatch)
    pd.testing.assert_frame_equal(conversation_table(store, PROJECT), before)
    assert read == [], "no conversation is read whole again"
    rejected, corrected = (v.conversation.id for v in list_conversations(store, PROJECT)[:2])
    verdict = Annotation(item_kind="conversation", item_id=rejected, label="reject", author="ben")
    store.annotate(rejected, [verdict], "ben", read_item(store, rejected).version)
    edit = Annotation(
        item_kind="conversation",
        item_id=corrected,
        turn_index=1,
        label="reject",
        reason="the documents do not say",
        edited_content="CANNOTANSWER",
        author="ben",
    )
    store.annotate(corrected, [edit], "ben", read_item(store, corrected).version)
    read.clear()
    after = conversation_table(store, PROJECT)
    assert sorted(read) == sorted([rejected, corrected]), "only the two saved since are read again"
    rows = after.set_index("id")
    assert rows.loc[rejected, "tier"] == "rejected"
    assert rows.loc[corrected, "pair_types"][0] == "CANNOTANSWER"
    assert rows.loc[corrected, "version"] == read_item(store, corrected).version
    with store.write() as conn:
        conn.execute(sa.delete(item_summaries))
    pd.testing.assert_frame_equal(after, conversation_table(store, PROJECT))


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


def test_a_long_spec_list_is_searched_and_a_chosen_spec_stays_chosen(store, monkeypatch):
    """Issue 28: a picker of thousands of specs costs every visit; past `LISTED` it lists the first that
    match a search, and those chosen."""
    monkeypatch.setattr("pages._pickers.LISTED", 1)
    draft = SpecDraft(scenario="Caring for an e-bike battery", given="a customer", when="the customer asks",
                      then="the assistant answers from the documents", category="product information",
                      documents=["ebike-battery-care-guide"])  # fmt: skip
    add_human_spec(store, PROJECT, draft, "ana")
    generate_conversations(store, PROJECT, specs="all", per_spec=1, d=1, turns=4, dense=False)
    table = conversation_table(store, PROJECT)
    scenarios = dict(zip(table["spec_id"], table["spec"], strict=True))
    assert len(scenarios) == 2
    last = max(scenarios, key=scenarios.get)  # not among the first listed
    at = open_page("pages/conversations.py", "ana")
    spec = next(m for m in at.multiselect if m.label == "Spec")
    assert spec.options == [min(scenarios.values())]
    next(t for t in at.text_input if t.label == "Find a spec").set_value(scenarios[last].upper()).run()
    spec = next(m for m in at.multiselect if m.label == "Spec")
    assert spec.options == [scenarios[last]]
    spec.set_value([last]).run()
    shown = int((table["spec_id"] == last).sum())
    assert {m.label: m.value for m in at.metric}["Conversations"] == str(shown)
    next(t for t in at.text_input if t.label == "Find a spec").set_value("").run()
    assert not at.exception, at.exception
    spec = next(m for m in at.multiselect if m.label == "Spec")
    assert spec.value == [last] and spec.options == [min(scenarios.values()), scenarios[last]]
    assert {m.label: m.value for m in at.metric}["Conversations"] == str(shown)
