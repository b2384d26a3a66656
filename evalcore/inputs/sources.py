"""Reading files with positions: text that must be UTF-8, and YAML/JSON whose fields map to line numbers.

Everything read here is untrusted: sizes are bounded (evalcore.inputs.limits), YAML aliases are refused
(a few hundred bytes of nested aliases expand to gigabytes), duplicate keys are reported with both lines
(otherwise the last one silently wins), and NUL characters are refused (PostgreSQL cannot store them).
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import sqlalchemy as sa
import yaml
from pydantic import ValidationError

from evalcore.errors import Problem
from evalcore.inputs.limits import MAX_FILE_MB_ENV, MAX_NESTING, MAX_YAML_NODES, current_limits, megabytes


def decode_text(raw: bytes | str, shown: str, problems: list[Problem]) -> str | None:
    """UTF-8 text (bytes, or text already decoded) without its byte-order mark, or None after recording a
    problem (not UTF-8, or a NUL character: not text, and PostgreSQL cannot store it)."""
    if isinstance(raw, str):
        text = raw.removeprefix("\ufeff")
    else:
        raw = raw.removeprefix(codecs.BOM_UTF8)  # Windows editors add it; it would stick to the first field
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            problems.append(
                Problem(shown, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})", line)
            )
            return None
    nul = text.find("\x00")
    if nul >= 0:
        problems.append(
            Problem(shown, "contains a NUL character: not a text file", text.count("\n", 0, nul) + 1)
        )
        return None
    return text


def read_bounded(path: Path, shown: str, problems: list[Problem], limit: int, env: str) -> bytes | None:
    """The file's bytes, or None after recording a problem (unreadable, or larger than `limit`)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)  # never more than the limit, even if the file grows meanwhile
    except OSError as exc:
        problems.append(Problem(shown, f"cannot read the file: {exc.strerror}"))
        return None
    if len(raw) > limit:
        size = max(path.stat().st_size, len(raw))
        problems.append(
            Problem(shown, f"{megabytes(size)} is over the {megabytes(limit)} limit of one file (set {env})")
        )
        return None
    return raw


def read_text(path: Path, shown: str, problems: list[Problem]) -> str | None:
    """The file's text, or None after recording a problem (too large, unreadable, not UTF-8, NUL)."""
    raw = read_bounded(path, shown, problems, current_limits().max_file_bytes, MAX_FILE_MB_ENV)
    return decode_text(raw, shown, problems) if raw is not None else None


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


# Longer integers are no count, id or amount a tool or a conversation holds; Python refuses to read past
# 4,300 digits with a ValueError, and reading close to that costs quadratic time.
MAX_INTEGER_DIGITS = 100


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases, deep nesting and huge node counts, and records duplicate keys."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0
        self.nodes = 0
        self.duplicates: list[tuple[str, int, int]] = []  # (key, its line, line of its first use)

    def _refuse(self, message: str) -> None:
        raise yaml.composer.ComposerError(None, None, message, self.peek_event().start_mark)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        if self.check_event(yaml.AliasEvent):
            self._refuse("aliases (*name) are not accepted in input files: write the value out")
        self.nodes += 1
        if self.nodes > MAX_YAML_NODES:
            self._refuse(f"more than {MAX_YAML_NODES} values in one file")
        if self.depth >= MAX_NESTING:
            self._refuse(f"nested deeper than {MAX_NESTING} levels")
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_bounded_int(self, node: yaml.ScalarNode) -> int:
        """An integer, refused with its line past MAX_INTEGER_DIGITS digits (see there)."""
        digits = sum(c.isdigit() for c in str(node.value))
        if digits > MAX_INTEGER_DIGITS:
            message = f"an integer of {digits} digits (at most {MAX_INTEGER_DIGITS})"
            raise yaml.constructor.ConstructorError(None, None, message, node.start_mark)
        return self.construct_yaml_int(node)

    def compose_mapping_node(self, anchor: str | None) -> yaml.MappingNode:
        node = super().compose_mapping_node(anchor)
        first: dict[tuple[str, str], int] = {}
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode):
                line = key.start_mark.line + 1
                if (key.tag, key.value) in first:
                    self.duplicates.append((key.value, line, first[key.tag, key.value]))
                first.setdefault((key.tag, key.value), line)
        return node


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_bounded_int)
_BOOL = "tag:yaml.org,2002:bool"


class Yaml12BoolLoader(_StrictLoader):
    """_StrictLoader reading booleans as YAML 1.2 does (Rasa's ruamel reader): only true/false, so `Yes`,
    `no`, `on` and `off` stay text."""

    yaml_implicit_resolvers: ClassVar = {
        first: [(tag, rx) for tag, rx in resolvers if tag != _BOOL]
        for first, resolvers in _StrictLoader.yaml_implicit_resolvers.items()
    }


Yaml12BoolLoader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _compose(
    text: str, loader_class: type[_StrictLoader] = _StrictLoader
) -> tuple[yaml.Node | None, Any, list[tuple[str, int, int]]]:
    """The node tree, the data built from it (one parse for both) and the duplicate keys found."""
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
        return root, data, loader.duplicates
    finally:
        loader.dispose()


def _yaml_error(exc: yaml.YAMLError, text: str) -> tuple[str, int | None]:
    """The reason and 0-based line of a YAML error; an error found only at the end of the text (an
    unclosed quote or bracket) is placed where the unclosed thing began."""
    mark = getattr(exc, "problem_mark", None)
    reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context, context_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if mark is not None and context_mark is not None and mark.index >= len(text.rstrip()):
        return f"{context} that starts here: {reason}", context_mark.line
    return reason, mark.line if mark is not None else None


def _unstorable(text: str) -> str | None:
    """Why the store cannot hold this string (escapes in JSON and YAML can produce these), or None."""
    if "\x00" in text:
        return "contains a NUL character"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "contains an unpaired surrogate escape (\\ud800-\\udfff): not valid Unicode"
    return None


def value_problems(data: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """(location, why) of every key or value the store cannot hold (a NUL character, an unpaired
    surrogate, bytes) and of nesting deeper than MAX_NESTING (JSON has no composer to stop it early, and
    validating deeper data would recurse)."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        if len(loc) > MAX_NESTING:
            return [*found, (loc[:MAX_NESTING], f"nested deeper than {MAX_NESTING} levels")]
        if isinstance(value, str) and (reason := _unstorable(value)):
            found.append((loc, reason))
        elif isinstance(value, bytes):  # YAML's !!binary: validation would decode it to text unchecked
            found.append((loc, "binary values (!!binary) are not accepted"))
        elif isinstance(value, dict):
            stack += [(k, loc) for k in value]  # a key's problem is its mapping's
            stack += [(v, (*loc, k)) for k, v in value.items()]
        elif isinstance(value, list | tuple | set | frozenset):  # YAML's !!set and !!omap build these
            stack += [(v, (*loc, i)) for i, v in enumerate(value)]
    return sorted(found, key=lambda f: [str(p) for p in f[0]])


def _check_values(located: Located, shown: str, problems: list[Problem]) -> bool:
    """Record value_problems with their lines; False if there were any."""
    found = value_problems(located.data)
    for loc, message in found:
        problems.append(Problem(shown, message, located.line_of(loc), dotted(loc) or None))
    return not found


def parse_yaml(
    text: str,
    shown: str,
    problems: list[Problem],
    line_offset: int = 0,
    *,
    yaml12_bools: bool = False,
) -> Located | None:
    """Parse YAML strictly, recording a problem with its line on failure or on a duplicate key;
    `yaml12_bools` reads only true/false as booleans (Yaml12BoolLoader), as Rasa's files are read."""
    try:
        root, data, duplicates = _compose(text, Yaml12BoolLoader if yaml12_bools else _StrictLoader)
    except yaml.YAMLError as exc:
        reason, line = _yaml_error(exc, text)
        problems.append(
            Problem(shown, f"invalid YAML: {reason}", line + 1 + line_offset if line is not None else None)
        )
        return None
    for key, line, first in duplicates:
        problems.append(
            Problem(
                shown, f"key '{key}' is given twice (also on line {first + line_offset})", line + line_offset
            )
        )
    located = Located(data, root, line_offset)
    if duplicates or not _check_values(located, shown, problems):
        return None
    return located


_CONSTANT = re.compile(r"(?<=[\[:,\s])-?(?:NaN|Infinity)\b")


def _refused_at(text: str, pattern: re.Pattern[str] | str, message: str) -> json.JSONDecodeError:
    """A JSONDecodeError at the first place `pattern` matches, so the line is reported as for others."""
    found = re.search(pattern, text)
    return json.JSONDecodeError(message, text, found.start() if found else 0)


def load_json(text: str) -> tuple[Any, list[str]]:
    """json.loads, and the keys given twice in one object (json.loads alone keeps the last silently).
    NaN and Infinity (which json.loads accepts but JSON does not have, and YAML importers refuse), numbers
    that overflow to infinity and integers over MAX_INTEGER_DIGITS digits are refused as invalid JSON.
    Raises json.JSONDecodeError, or RecursionError on absurd nesting."""
    duplicated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                duplicated.append(key)
            out[key] = value
        return out

    def constant(name: str) -> Any:
        raise _refused_at(text, _CONSTANT, f"{name} is not a JSON number")

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
            message = f"an integer of {len(digits.lstrip('-'))} digits (at most {MAX_INTEGER_DIGITS})"
            raise _refused_at(text, rf"\d{{{MAX_INTEGER_DIGITS + 1},}}", message)
        return int(digits)

    def real(digits: str) -> float:
        value = float(digits)
        if not math.isfinite(value):
            raise _refused_at(text, re.escape(digits), f"{digits[:40]} is too large for a number")
        return value

    decoded = json.loads(
        text, object_pairs_hook=pairs, parse_constant=constant, parse_int=integer, parse_float=real
    )
    return decoded, duplicated


def parse_json(text: str, shown: str, problems: list[Problem]) -> Located | None:
    """Parse JSON strictly (duplicate keys are problems); field lines come from reading the same text as
    YAML (JSON is valid YAML)."""
    try:
        data, duplicated = load_json(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem(shown, f"invalid JSON: {exc.msg}", exc.lineno))
        return None
    except RecursionError:
        problems.append(Problem(shown, f"invalid JSON: nested deeper than {MAX_NESTING} levels"))
        return None
    try:
        root, _, lines = _compose(text)
    except yaml.YAMLError:
        root, lines = None, []
    if duplicated:
        if len(lines) != len(duplicated):  # YAML read it differently: name the keys without lines
            lines = [(key, None, None) for key in duplicated]
        for key, line, first in lines:
            also = f" (also on line {first})" if first else ""
            problems.append(Problem(shown, f"key '{key}' is given twice{also}", line))
        return None
    located = Located(data, root)
    return located if _check_values(located, shown, problems) else None


def json_lines(
    text: str,
    shown: str,
    problems: list[Problem],
    field: Callable[[tuple[str | int, ...]], str] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Each non-blank line of a JSONL text that holds storable JSON, with its line number; a line that
    is not valid JSON, gives a key twice or holds an unstorable value is a problem naming its line (and
    field, as `field` writes a location: `dotted` by default) and is not yielded."""
    name = field or dotted
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            data, duplicated = load_json(raw)
        except json.JSONDecodeError as exc:
            problems.append(Problem(shown, f"not valid JSON: {exc.msg} (column {exc.colno})", number))
            continue
        except RecursionError:
            problems.append(Problem(shown, "not valid JSON: nested too deeply", number))
            continue
        bad = [Problem(shown, f"key '{key}' is given twice", number, key) for key in duplicated]
        bad += [Problem(shown, why, number, name(loc) or None) for loc, why in value_problems(data)]
        if bad:
            problems.extend(bad)
            continue
        yield number, data


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
        loc = prefix + tuple(  # validator wrappers and tagged-union variants are no fields
            p for p in error["loc"] if not (isinstance(p, str) and p.startswith(("function-", "variant-")))
        )
        message = error["msg"].removeprefix(
            "Value error, "
        )  # a validator's own message, without pydantic's tag
        if error["type"] == "extra_forbidden":
            message = "unknown field (check its spelling)"
        elif error["type"] == "missing":
            message = "required field is missing"
        problems.append(Problem(shown, message, located.line_of(loc), dotted(loc) or None))
    return problems
