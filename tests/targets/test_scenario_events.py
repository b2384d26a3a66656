"""Scenario events (seed 003): typed records stored per conversation turn as JSON, and read from a Rasa
tracker."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from evalcore.models import Turn
from evalcore.targets.events import (
    ActionExecuted,
    BotUttered,
    Button,
    ClarificationRequested,
    FlowCancelled,
    FlowCompleted,
    FlowInterrupted,
    FlowStarted,
    SlotSet,
    UserUttered,
    events_from_json,
    events_to_json,
    from_rasa_event,
    history,
    with_events,
)

ALL_KINDS = [
    UserUttered(text="where is my order?"),
    FlowStarted(flow_id="check_order_status"),
    FlowInterrupted(flow_id="verify_identity", step_id="ask_pin"),
    ActionExecuted(action_name="action_check_order_status"),
    SlotSet(name="order_id", value="ORD-9981"),
    BotUttered(
        text="Pick one",
        utter_name="utter_choose",
        buttons=[Button(title="Track", payload="/track")],
        source="ContextualResponseRephraser",
        metadata={"search_results": ["a", "b"]},
    ),
    ClarificationRequested(flow_ids=["track_shipment", "check_order_status"], flow_names=["Track", "Check"]),
    FlowCompleted(flow_id="check_order_status", step_id="END"),
    FlowCancelled(flow_id="verify_identity"),
]


def test_every_kind_goes_to_json_and_back():
    data = events_to_json(ALL_KINDS)
    assert json.loads(json.dumps(data)) == data
    assert data[1] == {"type": "flow_started", "flow_id": "check_order_status"}
    assert events_from_json(data) == ALL_KINDS
    with pytest.raises(ValidationError):
        events_from_json([{"type": "flow_exploded", "flow_id": "x"}])


def test_events_are_stored_per_turn_and_read_back_as_one_history():
    first = with_events(Turn(index=1, role="assistant", content="Pick one"), ALL_KINDS[1:4])
    second = with_events(Turn(index=3, role="assistant"), ALL_KINDS[4:])
    user = Turn(index=0, role="user", content="where is my order?")
    assert first.metadata["events"][0] == {"type": "flow_started", "flow_id": "check_order_status", "turn": 1}
    events = history([second, user, first])  # any order in, turn order out
    assert [e.turn for e in events] == [1, 1, 1, 3, 3, 3, 3, 3]
    assert [e.model_copy(update={"turn": None}) for e in events] == ALL_KINDS[1:]


def test_rasa_tracker_events():
    assert from_rasa_event({"event": "flow_started", "flow_id": "transfer"}, 2) == FlowStarted(
        flow_id="transfer", turn=2
    )
    clarification = {
        "event": "flow_started",
        "flow_id": "pattern_clarification",
        "metadata": {"clarification_ids": ["transfer", "check_balance"], "names": ["Transfer", "Balance"]},
    }
    assert from_rasa_event(clarification) == ClarificationRequested(
        flow_ids=["transfer", "check_balance"], flow_names=["Transfer", "Balance"]
    )
    bot = {
        "event": "bot",
        "text": "Your balance is $10.",
        "data": {"buttons": [{"title": "OK", "payload": "/ok", "extra": 1}]},
        "metadata": {
            "utter_action": "utter_balance",
            "utter_source": "IntentlessPolicy",
            "search_results": "x",
        },
    }
    assert from_rasa_event(bot) == BotUttered(
        text="Your balance is $10.",
        utter_name="utter_balance",
        buttons=[Button(title="OK", payload="/ok")],
        source="IntentlessPolicy",
        metadata={"search_results": "x"},
    )
    assert from_rasa_event({"event": "action", "name": "action_listen"}) == ActionExecuted(
        action_name="action_listen"
    )
    assert from_rasa_event({"event": "slot", "name": "amount", "value": 5}) == SlotSet(name="amount", value=5)
    assert from_rasa_event({"event": "flow_completed", "flow_id": "a", "step_id": "END"}) == FlowCompleted(
        flow_id="a", step_id="END"
    )
    assert from_rasa_event({"event": "flow_cancelled", "flow_id": "a"}) == FlowCancelled(flow_id="a")
    assert from_rasa_event({"event": "flow_interrupted", "flow_id": "a", "step_id": "s"}) == FlowInterrupted(
        flow_id="a", step_id="s"
    )
    assert from_rasa_event({"event": "user", "text": "hi"}) == UserUttered(text="hi")
    assert from_rasa_event({"event": "session_started"}) is None
