"""The Conversations page with AppTest: generate from the page, browse and filter, open a conversation."""

from pathlib import Path

import pytest
from page_app import open_page
from queue_support import work_the_queue
from streamlit.testing.v1 import AppTest

from evalcore.generators.doc_qa.browse import conversation_table
from evalcore.generators.doc_qa.generate import qa_pairs
from evalcore.generators.doc_qa.job import RUN_KIND, generate_conversations
from evalcore.inputs import import_project
from evalcore.items.current import read_item
from evalcore.items.store_ops import list_conversations
from evalcore.jobs import progress, request_stop
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.store_ops import add_human_spec
from evalcore.store import DATABASE_URL_ENV, Store
from pages._common import md

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "ridgeline_support"


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    url = f"sqlite:///{tmp_path / 'conversations.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    import_project(store, ROOT / "data" / "sample")
    # Two specs about two linked documents each, so chains have a bridging entity to show.
    for scenario, documents in (
        ("Stock of an item at the Westbrook Station store", ["about-us-and-stores", "inventory"]),
        ("Price of a workshop service", ["workshop-service-overview", "repair-services"]),
    ):
        draft = SpecDraft(scenario=scenario, given="a customer had a question", when="the customer asks",
                          then="the assistant should answer from the documents",
                          category="product information", documents=documents)  # fmt: skip
        add_human_spec(store, PROJECT, draft, "ana")
    return store


def _text(at: AppTest) -> str:
    parts = [*at.markdown, *at.caption, *at.info, *at.warning, *at.success]
    return "\n".join(str(p.value) for p in parts)


def test_generate_from_the_page_then_browse(store):
    at = open_page("pages/conversations.py", "ana", timeout=120)
    assert any("No document-grounded conversation yet" in str(i.value) for i in at.info)
    inputs = {n.label: n for n in at.number_input}
    inputs["Conversations per spec (n)"].set_value(2)
    inputs["Turns (L)"].set_value(5)
    next(b for b in at.button if b.label == "Generate").click().run()
    assert not at.exception, at.exception
    [run] = store.runs(PROJECT, kind=RUN_KIND)
    assert run.status.value == "pending" and not list_conversations(store, PROJECT), "queued, not run here"
    assert any(b.label == "Stop generating" for b in at.button)
    work_the_queue(store.url)  # what the worker beside the dashboard does
    at.run()
    assert not at.exception, at.exception
    assert len(list_conversations(store, PROJECT)) == 4
    assert any(md(f"Run {run.id} finished: 4/4 conversations") == m.value for m in at.success)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Conversations"] == "4" and metrics["Question/answer pairs"] == "20"
    assert metrics["Produced offline"] == "4"
    assert len(at.get("vega_lite_chart")) == 1  # the query types; the other counts in their tabs
    text = _text(at)
    assert "Produced offline, without a model" in text
    assert ":violet-badge[Sums up]" in text and ":violet-badge[Not in the documents]" in text
    assert "bridging entity" in text
    # Each grounding document opens in place, with the answer's sentence in bold inside its passage; its
    # passage is drawn only once it is opened (issue 28).
    labels = [e.label for e in at.expander]
    assert any(":material/description:" in label for label in labels)
    shown = conversation_table(store, PROJECT)["id"].iloc[0]  # the conversation the page opens first
    k, answer = next((k, a) for k, (_, a) in enumerate(qa_pairs(read_item(store, shown).conversation()), 1)
                     if a.grounding and a.metadata.get("sources"))  # fmt: skip
    closed = {str(m.value) for m in at.markdown}
    at.session_state[f"conversations_source:{shown}:{k}:{answer.grounding[0]}"] = True  # the user opens it
    at.run()
    assert not at.exception, at.exception
    passage = [str(m.value) for m in at.markdown if str(m.value) not in closed]
    assert len(passage) == 1 and "**" in passage[0]


def test_filters_narrow_the_table(store):
    generate_conversations(store, PROJECT, specs="all", per_spec=2, d=1, turns=4, dense=False)
    generate_conversations(store, PROJECT, specs="all", per_spec=1, d=2, turns=4, dense=False)
    at = open_page("pages/conversations.py", "ana", timeout=120)
    assert {m.label: m.value for m in at.metric}["Conversations"] == "6"
    length = next(m for m in at.multiselect if m.label == "Documents in chain")
    length.set_value([2]).run()
    assert {m.label: m.value for m in at.metric}["Conversations"] == "2"
    tier = next(m for m in at.multiselect if m.label == "Reviewed")
    tier.set_value(["gold"]).run()
    assert {m.label: m.value for m in at.metric}["Conversations"] == "0"


def test_an_unfinished_run_can_be_stopped_and_resumed_from_the_page(store, monkeypatch):
    monkeypatch.setenv("EVALCORE_LLM_CONCURRENCY", "1")

    def stop_early(done, total):
        if done == 1:
            request_stop(store, store.runs(PROJECT, kind=RUN_KIND)[0].id)

    generate_conversations(
        store, PROJECT, specs="all", per_spec=2, turns=3, dense=False, on_progress=stop_early
    )
    run = store.runs(PROJECT, kind=RUN_KIND)[0]
    assert run.status.value == "stopped" and progress(store, run) == (1, 4)
    at = open_page("pages/conversations.py", "ana", timeout=120)
    assert not any(b.label.startswith("Stop") for b in at.button), "a stopped run has nothing to stop"
    next(b for b in at.button if b.label.startswith("Resume")).click().run()
    assert not at.exception, at.exception
    assert store.run(run.id).status.value == "pending"
    next(b for b in at.button if b.label == "Stop generating").click().run()
    assert (
        store.run(run.id).status.value == "stopped" and store.run(run.id).stopped_reason == "stopped by ana"
    )
    assert [r["skipped"] for r in work_the_queue(store.url)] == [True]
    next(b for b in at.button if b.label.startswith("Resume")).click().run()
    work_the_queue(store.url)
    at.run()
    assert progress(store, store.run(run.id)) == (4, 4) and store.run(run.id).status.value == "finished"
    assert {m.label: m.value for m in at.metric}["Conversations"] == "4"
    assert not any(b.label.startswith("Resume") for b in at.button)


def test_failed_conversations_are_listed_with_their_reason(store):
    outcome = generate_conversations(store, PROJECT, specs="all", per_spec=1, turns=3, dense=False)
    with store.unit(outcome.run.id, "spec-gone/000") as unit:
        unit.fail("no valid output after 3 attempt(s): turns: field required")
    at = open_page("pages/conversations.py", "ana", timeout=120)
    assert any(
        "1 conversation(s) of the latest run could not be generated" in str(w.value) for w in at.warning
    )
    errors = at.dataframe[1].value
    assert list(errors["error"]) == ["no valid output after 3 attempt(s): turns: field required"]


def test_the_generate_panel_is_drawn_only_while_open(store):
    """Issue 28: closed, the panel's form, runs and notes cost the browser nothing; opened, all are there."""
    generate_conversations(store, PROJECT, specs="all", per_spec=1, turns=3, dense=False)
    at = open_page("pages/conversations.py", "ana", timeout=120)
    assert next(e.label for e in at.expander) == "Generate"
    assert not any(b.label == "Generate" for b in at.button), "a finished run leaves the panel closed"
    at.session_state["conversations_generate"] = True  # the user opens it
    at.run()
    assert not at.exception, at.exception
    assert any(b.label == "Generate" for b in at.button)
    assert "started" in at.dataframe[0].value.columns, "the latest runs are listed"
