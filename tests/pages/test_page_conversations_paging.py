"""The Conversations page sends a page of rows at a time (issue 28): with more conversations than a page
holds, the table and the conversation picker hold one page's rows, and the next page the rest."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.generators.doc_qa.job import generate_conversations
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.store_ops import add_human_spec
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "ridgeline_support"
PAGE_ROWS = 100  # pages/conversations.py


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    url = f"sqlite:///{tmp_path / 'paging.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    import_project(store, ROOT / "data" / "sample")
    draft = SpecDraft(scenario="Stock of an item at the Westbrook Station store", given="a customer",
                      when="the customer asks", then="the assistant answers from the documents",
                      category="product information", documents=["inventory"])  # fmt: skip
    add_human_spec(store, PROJECT, draft, "ana")
    generate_conversations(store, PROJECT, specs="all", per_spec=1, d=1, turns=2, dense=False)
    original = list_conversations(store, PROJECT)[0].conversation.model_dump(mode="json")
    with store.write() as conn:  # copies: 130 conversations without 130 generations
        for i in range(129):
            copy = {**original, "id": f"{original['id']}-copy{i:03d}"}
            store.add_item(PROJECT, "conversation", copy, "offline", item_id=copy["id"], generator="doc_qa",
                           spec_id=copy["spec_id"], conn=conn)  # fmt: skip
    return store


def test_the_table_and_the_picker_hold_one_page_of_rows(store):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/conversations.py").run()
    assert not at.exception, at.exception
    assert {m.label: m.value for m in at.metric}["Conversations"] == "130"
    assert len(at.dataframe[-1].value) == PAGE_ROWS
    picker = next(s for s in at.selectbox if s.label == "Open conversation")
    assert len(picker.options) == PAGE_ROWS
    assert any("Rows 1-100 of 130" in c.value for c in at.caption)

    next(n for n in at.number_input if n.label == "Page (of 2)").set_value(2).run()
    assert not at.exception, at.exception
    assert len(at.dataframe[-1].value) == 30
    assert len(next(s for s in at.selectbox if s.label == "Open conversation").options) == 30
    assert any("Rows 101-130 of 130" in c.value for c in at.caption)
