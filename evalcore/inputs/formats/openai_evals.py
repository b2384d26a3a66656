"""OpenAI evals samples in: JSONL with `input` (chat messages, or a text) and `ideal` (a text, or a list
of acceptable texts).

Each sample becomes a test: its messages are the context, the first ideal answer the expected reply;
further ideal answers and system messages are kept in metadata. Samples carry no metadata field: our
fields travel in an extra `evalcore` key, which the evals runner ignores.
"""

from __future__ import annotations

from typing import Any

from evalcore.errors import Problem
from evalcore.inputs.formats.common import (
    OURS,
    Foreign,
    Mapped,
    Read,
    Said,
    build,
    chat_of,
    finish,
    jsonl_sources,
    ours_of,
    validate,
)
from evalcore.models import TurnRole

NAME = "openai-evals"


class SampleIn(Foreign):
    """An OpenAI evals sample."""

    input: str | list[Any]
    ideal: str | list[str] | None = None


def read(text: str, shown: str) -> Read:
    """Every sample of an OpenAI evals JSONL file, as tests; ValidationFailed otherwise."""
    problems: list[Problem] = []
    out = Read()
    for source in jsonl_sources(text, shown, problems):
        sample = validate(SampleIn, source, shown, problems)
        if sample is None:
            continue
        ours, _ = ours_of(source.data, (), source, shown, problems)
        turns, system = chat_of(sample.input, ("input",), source, shown, problems)
        ideals = [sample.ideal] if isinstance(sample.ideal, str) else list(sample.ideal or [])
        kept: dict[str, Any] = {}
        if ideals[1:]:
            kept["ideal"] = ideals
            out.keep("OpenAI evals ideal answers after the first", "a test expects one reply")
        if system:
            kept["system"] = system
            out.keep("OpenAI evals system messages", "a target here has its own system prompt")
        for key, value in sample.unknown().items():
            if key != OURS:
                kept[key] = value
                out.keep(f"OpenAI evals '{key}' fields", "no place for them here")
        if turns:
            expected = Said(TurnRole.assistant, ideals[0] if ideals else "")
            mapped = Mapped(turns, expected, metadata=kept)
            build(NAME, shown, source, mapped, ours, problems, out)
    return finish(out, shown, problems, "OpenAI evals")
