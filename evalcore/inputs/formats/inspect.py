"""Inspect AI samples in: JSONL (or a JSON list) of `Sample`s as `json_dataset` reads them.

`input` (a text, or chat messages) gives the turns, `target` (a text, or a list: the first) the expected
reply of a test; `metadata.evalcore` carries our fields; `choices`, `files`, `setup` and the rest of the
metadata are kept in metadata.
"""

from __future__ import annotations

from typing import Any

from evalcore.errors import Problem
from evalcore.inputs.formats.common import (
    Foreign,
    Mapped,
    Read,
    Said,
    build,
    chat_of,
    document_sources,
    finish,
    jsonl_sources,
    ours_of,
    validate,
)
from evalcore.models import TurnRole

NAME = "inspect"


class SampleIn(Foreign):
    """An Inspect `Sample`."""

    id: str | int | None = None
    input: str | list[Any]
    target: str | list[str] = ""
    metadata: dict[str, Any] | None = None


def read(text: str, shown: str) -> Read:
    """Every sample of an Inspect dataset file, as tests; ValidationFailed otherwise."""
    problems: list[Problem] = []
    sources = (
        document_sources(text, shown, problems, yaml_text=False)
        if shown.lower().endswith(".json")
        else jsonl_sources(text, shown, problems)
    )
    out = Read()
    for source in sources:
        sample = validate(SampleIn, source, shown, problems)
        if sample is None:
            continue
        ours, rest = ours_of(sample.metadata, ("metadata",), source, shown, problems)
        turns, system = chat_of(sample.input, ("input",), source, shown, problems)
        targets = [sample.target] if isinstance(sample.target, str) else list(sample.target)
        kept: dict[str, Any] = {}
        if rest:
            kept["metadata"] = rest
        if targets[1:]:
            kept["target"] = targets
            out.keep("Inspect targets after the first", "a test expects one reply")
        if system:
            kept["system"] = system
            out.keep("Inspect system messages", "a target here has its own system prompt")
        for key, value in sample.unknown().items():
            kept[key] = value
            out.keep(f"Inspect '{key}' fields", "no place for them here")
        if turns:
            expected = Said(TurnRole.assistant, targets[0] if targets else "")
            key = str(sample.id) if sample.id is not None else None
            build(NAME, shown, source, Mapped(turns, expected, metadata=kept, key=key), ours, problems, out)
    return finish(out, shown, problems, "Inspect")
