"""The events a target reports while it talks, on which scenario assertions are checked (seed 003,
"goals.assertions": "Deterministic, binary checks run against the conversation's full event history").

The kinds are those the seed's assertions and sequencing steps read: FlowStarted, FlowCompleted,
FlowCancelled, FlowInterrupted (each with the step id where it happened), ActionExecuted, SlotSet,
BotUttered (text, response name, buttons, the source that produced it and the rest of its metadata),
ClarificationRequested (the flows a clarification suggested) and UserUttered (the user message that a
generative response answers). Events are stored per conversation turn, as JSON in the turn's metadata
under `events`, so a conversation's history is the concatenation of its turns' events.

`from_rasa_event` reads one event of a Rasa tracker (`GET /conversations/{id}/tracker`), where a
clarification is a FlowStarted of `pattern_clarification` whose metadata names the suggested flows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal

from pydantic import Field, JsonValue, TypeAdapter

from evalcore.models import Turn
from evalcore.models.common import Record

EVENTS_KEY = "events"  # where a turn's events live in Turn.metadata
CLARIFICATION_FLOW = "pattern_clarification"  # Rasa starts this flow to ask the user to choose a flow


class FlowStarted(Record):
    """A flow was started."""

    type: Literal["flow_started"] = "flow_started"
    flow_id: str = Field(description="Id of the flow.")
    turn: int | None = Field(default=None, description="Index of the conversation turn it belongs to.")


class FlowCompleted(Record):
    """A flow reached its end."""

    type: Literal["flow_completed"] = "flow_completed"
    flow_id: str = Field(description="Id of the flow.")
    step_id: str | None = Field(default=None, description="Id of the step the flow completed at.")
    turn: int | None = Field(default=None, description="Index of the conversation turn it belongs to.")


class FlowCancelled(Record):
    """A flow was cancelled before its end."""

    type: Literal["flow_cancelled"] = "flow_cancelled"
    flow_id: str = Field(description="Id of the flow.")
    step_id: str | None = Field(default=None, description="Id of the step the flow was cancelled at.")
    turn: int | None = Field(default=None, description="Index of the conversation turn it belongs to.")


class FlowInterrupted(Record):
    """A flow was put aside because another one started (it may resume later)."""

    type: Literal["flow_interrupted"] = "flow_interrupted"
    flow_id: str = Field(description="Id of the flow.")
    step_id: str | None = Field(default=None, description="Id of the step the flow was interrupted at.")
    turn: int | None = Field(default=None, description="Index of the conversation turn it belongs to.")


class ActionExecuted(Record):
    """An action (custom action, response action or built-in) ran."""

    type: Literal["action_executed"] = "action_executed"
    action_name: str = Field(description="Name of the action.")
    turn: int | None = Field(default=None, description="Index of the conversation turn it belongs to.")


class SlotSet(Record):
    """A slot took a value (None when it was reset)."""

    type: Literal["slot_set"] = "slot_set"
    name: str = Field(description="Name of the slot.")
    value: JsonValue = Field(default=None, description="The value it took.")
    turn: int | None = Field(default=None, description="Index of the conversation turn it belongs to.")


class Button(Record):
    """A button shown with a bot message."""

    title: str = Field(description="Text on the button.")
    payload: str | None = Field(default=None, description="What pressing it sends.")


class BotUttered(Record):
    """The assistant sent a message."""

    type: Literal["bot_uttered"] = "bot_uttered"
    text: str = Field(default="", description="Text of the message.")
    utter_name: str | None = Field(
        default=None, description="Name of the response it came from (Rasa's metadata `utter_action`)."
    )
    buttons: list[Button] = Field(default_factory=list, description="Buttons shown with it.")
    source: str | None = Field(
        default=None,
        description="What produced it (Rasa's metadata `utter_source`, e.g. EnterpriseSearchPolicy).",
    )
    metadata: dict[str, JsonValue] = Field(
        default_factory=dict, description="Other metadata, e.g. search_results or domain_ground_truth."
    )
    turn: int | None = Field(default=None, description="Index of the conversation turn it belongs to.")


class ClarificationRequested(Record):
    """The assistant asked the user to choose between flows."""

    type: Literal["clarification"] = "clarification"
    flow_ids: list[str] = Field(default_factory=list, description="Ids of the suggested flows.")
    flow_names: list[str] = Field(default_factory=list, description="Names of the suggested flows.")
    turn: int | None = Field(default=None, description="Index of the conversation turn it belongs to.")


class UserUttered(Record):
    """The user sent a message."""

    type: Literal["user_uttered"] = "user_uttered"
    text: str = Field(default="", description="Text of the message.")
    turn: int | None = Field(default=None, description="Index of the conversation turn it belongs to.")


Event = Annotated[
    FlowStarted
    | FlowCompleted
    | FlowCancelled
    | FlowInterrupted
    | ActionExecuted
    | SlotSet
    | BotUttered
    | ClarificationRequested
    | UserUttered,
    Field(discriminator="type"),
]
_EVENTS = TypeAdapter(list[Event])


def events_from_json(data: Sequence[dict[str, Any]]) -> list[Event]:
    """Events from their JSON form (raises pydantic.ValidationError on an unknown type or bad field)."""
    return _EVENTS.validate_python(list(data))


def events_to_json(events: Iterable[Event]) -> list[dict[str, Any]]:
    """The JSON form of events, as stored in a turn's metadata."""
    return _EVENTS.dump_python(list(events), mode="json", exclude_none=True)


def with_events(turn: Turn, events: Iterable[Event]) -> Turn:
    """A copy of `turn` holding `events` (each stamped with the turn's index) in its metadata."""
    stamped = [event.model_copy(update={"turn": turn.index}) for event in events]
    return turn.model_copy(update={"metadata": {**turn.metadata, EVENTS_KEY: events_to_json(stamped)}})


def history(turns: Iterable[Turn]) -> list[Event]:
    """A conversation's full event history: its turns' events in turn order."""
    out: list[Event] = []
    for turn in sorted(turns, key=lambda t: t.index):
        out += events_from_json(turn.metadata.get(EVENTS_KEY) or [])
    return out


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _button(raw: dict[str, Any]) -> Button:
    payload = raw.get("payload")
    return Button(title=str(raw.get("title") or ""), payload=None if payload is None else str(payload))


def from_rasa_event(raw: dict[str, Any], turn: int | None = None) -> Event | None:
    """Our event for one Rasa tracker event, or None for kinds no assertion reads (session_started,
    action_execution_rejected, stack updates, ...). A FlowStarted of `pattern_clarification` becomes a
    ClarificationRequested with the flows it suggested (metadata `clarification_ids` and `names`)."""
    kind = raw.get("event")
    metadata = raw.get("metadata") or {}
    match kind:
        case "flow_started" if raw.get("flow_id") == CLARIFICATION_FLOW:
            return ClarificationRequested(
                flow_ids=[str(f) for f in metadata.get("clarification_ids") or []],
                flow_names=[str(n) for n in metadata.get("names") or []],
                turn=turn,
            )
        case "flow_started":
            return FlowStarted(flow_id=str(raw.get("flow_id")), turn=turn)
        case "flow_completed":
            return FlowCompleted(flow_id=str(raw.get("flow_id")), step_id=raw.get("step_id"), turn=turn)
        case "flow_cancelled":
            return FlowCancelled(flow_id=str(raw.get("flow_id")), step_id=raw.get("step_id"), turn=turn)
        case "flow_interrupted":
            return FlowInterrupted(flow_id=str(raw.get("flow_id")), step_id=raw.get("step_id"), turn=turn)
        case "action":
            return ActionExecuted(action_name=str(raw.get("name")), turn=turn)
        case "slot":
            return SlotSet(name=str(raw.get("name")), value=raw.get("value"), turn=turn)
        case "user":
            return UserUttered(text=raw.get("text") or "", turn=turn)
        case "bot":
            data = raw.get("data") or {}
            rest = {k: v for k, v in metadata.items() if k not in ("utter_action", "utter_source")}
            return BotUttered(
                text=raw.get("text") or "",
                utter_name=_text_or_none(metadata.get("utter_action")),
                buttons=[_button(b) for b in data.get("buttons") or [] if isinstance(b, dict)],
                source=_text_or_none(metadata.get("utter_source")),
                metadata=rest,
                turn=turn,
            )
    return None
