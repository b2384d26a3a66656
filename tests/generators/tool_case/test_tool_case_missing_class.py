"""Rubric discovery without a class (issue 26, item 4): a one-line error, never a validation traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.errors import UsageError
from evalcore.generators.tool_case.evaluation import labelled_conversations
from evalcore.generators.tool_case.job import generate_toolcases
from evalcore.generators.tool_case.scope import discover_rubrics
from evalcore.inputs import import_project
from evalcore.llm.client import ModelClient
from evalcore.store import Store

RETAIL = Path(__file__).resolve().parents[3] / "data" / "retail"


def test_scope_learns_pos_rubrics_from_the_positive_reasons_of_neg_conversations(sqlite_store, monkeypatch):
    # Section 3.2, step 2: SCOPE gives positive or negative reasons for each applicable area, so a NEG
    # conversation whose agent picked the right tool still yields a POS reason.
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, RETAIL).project_id
    generate_toolcases(sqlite_store, pid, situations=["bad_params_silent"], per_situation=2, pos_share=None)
    train = labelled_conversations(sqlite_store, pid, all_conversations=True)
    assert {c.metadata["labels"]["overall"] for c in train} == {"NEG"}
    made = discover_rubrics(ModelClient(sqlite_store, pid), train, "scope")
    assert made.of("POS") and made.of("NEG")


@pytest.mark.parametrize("method", ["spur"])
def test_discovery_on_neg_only_conversations_says_which_class_is_missing(
    sqlite_store: Store, monkeypatch, method
):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, RETAIL).project_id
    generate_toolcases(
        sqlite_store,
        pid,
        situations=["wrong_tool_silent", "bad_params_silent"],
        per_situation=2,
        pos_share=None,
    )
    train = labelled_conversations(sqlite_store, pid, all_conversations=True)
    with pytest.raises(UsageError) as raised:
        discover_rubrics(ModelClient(sqlite_store, pid), train, method)
    message = str(raised.value)
    assert (
        message.startswith("no POS")
        and "rubric could be learnt from 4 conversations (0 POS, 4 NEG)" in message
    )
    assert "\n" not in message
