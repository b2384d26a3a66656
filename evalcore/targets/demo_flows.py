"""The built-in flow assistant (target kind `demo_flows`, built in as `demo-flows`): the project's
procedures as flows, run by `flow_engine`, offline and instant, reporting Rasa's events as a Rasa
assistant's tracker would (converted with `events.from_rasa_event`), so scenarios run with no assistant
of one's own (issue 19, item 3).

Slots, actions and responses are real names from the procedures and tools (`order_id`,
`action_lookup_order`, `utter_lookup_order_found`, ...); `domain()` publishes them, so a scenario naming
a slot or flow the assistant lacks is refused before it runs. Like a real assistant it has defects,
seeded: by default each kind fires at `defect_rate` (3%) of its opportunities; `inject` turns kinds on
at every opportunity, one kind per assertion kind (flow_engine.DEFECTS), so a benchmark can show each
defect caught by the assertion of its name.
"""

from __future__ import annotations

from typing import Any

from evalcore.models import Document, Procedure, Target, Tool
from evalcore.targets.config import DemoFlowsConfig
from evalcore.targets.domain import Domain
from evalcore.targets.events import Event, from_rasa_event
from evalcore.targets.flow_engine import Defects, FlowEngine, FlowSession
from evalcore.targets.sessions import USER_COMMANDS, EventSession, EventTarget


def converted(raw: list[dict[str, Any]]) -> list[Event]:
    """Our events for Rasa tracker events (kinds no assertion reads are left out)."""
    out = [from_rasa_event(r) for r in raw]
    return [e for e in out if e is not None and not (e.type == "user_uttered" and e.text in USER_COMMANDS)]


class DemoFlowsSession(EventSession):
    """One conversation with the flow assistant."""

    def __init__(self, target: DemoFlowsTarget, session: FlowSession, slots: dict[str, Any]) -> None:
        self.target = target.target
        self.session = session
        self.setup_events = converted(session.start() + session.set_slots(slots))

    def send(self, text: str) -> tuple[str, list[Event], dict[str, Any]]:
        """One user message through the engine."""
        raw = self.session.handle(text)
        said = [r["text"] for r in raw if r.get("event") == "bot" and r.get("text")]
        active = [a.flow.id for a in self.session.stack]
        return "\n".join(said), converted(raw), {"active_flows": active}


class DemoFlowsTarget(EventTarget):
    """The project's procedures as flows (see the module docstring)."""

    def __init__(
        self,
        target: Target,
        config: DemoFlowsConfig,
        procedures: list[Procedure],
        tools: list[Tool],
        documents: list[Document],
    ) -> None:
        self.target, self.config = target, config
        defects = Defects(config.defect_rate, tuple(config.inject), config.seed)
        self.engine = FlowEngine(procedures, tools, documents, defects)

    def open_session(self, conversation_id: str, initial_slots: dict[str, Any] | None = None) -> EventSession:
        """A new conversation: session start, then the slots."""
        return DemoFlowsSession(self, self.engine.session(conversation_id), dict(initial_slots or {}))

    def domain(self) -> Domain:
        """The flows' slots, flows, actions and responses."""
        return self.engine.domain
