"""Argument and result values of a tool group's calls, for the offline templates (seed 004, Section 2.2:
the tool executions are simulated). Values come from the one schema sampler all generators share
(`evalcore.inputs.tool_values`); deterministic given the random generator; every value is valid for its
schema unless a template breaks it on purpose.

Values of one call are also consistent with each other and with the project: parameters that match the
columns of one of the project's tables take one row's values (a store and a SKU its rental fleet holds),
and a range ends no earlier than it starts (`end_date` >= `start_date`). Results repeat the arguments
they name, nested ones too (the SKU an availability check lists is the one asked for), take the fields a
table row of the same store and SKU holds (its deposit), and count at least one of what they count.
"""

from __future__ import annotations

import random
import re
from typing import Any

from evalcore.generators.tool_case.groups import properties
from evalcore.inputs.tool_values import object_from_tables, rows_for, value_for
from evalcore.models import Tool

Table = tuple[str, list[dict[str, str]]]  # a project table: its name and rows


def _names(schema: dict[str, Any]) -> set[str]:
    """Every property name in a schema, nested objects and array items included."""
    found: set[str] = set()
    for name, spec in properties(schema).items():
        found |= {name} | _names(spec) | _names(spec.get("items") or {})
    return found


def result_names(tool: Tool) -> set[str]:
    """Every field name of the tool's return schema, nested ones too."""
    return _names(tool.returns)


def _column(param: str, spec: dict[str, Any], columns: list[str]) -> str | None:
    """The table column a parameter takes its value from: the same name, or the singular of an array
    parameter (`service_codes` <- `service_code`)."""
    if param in columns:
        return param
    single = param.removesuffix("s") if spec.get("type") == "array" else param
    if single in columns:
        return single
    # a qualified name ("new_skus", "return_store_id") takes a table's key (first) column of its last words
    tail = single.split("_", 1)[-1]
    return tail if columns and tail == columns[0] else None


def _fits(value: str, spec: dict[str, Any]) -> bool:
    spec = spec.get("items", spec) if spec.get("type") == "array" else spec
    if "enum" in spec and value not in spec["enum"]:
        return False
    if spec.get("type") in ("integer", "number") and not isinstance(_typed(value, spec), int | float):
        return False  # an empty cell, or words, for a number (a card's blank balance)
    return not (pattern := spec.get("pattern")) or re.fullmatch(pattern, value) is not None


def _table_values(tool: Tool, wanted: list[str], tables: tuple[Table, ...], rng: random.Random) -> dict:
    """Values of the wanted parameters from the project's tables: the table matching most of them (then
    most fields of the tool's schemas, then a word of its name) gives one row, the next table fills what
    is left from a row that agrees with the values taken; empty when no column matches."""
    props = properties(tool.parameters)
    fields, tool_words = _names(tool.parameters) | _names(tool.returns), set(tool.name.split("_"))
    ranked = []
    for name, rows in tables:
        columns = list(rows[0]) if rows else []
        mapping = {p: c for p in wanted if p in props and (c := _column(p, props[p], columns))}
        if mapping:
            rank = (
                len(mapping),
                len(fields & set(columns)),
                len(tool_words & set(re.split(r"[\W_]+", name))),
            )
            ranked.append((rank, mapping, rows))
    taken: dict[str, Any] = {}
    for _, mapping, rows in sorted(ranked, key=lambda r: r[0], reverse=True):
        agree = {p: c for p, c in mapping.items() if p in taken}
        usable = [
            r
            for r in rows
            if all(_fits(r[c], props[p]) for p, c in mapping.items())
            and all(_typed(r[c], props[p]) == taken[p] for p, c in agree.items())
        ]
        if usable:
            row = rng.choice(usable)
            taken |= {
                p: [_typed(row[c], props[p].get("items") or {})]
                if props[p].get("type") == "array"
                else _typed(row[c], props[p])
                for p, c in mapping.items()
            }
    return taken


def _ordered(args: dict[str, Any]) -> dict[str, Any]:
    """Each `start_X`/`end_X` (or `from_X`/`to_X`) pair in order: the range never ends before it starts."""
    for first, last in (("start_", "end_"), ("from_", "to_")):
        for name in list(args):
            other = last + name.removeprefix(first)
            if name.startswith(first) and other in args and str(args[other]) < str(args[name]):
                args[name], args[other] = args[other], args[name]
    return args


def _made_up(name: str, value: Any) -> bool:
    """Whether the shared sampler fell back to the field's own name with a number (QUERY-619 for `query`,
    NEW-SKU-651 for `new_skus`): it found nothing better, and a person never writes that."""
    own = name.upper().removesuffix("S").replace("_", "-")
    texts = value if isinstance(value, list) else [value]
    return any(isinstance(t, str) and re.fullmatch(rf"{re.escape(own)}S?-\d+", t) for t in texts)


def column_values(name: str, spec: dict[str, Any], tables: tuple[Table, ...]) -> list[str]:
    """Every value of the tables' column for the field (its name, its singular for an array, or a table's
    key column of its last word: `new_skus` <- `sku`) that fits the field's schema, in table order."""
    found: list[str] = []
    for _, rows in tables:
        column = _column(name, spec, list(rows[0])) if rows else None
        found += [r[column] for r in rows if column and r[column] and _fits(r[column], spec)]
    return list(dict.fromkeys(found))


def _text_columns(rows: list[dict[str, str]]) -> list[str]:
    """Columns of words (with lower-case letters, not ids or numbers), fewest distinct values first: a
    category before a name, which is what a person types into a search."""
    words_only = [c for c in rows[0] if all(re.search(r"[a-z]", r[c] or "a") for r in rows)]
    return sorted(words_only, key=lambda c: len({r[c] for r in rows}))


def related_rows(tool: Tool, tables: tuple[Table, ...]) -> list[dict[str, str]]:
    """The rows of the table sharing most columns with the fields the tool returns (none: empty)."""
    fields = _names(tool.returns)
    best = max(tables, key=lambda t: len(fields & set(t[1][0])) if t[1] else 0, default=None)
    return best[1] if best and best[1] and fields & set(best[1][0]) else []


def _free_text(tool: Tool, rng: random.Random, tables: tuple[Table, ...]) -> str | None:
    """A free-text argument (a search query) from the table the tool reads: a word of its category-like
    column; None when the tool reads no table of words."""
    rows = related_rows(tool, tables)
    columns = _text_columns(rows) if rows else []
    return rng.choice(rows)[columns[0]] if columns else None


def _realistic(
    tool: Tool,
    name: str,
    spec: dict[str, Any],
    value: Any,
    rng: random.Random,
    tables: tuple[Table, ...],
    nested: bool = False,
) -> Any:
    """`value`, or where the sampler made one up from the field's name, a value from the tables (nested
    fields too: the SKU of an order's line); a nested one with none, a reference code."""
    if isinstance(value, dict):
        props = properties(spec)
        return {
            k: _realistic(tool, k, props.get(k, {}), v, rng, tables, nested=True) for k, v in value.items()
        }
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [_realistic(tool, name, spec.get("items") or {}, v, rng, tables, nested) for v in value]
    if not _made_up(name, value):
        return value
    if listed := column_values(name, spec, tables):
        chosen = rng.choice(listed)
        return [chosen] if spec.get("type") == "array" else chosen
    return _free_text(tool, rng, tables) or (_code(name, rng) if nested else value)


def arguments(tool: Tool, rng: random.Random, tables: tuple[Table, ...] = ()) -> dict[str, Any]:
    """Values for the tool's required parameters (all of them when none is required), consistent with
    each other and with the project's tables (see the module docstring)."""
    props = properties(tool.parameters)
    wanted = [p for p in tool.parameters.get("required") or list(props) if p in props]
    drawn = {
        p: object_from_tables(props[p], tables, rng)
        or _realistic(tool, p, props[p], value_for(p, props[p], rng), rng, tables)
        for p in wanted
    }
    return _ordered({**drawn, **_table_values(tool, wanted, tables, rng)})


def other_value(
    name: str,
    spec: dict[str, Any],
    current: Any,
    rng: random.Random,
    tables: tuple[Table, ...] = (),
    tool: Tool | None = None,
) -> Any:
    """A valid value for the field that differs from `current` (the same value when none can differ):
    another value of the tables' column for it where there is one (another order of the shop, not a
    made-up code), else one the schema sampler draws (for a free-text field of `tool`, another word of
    the table it reads)."""
    item = spec.get("items") or {} if spec.get("type") == "array" else spec
    listed = [
        v
        for v in (_typed(c, item) for c in column_values(name, spec, tables))
        if v not in (current, *(current if isinstance(current, list) else []))
    ]
    if listed and (isinstance(current, list) or spec.get("type") != "array"):
        chosen = rng.choice(listed)
        return [chosen] if spec.get("type") == "array" else chosen
    for _ in range(20):
        candidate = value_for(name, spec, rng)
        if tool is not None and _made_up(name, candidate):
            candidate = _free_text(tool, rng, tables) or candidate
        if candidate != current:
            return candidate
    return current


def _known(tool: Tool, args: dict[str, Any], tables: tuple[Table, ...]) -> dict[str, Any]:
    """The table row that agrees with the most arguments, then holds the most of the tool's result
    fields (a store and SKU: its rental fleet row, with the deposit), numbers as numbers; empty when no
    row agrees with any argument."""
    fields = _names(tool.returns)
    best: tuple[tuple[int, int, int], dict[str, str]] = ((0, 0, 0), {})
    for _, rows in tables:
        for row in rows:
            shared = [c for c in row if c in args]
            # a row keyed by an argument (the user the call names) before one that only shares its address
            rank = (int(next(iter(row)) in args), len(shared), len(fields & set(row)))
            if shared and all(str(args[c]) == row[c] for c in shared) and rank > best[0]:
                best = (rank, row)
    # numbers as the result's schema types them: a zip code stays a string
    types = properties(tool.returns)
    return {k: _typed(v, types.get(k) or _untyped(v)) for k, v in best[1].items()}


def _untyped(text: str) -> dict[str, str]:
    """The type of a cell the schema says nothing of: a number when it reads as one."""
    return {
        "type": "integer" if text.isdigit() else "number" if re.fullmatch(r"\d+\.\d+", text) else "string"
    }


def _consistent(value: Any, known: dict[str, Any]) -> Any:
    """A generated value with every nested field named like an argument (or a column of the known row)
    set to that value, and counts of zero raised to one: a successful answer found something."""
    if isinstance(value, list):
        return [_consistent(v, known) for v in value]
    if isinstance(value, dict):
        return {k: known[k] if k in known else _consistent(v, known) for k, v in value.items()}
    return 1 if value == 0 and type(value) is int else value


def result_for(
    tool: Tool, args: dict[str, Any], rng: random.Random, tables: tuple[Table, ...] = ()
) -> dict[str, Any]:
    """A successful result: the first outcome of `result` (success in the project's schemas), parameters
    the result repeats echoed (nested ones too), fields from the matching table row, and a value for
    every other field."""
    known = {**_known(tool, args, tables), **args}
    out: dict[str, Any] = {}
    for name, spec in properties(tool.returns).items():
        if name == "result" and spec.get("enum"):
            out[name] = spec["enum"][0]
        elif name in known:
            out[name] = known[name]
        elif (listed := rows_for(spec, args, tables) or _matching_rows(spec, args, tables, rng)) is not None:
            out[name] = listed
        else:
            drawn = _realistic(tool, name, spec, _consistent(value_for(name, spec, rng), known), rng, tables)
            if not _made_up(name, drawn):
                out[name] = drawn
            elif name in (tool.returns.get("required") or []):
                out[name] = _code(name, rng)
            # else: an optional field nothing real can fill is left out, as a real API leaves it empty
    return out or {"result": "ok"}


def _code(name: str, rng: random.Random) -> str:
    """A reference a system issues, for a required field with no pattern and no table: the initials of
    its name and six digits (`ticket_id` -> T-482913)."""
    initials = "".join(w[0] for w in name.split("_") if w not in ("id", "number", "code")).upper() or "R"
    return f"{initials}-{rng.randrange(100000, 999999)}"


def _matching_rows(
    spec: dict[str, Any], args: dict[str, Any], tables: tuple[Table, ...], rng: random.Random
) -> list[dict[str, Any]] | None:
    """A list of objects (search hits) from the table that has their required fields as columns: the rows
    with a cell containing a text argument (the query), else one row; None when no table has them."""
    item = (spec.get("items") or {}) if spec.get("type") == "array" else {}
    props, needed = item.get("properties") or {}, set(item.get("required") or [])
    texts = [v.lower() for v in args.values() if isinstance(v, str) and len(v) > 1]
    for _, rows in tables:
        if not props or not needed or not rows or not needed <= set(rows[0]):
            continue
        hits = [r for r in rows if any(t in (r[c] or "").lower() for c in props if c in r for t in texts)]
        chosen = hits[:3] or [rng.choice(rows)]
        return [{p: _typed(r[p], props[p]) for p in props if r.get(p)} for r in chosen]
    return None


def _typed(text: str, spec: dict[str, Any]) -> Any:
    """A table cell as its field's type: '3' for an integer, '34.00' for a number."""
    kind = spec.get("type")
    if kind == "integer" and re.fullmatch(r"-?\d+", text):
        return int(text)
    if kind == "number" and re.fullmatch(r"-?\d+(\.\d+)?", text):
        return float(text)
    return text


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
