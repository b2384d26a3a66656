"""A JSON endpoint that also reports events (target kind `http_events`; issue 19, item 3): the `http`
target's request template and reply path, plus a mapping from its response to our events.

Configuration, beside the `http` target's (`url`, `headers`, `request_template`, `response_path`):
- `events_path`: where the list of events is in the response ("events", "data.trace");
- `events_cumulative`: true when that list is the whole conversation's history (the new tail is taken);
- `type_field`: the key of an event that names its kind ("event", "type");
- `event_types`: their kind -> ours, e.g. {"FlowStart": "flow_started", "ToolCall": "action_executed"};
  ours are flow_started, flow_completed, flow_cancelled, flow_interrupted, action_executed, slot_set,
  bot_uttered, clarification, user_uttered; Rasa's tracker kinds (action, slot, bot, user, flow_*) are
  understood as they are, so a Rasa-like service needs no mapping;
- `event_fields`: our field -> their key (a dotted path), e.g. {"action_name": "tool", "name": "slot",
  "utter_name": "meta.template"}; unmapped fields are read under their own name.
The request template may also use `{{conversation_id}}` (the same for every turn of a conversation) and
`{{initial_slots}}` (the scenario's initial slots, a JSON object), so a service can keep state and take
the slots; slots it sets should come back as events, like any others.
"""

from __future__ import annotations

import json
from typing import Any, get_args

from pydantic import ValidationError

from evalcore.llm.retry import with_retries
from evalcore.llm.types import ModelCallError
from evalcore.models import Target
from evalcore.store.secrets import redact
from evalcore.targets.adapters import HTTPTarget, TargetCrash, fill_template, lookup
from evalcore.targets.config import HTTPEventsConfig
from evalcore.targets.events import Event, events_from_json, from_rasa_event
from evalcore.targets.sessions import EventSession, EventTarget

OUR_KINDS: dict[str, set[str]] = {
    cls.model_fields["type"].default: set(cls.model_fields) - {"type", "turn"}
    for cls in get_args(get_args(Event)[0])
}
RASA_KINDS = ("action", "slot", "bot", "user", "flow_started", "flow_completed", "flow_cancelled",
              "flow_interrupted")  # fmt: skip


def map_event(raw: Any, config: HTTPEventsConfig) -> Event | None:
    """Our event for one event of the response, or None for kinds the mapping does not name."""
    if not isinstance(raw, dict):
        return None
    theirs = raw.get(config.type_field)
    kind = config.event_types.get(str(theirs), str(theirs))
    if kind in OUR_KINDS and not (kind in RASA_KINDS and not config.event_types and not config.event_fields):
        data: dict[str, Any] = {"type": kind}
        for field in OUR_KINDS[kind]:
            try:
                data[field] = lookup(raw, config.event_fields.get(field, field))
            except (KeyError, IndexError, TypeError):
                continue
        try:
            return events_from_json([data])[0]
        except ValidationError as e:
            raise TargetCrash(
                "garbage", f"event {redact(json.dumps(raw))[:120]}: {e.errors()[0]['msg']}"
            ) from None
    if kind in RASA_KINDS:
        return from_rasa_event({**raw, "event": kind})
    return None


class HTTPEventsSession(EventSession):
    """One conversation with the endpoint: its id and messages so far."""

    def __init__(self, owner: HTTPEventsTarget, conversation_id: str, slots: dict[str, Any]) -> None:
        self.owner, self.target = owner, owner.target
        self.conversation_id, self.slots = conversation_id, slots
        self.messages: list[dict[str, str]] = []
        self.seen = 0
        self.setup_events: list[Event] = []

    def send(self, text: str) -> tuple[str, list[Event], dict[str, Any]]:
        """POST the filled template; the reply at `response_path`, the events at `events_path`."""
        config = self.owner.config
        self.messages.append({"role": "user", "content": text})
        values = {
            "messages": self.messages, "message": text, "history": self.messages[:-1],
            "system_prompt": config.system_prompt, "conversation_id": self.conversation_id,
            "initial_slots": self.slots,
        }  # fmt: skip
        body = json.dumps(fill_template(config.request_template, values)).encode()
        try:
            data, _ = with_retries(
                lambda: self.owner._call(body), self.owner.client.retry, self.target.name, "http"
            )
        except ModelCallError as e:
            kind = {"timeout": "timeout", "malformed response": "garbage"}.get(e.status, "error")
            raise TargetCrash(kind, str(e)) from None
        try:
            reply = lookup(data, config.response_path)
        except (KeyError, IndexError, TypeError):
            raise TargetCrash("garbage", f"no '{config.response_path}' in the response") from None
        try:
            raw = lookup(data, config.events_path)
        except (KeyError, IndexError, TypeError):
            raw = []
        if not isinstance(raw, list):
            raise TargetCrash("garbage", f"'{config.events_path}' is not a list of events")
        if config.events_cumulative:
            raw, self.seen = raw[self.seen :], len(raw)
        events = [e for e in (map_event(r, config) for r in raw) if e is not None]
        text = reply if isinstance(reply, str) else ""
        self.messages.append({"role": "assistant", "content": text})
        return text, events, {}


class HTTPEventsTarget(HTTPTarget, EventTarget):
    """The `http` target with events (see the module docstring)."""

    config: HTTPEventsConfig

    def __init__(self, target: Target, config: HTTPEventsConfig, client: Any) -> None:
        super().__init__(target, config, client)

    def open_session(self, conversation_id: str, initial_slots: dict[str, Any] | None = None) -> EventSession:
        """A new conversation (its id goes in every request as {{conversation_id}})."""
        return HTTPEventsSession(self, conversation_id, dict(initial_slots or {}))

    reply = EventTarget.reply
