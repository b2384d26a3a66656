"""A policy written for people, that names no tool (issue 26, the held-out check): procedures are read
from its headings and sentences, results from its tables, and the conversations keep both."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import jsonschema
import pytest

from evalcore.generators.procedure.conversations import _customer_text
from evalcore.generators.procedure.job import generate
from evalcore.generators.procedure.policy import read_policies
from evalcore.generators.procedure.policy_words import heading_tools, identifying_tool, same_word
from evalcore.generators.procedure.utterances import agent_utterance
from evalcore.inputs import import_project
from evalcore.inputs.tool_values import from_tables, returns_from_tables, value_for, without_made_up
from evalcore.items.store_ops import list_conversations
from evalcore.models import Tool
from evalcore.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from people_policy_project import TABLES, write_project


@pytest.fixture
def desk(sqlite_store: Store, monkeypatch, tmp_path) -> tuple[Store, str]:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    return sqlite_store, import_project(sqlite_store, write_project(tmp_path / "desk")).project_id


def _rows(name: str) -> list[dict[str, str]]:
    lines = TABLES[name].strip().splitlines()
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","), strict=True)) for line in lines[1:]]


def _tool(name: str, *required: str) -> Tool:
    props = {p: {"type": "string"} for p in required}
    return Tool(
        name=name,
        description="",
        parameters={"type": "object", "properties": props, "required": list(required)},
    )


def test_words_of_one_verb_and_headings_meet_their_tools():
    assert same_word("cancel", "cancell") and same_word("modify", "modification")
    assert not same_word("use", "user") and not same_word("pay", "payment")
    modify = [_tool(n, "order_id") for n in ("modify_pending_order_items", "modify_pending_order_payment")]
    update = _tool("update_reservation_flights", "reservation_id")
    cancel = _tool("cancel_reservation", "reservation_id")
    tools = [*modify, update, cancel, _tool("modify_user_address", "user_id")]
    assert heading_tools("Modify pending order", tools) == modify  # the objects it names decide
    assert heading_tools("Modify payment", tools) == [modify[1]]
    assert heading_tools("Modify flight", tools) == [update]  # modify and update are one kind of action
    assert heading_tools("Cancel flight", tools) == [cancel]  # the only tool that cancels
    assert heading_tools("Domain basic", tools) == []
    by_email, by_id = _tool("find_user_id_by_email", "email"), _tool("get_user_details", "user_id")
    said = ["You have to authenticate the user by locating their user id via email."]
    assert identifying_tool(said, [by_id, by_email]) is by_email  # what the customer knows comes first
    assert identifying_tool(["The agent must first obtain the user id."], [by_id, by_email]) is by_id


def test_a_policy_naming_no_tool_gives_procedures_from_its_headings_and_sentences(desk):
    store, pid = desk
    reading = read_policies(store.documents(pid), store.tools(pid), store.procedures(pid))
    assert [p.name for p in reading.procedures] == ["policy_renew_active_loan", "policy_swap_loan_copies"]
    renew, swap = reading.procedures
    assert renew.apis == [
        "find_patron_id_by_email",
        "get_loan_details",
        "renew_active_loan",
        "transfer_to_librarian",
    ]
    lookup = next(s for s in renew.steps if s.api == "get_loan_details")
    # 'active' is the condition; 'overdue' is what the renewal does, and the status list allows nothing
    assert "status active" in lookup.outcomes["status_not_allowed"]
    assert "overdue" not in json.dumps(lookup.outcomes)
    assert any("Renew loan" in s or "renewed" in s for s in lookup.sources)
    swapping = next(s for s in swap.steps if s.api == "get_loan_details")
    assert "status returned" in swapping.outcomes["status_not_allowed"]
    # identifying the patron gives the id: only the loan and what the request needs are asked for
    asked = " ".join(s.text for s in renew.steps if s.kind == "message")
    assert "weeks" in asked and "patron id" not in asked


def test_results_without_a_schema_are_the_rows_the_tables_hold():
    tables = [(n.removesuffix(".csv"), _rows(n)) for n in TABLES]
    loan = returns_from_tables({"required": ["loan_id"]}, tables)
    assert set(loan["properties"]) == {"loan_id", "patron_id", "status", "fee", "loan_copies"}
    assert loan["properties"]["fee"] == {"type": "number"}
    assert loan["properties"]["loan_copies"]["items"]["required"] == ["copy_id"]
    patron = returns_from_tables({"required": ["email"]}, tables)
    assert patron["properties"]["zip"] == {"type": "string"}  # '02134' is a code, not a number
    assert "loans" not in patron["properties"]  # found by e-mail, not by its key: no lists under it
    assert returns_from_tables({"required": ["summary"]}, tables) is None


def test_conversations_keep_the_tables_the_status_and_the_same_title(desk):
    store, pid = desk
    generate(store, pid, paths=12, seed=0)
    tools = {t.name: t for t in store.tools(pid)}
    status = {r["loan_id"]: r["status"] for r in _rows("loans.csv")}
    title = {r["copy_id"]: r["title_id"] for r in _rows("copies.csv")}
    emails = {r["email"] for r in _rows("patrons.csv")}
    swapped = found = 0
    for view in list_conversations(store, pid, generator="procedure"):
        turns = view.conversation.turns
        for i, call in enumerate(turns):
            if call.role != "tool_call":
                continue
            args, output = call.arguments or {}, json.loads(turns[i + 1].content)
            jsonschema.validate(args, tools[call.tool_name].parameters)
            if call.tool_name == "find_patron_id_by_email":
                assert (args["email"] in emails) == (output["result"] == "found")
            if call.tool_name == "get_loan_details" and output["result"] != "not_found":
                found += 1
                assert output["status"] == status[args["loan_id"]]  # the row, not a draw
            if call.tool_name == "get_loan_details" and output["result"] == "not_found":
                assert args["loan_id"] not in status  # a loan number that does not exist
            if call.tool_name == "swap_loan_copies":
                swapped += 1
                old, new = args["copy_ids"][0], args["new_copy_ids"][0]
                assert old != new and title[old] == title[new]  # another copy of the same title
                assert status[args["loan_id"]] == "returned"
    assert found and swapped


def test_what_the_agent_and_the_customer_say_is_said_not_instructed():
    assert agent_utterance("Say that nothing was changed and end the conversation.") == "Nothing was changed."
    said = agent_utterance("Ask whether there is anything else, then close the conversation.")
    assert "close" not in said and said.endswith("?")
    assert agent_utterance("The order is yours: go on.") == "The order is yours."
    assert _customer_text("Customer's case: the customer declines or does not confirm", "x", {}).startswith(
        "No"
    )
    assert _customer_text("Customer's case: the customer has a receipt", "x", {}).endswith(
        "I have a receipt."
    )
    example = {"type": "string", "description": "The expression, such as '2 + 2'."}
    assert value_for("expression", example, random.Random(0)) == "2 + 2"
    assert value_for("thought", {"type": "string"}, random.Random(0), "renew a loan") == (
        "Customer wants to renew a loan."
    )


def test_a_result_field_nothing_real_filled_is_left_out_or_issued():
    returns = {"required": ["result", "ticket_id"]}
    output = {
        "result": "booked",
        "ticket_id": "TICKET-ID-699",
        "pickup_from": "PICKUP-FROM-289",
        "store": "RC-01",
    }
    kept = without_made_up(output, returns, random.Random(0))
    assert "pickup_from" not in kept and kept["store"] == "RC-01" and kept["result"] == "booked"
    assert kept["ticket_id"].startswith("T-") and kept["ticket_id"][2:].isdigit()


def test_a_value_drawn_from_the_tables_agrees_with_what_was_given():
    tables = [
        ("reservations", [{"reservation_id": "R1", "user_id": "U1", "cabin": "economy"},
                          {"reservation_id": "R2", "user_id": "U2", "cabin": "business"}]),
        ("payments", [{"reservation_id": f"R{k % 2 + 1}", "payment_id": f"G{k}"} for k in range(9)]),
        ("passengers", [{"user_id": "U1", "first_name": "Ana", "last_name": "Ruiz"},
                        {"user_id": "U2", "first_name": "Bo", "last_name": "Li"}]),
    ]  # fmt: skip
    fields = ["reservation_id", "cabin", "payment_id"]
    for seed in range(10):  # the customer's own reservation, not one a busier table names more often
        drawn = from_tables(
            "reservation_id", {"type": "string"}, tables, random.Random(seed), {"user_id": "U2"}, fields
        )
        assert drawn == "R2"
    person = {
        "type": "object",
        "properties": {"first_name": {"type": "string"}, "last_name": {"type": "string"}},
    }
    listed = {"type": "array", "items": {**person, "required": ["first_name", "last_name"]}}
    assert from_tables("passengers", listed, tables, random.Random(0), {"user_id": "U2"}) == [
        {"first_name": "Bo", "last_name": "Li"}
    ]
    assert value_for("first_name", {"type": "string"}, random.Random(0)).count(" ") == 0
