"""A scenario's verdict on a conversation (seed 003, goals): passes only if every assertion and every
criterion passes; unscored parts leave it without a verdict unless something failed."""

from __future__ import annotations

from scenario_examples import SEED_EXAMPLE

from evalcore.errors import Problem
from evalcore.generators.scenario.checks import Score
from evalcore.generators.scenario.format import parse_scenario
from evalcore.generators.scenario.verdict import combine, judge_conversation
from evalcore.llm import ModelClient
from evalcore.models import Turn
from evalcore.targets.events import (
    ActionExecuted,
    BotUttered,
    ClarificationRequested,
    FlowCancelled,
    FlowCompleted,
    FlowStarted,
    SlotSet,
    UserUttered,
    with_events,
)

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
PROJECT = "p1"

PROBLEMS: list[Problem] = []
SCENARIO = parse_scenario(SEED_EXAMPLE, "order_delay.yml", PROBLEMS)
REPLY = "Your order is delayed: the reason is a missed pickup. It ships tomorrow."


def conversation(reply: str = REPLY, verify: bool = True) -> list[Turn]:
    first = [
        SlotSet(name="authenticated", value=True), SlotSet(name="order_id", value="ORD-9981"),
        UserUttered(text="Where is my order?"),
        ClarificationRequested(flow_ids=["check_order_status", "track_shipment"]),
        FlowStarted(flow_id="verify_identity"),
        *([ActionExecuted(action_name="action_verify_account")] if verify else []),
        SlotSet(name="authenticated", value=True), FlowCompleted(flow_id="verify_identity"),
        FlowStarted(flow_id="check_order_status"), ActionExecuted(action_name="action_check_order_status"),
        BotUttered(text=reply, utter_name="utter_order_delayed"),
    ]  # fmt: skip
    second = [
        UserUttered(text="Why?"),
        BotUttered(text="A missed pickup.", source="utter_order_status_details",
                   metadata={"domain_ground_truth": "A missed pickup."}),
        FlowCompleted(flow_id="check_order_status"), FlowCancelled(flow_id="verify_identity"),
    ]  # fmt: skip
    return [
        Turn(index=0, role="user", content="Where is my order?"),
        with_events(Turn(index=1, role="assistant", content=reply), first),
        Turn(index=2, role="user", content="Why?"),
        with_events(Turn(index=3, role="assistant", content="A missed pickup."), second),
    ]


def scorer(value: float | None):
    return lambda request: None if value is None else Score(value, "fixed")


def test_combine():
    assert combine([True, True]) is True and combine([]) is True
    assert combine([True, None]) is None and combine([None, False]) is False


def test_the_seed_scenario_passes_only_when_every_assertion_and_criterion_passes(project, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    client = ModelClient(project, PROJECT)
    verdict = judge_conversation(client, SCENARIO, conversation(), scorer=scorer(0.9))
    assert verdict.passed is True, [o.message for o in verdict.assertions if not o.passed]
    assert len(verdict.assertions) == 12 and [c.passed for c in verdict.criteria] == [True, True]
    assert verdict.assertions[-1].events[0].turn == 1  # events keep the turn they were stored in

    unverified = judge_conversation(client, SCENARIO, conversation(verify=False), scorer=scorer(0.9))
    assert unverified.passed is False
    assert [o.kind for o in unverified.assertions if not o.passed] == ["sequencing"]

    vague = judge_conversation(client, SCENARIO, conversation(reply="Sorry about that."), scorer=scorer(0.9))
    assert vague.passed is False and [c.passed for c in vague.criteria] == [False, True]

    unscored = judge_conversation(client, SCENARIO, conversation(), scorer=scorer(None))
    assert unscored.passed is None
