"""Reading files with positions: text that must be UTF-8, and YAML/JSON whose fields map to line numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sqlalchemy as sa
import yaml
from pydantic import ValidationError

from evalcore.errors import Problem


def read_text(path: Path, shown: str, problems: list[Problem]) -> str | None:
    """The file's text, or None after recording a problem (not UTF-8, unreadable)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.append(Problem(shown, f"cannot read the file: {exc.strerror}"))
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problems.append(
            Problem(shown, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})", line)
        )
        return None


class Located:
    """A parsed YAML or JSON document together with the line of every field in it."""

    def __init__(self, data: Any, root: yaml.Node | None, line_offset: int = 0) -> None:
        self.data = data
        self.root = root
        self.line_offset = line_offset

    def line_of(self, loc: tuple[str | int, ...]) -> int | None:
        """1-based line of the field at `loc` (or of the deepest existing parent), if known."""
        node = self.root
        line = node.start_mark.line + 1 if node is not None else None
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                child = next((v for k, v in node.value if getattr(k, "value", None) == str(part)), None)
                if child is None:
                    break
                key_node = next(k for k, v in node.value if v is child)
                node, line = child, key_node.start_mark.line + 1
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                break
        return line + self.line_offset if line is not None else None


def parse_yaml(text: str, shown: str, problems: list[Problem], line_offset: int = 0) -> Located | None:
    """Parse YAML, recording a problem with the line of the syntax error on failure."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 + line_offset if mark is not None else None
        reason = getattr(exc, "problem", None) or str(exc)
        problems.append(Problem(shown, f"invalid YAML: {reason}", line))
        return None
    return Located(data, root, line_offset)


def parse_json(text: str, shown: str, problems: list[Problem]) -> Located | None:
    """Parse JSON strictly; field lines come from reading the same text as YAML (JSON is valid YAML)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem(shown, f"invalid JSON: {exc.msg}", exc.lineno))
        return None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        root = None
    return Located(data, root)


def dotted(loc: tuple[str | int, ...]) -> str:
    """A pydantic location as a field path, e.g. 'chatbot_info.constraints[2]'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def check_length(
    value: str, column: sa.Column, shown: str, problems: list[Problem], located: Located | None, loc: tuple
) -> None:
    """Record a problem when `value` is longer than the store's column for it allows."""
    limit = getattr(column.type, "length", None)
    if limit is not None and len(value) > limit:
        line = located.line_of(loc) if located is not None else None
        problems.append(
            Problem(shown, f"too long: {len(value)} characters, at most {limit}", line, dotted(loc))
        )


def validation_problems(
    exc: ValidationError, shown: str, located: Located, prefix: tuple = ()
) -> list[Problem]:
    """One problem per pydantic error, with the field's path and line."""
    problems = []
    for error in exc.errors():
        loc = prefix + tuple(
            p for p in error["loc"] if not (isinstance(p, str) and p.startswith("function-"))
        )
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = "unknown field (check its spelling)"
        elif error["type"] == "missing":
            message = "required field is missing"
        problems.append(Problem(shown, message, located.line_of(loc), dotted(loc) or None))
    return problems
