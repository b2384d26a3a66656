"""Argument and result values from JSON schemas, for the offline templates (seed 004, Section 2.2: the
tool executions are simulated). Deterministic given the random generator; every value is valid for its
schema unless a template breaks it on purpose.
"""

from __future__ import annotations

import random
import re
from typing import Any

from evalcore.generators.tool_case.groups import properties
from evalcore.models import Tool

DATES = ["2026-06-12", "2026-06-19", "2026-07-03", "2026-07-10"]
NAMES = ["Alex Morgan", "Priya Shah", "Sam Okafor", "Lena Fischer", "Diego Ruiz", "Mei Tanaka"]
_EXAMPLE = re.compile(r"e\.g\.\s*'?\"?\[?\"?([A-Za-z0-9][A-Za-z0-9 .:_/-]*[A-Za-z0-9])")


def _from_pattern(pattern: str, rng: random.Random) -> str | None:
    """A string matching a simple pattern (literals, (a|b), [classes], {n}, +): enough for ids such as
    ^(WEB|POS)-[0-9]{6}$; None when the pattern is beyond that."""
    body = pattern.removeprefix("^").removesuffix("$")
    out, i = "", 0
    while i < len(body):
        char = body[i]
        if char == "(":
            end = body.index(")", i)
            piece, i = rng.choice(body[i + 1 : end].split("|")), end + 1
        elif char == "[":
            end = body.index("]", i)
            spec = body[i + 1 : end]
            pool = (
                "".join(
                    "".join(chr(c) for c in range(ord(a), ord(b) + 1))
                    for a, b in re.findall(r"(.)-(.)", spec)
                )
                or spec
            )
            piece, i = rng.choice(pool), end + 1
            count = 1
            if i < len(body) and body[i] == "{":
                end = body.index("}", i)
                count, i = int(body[i + 1 : end].split(",")[0]), end + 1
            elif i < len(body) and body[i] in "+*":
                count, i = 3, i + 1
            piece = "".join(rng.choice(pool) for _ in range(count))
        elif char == "\\" and i + 1 < len(body):
            piece, i = body[i + 1], i + 2
        elif char in ".*+?{}|":
            return None
        else:
            piece, i = char, i + 1
        out += piece
    return out if re.fullmatch(pattern, out) else None


def value_for(name: str, spec: dict[str, Any], rng: random.Random) -> Any:
    """A valid value for one parameter or result field."""
    if "enum" in spec:
        return rng.choice([v for v in spec["enum"] if v is not None])
    kinds = spec.get("type")
    kind = next((k for k in kinds if k != "null"), "string") if isinstance(kinds, list) else kinds
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("integer", "number"):
        low = spec.get("minimum", 1)
        high = spec.get("maximum", max(low + 5, 120 if "usd" in name else 10))
        value = rng.randint(int(low), int(high))
        return float(value) if kind == "number" else value
    if kind == "array":
        return [value_for(name, spec.get("items") or {}, rng)]
    if kind == "object":
        return {k: value_for(k, s, rng) for k, s in properties(spec).items()}
    if spec.get("format") == "date":
        return rng.choice(DATES)
    if spec.get("format") == "email" or name.endswith("email"):
        return f"{rng.choice(NAMES).split()[0].lower()}@example.com"
    if "pattern" in spec and (made := _from_pattern(spec["pattern"], rng)):
        return made
    example = _EXAMPLE.search(spec.get("description", ""))
    if example:
        return example.group(1)
    if name.endswith(("description", "summary", "message", "notes")):
        return rng.choice(["rear brake squeals when braking", "customer asked for help with this request"])
    if name.endswith("name"):
        return rng.choice(NAMES)
    if name.endswith("phone"):
        return f"555-01{rng.randint(10, 99)}"
    return f"{name.replace('_', '-').upper()}-{rng.randint(100, 999)}"


def arguments(tool: Tool, rng: random.Random) -> dict[str, Any]:
    """Values for the tool's required parameters (all of them when none is required)."""
    props = properties(tool.parameters)
    wanted = tool.parameters.get("required") or list(props)
    return {p: value_for(p, props[p], rng) for p in wanted if p in props}


def other_value(name: str, spec: dict[str, Any], current: Any, rng: random.Random) -> Any:
    """A valid value for the field that differs from `current` (the same value when none can differ)."""
    for _ in range(20):
        candidate = value_for(name, spec, rng)
        if candidate != current:
            return candidate
    return current


def result_for(tool: Tool, args: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A successful result: the first outcome of `result` (success in the project's schemas), parameters
    the result repeats echoed, and a value for every other field."""
    out: dict[str, Any] = {}
    for name, spec in properties(tool.returns).items():
        if name == "result" and spec.get("enum"):
            out[name] = spec["enum"][0]
        elif name in args:
            out[name] = args[name]
        else:
            out[name] = value_for(name, spec, rng)
    return out or {"result": "ok"}


def words(name: str) -> str:
    """A field or tool name as words: 'start_date' -> 'start date'."""
    return name.replace("_", " ")


def say(value: Any) -> str:
    """A value as a person writes it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(say(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{words(k)} {say(v)}" for k, v in value.items())
    return str(value)
