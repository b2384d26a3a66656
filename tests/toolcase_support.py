"""Helpers for tests of tool cases: a conversation the offline judge must reject, made on purpose (the
generated ones all show their situation, so a test of rejection cannot wait for a flawed one)."""

from __future__ import annotations

from evalcore.generators.tool_case.catalog import catalog
from evalcore.generators.tool_case.records import GENERATOR
from evalcore.items.store_ops import list_conversations
from evalcore.store import Store


def mislabel(store: Store, project_id: str, situation: str = "bad_input_data", as_: str = "correct") -> str:
    """Give the first conversation of `situation` the labels and situation of `as_` (a new version), so
    what it shows contradicts what it claims; returns its id."""
    conversation = next(
        v.conversation
        for v in list_conversations(store, project_id, generator=GENERATOR)
        if v.conversation.metadata.get("situation") == situation
    )
    claimed = catalog()[as_]
    metadata = {**conversation.metadata, "situation": claimed.id, "labels": claimed.labels}
    body = conversation.model_copy(update={"metadata": metadata}).model_dump(mode="json")
    store.save_revision(conversation.id, body, "test", store.current(conversation.id).version)
    return conversation.id
