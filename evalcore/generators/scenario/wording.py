"""A scenario's assertions and a target's events in words, for the Scenarios page (issue 28): what each
check asks and what the target reported, said as a sentence rather than as the YAML key or the Rasa event
type ('slot_was_set: {renter_email: ...}' -> 'renter_email set to "..."', 'action_executed
action_listen' -> 'Waited for the user').

The names the team gave its assistant (its flows, slots, actions and responses, `utter_*`) stay as they
are: they are the team's own words, written in its domain, and what it searches its files for. Rasa's
own default actions, which no team names, are said in words (`RASA_ACTIONS`). The YAML and Rasa's event
types stay in files and exports (`evalcore.reports.scenarios`), where they are the format.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from evalcore.generators.scenario.records import Assertion, ButtonCheck, Scenario, SlotCheck
from evalcore.targets.events import Event

# Rasa's default actions (rasa.com/docs, "Default Actions"; the CALM ones of Rasa Pro), as what they do.
RASA_ACTIONS: dict[str, str] = {
    "action_listen": "Waited for the user",
    "action_session_start": "Started the session",
    "action_restart": "Restarted the conversation",
    "action_default_fallback": "Fell back: did not understand",
    "action_deactivate_loop": "Stopped the form",
    "action_two_stage_fallback": "Asked the user to rephrase",
    "action_back": "Went back a step",
    "action_unlikely_intent": "Found the message unlikely",
    "action_extract_slots": "Read values from the message",
    "action_trigger_search": "Searched the documents",
    "action_trigger_chitchat": "Answered small talk",
    "action_cancel_flow": "Cancelled the flow",
    "action_clean_stack": "Cleared the finished flows",
    "action_correct_flow_slot": "Corrected a value",
    "action_clarify_flows": "Asked which flow was meant",
    "action_run_slot_rejections": "Checked the value given",
    "action_hangup": "Hung up",
}
TEXT_CHARS = 80  # characters of a message quoted in an event's line


def _quoted(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text[:TEXT_CHARS] + ("…" if len(text) > TEXT_CHARS else "")


def _action(name: str) -> str:
    """An action: Rasa's own in words, a response (Rasa runs each `utter_*` as an action) or the team's
    own action by its name."""
    if name in RASA_ACTIONS:
        return RASA_ACTIONS[name]
    return f"Chose response {name}" if name.startswith("utter_") else f"Ran {name}"


def event_words(event: Event, *, turn: bool = True) -> str:
    """One event the target reported, as a sentence ('turn 3 · order_id set to "ORD-1"'); `turn=False`
    leaves out its turn (under the turn it belongs to)."""
    where = f"turn {event.turn} · " if turn and event.turn is not None else ""
    at = f" at step {event.step_id}" if getattr(event, "step_id", None) else ""
    match event.type:
        case "flow_started":
            what = f"Flow {event.flow_id} started"
        case "flow_completed":
            what = f"Flow {event.flow_id} finished{at}"
        case "flow_cancelled":
            what = f"Flow {event.flow_id} was cancelled{at}"
        case "flow_interrupted":
            what = f"Flow {event.flow_id} was interrupted{at}"
        case "action_executed":
            what = _action(event.action_name)
        case "slot_set":
            what = f"{event.name} set to {_quoted(event.value)}"
        case "bot_uttered":
            only = (
                event.utter_name and f"response {event.utter_name}",
                event.source and f"by {event.source}",
            )
            named = ", ".join(x for x in only if x)
            what = f"The assistant said {_quoted(_cut(event.text))}" + (f" ({named})" if named else "")
            if event.buttons:
                what += " with buttons " + ", ".join(b.title for b in event.buttons)
        case "clarification":
            what = "The assistant asked which was meant: " + ", ".join(event.flow_names or event.flow_ids)
        case "user_uttered":
            what = f"The user said {_quoted(_cut(event.text))}"
        case _:
            what = "Another event"
    return where + what


def events_words(events: Sequence[Event], *, turn: bool = True) -> str:
    """Events in words, one per line."""
    return "\n".join(event_words(e, turn=turn) for e in events)


def _slots(checks: Sequence[SlotCheck], done: str) -> str:
    return "; ".join(
        f"{c.name} {done} to {_quoted(c.value)}" if c.has_value else f"{c.name} {done}" for c in checks
    )


def _said(utter_name: str | None, text: str | None, buttons: Sequence[ButtonCheck] | None) -> str:
    parts = [f"response {utter_name}" if utter_name else "", f"text matching {text}" if text else ""]
    if buttons:
        parts.append("buttons " + ", ".join(b.title for b in buttons))
    return ", ".join(p for p in parts if p) or "anything"


def _flows(flow_ids: Sequence[str], operator: str | None) -> str:
    if len(flow_ids) == 1:
        return f"Flow {flow_ids[0]}"
    return f"{'All' if operator == 'all' else 'Any'} of flows {', '.join(flow_ids)}"


_STEPS = {
    "flow_started": "flow {} started",
    "flow_completed": "flow {} finished",
    "flow_cancelled": "flow {} cancelled",
    "flow_interrupted": "flow {} interrupted",
    "action_executed": "action {}",
    "slot_was_set": "{} set",
}


def step_words(key: str, value: str) -> str:
    """A step of `sequencing` in words ('slot_was_set', 'order_id' -> 'order_id set')."""
    return _STEPS[key].format(value)


def assertion_words(assertion: Assertion) -> str:
    """What an assertion checks, as a sentence ('The assistant said text matching \\b500\\b', 'Flow
    return_item finished at step confirm', 'In this order: flow a started, then action b')."""
    a: Any = assertion  # one of the twelve kinds, told apart by `kind`
    at = f" at step {a.flow_step_id}" if getattr(a, "flow_step_id", None) else ""
    match a.kind:
        case "flow_started":
            return _flows([a.flow_id] if a.flow_id else a.flow_ids, a.operator) + " started"
        case "flow_completed":
            return f"Flow {a.flow_id} finished{at}"
        case "flow_cancelled":
            return f"Flow {a.flow_id} was cancelled{at}"
        case "action_executed":
            return _action(a.action_name)
        case "slot_was_set":
            return _slots(a.slots, "set")
        case "slot_was_not_set":
            return _slots(a.slots, "not set")
        case "bot_uttered":
            return "The assistant said " + _said(a.utter_name, a.text_matches, a.buttons)
        case "bot_did_not_utter":
            return "The assistant did not say " + _said(a.utter_name, a.text_matches, a.buttons)
        case "pattern_clarification_contains":
            offered = ", ".join(a.flow_names or a.flow_ids)
            return f"The assistant asked which was meant, offering {a.operator or 'any'} of: {offered}"
        case "generative_response_is_relevant" | "generative_response_is_grounded":
            what = "relevant" if a.kind.endswith("relevant") else "grounded"
            only = (a.utter_name and f"response {a.utter_name}", a.utter_source and f"from {a.utter_source}")
            which = ", ".join(x for x in only if x)
            truth = f", against {_quoted(_cut(a.ground_truth))}" if getattr(a, "ground_truth", None) else ""
            return (
                f"The answer{f' ({which})' if which else ''} is {what}: score at least {a.limit():g}{truth}"
            )
        case "sequencing":
            return "In this order: " + ", then ".join(step_words(s.key, s.value) for s in a.steps)
    return str(a.kind)


def assertion_at(scenario: Scenario | None, index: int) -> str:
    """The `index`-th assertion of a scenario in words ('' when the scenario or the assertion is not
    known: a run may outlive an edit of its scenario)."""
    if scenario is None or index >= len(scenario.assertions):
        return ""
    return assertion_words(scenario.assertions[index])
