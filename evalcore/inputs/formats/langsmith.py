"""LangSmith examples in: JSONL of examples (`inputs`, `outputs`, `metadata`, `split`), or a JSON list.

`inputs` (`{"messages": [...]}`, or one text under `input`, `question`, ...) gives the turns; `outputs`
(a chat message, `{"messages": [...]}`, or one text under `output`, `answer`, ...) the expected turn of a
test. An example with no outputs is a conversation. `metadata.evalcore` carries our fields; the split,
the rest of `metadata` and of `inputs`/`outputs` are kept in metadata.
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field

from evalcore.errors import Problem
from evalcore.inputs.formats.common import (
    Foreign,
    Mapped,
    Read,
    build,
    chat_of,
    document_sources,
    expected_of,
    finish,
    jsonl_sources,
    ours_of,
    unread_keys,
    validate,
)

NAME = "langsmith"


class ExampleIn(Foreign):
    """A LangSmith example (`Example` or `ExampleCreate`)."""

    id: str | None = None
    inputs: dict[str, Any]
    outputs: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("outputs", "reference_outputs")
    )
    metadata: dict[str, Any] | None = None
    split: str | list[str] | None = None


def read(text: str, shown: str) -> Read:
    """Every LangSmith example of a file, as items; ValidationFailed otherwise."""
    problems: list[Problem] = []
    sources = (
        document_sources(text, shown, problems, yaml_text=False, list_keys=("examples",))
        if shown.lower().endswith(".json")
        else jsonl_sources(text, shown, problems)
    )
    out = Read()
    for source in sources:
        example = validate(ExampleIn, source, shown, problems)
        if example is None:
            continue
        ours, rest = ours_of(example.metadata, ("metadata",), source, shown, problems)
        turns, system = chat_of(example.inputs, ("inputs",), source, shown, problems)
        expected = expected_of(example.outputs or None, ("outputs",), source, shown, problems)
        kept: dict[str, Any] = {}
        if unread := unread_keys(example.inputs):
            kept["input_fields"] = unread
            out.keep("LangSmith input fields beside the user's message", "no place for them here")
        if rest:
            kept["metadata"] = rest
        if example.split is not None:
            kept["split"] = example.split
            out.keep("LangSmith splits", "a dataset split has no place here")
        if system:
            kept["system"] = system
            out.keep("LangSmith system messages", "a target here has its own system prompt")
        for key, value in example.unknown().items():
            kept[key] = value
            out.keep(f"LangSmith '{key}' fields", "no place for them here")
        if turns:
            mapped = Mapped(turns, expected, metadata=kept, key=example.id)
            build(NAME, shown, source, mapped, ours, problems, out)
    return finish(out, shown, problems, "LangSmith")
