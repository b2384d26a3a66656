"""promptfoo test cases in: a YAML (or JSON) list of tests, or a config holding them under `tests:`.

Each test becomes a test of ours: its input var (`input`, `query`, `question`, `prompt`, `message` or
the only var) is the user turn, after the turns of a `history` var of chat messages; its assertions map
onto ours where they mean the same (`contains`/`icontains` -> contains, `not-contains` -> not_contains,
`contains-any`/`-all`, `regex`/`not-regex`, `equals` -> an anchored regex, our `max_words` as the
javascript our exporter writes); the value of the first `llm-rubric` or `similar` is the expected reply,
a `tool-call-f1` naming one tool the expected tool call. The rest is kept in metadata, counted by type.
"""

from __future__ import annotations

import re
from typing import Any

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
    from_messages,
    ours_of,
    validate,
)
from evalcore.models import TurnRole

NAME = "promptfoo"
INPUT_VARS = ("input", "query", "question", "prompt", "message", "user_input")
HISTORY_VAR = "history"
# Our max_words, as our exporter writes it for promptfoo (a javascript assertion it runs).
MAX_WORDS_JS = "output.trim().split(/\\s+/).length <= {n}"
_MAX_WORDS = re.compile(r"^output\.trim\(\)\.split\(/\\s\+/\)\.length <= (\d+)$")
SIMPLE = {
    "contains": ("contains", "text"),
    "icontains": ("contains", "text"),
    "not-contains": ("not_contains", "text"),
    "not-icontains": ("not_contains", "text"),
    "regex": ("regex", "pattern"),
    "not-regex": ("not_regex", "pattern"),
}
LISTS = {
    "contains-any": "contains_any",
    "icontains-any": "contains_any",
    "contains-all": "contains_all",
    "icontains-all": "contains_all",
}
EXPECTED = ("llm-rubric", "similar", "factuality", "model-graded-closedqa")


class AssertionIn(Foreign):
    """A promptfoo assertion."""

    type: str
    value: Any = None
    threshold: float | None = None


class TestIn(Foreign):
    """A promptfoo test case."""

    description: str | None = None
    vars: dict[str, Any] = Field(default_factory=dict)
    assert_: list[AssertionIn] = Field(default_factory=list, alias="assert")
    metadata: dict[str, Any] | None = None


def _ours_of(check: AssertionIn) -> dict[str, Any] | None:
    """Our assertion meaning the same as a promptfoo one, or None."""
    value = check.value
    if check.type in SIMPLE and isinstance(value, str):
        kind, key = SIMPLE[check.type]
        return {"kind": kind, key: value}
    if check.type in LISTS:
        texts = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
        if isinstance(texts, list) and texts and all(isinstance(t, str) for t in texts):
            return {"kind": LISTS[check.type], "texts": texts}
    if check.type == "equals" and isinstance(value, str):
        return {"kind": "regex", "pattern": rf"^\s*{re.escape(value)}\s*$"}
    if check.type == "javascript" and isinstance(value, str) and (m := _MAX_WORDS.match(value.strip())):
        return {"kind": "max_words", "value": int(m.group(1))}
    return None


def _input(test: TestIn, source: Source, shown: str, problems: list[Problem]) -> str | None:
    """The name of the var that holds the user's message, or None after a problem."""
    names = [n for n in INPUT_VARS if n in test.vars]
    if not names and len([v for v in test.vars if v != HISTORY_VAR]) == 1:
        names = [v for v in test.vars if v != HISTORY_VAR]
    if not names:
        why = "cannot tell which var is the user's message: name it 'input'"
        problems.append(Problem(shown, why, source.line_of(("vars",)), "vars"))
        return None
    return names[0]


def _map(
    test: TestIn, name: str, source: Source, shown: str, problems: list[Problem], out: Read, ours: bool
) -> Mapped:
    turns, system = [], []
    if HISTORY_VAR in test.vars:
        turns, system = from_messages(test.vars[HISTORY_VAR], ("vars", HISTORY_VAR), source, shown, problems)
    value = test.vars[name]
    turns.append(Said(TurnRole.user, value if isinstance(value, str) else str(value)))
    expected, assertions, kept = Said(TurnRole.assistant), [], []
    found_expected = False
    for check in test.assert_:
        mapped = _ours_of(check)
        if mapped is not None:
            assertions.append(mapped)
        elif check.type in EXPECTED and isinstance(check.value, str) and not found_expected:
            expected, found_expected = Said(TurnRole.assistant, check.value), True
        elif check.type == "tool-call-f1" and isinstance(check.value, list) and len(check.value) == 1:
            expected, found_expected = Said(TurnRole.tool_call, "", str(check.value[0])), True
        else:
            kept.append(check.model_dump(exclude_none=True))
            out.keep(f"promptfoo assertions of type {check.type}", "not evaluable here")
    metadata: dict[str, Any] = {}
    if kept:
        metadata["assert"] = kept
    others = {k: v for k, v in test.vars.items() if k not in (HISTORY_VAR, name)}
    if others:
        metadata["vars"] = others
    if system:
        metadata["system"] = system
        out.keep("promptfoo system messages", "a target here has its own system prompt")
    mine = {"description"} if ours else set()  # our exporter writes our title there
    for key, value in test.model_dump(
        exclude_none=True, exclude={"vars", "assert_", "metadata", *mine}
    ).items():
        metadata[key] = value
        if key != "description":
            out.keep(f"promptfoo test '{key}' fields", "no place for them here")
    return Mapped(turns, expected, assertions, metadata, key=None)


def read(text: str, shown: str) -> Read:
    """Every test of a promptfoo test file or config, as tests of ours; ValidationFailed otherwise."""
    problems: list[Problem] = []
    yaml_text = not shown.lower().endswith(".json")
    sources = document_sources(text, shown, problems, yaml_text=yaml_text, list_keys=("tests",))
    out = Read()
    for source in sources:
        test = validate(TestIn, source, shown, problems)
        if test is None or (name := _input(test, source, shown, problems)) is None:
            continue
        ours, rest = ours_of(test.metadata, ("metadata",), source, shown, problems)
        mapped = _map(test, name, source, shown, problems, out, ours is not None)
        if rest:
            mapped.metadata["metadata"] = rest
        build(NAME, shown, source, mapped, ours, problems, out)
    return finish(out, shown, problems, "promptfoo")
