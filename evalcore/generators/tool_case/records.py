"""What a tool-case conversation is made of (seed 004, Section 2.2): the turns a model or a template
writes, and their mapping onto the one Conversation model (generator `tool_case`) with the intended
labels in its metadata, and those labels as people read them (`intended_labels`). `transcript` is the
text every judge and rubric step reads: turns only, never the labels or the world state.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from evalcore.models import Conversation, Provenance, Turn, TurnRole
from evalcore.models.wording import words

GENERATOR = "tool_case"
AGENT = {True: "appropriate", False: "inappropriate"}
USER = {True: "satisfied", False: "dissatisfied"}


class CaseTurn(BaseModel):
    """One turn of a synthesized tool-use conversation."""

    role: Literal["user", "assistant", "tool_call", "tool_result"] = Field(description="Who speaks.")
    content: str = Field(default="", description="Text; for tool_result the tool's raw output (JSON text).")
    tool_name: str | None = Field(default=None, description="Tool called or answering, for tool turns.")
    arguments: dict[str, Any] | None = Field(default=None, description="Arguments, for tool_call turns.")


class CaseConversation(BaseModel):
    """A conversation in which the situation happens."""

    turns: list[CaseTurn] = Field(description="Turns in order, with tool_call and tool_result turns.")
    world_state: dict[str, Any] | None = Field(
        default=None, description="What really happened when the tool output hides it, else null."
    )
    defect: str = Field(default="", description="One sentence: where in the turns the situation happens.")


def to_conversation(
    case: CaseConversation,
    conversation_id: str,
    situation: Any,
    group: str,
    provenance: Provenance,
    prerequisites: dict[str, list[str]] | None = None,
) -> Conversation:
    """The Conversation to store: turns in order, the intended labels and the situation in metadata, and
    the group's `prerequisites` (tool -> tools that must be called before it), which judges check."""
    turns = [
        Turn(index=i, role=TurnRole(t.role), content=t.content, tool_name=t.tool_name, arguments=t.arguments)
        for i, t in enumerate(case.turns)
    ]
    metadata = {
        "situation": situation.id,
        "situation_name": situation.name,
        "labels": situation.labels,
        "hard_negative": situation.hard_negative,
        "tool_group": group,
        "defect": case.defect,
        "world_state": case.world_state,
        "tool_prerequisites": prerequisites or {},
    }
    return Conversation(
        id=conversation_id, generator=GENERATOR, turns=turns, metadata=metadata, provenance=provenance
    )


def intended_labels(conversation: Conversation) -> str | None:
    """The situation and the four labels a tool-case conversation is meant to show, as one line for the
    people who confirm or reject them (None for a conversation of another generator)."""
    labels = conversation.metadata.get("labels")
    if conversation.generator != GENERATOR or not isinstance(labels, dict):
        return None
    name = conversation.metadata.get("situation_name") or conversation.metadata.get("situation")
    agent = AGENT.get(labels.get("agent_appropriate"), "?")
    user = USER.get(labels.get("user_satisfied"), "?")
    return (
        f"{name}: tool execution {words(labels.get('tool_execution')).lower()}, agent {agent}, user {user}, "
        f"overall {words(labels.get('overall')).lower()}"
    )


def transcript(turns: list[Turn] | list[CaseTurn]) -> str:
    """The conversation as the judges and rubric steps read it, one turn per line."""
    lines = []
    for turn in turns:
        role = turn.role.value if isinstance(turn.role, TurnRole) else turn.role
        if role == "tool_call":
            lines.append(
                f"TOOL_CALL {turn.tool_name}({json.dumps(turn.arguments or {}, ensure_ascii=False)})"
            )
        elif role == "tool_result":
            lines.append(f"TOOL_RESULT {turn.tool_name}: {turn.content}")
        else:
            lines.append(f"{role.upper()}: {turn.content}")
    return "\n".join(lines)
