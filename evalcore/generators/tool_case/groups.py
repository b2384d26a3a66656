"""Tool groups and what their schemas can produce (seed 004, Section 2.2 and Appendix B.2).

The seed samples one tool group at a time ("account tools", "reminder tools"). Project tools carry no
group label, so groups are given (the project setting `tool_groups`: name -> tool names) or derived: two
tools share a group when one's description names the other, or both require the same identifier
parameter (`*_id`). A situation is only produced from a group whose schemas allow it (a wrong tool needs
a second tool, a wrong parameter needs a parameter, ...); otherwise `requirement` says why it is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evalcore.errors import Problem, ValidationFailed
from evalcore.models import Tool

SETTING = "tool_groups"

# A tool whose name starts with one of these changes something in the world (Wrong Action Silent needs
# one); the others only read. Names follow verb_object, as ToolTalk's and the sample's tools do.
ACTION_VERBS = frozenset(
    [
        "add",
        "book",
        "cancel",
        "change",
        "create",
        "delete",
        "make",
        "open",
        "post",
        "register",
        "remove",
        "reserve",
        "schedule",
        "send",
        "set",
        "submit",
        "transfer",
        "update",
    ]
)
# Words that mark a tool as a security or verification gate (Security Overkill routes a harmless request
# through one). The sample's lookup_order qualifies: "the email must match the one on the order".
GATE_WORDS = re.compile(
    r"verif|authenticat|security|compliance|identity|must match|password|captcha|fraud", re.I
)


@dataclass(frozen=True)
class ToolGroup:
    """Tools the model or the templates may use together in one conversation."""

    name: str
    tools: tuple[Tool, ...]

    def tool(self, name: str) -> Tool:
        """The group's tool of that name."""
        return next(t for t in self.tools if t.name == name)


def is_action(tool: Tool) -> bool:
    """Whether calling the tool changes something (by its leading verb)."""
    return tool.name.split("_")[0].lower() in ACTION_VERBS


def is_gate(tool: Tool) -> bool:
    """Whether the tool is a security or verification check."""
    return bool(GATE_WORDS.search(f"{tool.name} {tool.description}"))


def properties(schema: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The properties of an object schema (empty for none)."""
    return dict((schema or {}).get("properties") or {})


def constrained(spec: dict[str, Any]) -> bool:
    """Whether a parameter has a constraint a wrong value can break (enum, pattern, format, bounds)."""
    return any(k in spec for k in ("enum", "pattern", "format", "minimum", "maximum"))


def result_fields(tool: Tool) -> list[str]:
    """Result fields holding a reportable value (string, number, date), other than the outcome `result`."""
    out = []
    for name, spec in properties(tool.returns).items():
        kinds = spec.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if name != "result" and any(k in ("string", "number", "integer") for k in kinds):
            out.append(name)
    return out


def unechoed(tool: Tool) -> list[str]:
    """Result fields that are not parameters: a wrong value there looks like any other answer."""
    return [f for f in result_fields(tool) if f not in properties(tool.parameters)]


def echoed(tool: Tool) -> list[str]:
    """Parameters the result repeats (a result for another value than asked shows in its log)."""
    return [p for p in properties(tool.parameters) if p in properties(tool.returns)]


def derive_groups(tools: list[Tool]) -> list[ToolGroup]:
    """Groups of related tools (see the module docstring), in the order of their first tool."""
    parent = {t.name: t.name for t in tools}

    def root(name: str) -> str:
        while parent[name] != name:
            name = parent[name]
        return name

    def join(a: str, b: str) -> None:
        parent[root(a)] = root(b)

    required = {t.name: {p for p in t.parameters.get("required", []) if p.endswith("_id")} for t in tools}
    for a in tools:
        for b in tools:
            if a.name < b.name and (
                re.search(rf"\b{b.name}\b", a.description)
                or re.search(rf"\b{a.name}\b", b.description)
                or required[a.name] & required[b.name]
            ):
                join(a.name, b.name)
    members: dict[str, list[Tool]] = {}
    for t in tools:
        members.setdefault(root(t.name), []).append(t)
    groups = []
    for found in members.values():
        shared = set.intersection(*(required[t.name] for t in found)) if len(found) > 1 else set()
        label = f"{sorted(shared)[0].removesuffix('_id')} tools" if shared else found[0].name
        groups.append(ToolGroup(label, tuple(found)))
    return groups


def tool_groups(tools: list[Tool], settings: dict[str, Any] | None = None) -> list[ToolGroup]:
    """The project's tool groups: the setting `tool_groups` when given (every name checked), else derived."""
    given = (settings or {}).get(SETTING)
    if not given:
        return derive_groups(tools)
    by_name = {t.name: t for t in tools}
    problems = [
        Problem(f"setting {SETTING}", f"no tool '{name}' in the project", None, f"{group}[{i}]")
        for group, names in given.items()
        for i, name in enumerate(names)
        if name not in by_name
    ]
    if problems:
        raise ValidationFailed(problems, "project setting")
    return [ToolGroup(group, tuple(by_name[n] for n in names)) for group, names in given.items()]


def prerequisites(tool: Tool, tools: tuple[Tool, ...]) -> list[Tool]:
    """The other tools of the group that the tool's description names: they must be called before it
    ("Reserve a rental bike after check_rental_availability has shown it is free")."""
    return [t for t in tools if t.name != tool.name and re.search(rf"\b{t.name}\b", tool.description)]


def prerequisite_names(tools: tuple[Tool, ...]) -> dict[str, list[str]]:
    """For each tool with prerequisites, their names (what a judge checks the calls against)."""
    return {t.name: [p.name for p in found] for t in tools if (found := prerequisites(t, tools))}


def _with_params(group: ToolGroup) -> list[Tool]:
    return [t for t in group.tools if properties(t.parameters)]


def _prerequisite(group: ToolGroup) -> bool:
    """An action tool and another tool of the group that must come first (`prerequisites`)."""
    return any(is_action(t) and prerequisites(t, group.tools) for t in group.tools)


# Why a recipe cannot be made from a group, or None when it can. Each check is what its template needs.
REQUIREMENTS: dict[str, tuple[str, Any]] = {
    "correct": ("no tool", lambda g: bool(g.tools)),
    "wrong_tool_silent": ("needs a second tool to pick wrongly", lambda g: len(g.tools) > 1),
    "wrong_tool_user_aware": ("needs a second tool to pick wrongly", lambda g: len(g.tools) > 1),
    "bad_params_silent": ("no tool with parameters to get wrong", lambda g: bool(_with_params(g))),
    "bad_input_data": ("no tool with parameters to feed wrong data", lambda g: bool(_with_params(g))),
    "bad_params_user_aware": (
        "no parameter with a constraint (enum, pattern, format, bounds) a bad value breaks",
        lambda g: any(constrained(s) for t in g.tools for s in properties(t.parameters).values()),
    ),
    "misunderstood_need": (
        "no parameter with an enum of two or more values to read the need wrongly",
        lambda g: any(len(s.get("enum", [])) > 1 for t in g.tools for s in properties(t.parameters).values()),
    ),
    "impossible_action_suggested": (
        "no parameter with an enum the user can ask outside of",
        lambda g: any(len(s.get("enum", [])) > 1 for t in g.tools for s in properties(t.parameters).values()),
    ),
    "context_amnesia": (
        "no required parameter to ask for again",
        lambda g: any(t.parameters.get("required") for t in g.tools),
    ),
    "bad_parse_silent": ("no result field to misread", lambda g: any(result_fields(t) for t in g.tools)),
    "hallucination_with_access": (
        "no result field to misreport",
        lambda g: any(result_fields(t) for t in g.tools),
    ),
    "trusted_wrong_fact": (
        "no result field besides the parameters to be wrong",
        lambda g: any(unechoed(t) for t in g.tools),
    ),
    "partial_tool_answer": (
        "no result with two or more fields to leave one out",
        lambda g: any(len(result_fields(t)) > 1 for t in g.tools),
    ),
    "propagated_tool_error": (
        "no result that repeats a parameter, so a misaligned result cannot show in the log",
        lambda g: any(echoed(t) for t in g.tools),
    ),
    "tool_failure_user_aware": (
        "no result that repeats a parameter, so a wrong result cannot show",
        lambda g: any(echoed(t) for t in g.tools),
    ),
    "superfluous_tool_calls": (
        "needs a reading tool and another tool that does not require it first",
        lambda g: any(
            not is_action(x) and t is not x and x not in prerequisites(t, g.tools)
            for x in g.tools
            for t in g.tools
        ),
    ),
    "missing_or_skipped_tool": (
        "no action tool whose description names a tool to call before it",
        _prerequisite,
    ),
    "security_overkill": (
        "no security or verification tool beside another tool",
        lambda g: any(is_gate(t) for t in g.tools) and any(not is_gate(t) for t in g.tools),
    ),
    "wrong_action_silent": ("no tool that changes anything", lambda g: any(is_action(t) for t in g.tools)),
}


def requirement(recipe: str | None, group: ToolGroup) -> str | None:
    """Why `recipe` cannot be made from `group` (None: it can). Recipes not listed need any one tool."""
    if recipe is None:
        return "the situation has no offline template: generate it with a model"
    reason, check = REQUIREMENTS.get(recipe, REQUIREMENTS["correct"])
    return None if check(group) else reason
