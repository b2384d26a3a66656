"""Tool cases for tools without return schemas (issue 26, the held-out check): their results are the
records the project's tables hold, so the situations that misread or misreport a result are produced, and
every call stays valid."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import jsonschema

from evalcore.generators.tool_case.job import generate_toolcases, project_tools
from evalcore.generators.tool_case.records import GENERATOR
from evalcore.generators.tool_case.values import column_values, other_value, result_for
from evalcore.inputs import import_project
from evalcore.inputs.tool_values import returns_from_tables
from evalcore.items.store_ops import list_conversations
from evalcore.models import Tool
from evalcore.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from people_policy_project import write_project


def test_tools_without_return_schemas_answer_with_table_records(sqlite_store: Store, monkeypatch, tmp_path):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, write_project(tmp_path / "desk")).project_id
    tools = {t.name: t for t in project_tools(sqlite_store, pid)}
    assert "status" in tools["get_loan_details"].returns["properties"]
    assert tools["transfer_to_librarian"].returns is None  # no table holds a summary
    outcome = generate_toolcases(sqlite_store, pid, per_situation=1, seed=0)
    produced = {u["situation"] for u in outcome.run.params["units"]}
    # these need a result field; without the tables' records they were skipped
    assert {"bad_parse_silent", "hallucination_with_access", "partial_tool_answer"} <= produced
    raw = {t.name: t for t in sqlite_store.tools(pid)}
    for view in list_conversations(sqlite_store, pid, generator=GENERATOR):
        turns = view.conversation.turns
        for i, call in enumerate(turns):
            if call.role != "tool_call":
                continue
            errors = list(
                jsonschema.Draft202012Validator(raw[call.tool_name].parameters).iter_errors(call.arguments)
            )
            # an invalid call is one its situation makes on purpose, and the tool rejects it
            assert not errors or '"error"' in turns[i + 1].content, (call.tool_name, call.arguments)
            for text in (call.arguments or {}).values():
                assert not (isinstance(text, str) and text.upper().startswith(("THOUGHT-", "EXPRESSION-")))


def test_a_number_parameter_never_takes_a_blank_or_a_text_cell():
    tables = (
        (
            "cards",
            [{"bags": "0", "amount": ""}, {"bags": "2", "amount": "50"}, {"bags": "x", "amount": "n/a"}],
        ),
    )
    assert column_values("amount", {"type": "number"}, tables) == ["50"]  # not the blank of a credit card
    other = other_value("bags", {"type": "integer"}, 2, random.Random(0), tables)
    assert other == 0 and isinstance(other, int)  # '0' from the table, as the integer the schema wants


def test_a_result_is_the_row_its_arguments_key_with_codes_kept_as_strings():
    users = [
        {"user_id": "U1", "name": "Ana Ruiz", "zip": "02134"},
        {"user_id": "U2", "name": "Bo Li", "zip": "10001"},
    ]
    # an order shares the user and the zip with the call, and names more result fields: still not the user
    orders = [{"order_id": "O1", "user_id": "U2", "zip": "10001", "status": "pending", "name": "gift"}]
    tables = (("users", users), ("orders", orders))
    params = {"type": "object", "properties": {"user_id": {"type": "string"}, "zip": {"type": "string"}}}
    params["required"] = ["user_id", "zip"]
    tool = Tool(name="modify_user_zip", description="", parameters=params)
    tool = tool.model_copy(update={"returns": returns_from_tables(params, tables)})
    out = result_for(tool, {"user_id": "U2", "zip": "10001"}, random.Random(0), tables)
    assert out["name"] == "Bo Li" and out["zip"] == "10001"
