"""Turning a model's text into a validated pydantic object, repairing the faults models commonly make.

Repairs, tried in order until the text parses: code fences and prose around the JSON; Python-style
literals (single quotes, True/False/None); trailing commas; output cut off mid-way (the incomplete last
element is dropped and the open brackets closed). A bare list is wrapped when the schema has exactly one
list field. What still fails is reported as a short message the re-ask sends back to the model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)(?:```|$)", re.DOTALL)
_CLOSERS = {"{": "}", "[": "]"}


@dataclass(frozen=True)
class Parsed:
    """The outcome of parsing: a value, or an error for the re-ask; `repaired` says a fix was needed."""

    value: BaseModel | None
    error: str | None
    repaired: bool = False


def parse_output(text: str, schema: type[BaseModel]) -> Parsed:
    """Validate `text` against `schema`, repairing it first when it is not clean JSON."""
    try:
        data, repaired = load_json(text)
    except ValueError as e:
        return Parsed(None, f"the reply is not valid JSON ({e})")
    data = _wrap_bare_list(data, schema)
    try:
        return Parsed(schema.model_validate(data), None, repaired)
    except ValidationError as e:
        return Parsed(None, "the JSON does not match the schema: " + format_validation_error(e))


def format_validation_error(error: ValidationError, limit: int = 8) -> str:
    """A compact list of 'field.path: message' lines, as sent back to the model."""
    lines = []
    for item in error.errors()[:limit]:
        where = ".".join(str(p) for p in item["loc"]) or "(root)"
        lines.append(f"{where}: {item['msg']}")
    more = len(error.errors()) - limit
    return "; ".join(lines) + (f"; and {more} more" if more > 0 else "")


def load_json(text: str) -> tuple[Any, bool]:
    """Parse JSON from a model reply; returns (value, whether a repair was needed). Raises ValueError."""
    stripped = text.strip()
    try:
        return json.loads(stripped), False
    except json.JSONDecodeError as first:
        error = first
    body = _extract(stripped)
    for fix in (lambda s: s, _python_literals, _drop_trailing_commas, _close_truncated):
        body = fix(body)
        try:
            return json.loads(body), True
        except json.JSONDecodeError as e:
            error = e
    raise ValueError(f"{error.msg} at line {error.lineno} column {error.colno}")


def _extract(text: str) -> str:
    """The JSON-looking part: inside a code fence if any, from the first bracket on."""
    fence = _FENCE.search(text)
    if fence:
        text = fence.group(1).strip()
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return text
    text = text[min(starts) :]
    end = max(text.rfind("}"), text.rfind("]"))
    # Keep everything when the text is cut off (no closer after the last opener): truncation repair needs it.
    return text[: end + 1] if end >= 0 and _balanced(text[: end + 1]) else text


def _balanced(text: str) -> bool:
    stack, in_string, _ = _scan(text)
    return not stack and not in_string


def _scan(text: str) -> tuple[list[str], bool, list[tuple[int, list[str]]]]:
    """Open brackets left, whether a string is left open, and safe cut points (index, stack there)."""
    stack: list[str] = []
    cuts: list[tuple[int, list[str]]] = []
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
            cuts.append((i + 1, list(stack)))
        elif ch == "," and stack:
            cuts.append((i, list(stack)))
    return stack, in_string, cuts


def _python_literals(text: str) -> str:
    """Single-quoted strings to double-quoted ones, and True/False/None to JSON, outside strings."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and i + 1 < len(text):
                nxt = text[i + 1]
                out.append(nxt if (quote == "'" and nxt == "'") else ch + nxt)
                i += 2
                continue
            if ch == quote:
                out.append('"')
                quote = None
            else:
                out.append('\\"' if (ch == '"' and quote == "'") else ch)
        elif ch in "'\"":
            quote = ch
            out.append('"')
        else:
            word = re.match(r"(True|False|None)\b", text[i:])
            if word and (i == 0 or not text[i - 1].isalnum()):
                out.append({"True": "true", "False": "false", "None": "null"}[word.group(1)])
                i += len(word.group(1))
                continue
            out.append(ch)
        i += 1
    return "".join(out)


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede a closing bracket (outside strings)."""
    out: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "}]":
            while out and out[-1].isspace():
                out.pop()
            if out and out[-1] == ",":
                out.pop()
        out.append(ch)
    return "".join(out)


def _close_truncated(text: str) -> str:
    """Cut a truncated reply back to its last complete element and close the open brackets."""
    stack, in_string, cuts = _scan(text)
    if not stack and not in_string:
        return text
    for index, open_at_cut in reversed(cuts):
        candidate = text[:index].rstrip().rstrip(",") + "".join(_CLOSERS[c] for c in reversed(open_at_cut))
        try:
            json.loads(candidate)
            return candidate
        except json.JSONDecodeError:
            continue
    return text + ('"' if in_string else "") + "".join(_CLOSERS[c] for c in reversed(stack))


def _wrap_bare_list(data: Any, schema: type[BaseModel]) -> Any:
    """`[...]` for a schema whose only required field is a list: {field: [...]}."""
    if not isinstance(data, list):
        return data
    required = [name for name, f in schema.model_fields.items() if f.is_required()]
    if len(required) == 1 and "list" in str(schema.model_fields[required[0]].annotation).lower():
        return {required[0]: data}
    return data
