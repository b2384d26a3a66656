"""The third sample project (data/bank, a credit union's member support; issue 26, item 6): written after
the figures were tuned on data/retail, it checks that the policy reader and the generated conversations
hold on a policy of another domain (a money transfer is no hand-over; table numbers are numbers)."""

from __future__ import annotations

import itertools
from pathlib import Path

import jsonschema

from evalcore.generators.procedure.job import generate
from evalcore.generators.procedure.policy import read_policies
from evalcore.generators.tool_case.job import generate_toolcases
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.store import Store

BANK = Path(__file__).resolve().parents[3] / "data" / "bank"


def test_the_bank_policy_gives_a_procedure_per_action_and_keeps_the_officer_for_hand_over(
    sqlite_store: Store, monkeypatch
):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, BANK).project_id
    reading = read_policies(
        sqlite_store.documents(pid), sqlite_store.tools(pid), sqlite_store.procedures(pid)
    )
    assert sorted(p.name for p in reading.procedures) == [
        "policy_dispute_transaction", "policy_lock_card", "policy_report_card_lost",
        "policy_transfer_between_accounts", "policy_unlock_card", "policy_update_mailing_address",
    ]  # fmt: skip
    unlock = next(p for p in reading.procedures if p.name == "policy_unlock_card")
    assert unlock.apis == ["find_member_by_email", "get_card", "unlock_card", "escalate_to_officer"]
    assert "locked" in unlock.steps[3].outcomes["status_not_allowed"]
    assert reading.warnings == []
    # the transfer's `from_account_id` is get_account's `account_id`: the account is looked up first
    transfer = next(p for p in reading.procedures if p.name == "policy_transfer_between_accounts")
    assert transfer.apis[:3] == ["find_member_by_email", "get_account", "transfer_between_accounts"]
    assert "open" in transfer.steps[3].outcomes["status_not_allowed"]


def test_every_bank_tool_call_is_valid_and_none_repeats(sqlite_store: Store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, BANK).project_id
    generate(sqlite_store, pid, paths=30, seed=0)
    generate_toolcases(sqlite_store, pid, per_situation=1, situations=["correct", "wrong_tool_silent"])
    tools = {t.name: t for t in sqlite_store.tools(pid)}
    conversations = [v.conversation for v in list_conversations(sqlite_store, pid)]
    calls = [t for c in conversations for t in c.turns if t.role == "tool_call"]
    assert len({t.tool_name for t in calls}) >= 6
    for call in calls:  # amount_usd from the accounts table is a number, not '54.72'
        jsonschema.validate(call.arguments or {}, tools[call.tool_name].parameters)
    accounts = {r["account_id"]: r for d in sqlite_store.documents(pid) for r in d.rows if "balance_usd" in r}
    for conversation in conversations:
        calls = [t for t in conversation.turns if t.role == "tool_call"]
        looked = [t.arguments["account_id"] for t in calls if t.tool_name == "get_account"]
        transfers = [t for t in calls if t.tool_name == "transfer_between_accounts"]
        for t in transfers if conversation.generator == "procedure" else []:
            # the money leaves the account looked up (open, as the path's branch needs), not another one
            assert t.arguments["from_account_id"] == looked[-1] and accounts[looked[-1]]["status"] == "open"
            assert t.arguments["to_account_id"] != t.arguments["from_account_id"]
        if conversation.generator == "procedure":
            made = [(t.tool_name, t.arguments) for t in conversation.turns if t.role == "tool_call"]
            assert all(a != b for a, b in itertools.pairwise(made)), conversation.id
