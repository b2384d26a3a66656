"""Tools in the formats teams already hold, read unchanged (seed 001, Section 3.3: "existing APIs can be
easily included in our pipeline"; issue 17, item 1).

Four shapes of one tool are recognised, alone, in a JSON list, or under a `tools` key:

- ours: `{"name", "description", "parameters", "returns"?}` (also OpenAI's Responses API, which adds
  `"type": "function"` at the top);
- an OpenAI function tool: `{"type": "function", "function": {"name", "description", "parameters"}}`;
- an Anthropic tool: `{"name", "description", "input_schema"}`;
- an MCP `tools/list` result: `{"tools": [{"name", "description", "inputSchema", "outputSchema"?}]}`,
  bare or inside its JSON-RPC response (`{"jsonrpc": "2.0", "result": {...}}`).

Every problem names the file, the line, the field as written in the file, and how the tool was read
("read as an OpenAI function tool"), so a team sees which wrapper the message is about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jsonschema
from pydantic import ValidationError

from evalcore.errors import Problem, ValidationFailed
from evalcore.inputs.sources import Located, dotted, parse_json
from evalcore.models import Tool

OURS, OPENAI, ANTHROPIC, MCP = "evalcore", "openai", "anthropic", "mcp"
FORMAT_NAMES = {
    OURS: "an evalcore tool",
    OPENAI: "an OpenAI function tool",
    ANTHROPIC: "an Anthropic tool (input_schema)",
    MCP: "an MCP tools/list entry",
}
# Keys each format may carry that say nothing about the call (OpenAI's strict mode, Anthropic's prompt
# cache, MCP's display title and hints): read past, never reported. Any other key is reported, as a typo
# in our own tool files is.
_IGNORED = {
    OURS: {"type", "strict"},
    OPENAI: {"strict"},
    ANTHROPIC: {"type", "cache_control"},
    MCP: {"title", "annotations", "_meta"},
}
# Where each Tool field sits in a format: a path inside the entry.
_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {
    OURS: {
        "name": ("name",),
        "description": ("description",),
        "parameters": ("parameters",),
        "returns": ("returns",),
    },
    OPENAI: {
        "name": ("function", "name"),
        "description": ("function", "description"),
        "parameters": ("function", "parameters"),
    },
    ANTHROPIC: {"name": ("name",), "description": ("description",), "parameters": ("input_schema",)},
    MCP: {
        "name": ("name",),
        "description": ("description",),
        "parameters": ("inputSchema",),
        "returns": ("outputSchema",),
    },
}
_META_SCHEMA = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)


@dataclass(frozen=True)
class ReadTool:
    """A tool read from a file, and the format it was read as."""

    tool: Tool
    format: str


def entry_format(entry: dict[str, Any], in_mcp_list: bool = False) -> str | None:
    """The format of one tool entry, or None when it fits none."""
    if in_mcp_list or "inputSchema" in entry:
        return MCP
    if entry.get("type") == "function" and isinstance(entry.get("function"), dict):
        return OPENAI
    if "input_schema" in entry:
        return ANTHROPIC
    if "parameters" in entry or "name" in entry:
        return OURS
    return None


def is_foreign(data: Any) -> bool:
    """Whether a parsed tools file is in another format than ours (one evalcore tool per file)."""
    if isinstance(data, list):
        return True
    if not isinstance(data, dict):
        return False
    return bool({"function", "input_schema", "inputSchema", "tools", "jsonrpc"} & set(data))


def _entries(data: Any) -> tuple[list[tuple[tuple[str | int, ...], Any, bool]], str | None]:
    """The tool entries of a document with their paths and whether they sit in an MCP list; or a reason
    the document holds no tools."""
    if isinstance(data, dict) and data.get("jsonrpc") and isinstance(data.get("result"), dict):
        inner, prefix = data["result"], ("result",)
    else:
        inner, prefix = data, ()
    if isinstance(inner, dict) and isinstance(inner.get("tools"), list):
        # a `tools/list` result has only `tools` and the paging cursor; our own bundles have only `tools`
        mcp = (
            prefix == ("result",)
            or "nextCursor" in inner
            or any(isinstance(e, dict) and "inputSchema" in e for e in inner["tools"])
        )
        return [((*prefix, "tools", i), e, mcp) for i, e in enumerate(inner["tools"])], None
    if isinstance(inner, list):
        return [((*prefix, i), e, False) for i, e in enumerate(inner)], None
    if isinstance(inner, dict):
        return [(prefix, inner, False)], None
    return [], "a tools file must be a JSON object, a list of tools, or an object with a 'tools' list"


def entry_names(data: Any) -> set[str]:
    """The tool names a tools file means to define, as far as they can be read (to blame a bad file once,
    not again in every procedure that calls its tools)."""
    names = set()
    for _, entry, _ in _entries(data)[0]:
        if isinstance(entry, dict):
            name = entry.get(
                "name",
                (entry.get("function") or {}).get("name")
                if isinstance(entry.get("function"), dict)
                else None,
            )
            if isinstance(name, str):
                names.add(name)
    return names


def _get(entry: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = entry
    for part in path:
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _read_entry(
    entry: Any, where: tuple[str | int, ...], mcp: bool, shown: str, located: Located, problems: list[Problem]
) -> ReadTool | None:
    def problem(message: str, loc: tuple[str | int, ...]) -> None:
        full = (*where, *loc)
        problems.append(Problem(shown, message, located.line_of(full), dotted(full) or None))

    if not isinstance(entry, dict):
        problem("a tool must be a JSON object", ())
        return None
    fmt = entry_format(entry, mcp)
    if fmt is None:
        problem(
            "not a tool: expected 'name' with 'parameters', 'input_schema', 'inputSchema' or 'function'", ()
        )
        return None
    how = f"read as {FORMAT_NAMES[fmt]}"
    fields = _FIELDS[fmt]
    known = {path[0] for path in fields.values()} | _IGNORED[fmt] | ({"type"} if fmt == OPENAI else set())
    found = len(problems)
    for key in entry:
        if key not in known:
            problem(f"unknown field (check its spelling; {how})", (key,))
    if fmt == OPENAI:
        for key in entry["function"]:
            if key not in {"name", "description", "parameters", "strict"}:
                problem(f"unknown field (check its spelling; {how})", ("function", key))
    body = {name: _get(entry, path) for name, path in fields.items() if _get(entry, path) is not None}
    # Anthropic and MCP make the description optional; a tool without one is still callable
    body.setdefault("description", "")
    try:
        tool = Tool.model_validate(body)
    except ValidationError as exc:
        for error in exc.errors():
            head = error["loc"][0] if error["loc"] else "name"
            loc = (*fields.get(str(head), (str(head),)), *error["loc"][1:])
            message = "required field is missing" if error["type"] == "missing" else error["msg"]
            problem(f"{message} ({how})", loc)
        return None
    for error in sorted(_META_SCHEMA.iter_errors(tool.parameters), key=lambda e: list(map(str, e.path))):
        problem(f"not a valid JSON schema: {error.message} ({how})", (*fields["parameters"], *error.path))
    if tool.parameters.get("type") != "object":
        problem(f"the parameters schema must have type 'object' ({how})", (*fields["parameters"], "type"))
    return ReadTool(tool, fmt) if len(problems) == found else None


def read_tools(text: str, shown: str) -> list[ReadTool]:
    """Every tool of one JSON document in any of the four formats; ValidationFailed with every problem
    (file, line, field as written, and the format it was read as) when any tool is bad."""
    problems: list[Problem] = []
    located = parse_json(text, shown, problems)
    if located is None:
        raise ValidationFailed(problems, "tools file")
    entries, reason = _entries(located.data)
    if reason:
        raise ValidationFailed([Problem(shown, reason, 1)], "tools file")
    read = [t for where, e, mcp in entries if (t := _read_entry(e, where, mcp, shown, located, problems))]
    names: dict[str, int] = {}
    for i, item in enumerate(read):
        if item.tool.name in names:
            problems.append(Problem(shown, f"tool name '{item.tool.name}' is defined twice"))
        names[item.tool.name] = i
    if problems:
        raise ValidationFailed(problems, "tools file")
    if not read:
        raise ValidationFailed([Problem(shown, "no tool in the file", 1)], "tools file")
    return read
