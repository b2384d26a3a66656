"""Turning a model's text into a validated pydantic object, repairing the faults models commonly make.

Two layers, each repair named so the call can record it (the Settings page shows a repair rate per model):

1. Text (`load_json`), tried in order until the text parses: `<think>` and similar reasoning blocks
   (braces inside them included); code fences and prose around the JSON; `//` and `/* */` comments;
   Python-style literals (single quotes, True/False/None); trailing commas; output cut off mid-way (the
   half-written last element is dropped and the open brackets closed). A reply with no JSON but a
   Prometheus-style `[RESULT] n` line becomes `{"feedback": ..., "result": n}`.
2. Data (evalcore.llm.normalise), guided by the output schema: key aliases, enum case and separators,
   empty-as-null, string-to-list and the like; values that fit their type are left alone.

What still fails is reported as a short message the re-ask sends back to the model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from evalcore.llm.normalise import normalise

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)(?:```|$)", re.DOTALL)
# Reasoning models (DeepSeek-R1, Qwen3, gpt-oss served by llama.cpp) think aloud before answering.
_REASONING = re.compile(r"<(think|thinking|reasoning|reflection)>.*?</\1>", re.DOTALL | re.IGNORECASE)
# Prometheus-style judges end their feedback with "[RESULT] 1" instead of writing JSON.
_PROMETHEUS = re.compile(r"\[RESULT\]\s*:?\s*\(?([A-Za-z0-9.]+)", re.IGNORECASE)
_FEEDBACK_LABEL = re.compile(r"^\s*(feedback|rationale|reasoning)\s*:\s*", re.IGNORECASE)
_CLOSERS = {"{": "}", "[": "]"}
TRUNCATED_ERROR = "the reply was cut off before its JSON ended; keep every text short so it fits"


@dataclass(frozen=True)
class Parsed:
    """The outcome of parsing: a value, or an error for the re-ask; `repairs` names each fix needed."""

    value: BaseModel | None
    error: str | None
    repairs: tuple[str, ...] = ()


def parse_output(text: str, schema: type[BaseModel]) -> Parsed:
    """Validate `text` against `schema`, repairing the text and then the data when they do not fit."""
    try:
        data, repairs = load_json(text)
    except ValueError as e:
        return Parsed(None, f"the reply is not valid JSON ({e})")
    written = data
    data, fixes = normalise(data, schema)
    repairs = _unique(repairs + tuple(fixes))
    try:
        return Parsed(schema.model_validate(data), None, repairs)
    except ValidationError as e:
        error = e
    if "truncated" in repairs:
        return Parsed(None, TRUNCATED_ERROR, repairs)
    if fixes:  # the model is told what was wrong with what it wrote, not with our repair of it
        try:
            schema.model_validate(written)
        except ValidationError as e:
            error = e
    return Parsed(None, "the JSON does not match the schema: " + format_validation_error(error), repairs)


def format_validation_error(error: ValidationError, limit: int = 8) -> str:
    """A compact list of 'field.path: message' lines, as sent back to the model."""
    lines = []
    for item in error.errors()[:limit]:
        where = ".".join(str(p) for p in item["loc"]) or "(root)"
        lines.append(f"{where}: {item['msg']}")
    more = len(error.errors()) - limit
    return "; ".join(lines) + (f"; and {more} more" if more > 0 else "")


def load_json(text: str) -> tuple[Any, tuple[str, ...]]:
    """Parse JSON from a model reply; returns (value, names of the repairs needed). Raises ValueError."""
    stripped = text.strip()
    try:
        return json.loads(stripped), ()
    except json.JSONDecodeError as first:
        error = first
    repairs: list[str] = []
    body, thoughts = _REASONING.subn("", stripped)
    if thoughts:
        repairs.append("reasoning_block")
    body = body.strip()
    fence = _FENCE.search(body)
    if fence:
        body = fence.group(1).strip()
        repairs.append("code_fence")
    try:
        return json.loads(body), tuple(repairs)
    except json.JSONDecodeError as e:
        error = e
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if starts:
        # Only from the first bracket: a later one may open an inner list of a broken object.
        try:
            return json.JSONDecoder().raw_decode(body, min(starts))[0], (*repairs, "prose")
        except json.JSONDecodeError:
            pass
    body = _from_first_bracket(body, repairs)
    for name, fix in _TEXT_FIXES:
        fixed = fix(body)
        if fixed == body:
            continue
        body = fixed
        repairs.append(name)
        try:
            return json.loads(body), tuple(repairs)
        except json.JSONDecodeError as e:
            error = e
    result = _prometheus(stripped)
    if result is not None:
        return result, ("prometheus_result",)
    raise ValueError(f"{error.msg} at line {error.lineno} column {error.colno}")


def _unique(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def _from_first_bracket(text: str, repairs: list[str]) -> str:
    """The JSON-looking part, from the first bracket on (and to its balanced end when there is one)."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return text
    head = min(starts)
    body = text[head:]
    end = max(body.rfind("}"), body.rfind("]"))
    # Keep everything when the text is cut off (no closer after the last opener): truncation repair needs it.
    if end >= 0 and _balanced(body[: end + 1]):
        body = body[: end + 1]
    if head > 0 or len(body) < len(text) - head:
        repairs.append("prose")
    return body


def _balanced(text: str) -> bool:
    stack, in_string, _ = _scan(text)
    return not stack and not in_string


def _scan(text: str) -> tuple[list[str], bool, list[tuple[int, tuple[str, ...]]]]:
    """Open brackets left, whether a string is left open, and safe cut points (index, open brackets there).

    A cut point is where the text may be cut and closed again: at a comma, after a closing bracket, or
    just after an opening one (an empty container).
    """
    stack: list[str] = []
    cuts: list[tuple[int, tuple[str, ...]]] = []
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
            cuts.append((i + 1, tuple(stack)))
        elif ch in "}]" and stack:
            stack.pop()
            cuts.append((i + 1, tuple(stack)))
        elif ch == "," and stack:
            cuts.append((i, tuple(stack)))
    return stack, in_string, cuts


def _outside_strings(text: str, handle: Any) -> str:
    """Rebuild `text`, letting `handle(text, i, out)` consume characters outside strings.

    `handle` returns the index to continue from, or None to copy the character as it is.
    """
    out: list[str] = []
    in_string = escaped = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        else:
            nxt = handle(text, i, out)
            if nxt is not None:
                i = nxt
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def _strip_comments(text: str) -> str:
    """Remove `// ...` line comments and `/* ... */` block comments outside strings."""

    def handle(s: str, i: int, out: list[str]) -> int | None:
        if s.startswith("//", i):
            end = s.find("\n", i)
            return len(s) if end < 0 else end
        if s.startswith("/*", i):
            end = s.find("*/", i + 2)
            return len(s) if end < 0 else end + 2
        return None

    return _outside_strings(text, handle)


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

    def handle(s: str, i: int, out: list[str]) -> int | None:
        if s[i] in "}]":
            while out and out[-1].isspace():
                out.pop()
            if out and out[-1] == ",":
                out.pop()
        return None

    return _outside_strings(text, handle)


def _close_truncated(text: str) -> str:
    """Cut a truncated reply back to its last complete element and close the open brackets.

    When a list is open, its half-written last element is dropped whole (a turn cut in its middle would
    otherwise fail validation and be re-asked at the same token limit); the cut never goes inside it.
    """
    stack, in_string, cuts = _scan(text)
    if not stack and not in_string:
        return text
    # Depth of the outermost open list: cutting deeper would keep part of its last element.
    lists = [depth for depth, ch in enumerate(stack, start=1) if ch == "["]
    limit = lists[0] if lists else len(stack)
    for index, open_there in reversed(cuts):
        if len(open_there) > limit:
            continue
        if lists and len(open_there) == limit and text[index - 1] == "[":
            continue  # an empty list would pass for "found nothing": better to fail and ask again
        candidate = text[:index].rstrip().rstrip(",") + "".join(_CLOSERS[c] for c in reversed(open_there))
        try:
            json.loads(candidate)
            return candidate
        except json.JSONDecodeError:
            continue
    return text + ('"' if in_string else "") + "".join(_CLOSERS[c] for c in reversed(stack))


_TEXT_FIXES = (
    ("comments", _strip_comments),
    ("python_literals", _python_literals),
    ("trailing_commas", _drop_trailing_commas),
    ("truncated", _close_truncated),
)


def _prometheus(text: str) -> dict[str, Any] | None:
    """`Feedback: ... [RESULT] 1` as {"feedback": ..., "result": 1}; None without a result line."""
    text = _REASONING.sub("", text)
    match = _PROMETHEUS.search(text)
    if not match:
        return None
    value: Any = match.group(1).rstrip(".")
    if re.fullmatch(r"\d+", value):
        value = int(value)
    return {"feedback": _FEEDBACK_LABEL.sub("", text[: match.start()]).strip(), "result": value}
