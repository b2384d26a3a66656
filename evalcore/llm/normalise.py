"""Bringing parsed JSON that almost fits an output schema into it, guided by the schema (issue 14).

Small and local models get the shape right and the details wrong: a key in the singular (`document_id`
for `document_ids`), an enum in another case or with other separators (`single_doc`, `Single-Doc`,
`Wrong Fact`), `""` or `"none"` for null, a string where a list is expected, `"PASS"` for a 0/1 score,
the object wrapped under its schema's name, a list without its object. Each such fix is named (the call
records the names). A key the schema lacks is renamed only into a field the reply left out, and a value
is changed only where it does not fit its type, with one exception: the words for null ("", "none",
"n/a") in an optional field become null.

An enum value that matches nothing becomes `other` when the field offers it (a judge's valid score is not
thrown away for a secondary field); otherwise it is left for validation to report.
"""

from __future__ import annotations

import enum
import json
import re
import types
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Le
from pydantic import BaseModel
from pydantic.fields import FieldInfo

# Keys models use for a field of another name. Applied only when the schema has the target field and
# not the key itself; the target is the schema's name.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "rationale": ("reasoning", "reason", "explanation", "justification", "feedback", "analysis", "comment"),
    "score": ("result", "grade", "label", "passed", "pass"),
    "error_type": ("error", "error_category", "failure_type", "failure_mode", "error_kind"),
    "answer": ("response", "expected_answer", "reply"),
    "question": ("query", "user_question"),
    "problems": ("issues",),
}
NULL_WORDS = frozenset({"", "none", "null", "nil", "n/a", "na", "-", "no error", "not applicable"})
# Words for a 0/1 score or a boolean. Those pydantic already accepts for a boolean are left to it.
TRUE_WORDS = frozenset({"pass", "passed", "yes", "true", "correct", "right", "ok", "y"})
FALSE_WORDS = frozenset({"fail", "failed", "no", "false", "incorrect", "wrong", "n"})
_PYDANTIC_BOOL_WORDS = frozenset({"yes", "no", "true", "false", "y", "n", "on", "off", "t", "f", "1", "0"})
_ID_LIKE = re.compile(r"[^\s,;]+")


def normalise(data: Any, schema: type[BaseModel]) -> tuple[Any, list[str]]:
    """`data` brought towards `schema`, and the names of the repairs made (in order, no repeats)."""
    repairs: list[str] = []
    data = _unwrap(data, schema, repairs)
    return _model(data, schema, repairs), list(dict.fromkeys(repairs))


def _unwrap(data: Any, schema: type[BaseModel], repairs: list[str]) -> Any:
    """A bare list for a one-list schema gets its object; `{"Name": {...}}` loses its wrapper."""
    fields = schema.model_fields
    if isinstance(data, list):
        required = [name for name, f in fields.items() if f.is_required()]
        if len(required) == 1 and get_origin(_strip_optional(fields[required[0]].annotation)) is list:
            repairs.append("bare_list")
            return {required[0]: data}
        return data
    if isinstance(data, dict) and len(data) == 1:
        ((key, inner),) = data.items()
        if key not in fields and isinstance(inner, dict) and any(_target(k, schema) for k in inner):
            repairs.append("wrapper_key")
            return inner
    return data


def _model(data: Any, schema: type[BaseModel], repairs: list[str]) -> Any:
    if not isinstance(data, dict):
        return data
    data = _rename_keys(data, schema, repairs)
    for name, info in schema.model_fields.items():
        if name in data:
            data[name] = _value(data[name], info.annotation, info, repairs)
    return data


def _key_token(key: str) -> str:
    """A key without case, separators or camelCase humps: `documentIds`, `Document IDs` -> `documentids`."""
    return re.sub(r"[^a-z0-9]", "", key.lower())


def _target(key: str, schema: type[BaseModel]) -> str | None:
    """The field a key names: itself, or up to case, separators and plural, or a synonym."""
    fields = schema.model_fields
    if key in fields:
        return key
    by_token = {_key_token(name): name for name in fields}
    token = _key_token(key)
    plurals = (token, token + "s", token.removesuffix("s"), token.removesuffix("y") + "ies", token[:-3] + "y")
    target = next((by_token[t] for t in plurals if t in by_token), None)
    words = {key.lower(), key.lower() + "s"}
    return target or next((f for f, names in SYNONYMS.items() if f in fields and words & set(names)), None)


def _rename_keys(data: dict[str, Any], schema: type[BaseModel], repairs: list[str]) -> dict[str, Any]:
    out = dict(data)
    for key in data:
        target = _target(key, schema)
        if target is None or target == key or target in out:
            continue
        out[target] = out.pop(key)
        repairs.append("key_alias")
    return out


def _strip_optional(annotation: Any) -> Any:
    if _is_union(annotation):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def _value(value: Any, annotation: Any, info: FieldInfo | None, repairs: list[str]) -> Any:
    """One value brought towards its annotation."""
    if _is_union(annotation):
        args = get_args(annotation)
        if type(None) in args and isinstance(value, str) and value.strip().lower() in NULL_WORDS:
            repairs.append("empty_as_null")
            return None
        annotation = _strip_optional(annotation)
        if _is_union(annotation):
            return value
    origin = get_origin(annotation)
    if origin is Literal or (isinstance(annotation, type) and issubclass(annotation, enum.Enum)):
        return _choice(value, annotation, repairs)
    if origin is list:
        (item,) = get_args(annotation) or (Any,)
        return [_value(v, item, None, repairs) for v in _as_list(value, item, repairs)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _model(value, annotation, repairs)
    if annotation is int or annotation is float:
        return _number(value, annotation, info, repairs)
    if annotation is bool:
        return _boolean(value, repairs)
    if annotation is str:
        return _text(value, repairs)
    return value


def _choice(value: Any, annotation: Any, repairs: list[str]) -> Any:
    """An enum value in any case or with any separators; a value matching nothing becomes `other`."""
    choices = (
        list(get_args(annotation)) if get_origin(annotation) is Literal else [m.value for m in annotation]
    )
    if value in choices or not isinstance(value, str):
        return value
    by_token = {_key_token(str(c)): c for c in choices}
    token = _key_token(value)
    # Exact up to case and separators, else the longest choice the value starts with ("SINGLE-DOC (direct
    # lookup ...)" copied from the prompt's explanation).
    match = by_token.get(token) or next(
        (by_token[t] for t in sorted(by_token, key=len, reverse=True) if t and token.startswith(t)), None
    )
    if match is not None:
        repairs.append("enum_spelling")
        return match
    if "other" in choices:
        repairs.append("enum_other")
        return "other"
    return value


def _as_list(value: Any, item: Any, repairs: list[str]) -> list[Any]:
    if isinstance(value, list):
        return value
    if value is None:
        repairs.append("empty_as_null")
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                parsed = None
            if isinstance(parsed, list):
                repairs.append("string_to_list")
                return parsed
        repairs.append("string_to_list")
        if not text or text.lower() in NULL_WORDS:
            return []
        parts = [p.strip() for p in re.split(r"[,;]", text)]
        # Identifiers given as "d1, d2" are split; a sentence that happens to hold a comma is one item.
        if item is str and len(parts) > 1 and all(_ID_LIKE.fullmatch(p) for p in parts):
            return parts
        return [text]
    repairs.append("value_to_list")
    return [value]


def _bounds(info: FieldInfo | None) -> tuple[object, object]:
    """A field's `ge` and `le` bounds (None where it has none), of whatever type the field declares."""
    low: object = None
    high: object = None
    for meta in info.metadata if info else ():
        if isinstance(meta, Ge):
            low = meta.ge
        elif isinstance(meta, Le):
            high = meta.le
    return low, high


def _number(value: Any, annotation: type, info: FieldInfo | None, repairs: list[str]) -> Any:
    """`"PASS"`/`"FAIL"` for a 0..1 score, `"1.0"` or `"0.8 / 1"` for a number."""
    if not isinstance(value, str):
        return value
    text = value.strip().lower().rstrip(".")
    if _bounds(info) == (0, 1):
        if text in TRUE_WORDS:
            repairs.append("score_word")
            return 1
        if text in FALSE_WORDS:
            repairs.append("score_word")
            return 0
    pattern = r"-?\d+" if annotation is int else r"-?\d+(?:\.\d+)?"
    if re.fullmatch(pattern, text):
        return value  # pydantic reads it as it is
    match = re.fullmatch(r"(-?\d+(?:\.\d+)?)\s*(?:/\s*\d+(?:\.\d+)?)?", text)
    if match:
        number = float(match.group(1))
        if annotation is float or number.is_integer():
            repairs.append("number_text")
            return int(number) if annotation is int else number
    return value


def _boolean(value: Any, repairs: list[str]) -> Any:
    if isinstance(value, str):
        text = value.strip().lower().rstrip(".")
        if text not in _PYDANTIC_BOOL_WORDS and (text in TRUE_WORDS or text in FALSE_WORDS):
            repairs.append("bool_word")
            return text in TRUE_WORDS
    return value


def _text(value: Any, repairs: list[str]) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        repairs.append("number_to_string")
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        repairs.append("list_to_string")
        return " ".join(value)
    return value
