"""Procedures read from a project's policies (issue 26, item 1), offline on data/retail and data/sample."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from evalcore.generators.procedure.job import generate, list_graphs
from evalcore.generators.procedure.paths import has_branches
from evalcore.generators.procedure.policy import read_policies
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.models import RunStatus
from evalcore.store import Store

DATA = Path(__file__).resolve().parents[3] / "data"


@pytest.fixture
def retail(sqlite_store: Store, monkeypatch) -> tuple[Store, str]:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    return sqlite_store, import_project(sqlite_store, DATA / "retail").project_id


def test_the_retail_policy_gives_a_procedure_per_task_with_identification_status_and_confirmation(retail):
    store, pid = retail
    reading = read_policies(store.documents(pid), store.tools(pid), store.procedures(pid))
    names = sorted(p.name for p in reading.procedures)
    assert names == [
        "policy_cancel_order",
        "policy_change_order_items",
        "policy_change_shipping_address",
        "policy_exchange_items",
        "policy_return_items",
        "policy_track_shipment",
    ]
    cancel = next(p for p in reading.procedures if p.name == "policy_cancel_order")
    assert cancel.apis == ["find_customer_by_email", "get_order", "cancel_order", "transfer_to_staff"]
    lookup = cancel.steps[3]
    assert lookup.api == "get_order" and "pending" in lookup.outcomes["status_not_allowed"]
    assert any("02_order_states.md" in s and "cancel_order" in s for s in lookup.sources)
    assert any("explicit yes" in s.text for s in cancel.steps)
    # tracking changes nothing: no confirmation is asked for it
    track = next(p for p in reading.procedures if p.name == "policy_track_shipment")
    assert not any("explicit yes" in s.text for s in track.steps)
    assert reading.warnings == []


def test_retail_generation_branches_and_calls_only_valid_arguments_never_twice(retail):
    store, pid = retail
    outcome = generate(store, pid, paths=5, seed=0)
    assert outcome.run.status == RunStatus.finished and outcome.done == 6
    graphs = list_graphs(store, pid, outcome.run.id)
    assert all(has_branches(g.flowgraph) for g in graphs)
    tools = {t.name: t for t in store.tools(pid)}
    conversations = [v.conversation for v in list_conversations(store, pid, generator="procedure")]
    calls = [t for c in conversations for t in c.turns if t.role == "tool_call"]
    assert len({t.tool_name for t in calls}) >= 4
    for call in calls:  # the whole output: every call valid against its tool's schema
        jsonschema.validate(call.arguments or {}, tools[call.tool_name].parameters)
    for conversation in conversations:
        made = [(t.tool_name, t.arguments) for t in conversation.turns if t.role == "tool_call"]
        assert all(a != b for a, b in itertools.pairwise(made)), conversation.id


def test_a_policy_naming_a_missing_tool_is_a_located_warning(sqlite_store: Store, monkeypatch, tmp_path):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    project = tmp_path / "retail"
    shutil.copytree(DATA / "retail", project)
    with (project / "policies" / "06_tracking.md").open("a", encoding="utf-8") as handle:
        handle.write("\n- Offer a voucher with `issue_voucher` when a parcel is late.\n")
    pid = import_project(sqlite_store, project).project_id
    outcome = generate(sqlite_store, pid, paths=2, seed=0)
    wanted = (
        "policies/06_tracking.md § Tracking a shipment: the policy names tool 'issue_voucher', which the "
        "project lacks"
    )
    assert [w for w in outcome.run.warnings if w.endswith(wanted)], outcome.run.warnings


def test_contradicting_policy_steps_are_located_warnings_and_the_run_goes_on(
    sqlite_store: Store, monkeypatch, tmp_path
):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    project = tmp_path / "retail"
    shutil.copytree(DATA / "retail", project)
    with (project / "policies" / "05_refusals_handover.md").open("a", encoding="utf-8") as handle:
        handle.write(
            "\n## Late changes\n\n- Cancel an order with `cancel_order` if the status is shipped.\n"
            "- Never call `change_shipping_address`.\n"
        )
    pid = import_project(sqlite_store, project).project_id
    outcome = generate(sqlite_store, pid, paths=2, seed=0)
    warnings = outcome.run.warnings
    status = [w for w in warnings if "tool 'cancel_order' is allowed for status shipped" in w]
    assert status and "05_refusals_handover.md § " in status[0] and "Late changes" in status[0]
    assert "02_order_states.md" in status[0] and "(status pending)" in status[0]
    refusal = [w for w in warnings if "says never to call tool 'change_shipping_address'" in w]
    assert refusal and "Late changes" in refusal[0] and "02_order_states.md" in refusal[0]
    assert outcome.run.status.value == "finished"  # kept as warnings, never a crash
    assert {g.procedure for g in list_graphs(sqlite_store, pid, outcome.run.id)} >= {
        "policy_cancel_order", "policy_change_shipping_address"
    }  # fmt: skip


def test_hand_written_procedures_win_on_the_sample(sqlite_store: Store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, DATA / "sample").project_id
    reading = read_policies(
        sqlite_store.documents(pid), sqlite_store.tools(pid), sqlite_store.procedures(pid)
    )
    assert reading.procedures == []


def test_retail_conversations_keep_the_tables_and_the_status_the_branch_needs(retail):
    store, pid = retail
    generate(store, pid, paths=10, seed=0)
    tables = {d.path.rsplit("/", 1)[-1]: d.rows for d in store.documents(pid) if d.rows}
    status = {r["order_id"]: r["status"] for r in tables["orders.csv"]}
    owner = {r["order_id"]: r["customer_id"] for r in tables["orders.csv"]}
    items = {r["item_id"]: r["order_id"] for r in tables["order_items.csv"]}
    emails = {r["email"]: r["customer_id"] for r in tables["customers.csv"]}
    allowed = {"cancel_order": {"pending"}, "change_order_items": {"pending"}, "return_items": {"delivered"}}
    acted = 0
    for view in list_conversations(store, pid, generator="procedure"):
        turns = view.conversation.turns
        said = [t for t in turns if t.role == "tool_result"]
        for call in (t for t in turns if t.role == "tool_call"):
            args = call.arguments or {}
            if call.tool_name == "find_customer_by_email":
                answer = json.loads(turns[turns.index(call) + 1].content)["result"]
                # a customer the tool does not find gave an e-mail no customer has
                assert (args["email"] in emails) == (answer == "found"), view.conversation.id
            if call.tool_name in allowed:
                acted += 1
                assert status[args["order_id"]] in allowed[call.tool_name], view.conversation.id
                assert all(items[i] == args["order_id"] for i in args.get("item_ids", []))
        for result in said:
            output = json.loads(result.content)
            if result.tool_name == "get_order" and output["result"] == "found":
                assert output["status"] == status[output["order_id"]]
                assert output["customer_id"] == owner[output["order_id"]]
    assert acted >= 1


def test_a_tool_without_return_schema_or_table_is_a_located_warning(
    sqlite_store: Store, monkeypatch, tmp_path
):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    project = tmp_path / "retail"
    shutil.copytree(DATA / "retail", project)
    tool = json.loads((project / "tools" / "transfer_to_staff.json").read_text(encoding="utf-8"))
    del tool["returns"]
    (project / "tools" / "transfer_to_staff.json").write_text(json.dumps(tool), encoding="utf-8")
    pid = import_project(sqlite_store, project).project_id
    reading = read_policies(
        sqlite_store.documents(pid), sqlite_store.tools(pid), sqlite_store.procedures(pid)
    )
    assert reading.warnings == [
        "tool transfer_to_staff: no return schema and no table to build its results from; its results in "
        "these tests carry only the outcome"
    ]
    assert len(reading.procedures) == 6


def test_an_outcome_naming_its_own_tool_is_a_retry_only_when_it_says_so():
    from evalcore.generators.procedure.flowgraph import compile_flowgraph
    from evalcore.models import Procedure, ProcedureStep

    def calls(said: str) -> int:
        step = ProcedureStep(kind="api", api="get_order", outcomes={"found": "Go on.", "not_found": said})
        procedure = Procedure(name="p", intent="look up an order", steps=[step])
        return sum(n.node_type == "api" for n in compile_flowgraph(procedure, []).nodes)

    assert calls("Say what get_order answered; change nothing.") == 1
    assert calls("Ask for the number again, then call get_order again.") == 2
