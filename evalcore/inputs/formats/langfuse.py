"""Langfuse dataset items in: JSONL of items, or the JSON of the API's item list (`data: [...]`).

`input` (a text, chat messages, `{"messages": [...]}` or `{"question": ...}`) gives the turns;
`expectedOutput` (a text, a chat message or `{"output": ...}`) the expected turn of a test. An item with no
expected output is a conversation. `metadata.evalcore` carries our fields; the rest of `metadata`,
`sourceTraceId` and the like are kept in metadata.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

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

NAME = "langfuse"


class ItemIn(Foreign):
    """A Langfuse dataset item (API JSON or `CreateDatasetItemRequest`)."""

    id: str | None = None
    input: Any
    expected_output: Any = Field(default=None, alias="expectedOutput")
    metadata: Any = None


def read(text: str, shown: str) -> Read:
    """Every Langfuse dataset item of a file, as items; ValidationFailed otherwise."""
    problems: list[Problem] = []
    sources = (
        document_sources(text, shown, problems, yaml_text=False, list_keys=("data", "items"))
        if shown.lower().endswith(".json")
        else jsonl_sources(text, shown, problems)
    )
    out = Read()
    for source in sources:
        item = validate(ItemIn, source, shown, problems)
        if item is None:
            continue
        ours, rest = ours_of(item.metadata, ("metadata",), source, shown, problems)
        turns, system = chat_of(item.input, ("input",), source, shown, problems)
        expected = expected_of(item.expected_output, ("expectedOutput",), source, shown, problems)
        kept: dict[str, Any] = {}
        if unread := unread_keys(item.input):
            kept["input_fields"] = unread
            out.keep("Langfuse input fields beside the user's message", "no place for them here")
        if rest or (item.metadata is not None and not isinstance(item.metadata, dict)):
            kept["metadata"] = rest or item.metadata
        if system:
            kept["system"] = system
            out.keep("Langfuse system messages", "a target here has its own system prompt")
        for key, value in item.unknown().items():
            kept[key] = value
            out.keep(f"Langfuse '{key}' fields", "no place for them here")
        if turns:
            mapped = Mapped(turns, expected, metadata=kept, key=item.id)
            build(NAME, shown, source, mapped, ours, problems, out)
    return finish(out, shown, problems, "Langfuse")
