"""Argument and result values of a tool group's calls, for the offline templates (seed 004, Section 2.2:
the tool executions are simulated). Values come from the one schema sampler all generators share
(`evalcore.inputs.tool_values`); deterministic given the random generator; every value is valid for its
schema unless a template breaks it on purpose.
"""

from __future__ import annotations

import random
from typing import Any

from evalcore.generators.tool_case.groups import properties
from evalcore.inputs.tool_values import value_for
from evalcore.models import Tool


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
