"""Annotate names an unanswerable pair CANNOTANSWER, as Conversations and Reports do (issue 15, item 11),
and shows it in words, "Not in the documents" (issue 28): the offline doc-QA generator puts one such pair
in every conversation, its question typed SINGLE-DOC."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from evalcore.generators.doc_qa.job import generate_conversations
from evalcore.generators.doc_qa.schema import is_cannot_answer
from evalcore.inputs import import_project
from evalcore.items.jsonl import export_jsonl
from evalcore.review import open_item
from evalcore.specs.generation import generate_specs
from evalcore.specs.selecting import select_specs
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]


def test_an_unanswerable_pair_is_labelled_cannotanswer_on_both_turns(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    generate_specs(store, pid, m=5)
    select_specs(store, pid, 2)
    generate_conversations(store, pid, per_spec=1, d=2, turns=3)
    view = open_item(store, json.loads(next(iter(export_jsonl(store, pid, "conversation"))))["id"])
    answer = next(
        t for t in view.conversation.turns if t.role.value == "assistant" and is_cannot_answer(t.content)
    )
    question = answer.index - 1
    assert view.conversation.turns[question].query_type != "CANNOTANSWER", "the stored type is the question's"
    assert (view.query_label(question), view.query_label(answer.index)) == ("CANNOTANSWER", "CANNOTANSWER")
    assert view.query_label(view.judged_turns[-1]) == "SYNTHESIS"

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["user_name"] = "ann"
    at.run()
    at.query_params["item"] = view.conversation.id
    at.switch_page("pages/annotate.py").run()
    assert not at.exception, at.exception
    assert any(f"Turn {answer.index} · assistant · Not in the documents" in c.value for c in at.caption)
    assert not any("CANNOTANSWER" in c.value for c in at.caption), "the seed's term is in the tooltip only"
