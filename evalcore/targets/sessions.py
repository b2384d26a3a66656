"""Targets that report events (issue 19, item 3): the interface scenario runs talk to.

An `EventTarget` opens one `EventSession` per conversation: `open_session(conversation_id,
initial_slots)` starts the session and injects the slots (seed 003: "the evaluator sends a
/session_start message first so that any custom action_session_start logic runs against an empty
tracker, then injects the slot values on top"); the session's `setup_events` are what that produced.
The session is itself a TargetAdapter, so the simulator talks to it unchanged: each `reply(messages)`
sends the latest user message and returns the reply, its events (JSON, as stored per turn) in
`details[EVENTS_DETAIL]`. `domain()` is what the target defines (slots, flows ...), or None.

An EventTarget is also a plain TargetAdapter (`reply(messages)` for runs that play conversations): a
conversation it has seen continues its session; another is replayed on a new one.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from evalcore.llm.types import Message
from evalcore.models.common import content_hash
from evalcore.targets.adapters import TargetAdapter, TargetCrash, TargetReply
from evalcore.targets.domain import Domain
from evalcore.targets.events import Event, events_from_json, events_to_json

EVENTS_DETAIL = "events"  # where a reply's details carry the events it caused (their JSON form)
USER_COMMANDS = ("/session_start",)  # messages the evaluator sends, not the user: never a UserUttered


class EventSession(TargetAdapter):
    """One conversation with an event-reporting target."""

    setup_events: list[Event]

    def send(self, text: str) -> tuple[str, list[Event], dict[str, Any]]:
        """Send one user message: (the reply text, the events it caused, other details)."""
        raise NotImplementedError

    def reply(self, messages: list[Message]) -> TargetReply:
        """The reply to the latest user message, with its events in the details."""
        started = time.perf_counter()
        last = next((m.content for m in reversed(messages) if m.role == "user"), "")
        text, events, details = self.send(last)
        if not text.strip():
            raise TargetCrash("garbage", "the target sent no message")
        details = {**details, EVENTS_DETAIL: events_to_json(events)}
        return TargetReply(text, (time.perf_counter() - started) * 1000, details=details)


def reply_events(reply: TargetReply) -> list[Event]:
    """The events a reply carries (none for a target that reports none)."""
    return events_from_json((reply.details or {}).get(EVENTS_DETAIL) or [])


class EventTarget(TargetAdapter):
    """A target that reports events: sessions with slot injection, and its domain."""

    def open_session(self, conversation_id: str, initial_slots: dict[str, Any] | None = None) -> EventSession:
        """Start a conversation (session start, then the slots injected)."""
        raise NotImplementedError

    def domain(self) -> Domain | None:
        """The slots and flows the target defines, when it publishes them."""
        return None

    def reply(self, messages: list[Message]) -> TargetReply:
        """A plain reply: the session of the conversation so far, else a new one that replays it."""
        users = [m.content for m in messages if m.role == "user"]
        if not users:
            raise TargetCrash("error", "no user message to answer")
        lock = self.__dict__.setdefault("_plain_lock", threading.Lock())
        sessions: dict[str, EventSession] = self.__dict__.setdefault("_plain_sessions", {})
        with lock:
            session = sessions.pop(content_hash(users[:-1]), None)
        if session is None:
            session = self.open_session(f"plain-{content_hash(users)[:16]}")
            for earlier in users[:-1]:
                session.send(earlier)
        reply = session.reply(messages)
        with lock:
            sessions[content_hash(users)] = session
            while len(sessions) > 256:  # a bounded memory of conversations in play
                sessions.pop(next(iter(sessions)))
        return reply
