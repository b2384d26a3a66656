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
# an example in quotes: "such as '2 + 2'", "for example \"Main St\"", "e.g. 'Apt 1'"
_QUOTED_EXAMPLE = re.compile(r"\b(?:such as|for example|for instance|e\.g\.|like)\s*(['\"])([^'\"]{1,60})\1")
# free-text parameters: what the agent writes in its own words
_FREE_TEXT = ("summary", "description", "issue", "notes", "note", "reason", "thought")
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
    if lowered in ("first_name", "given_name", "firstname"):
        return rng.choice(_FIRST)
    if lowered in ("last_name", "family_name", "surname", "lastname"):
        return rng.choice(_LAST)
    if "name" in lowered:
        return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
    if "phone" in lowered or "contact" in lowered:
        return f"+1 555 01{rng.randrange(10, 99)}"
    if example := _EXAMPLE.search(schema.get("description", "")):
        return example.group(1)
    if (quoted := _QUOTED_EXAMPLE.search(schema.get("description", ""))) and quoted.group(2).strip():
        return quoted.group(2)
    if any(word in lowered for word in _FREE_TEXT):
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
        return object_from_tables(schema, tables, rng, given)
    item = schema.get("items", {}) if schema.get("type") == "array" else schema
    if item.get("type") == "object":  # a list of objects (a booking's passengers): one row that has them
        found_object = object_from_tables(item, tables, rng, given)
        return None if found_object is None else [found_object]
    column = name if schema.get("type") != "array" else name.removesuffix("s")
    best: list[dict[str, str]] = []
    rank = (-1, -1, -1)
    found = column
    for _, rows in tables:
        if not rows:
            continue
        # a qualified name ("new_sku", "return_store_id") takes a table's key (first) column of its last words
        col = column if column in rows[0] else column.split("_", 1)[-1]
        if col not in rows[0] or (col != column and col != next(iter(rows[0]))):
            continue
        agree = [r for r in rows if all(str(given[c]) == r[c] for c in r if c in given and c != col)]
        if col != column and (others := _replacements(agree, rows, col, given)) is not None:
            agree = others  # a replacement (`new_item_ids` for `item_ids`): another row of the same kind
        # the table that agrees with the most values given (the customer's own reservations) comes first
        bound = len({c for c in rows[0] if c in given and c != col})
        if agree and (bound, len(set(fields) & set(rows[0])), len(agree)) > rank:
            best, rank, found = agree, (bound, len(set(fields) & set(rows[0])), len(agree)), col
    numeric = item.get("type") in ("number", "integer")
    raw = [_number(r[found]) if numeric else r[found] for r in best]
    values = [v for v in raw if not check_arguments({"properties": {"v": item}}, {"v": v})]
    if not values:
        return None
    value = rng.choice(values)
    return [value] if schema.get("type") == "array" else value


def _replacements(
    agree: list[dict[str, str]], rows: list[dict[str, str]], key: str, given: dict[str, Any]
) -> list[dict[str, str]] | None:
    """The rows that can stand beside the one given under `key` (or its plural) for a qualified parameter
    (`new_item_ids` for `item_ids`, `to_account_id` for `account_id`): never that row itself, and of the
    others first those with the same ids (`product_id`: another variant of the same product; `member_id`:
    the member's other account); None when nothing was given."""
    said = given.get(key, given.get(f"{key}s"))
    said = said[0] if isinstance(said, list) and said else said
    ref = next((r for r in rows if r[key] == str(said)), None) if said is not None else None
    if ref is None:
        return None
    same = [c for c in ref if c != key and c.endswith("_id")]
    for pool in (agree, rows):
        kin = [r for r in pool if r[key] != ref[key] and all(r[c] == ref[c] for c in same)]
        if kin:
            return kin
    return [r for r in agree if r[key] != ref[key]] or [r for r in rows if r[key] != ref[key]]


def object_from_tables(
    schema: dict[str, Any], tables: Sequence[Table], rng: random.Random, given: dict[str, Any] | None = None
) -> dict | None:
    """An object value (an address, a passenger) from one row of a table that has a column for each of
    its required properties (each property, when none is required) and whose values fit them, a row
    agreeing with the values `given` where there is one (the customer's own payment method); None when
    the schema is no object or no table fits."""
    props = (schema.get("properties") or {}) if schema.get("type") == "object" else {}
    needed = set(schema.get("required") or props)
    for _, rows in tables:
        if not props or not rows or not needed <= set(rows[0]):
            continue
        typed = [{p: _number(r[p]) if props[p].get("type") in ("number", "integer") else r[p]
                  for p in props if p in r} for r in rows]  # fmt: skip
        usable = [(r, o) for r, o in zip(rows, typed, strict=True) if not check_arguments(schema, o)]
        agreeing = [
            (r, o) for r, o in usable if all(str(v) == r[k] for k, v in (given or {}).items() if k in r)
        ]
        if usable:
            return rng.choice(agreeing or usable)[1]
    return None


def rows_for(schema: dict[str, Any], arguments: dict[str, Any], tables: Sequence[Table]) -> list | None:
    """A list of objects (an order's items) from the rows of the table that has every required property
    of the items as a column and agrees with a call argument (the rows of `order_id`); an empty list when
    such a table has no row for the argument (an order not shipped has no shipment); None otherwise."""
    item = schema.get("items") or {} if schema.get("type") == "array" else {}
    props, needed = item.get("properties") or {}, set(item.get("required") or [])
    fits = False  # a table that holds such rows, keyed by an argument: none of its rows is an empty list
    for _, rows in tables:
        if not props or not needed or not rows or not needed <= set(rows[0]):
            continue
        shared = [k for k, v in arguments.items() if k in rows[0] and isinstance(v, str)]
        fits = fits or bool(shared)
        found = [r for r in rows if shared and all(r[k] == arguments[k] for k in shared)]
        if found:
            listed = [{p: _number(r[p]) if props[p].get("type") in ("number", "integer") else r[p]
                       for p in props if p in r} for r in found]  # fmt: skip
            return [o for o in listed if not check_arguments(item, o)] or None
    return [] if fits else None


def _column_schema(values: Sequence[str]) -> dict[str, Any]:
    """The JSON type of a table column, by its values: integer, number, else string. Codes stay strings:
    digits with a leading zero ("02134"), or all of one length of four or more (a zip code, a product id)."""
    filled = [v.strip() for v in values if v and v.strip()]
    if filled and len({len(v) for v in filled}) == 1 and len(filled[0]) >= 4 and filled[0].isdigit():
        return {"type": "string"}
    if filled and all(re.fullmatch(r"-?(0|[1-9]\d*)", v) for v in filled):
        return {"type": "integer"}
    if filled and all(re.fullmatch(r"-?(0|[1-9]\d*)(\.\d+)?", v) for v in filled):
        return {"type": "number"}
    return {"type": "string"}


def _keys(tables: Sequence[Table]) -> dict[str, str]:
    """Column -> the table it keys: a first column whose values are all different (of two tables keyed by
    one column, the one with more columns: an order, not its shipment)."""
    keys: dict[str, tuple[int, str]] = {}
    for name, rows in tables:
        first = next(iter(rows[0]))
        if len({r[first] for r in rows}) == len(rows) and len(rows[0]) > keys.get(first, (0, ""))[0]:
            keys[first] = (len(rows[0]), name)
    return {column: name for column, (_, name) in keys.items()}


def _owner(name: str, rows: list[dict[str, str]], keys: dict[str, str]) -> str | None:
    """The table a table's rows belong to: the one its first column keys when that is another table's key
    (an order's lines, its shipment); for a table keyed by its first column, the one keyed by the next
    column that is a key (a variant belongs to its product; an order line to its order, not its product)."""
    columns = list(rows[0])
    if keys.get(columns[0], name) != name:
        return keys[columns[0]]
    return next((keys[c] for c in columns[1:] if keys.get(c, name) != name), None)


def returns_from_tables(parameters: dict[str, Any], tables: Sequence[Table]) -> dict[str, Any] | None:
    """A result schema inferred from the tables for a tool that has none (issue 26: "a result shape
    inferred from the tables when a tool has none"): the columns of the table that has the most of the
    tool's required parameters as columns (`email` -> the customers table; a booking's origin,
    destination and cabin -> the reservations table), of two the one keyed by a required parameter
    (`order_id` -> the orders table, not the order lines), then the one with fewer other columns; with a
    key, each table whose rows belong to that one (the order's lines, _owner) is a list of its rows under
    the table's name. None when no table holds a required parameter."""
    required = [p for p in parameters.get("required") or [] if isinstance(p, str)]
    usable = [(name, rows) for name, rows in tables if rows]
    keys = _keys(usable)
    best: tuple[tuple[int, int, int], str, list[dict[str, str]]] | None = None
    for name, rows in usable:
        columns = list(rows[0])
        shared = len(set(required) & set(columns))
        keyed = 1 if keys.get(columns[0]) == name and columns[0] in required else 0
        rank = (shared, keyed, shared - len(columns))
        if shared and (best is None or rank > best[0]):
            best = (rank, name, rows)
    if best is None:
        return None
    (_, keyed, _), parent, rows = best
    props: dict[str, Any] = {c: _column_schema([r[c] for r in rows]) for c in rows[0]}
    if keyed:
        key = next(iter(rows[0]))
        for name, child in usable:
            if name != parent and key in child[0] and _owner(name, child, keys) == parent:
                columns = [c for c in child[0] if c != key]
                item = {c: _column_schema([r[c] for r in child]) for c in columns}
                field = re.sub(r"\W+", "_", name.rsplit("/", 1)[-1].removesuffix(".csv")).strip("_").lower()
                props[field] = {
                    "type": "array",
                    "items": {"type": "object", "properties": item, "required": columns},
                }
    return {"type": "object", "properties": props}


def with_table_returns(tools: Sequence[Any], tables: Sequence[Table]) -> list[Any]:
    """The tools, each one without a return schema given the one its tables imply (returns_from_tables);
    a tool no table fits keeps none."""
    return [
        t.model_copy(update={"returns": returns_from_tables(t.parameters, tables)})
        if t.returns is None
        else t
        for t in tools
    ]


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


def made_up(name: str, value: Any) -> bool:
    """Whether the sampler fell back to the field's own name with a number (PICKUP-FROM-289 for
    `pickup_from`): nothing real filled it, and no system writes that."""
    own = name.upper().removesuffix("S").replace("_", "-")
    texts = value if isinstance(value, list) else [value]
    return any(isinstance(t, str) and re.fullmatch(rf"{re.escape(own)}S?-\d+", t) for t in texts)


def without_made_up(output: dict[str, Any], returns: dict[str, Any] | None, rng: random.Random) -> dict:
    """An API output as a real one reads: an optional field nothing real filled is left out, as an API
    leaves it empty; a required one is a reference the system issued (`ticket_id` -> T-482913)."""
    required = set((returns or {}).get("required") or [])
    kept: dict[str, Any] = {}
    for name, value in output.items():
        if not made_up(name, value):
            kept[name] = value
        elif name in required:
            words = [w for w in name.split("_") if w not in ("id", "number", "code")]
            kept[name] = f"{''.join(w[0] for w in words).upper() or 'R'}-{rng.randrange(100000, 999999)}"
    return kept


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
