"""A scenario's assertions and a target's events in words (issue 28): every assertion kind of the seed
said as a sentence with the team's own names kept, Rasa's event types and default actions in words."""

from __future__ import annotations

from evalcore.generators.scenario.format import parse_scenario
from evalcore.generators.scenario.records import ASSERTION_MODELS
from evalcore.generators.scenario.wording import assertion_at, assertion_words, event_words, events_words
from evalcore.targets.events import (
    ActionExecuted,
    BotUttered,
    Button,
    ClarificationRequested,
    FlowCancelled,
    FlowCompleted,
    FlowStarted,
    SlotSet,
    UserUttered,
)

SCENARIO = """\
scenario:
  name: Every kind of assertion
  simulation_context: A customer returns a helmet.
  goals:
    assertions:
      - flow_started: return_item
      - flow_started:
          flow_ids: [return_item, track_order]
          operator: all
      - flow_completed:
          flow_id: return_item
          flow_step_id: confirm
      - flow_cancelled:
          flow_id: track_order
      - action_executed: action_create_return
      - slot_was_set:
          - name: order_id
            value: ORD-1
          - name: reason
      - slot_was_not_set:
          - name: refund
      - bot_uttered:
          utter_name: utter_return_created
          text_matches: "\\\\b14 days\\\\b"
          buttons:
            - title: "Yes"
      - bot_did_not_utter:
          text_matches: "refund in cash"
      - pattern_clarification_contains:
          flow_ids: [return_item, warranty_claim]
          operator: any
      - generative_response_is_relevant:
          threshold: 0.7
      - generative_response_is_grounded:
          utter_name: utter_search_answer
          ground_truth: Returns are accepted within 30 days.
      - sequencing:
          - flow_started: return_item
          - action_executed: action_create_return
          - slot_was_set: order_id
"""

EXPECTED = [
    "Flow return_item started",
    "All of flows return_item, track_order started",
    "Flow return_item finished at step confirm",
    "Flow track_order was cancelled",
    "Ran action_create_return",
    'order_id set to "ORD-1"; reason set',
    "refund not set",
    "The assistant said response utter_return_created, text matching \\b14 days\\b, buttons Yes",
    "The assistant did not say text matching refund in cash",
    "The assistant asked which was meant, offering any of: return_item, warranty_claim",
    "The answer is relevant: score at least 0.7",
    'The answer (response utter_search_answer) is grounded: score at least 0.5, against "Returns are '
    'accepted within 30 days."',
    "In this order: flow return_item started, then action action_create_return, then order_id set",
]


def test_every_assertion_kind_is_said_in_words_with_the_teams_names_kept():
    problems: list = []
    scenario = parse_scenario(SCENARIO, "every_kind.yml", problems)
    assert scenario is not None, problems
    assert {a.kind for a in scenario.assertions} == set(ASSERTION_MODELS), "the test covers every kind"
    assert [assertion_words(a) for a in scenario.assertions] == EXPECTED
    assert assertion_at(scenario, 4) == "Ran action_create_return"
    assert assertion_at(scenario, 99) == "" and assertion_at(None, 0) == "", "a run outliving an edit"


def test_events_in_words_rasa_types_and_default_actions_said_the_domains_names_kept():
    events = [
        ActionExecuted(action_name="action_session_start", turn=0),
        ActionExecuted(action_name="action_listen", turn=0),
        UserUttered(text="I want   to return\na helmet", turn=1),
        FlowStarted(flow_id="return_item", turn=1),
        SlotSet(name="order_id", value="ORD-1", turn=1),
        ActionExecuted(action_name="utter_ask_reason", turn=1),
        BotUttered(text="Why?", utter_name="utter_ask_reason", buttons=[Button(title="Too small")], turn=1),
        BotUttered(text="x" * 100, source="EnterpriseSearchPolicy", turn=1),
        ClarificationRequested(flow_ids=["a", "b"], flow_names=["Return an item", "Track an order"], turn=1),
        ActionExecuted(action_name="action_create_return", turn=2),
        FlowCompleted(flow_id="return_item", step_id="confirm", turn=2),
        FlowCancelled(flow_id="track_order", turn=None),
    ]
    assert events_words(events).splitlines() == [
        "turn 0 · Started the session",
        "turn 0 · Waited for the user",
        'turn 1 · The user said "I want to return a helmet"',
        "turn 1 · Flow return_item started",
        'turn 1 · order_id set to "ORD-1"',
        "turn 1 · Chose response utter_ask_reason",
        'turn 1 · The assistant said "Why?" (response utter_ask_reason) with buttons Too small',
        f'turn 1 · The assistant said "{"x" * 80}…" (by EnterpriseSearchPolicy)',
        "turn 1 · The assistant asked which was meant: Return an item, Track an order",
        "turn 2 · Ran action_create_return",
        "turn 2 · Flow return_item finished at step confirm",
        "Flow track_order was cancelled",
    ]
    assert event_words(events[4], turn=False) == 'order_id set to "ORD-1"', "under its own turn"
