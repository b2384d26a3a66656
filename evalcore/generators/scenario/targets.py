"""The targets a scenario can run against (seed 003: assertions read "the tracker event history"): those
that report events, and the domain a target publishes, against which a scenario is validated before it
runs (slots and flows it does not define are problems)."""

from __future__ import annotations

from evalcore.llm.client import ModelClient
from evalcore.models import Target, TargetKind
from evalcore.store import Store
from evalcore.targets import build_adapter, get_target, list_targets
from evalcore.targets.domain import Domain
from evalcore.targets.sessions import EventTarget

EVENT_KINDS = (TargetKind.rasa, TargetKind.http_events, TargetKind.demo_flows)  # see targets/sessions


def event_targets(store: Store, project_id: str) -> list[Target]:
    """The project's targets that report events, in the order `list_targets` gives them."""
    return [t for t in list_targets(store, project_id) if t.kind in EVENT_KINDS]


def target_domain(store: Store, project_id: str, name: str) -> Domain | None:
    """The domain the target `name` publishes (None when it publishes none or reports no events)."""
    target = get_target(store, project_id, name)
    if target.kind not in EVENT_KINDS:
        return None
    adapter = build_adapter(store, project_id, target, ModelClient(store, project_id))
    return adapter.domain() if isinstance(adapter, EventTarget) else None
