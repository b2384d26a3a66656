"""DeepEval goldens in, as `EvaluationDataset.save_as("json" | "jsonl")` writes them.

A `Golden` (single-turn: `input`, `expected_output`, `expected_tools`, ...) becomes a test: the input is
the user turn, the expected output (or the first expected tool call) the expected turn. A
`ConversationalGolden` (`scenario`, `turns`, `expected_outcome`, ...) with turns becomes a conversation;
an assistant turn's `tools_called` become tool_call (and, with an output, tool_result) turns before it.
Retrieval context, actual output, comments and the rest are kept in the item's metadata.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from evalcore.errors import Problem
from evalcore.inputs.formats.common import (
    Foreign,
    Mapped,
    Read,
    Said,
    Source,
    build,
    document_sources,
    finish,
    jsonl_sources,
    ours_of,
    validate,
)
from evalcore.models import TurnRole

NAME = "deepeval"
KEPT_WHY = "DeepEval's RAG and cost fields, not played here"


class ToolCallIn(Foreign):
    """DeepEval's `ToolCall`."""

    name: str
    input_parameters: dict[str, Any] | None = Field(default=None, alias="inputParameters")
    output: Any = None


class GoldenIn(Foreign):
    """DeepEval's single-turn `Golden`."""

    input: str
    expected_output: str | None = Field(default=None, alias="expectedOutput")
    expected_tools: list[ToolCallIn] | None = Field(default=None, alias="expectedTools")
    additional_metadata: dict[str, Any] | None = Field(default=None, alias="additionalMetadata")
    name: str | None = None


class TurnIn(Foreign):
    """A turn of a `ConversationalGolden`."""

    role: Literal["user", "assistant"]
    content: str
    tools_called: list[ToolCallIn] | None = Field(default=None, alias="toolsCalled")


class ConversationalGoldenIn(Foreign):
    """DeepEval's `ConversationalGolden`."""

    scenario: str
    turns: list[TurnIn] | None = None
    expected_outcome: str | None = Field(default=None, alias="expectedOutcome")
    additional_metadata: dict[str, Any] | None = Field(default=None, alias="additionalMetadata")
    name: str | None = None


def _kept(record: Foreign, read: Read, *skip: str) -> dict[str, Any]:
    """The record's fields that have no place of ours (nulls dropped), counted per field name."""
    out = {}
    for key, value in record.model_dump(exclude_none=True, exclude=set(skip)).items():
        if value not in ([], {}, ""):
            out[key] = value
            read.keep(f"DeepEval '{key}' fields", KEPT_WHY)
    return out


def _single(golden: GoldenIn, read: Read) -> Mapped:
    expected = Said(TurnRole.assistant, golden.expected_output or "")
    tools = golden.expected_tools or []
    if tools and not golden.expected_output:
        expected = Said(TurnRole.tool_call, "", tools[0].name, tools[0].input_parameters or {})
        tools = tools[1:]
    kept = _kept(golden, read, "input", "expected_output", "expected_tools", "additional_metadata", "name")
    if tools:
        kept["expected_tools"] = [t.model_dump(exclude_none=True) for t in tools]
        read.keep("DeepEval expected tools after the first", "a test here expects one next turn", len(tools))
    return Mapped([Said(TurnRole.user, golden.input)], expected, metadata=kept, key=golden.name)


def _conversational(golden: ConversationalGoldenIn, read: Read, ours: bool) -> Mapped:
    turns: list[Said] = []
    for turn in golden.turns or []:
        for call in turn.tools_called or []:
            turns.append(Said(TurnRole.tool_call, "", call.name, call.input_parameters or {}))
            if call.output is not None:
                turns.append(Said(TurnRole.tool_result, str(call.output), call.name))
        turns.append(Said(TurnRole(turn.role), turn.content))
    # The name makes our id; the scenario is our title when the golden is ours.
    kept = _kept(golden, read, "turns", "additional_metadata", "scenario", "expected_outcome", "name")
    if not ours:
        kept["scenario"] = golden.scenario
    if golden.expected_outcome is not None:
        kept["expected_outcome"] = golden.expected_outcome
    return Mapped(turns, metadata=kept, key=golden.name)


def read(text: str, shown: str) -> Read:
    """Every golden of a DeepEval JSON (a list) or JSONL file, as items; ValidationFailed otherwise."""
    problems: list[Problem] = []
    sources: list[Source] = (
        jsonl_sources(text, shown, problems)
        if shown.lower().endswith(".jsonl")
        else document_sources(text, shown, problems, yaml_text=False, list_keys=("goldens",))
    )
    out = Read()
    for source in sources:
        conversational = isinstance(source.data, dict) and source.data.get("scenario")
        golden = validate(ConversationalGoldenIn if conversational else GoldenIn, source, shown, problems)
        if golden is None:
            continue
        ours, rest = ours_of(golden.additional_metadata, ("additional_metadata",), source, shown, problems)
        if conversational and not golden.turns and not (ours and ours.kind == "spec"):
            out.skip("DeepEval conversational goldens without turns", "a scenario alone is no conversation")
            continue
        mine = ours is not None
        mapped = _conversational(golden, out, mine) if conversational else _single(golden, out)
        if rest:
            mapped.metadata["additional_metadata"] = rest
        build(NAME, shown, source, mapped, ours, problems, out)
    return finish(out, shown, problems, "DeepEval")
