"""Ragas testsets in, as `Testset.to_jsonl` (or `to_list` saved as JSON) writes them.

A single-turn row (`user_input` a text, `reference`, `reference_contexts`, `synthesizer_name`) becomes a
test: the user input is the user turn, the reference the expected reply. A multi-turn row (`user_input` a
list of human/ai/tool messages, `reference`, `reference_tool_calls`, `rubrics`) becomes a test as well:
its messages are the context, the first reference tool call (else the reference) the expected turn.
Ragas samples have no metadata field: our fields travel in an extra `evalcore` key of the row, which
Ragas' own loader ignores.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from evalcore.errors import Problem
from evalcore.inputs.formats.common import (
    OURS,
    Foreign,
    Mapped,
    Read,
    Said,
    Source,
    build,
    document_sources,
    finish,
    jsonl_sources,
    message_text,
    ours_of,
    validate,
)
from evalcore.models import TurnRole

NAME = "ragas"
KEPT_WHY = "Ragas' retrieval and synthesis fields, not played here"


class ToolCallIn(Foreign):
    """Ragas' `ToolCall`."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class MessageIn(Foreign):
    """A Ragas message: `HumanMessage`, `AIMessage` (with tool calls) or `ToolMessage`."""

    type: Literal["human", "ai", "tool"]
    content: Any = ""
    tool_calls: list[ToolCallIn] | None = None


class SingleTurnIn(Foreign):
    """A single-turn testset row."""

    user_input: str
    reference: str | None = None


class MultiTurnIn(Foreign):
    """A multi-turn testset row."""

    user_input: list[MessageIn]
    reference: str | None = None
    reference_tool_calls: list[ToolCallIn] | None = None


def _kept(row: Foreign, read: Read, *skip: str) -> dict[str, Any]:
    out = {}
    for key, value in row.model_dump(exclude_none=True, exclude={*skip, OURS}).items():
        out[key] = value
        read.keep(f"Ragas '{key}' fields", KEPT_WHY)
    return out


def _turns(messages: list[MessageIn]) -> list[Said]:
    turns = []
    for message in messages:
        text = message_text(message.content)
        if message.type == "human":
            turns.append(Said(TurnRole.user, text))
        elif message.type == "tool":
            turns.append(Said(TurnRole.tool_result, text))
        else:
            if text or not message.tool_calls:
                turns.append(Said(TurnRole.assistant, text))
            turns += [Said(TurnRole.tool_call, "", c.name, c.args) for c in message.tool_calls or []]
    return turns


def _multi(row: MultiTurnIn, read: Read, mine: tuple[str, ...]) -> Mapped:
    calls = row.reference_tool_calls or []
    expected = Said(TurnRole.assistant, row.reference or "")
    kept = _kept(row, read, "user_input", "reference", "reference_tool_calls", *mine)
    if calls:
        expected = Said(TurnRole.tool_call, "", calls[0].name, calls[0].args)
        if row.reference:
            kept["reference"] = row.reference
            read.keep("Ragas references beside a reference tool call", "a test expects one next turn")
        if calls[1:]:
            kept["reference_tool_calls"] = [c.model_dump() for c in calls[1:]]
            read.keep(
                "Ragas reference tool calls after the first", "a test expects one next turn", len(calls) - 1
            )
    return Mapped(_turns(row.user_input), expected, metadata=kept)


def read(text: str, shown: str) -> Read:
    """Every row of a Ragas testset (JSONL, or a JSON list), as tests; ValidationFailed otherwise."""
    problems: list[Problem] = []
    sources: list[Source] = (
        document_sources(text, shown, problems, yaml_text=False, list_keys=("samples",))
        if shown.lower().endswith(".json")
        else jsonl_sources(text, shown, problems)
    )
    out = Read()
    for source in sources:
        multi = isinstance(source.data, dict) and isinstance(source.data.get("user_input"), list)
        row = validate(MultiTurnIn if multi else SingleTurnIn, source, shown, problems)
        if row is None:
            continue
        ours, _ = ours_of(source.data, (), source, shown, problems)
        mine = ("synthesizer_name",) if ours else ()  # our exporter names our generator there
        if multi:
            mapped = _multi(row, out, mine)
        else:
            kept = _kept(row, out, "user_input", "reference", *mine)
            expected = Said(TurnRole.assistant, row.reference or "")
            mapped = Mapped([Said(TurnRole.user, row.user_input)], expected, metadata=kept)
        build(NAME, shown, source, mapped, ours, problems, out)
    return finish(out, shown, problems, "Ragas")
