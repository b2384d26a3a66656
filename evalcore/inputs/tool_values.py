"""Values that respect a tool's JSON schema: the arguments and results of offline tool calls, for every
generator that writes them (procedure conversations, seed 001 Section 3.8, "verifying API input and output
types"; tool-use situations, seed 004 Section 2.2, where tool executions are simulated).

A value follows its property's schema: an enum member, a string matching a simple `pattern`, an email or
date for those formats, an integer or number within its bounds (an age is an adult's), a boolean, an array
of one item. Plain strings take a value from the parameter's name (names, phones, summaries) or the
example its description gives ("e.g. VT-BAT-500"). `check_arguments` validates arguments against the
schema, so a generated conversation whose call breaks its tool's types is caught.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

import jsonschema

_FIRST = ("Alex", "Sam", "Jordan", "Priya", "Mateo", "Lena", "Chen", "Amara")
_LAST = ("Kim", "Rivera", "Novak", "Okafor", "Schmidt", "Tanaka", "Haddad", "Brooks")
_EXAMPLE = re.compile(r"e\.g\.\s*\[?\"?([A-Za-z0-9][\w\-]*)")
_CLASS = {"0-9": string.digits, "A-Z": string.ascii_uppercase, "a-z": string.ascii_lowercase}


def sample_pattern(pattern: str, rng: random.Random) -> str | None:
    """A string matching a simple regular expression (literals, `(a|b)`, `[0-9]`-style classes with
    `{n}`, `+` or `*`), or None when the pattern uses more than that."""
    body = pattern.removeprefix("^").removesuffix("$")
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "(":
            end = body.find(")", i)
            if end < 0:
                return None
            piece, i = rng.choice(body[i + 1 : end].split("|")), end + 1
        elif c == "[":
            end = body.find("]", i)
            chars = "".join(_CLASS.get(part, part) for part in re.findall(r".-.|.", body[i + 1 : end]))
            if end < 0 or not chars:
                return None
            count, i = 1, end + 1
            if i < len(body) and body[i] == "{":
                close = body.find("}", i)
                count, i = int(body[i + 1 : close].split(",")[0]), close + 1
            elif i < len(body) and body[i] in "+*":
                count, i = 4, i + 1
            piece = "".join(rng.choice(chars) for _ in range(count))
        elif c == "\\" and i + 1 < len(body):
            piece, i = body[i + 1], i + 2
        elif c in ".?|{}+*":
            return None
        else:
            piece, i = c, i + 1
        out.append(piece)
    text = "".join(out)
    return text if re.fullmatch(pattern, text) else None


def _string(name: str, schema: dict[str, Any], rng: random.Random, topic: str) -> str:
    fmt, lowered = schema.get("format"), name.lower()
    if fmt == "email" or "email" in lowered:
        return f"{rng.choice(_FIRST).lower()}.{rng.choice(_LAST).lower()}@example.com"
    if fmt == "date" or lowered.endswith("date") or lowered == "date":
        return (date(2026, 12, 1) + timedelta(days=rng.randrange(0, 40))).isoformat()
    pattern = schema.get("pattern")
    if pattern and (sampled := sample_pattern(pattern, rng)) is not None:
        return sampled
    if "name" in lowered:
        return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
    if "phone" in lowered or "contact" in lowered:
        return f"+1 555 01{rng.randrange(10, 99)}"
    if example := _EXAMPLE.search(schema.get("description", "")):
        return example.group(1)
    if any(word in lowered for word in ("summary", "description", "issue", "notes", "reason")):
        return f"Customer wants to {topic}."
    return f"{name.upper().replace('_', '-')}-{rng.randrange(100, 999)}"


def value_for(name: str, schema: dict[str, Any], rng: random.Random, topic: str = "get help") -> Any:
    """A value of the property `name` that its schema accepts."""
    if "enum" in schema:
        return rng.choice([v for v in schema["enum"] if v is not None] or schema["enum"])
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "integer":
        if "age" in name.lower().split("_"):
            # A person's age: an adult, as most bookings need (the schema's minimum is often a child's).
            top = int(schema.get("maximum", 120))
            low = min(max(int(schema.get("minimum", 0)), 18), top)
            return rng.randint(low, max(low, min(top, 70)))
        low = int(schema.get("minimum", 1))
        return rng.randint(low, max(low, min(int(schema.get("maximum", low + 5)), low + 5)))
    if kind == "number":
        return float(schema.get("minimum", 0)) + rng.randrange(1, 50)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [value_for(name.rstrip("s"), schema.get("items", {}), rng, topic)]
    if kind == "object":
        return fill_arguments(schema, rng, topic)
    return _string(name, schema, rng, topic)


def fill_arguments(schema: dict[str, Any], rng: random.Random, topic: str = "get help") -> dict[str, Any]:
    """Values for every required property of an object schema (every property when none is required:
    a tool's result schema usually names none)."""
    properties = schema.get("properties") or {}
    wanted = schema.get("required") or list(properties)
    return {name: value_for(name, properties.get(name, {}), rng, topic) for name in wanted}


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Why the arguments break the schema (one message per problem); empty when they fit."""
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    return [
        f"{'.'.join(map(str, e.path)) or 'arguments'}: {e.message}" for e in validator.iter_errors(arguments)
    ]


Table = tuple[str, list[dict[str, str]]]  # a project table: its name and rows
_ADULT = (18, 70)  # an age in a booking: the procedures' adult rules apply unless the schema says less


def from_tables(
    name: str,
    schema: dict[str, Any],
    tables: Sequence[Table],
    rng: random.Random,
    given: dict[str, Any],
    fields: Sequence[str] = (),
) -> Any | None:
    """A value of `name` from the project's tables: a column of that name (or its singular, for an array
    parameter), from a row agreeing with the values already given (the store's own fleet), in the table
    that has the most of `fields` (the other fields of the call or object) as columns; None when no table
    has the column or no value fits the schema."""
    if schema.get("type") == "object":
        return object_from_tables(schema, tables, rng)
    column = name if schema.get("type") != "array" else name.removesuffix("s")
    item = schema.get("items", {}) if schema.get("type") == "array" else schema
    best: list[dict[str, str]] = []
    rank = (-1, -1)
    found = column
    for _, rows in tables:
        if not rows:
            continue
        # a qualified name ("new_sku", "return_store_id") takes a table's key (first) column of its last words
        col = column if column in rows[0] else column.split("_", 1)[-1]
        if col not in rows[0] or (col != column and col != next(iter(rows[0]))):
            continue
        agree = [r for r in rows if all(str(given[c]) == r[c] for c in r if c in given and c != col)]
        if agree and (len(set(fields) & set(rows[0])), len(agree)) > rank:
            best, rank, found = agree, (len(set(fields) & set(rows[0])), len(agree)), col
    numeric = item.get("type") in ("number", "integer")
    raw = [_number(r[found]) if numeric else r[found] for r in best]
    values = [v for v in raw if not check_arguments({"properties": {"v": item}}, {"v": v})]
    if not values:
        return None
    value = rng.choice(values)
    return [value] if schema.get("type") == "array" else value


def object_from_tables(schema: dict[str, Any], tables: Sequence[Table], rng: random.Random) -> dict | None:
    """An object value (an address) from one row of a table that has a column for each of its properties
    and whose values fit them; None when the schema is no object or no table fits."""
    props = (schema.get("properties") or {}) if schema.get("type") == "object" else {}
    for _, rows in tables:
        if not props or not rows or not set(props) <= set(rows[0]):
            continue
        usable = [r for r in rows if not check_arguments(schema, {p: r[p] for p in props})]
        if usable:
            row = rng.choice(usable)
            return {p: row[p] for p in props}
    return None


def rows_for(schema: dict[str, Any], arguments: dict[str, Any], tables: Sequence[Table]) -> list | None:
    """A list of objects (an order's items) from the rows of the table that has every required property
    of the items as a column and agrees with a call argument (the rows of `order_id`); None otherwise."""
    item = schema.get("items") or {} if schema.get("type") == "array" else {}
    props, needed = item.get("properties") or {}, set(item.get("required") or [])
    for _, rows in tables:
        if not props or not needed or not rows or not needed <= set(rows[0]):
            continue
        shared = [k for k, v in arguments.items() if k in rows[0] and isinstance(v, str)]
        found = [r for r in rows if shared and all(r[k] == arguments[k] for k in shared)]
        if found:
            listed = [{p: _number(r[p]) if props[p].get("type") in ("number", "integer") else r[p]
                       for p in props if p in r} for r in found]  # fmt: skip
            return [o for o in listed if not check_arguments(item, o)] or None
    return None


def _number(text: str) -> Any:
    try:
        return int(text) if text.strip().lstrip("-").isdigit() else float(text)
    except ValueError:
        return text


def is_failure(outcome: str) -> bool:
    """Whether an API outcome says the call found or did nothing ("not_found", "none_available",
    "email_mismatch", "error"): its output then carries only the fields its schema requires."""
    return bool(
        re.search(
            r"\b(not|no|none|error|failed|mismatch|outside|wrong|closed|too|non|un\w+)",
            outcome.replace("_", " "),
        )
    )


def consistent(
    name: str, value: Any, schema: dict[str, Any], given: dict[str, Any], rng: random.Random
) -> Any:
    """`value` made coherent with the values `given` so far (module docstring); the schema still holds."""
    lowered = name.lower()
    if "email" in lowered and isinstance(value, str):
        person = next((v for k, v in given.items() if k.endswith("name") and isinstance(v, str)), None)
        if person and " " in person.strip():
            first, last = person.lower().split()[:2]
            value = f"{first}.{last}@example.com"
    for first, last in (("start_", "end_"), ("from_", "to_")):
        start = first + lowered.removeprefix(last)
        if lowered.startswith(last) and isinstance(given.get(start), str) and isinstance(value, str):
            try:
                begun = date.fromisoformat(given[start])
            except ValueError:
                continue
            value = (begun + timedelta(days=rng.randrange(0, 4))).isoformat()
    if lowered.endswith("age") and schema.get("type") == "integer":
        low = max(int(schema.get("minimum", _ADULT[0])), _ADULT[0])
        high = min(int(schema.get("maximum", _ADULT[1])), _ADULT[1])
        value = rng.randint(low, high) if low <= high else value
    return value


def result_values(
    returns: dict[str, Any] | None,
    outcome: str,
    arguments: dict[str, Any],
    rng: random.Random,
    tables: Sequence[Table] = (),
) -> dict[str, Any]:
    """An API output for `outcome`: `result` set to it, every other field of the `returns` schema filled,
    fields named like an argument (nested ones too) repeating it, and from the tables where a column has
    the field's name; a failure (`is_failure`) carries only the required fields, with nothing listed.
    Without a schema, just the outcome."""
    out: dict[str, Any] = {"result": outcome}
    failed = is_failure(outcome)
    required = set((returns or {}).get("required") or [])
    for name, spec in ((returns or {}).get("properties") or {}).items():
        if failed and spec.get("type") == "array" and name in required:
            out[name] = []
        elif name != "result" and (name in required or not failed):
            out[name] = _repeat(value_for(name, spec, rng), spec, arguments, rng, tables, failed)
            if name in arguments:
                out[name] = arguments[name]
    return out


def _repeat(
    value: Any,
    schema: dict[str, Any],
    arguments: dict[str, Any],
    rng: random.Random,
    tables: Sequence[Table],
    failed: bool,
) -> Any:
    """A generated value with nested fields named like an argument set to it, or taken from the tables
    (one row for one object); a successful call's counts at least 1 (it found something)."""
    if isinstance(value, list):
        return [_repeat(v, schema.get("items", {}), arguments, rng, tables, failed) for v in value]
    if value == 0 and type(value) is int and not failed:
        return 1
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        out: dict[str, Any] = {}
        for k, v in value.items():
            v = _repeat(v, props.get(k, {}), arguments, rng, tables, failed)
            found = arguments.get(k)
            if found is None:
                found = from_tables(k, props.get(k, {}), tables, rng, {**arguments, **out}, list(props))
            out[k] = (
                v
                if found is None or check_arguments({"properties": {k: props.get(k, {})}}, {k: found})
                else found
            )
        return out
    return value
