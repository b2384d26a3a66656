"""What a rendered page shows a user, read from AppTest's element tree, and the words a newcomer should not
meet there (issue 28): bare ids, enum names, a literal None, the papers' terms outside a tooltip.

`visible_texts(at)` walks every element and block of a run AppTest and returns (where, text) pairs for the
text a user reads without hovering: headings, markdown, captions, alerts, metric labels and values, button
and link labels, widget labels and options, tab and expander labels, table column names and cell values,
charts' titles (chart, axes, legends, panels), category labels and legend entries (tests/vega.py reads
them). Tooltips (`help=`, a chart's hover text) are left out on purpose; so are code blocks and JSON viewers
(a file's own format, shown as the file has it) and typed-in values.
`offences(text, allowed)` names what in one text breaks the rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pandas as pd
import vega
from streamlit.testing.v1 import AppTest

from evalcore.errors import EvalcoreError
from evalcore.generators.scenario.targets import event_targets, target_domain

# Fields of an element's or a block's proto that a user reads on the page (never `help`: the tooltip).
# (A chat message's `name` only picks its avatar and labels it for screen readers: not shown.)
_VISIBLE_FIELDS = ("label", "body", "options", "title", "text", "placeholder", "delta", "captions")
# Elements whose text is a file's own format, shown as the file has it (YAML of a scenario, a tool's
# JSON arguments), and elements that show no text.
_SKIPPED = {"code", "json", "html", "exception", "empty", "space", "skeleton", "spinner", "balloons", "snow"}
# Rows of a long table scanned: a table is one rendering of one function, its first rows show its words.
_ROWS = 200


def visible_texts(
    at: AppTest, skip: Callable[[pd.DataFrame], bool] = lambda frame: False
) -> list[tuple[str, str]]:
    """Every text a user reads on the rendered page (main area and sidebar), as (where, text) pairs; a
    table `skip` picks (a record kept by id on purpose, as the audit trail) is left out."""
    found: list[tuple[str, str]] = []
    tables = 0
    for node in at._tree:
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        kind = getattr(node, "type", "")
        if kind in _SKIPPED:
            continue
        if kind == "dataframe" and skip(node.value):
            continue
        if kind == "dataframe":
            tables += 1
            found += [(f"table {tables}", t) for t in _table_texts(node.value, proto)]
        elif kind == vega.KIND:
            found += [("chart", t) for t in sorted(vega.texts(vega.from_proto(proto)))]
        else:
            found += [(kind, t) for t in _proto_texts(_inner(proto))]
    return [(where, text) for where, text in found if text.strip()]


def _inner(proto: Any) -> Any:
    """A block's or element's own message (an Element or Block proto holds it in a oneof)."""
    which = getattr(proto, "WhichOneof", None)
    if which is None:
        return proto
    try:
        name = proto.WhichOneof("type")
    except ValueError:
        return proto
    return getattr(proto, name) if name else proto


def _proto_texts(message: Any) -> Iterator[str]:
    fields = getattr(getattr(message, "DESCRIPTOR", None), "fields_by_name", {})
    for name in _VISIBLE_FIELDS:
        if name not in fields:
            continue
        value = getattr(message, name)
        if isinstance(value, str):
            yield value
        elif isinstance(value, Iterable):
            yield from (v for v in value if isinstance(v, str))


def _table_texts(frame: pd.DataFrame, proto: Any) -> Iterator[str]:
    """Column names (or their display labels) and the cells of a table's first rows."""
    labels = {}
    if getattr(proto, "columns", ""):
        config = json.loads(proto.columns)
        labels = {k: v.get("label") for k, v in config.items() if isinstance(v, dict) and v.get("label")}
        hidden = {k for k, v in config.items() if isinstance(v, dict) and v.get("hidden")}
    else:
        hidden = set()
    if not isinstance(frame.index, pd.RangeIndex):  # an index shown as the first column
        yield from (str(v) for v in frame.index[:_ROWS] if isinstance(v, str))
    order = set(getattr(proto, "column_order", []) or [])  # when given, the only columns shown
    for column in frame.columns:
        if str(column) in hidden or (order and str(column) not in order):
            continue
        yield str(labels.get(str(column), column))
        for cell in frame[column].head(_ROWS):
            if isinstance(cell, str):
                yield cell
            elif cell is None:
                yield "None"  # a cell left None shows 'None' in Streamlit's grid


# What a newcomer should not meet outside a tooltip: the papers' words (the method's own terms belong in
# the `help=` tooltip beside a plain label), ids and raw values.
RESEARCH_TERMS = (
    r"seed \d{3}",
    r"Table \d+",
    r"Appendix [A-Z]\b",
    r"Algorithm \d",
    r"SPWD",
    r"Var Div",
    r"TRACE",
    r"SPUR",
    r"SCOPE",
    r"ALMITA",
    r"MTLD",
    r"POS",
    r"NEG",
    # seed 000's query types and its unanswerable marker: shown as words, the term in the tooltip
    r"SINGLE-DOC",
    r"MULTI-DOC",
    r"PRE-FILLER",
    r"FILLER",
    r"SYNTHESIS",
    r"CANNOTANSWER",
)
# A term followed by '-' is data (a receipt number 'POS-114210'), not the term.
_RESEARCH = re.compile(r"\b(?:" + "|".join(RESEARCH_TERMS) + r")\b(?!-)")
_IDS = {
    "an id": re.compile(r"\b[a-z]+-[0-9a-f]{8,}(?:-t\d+)?\b"),
    "a hex id": re.compile(r"(?<![\w-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{10,}\b"),
    "a passage id": re.compile(r"\b[\w-]+#r?\d+\b"),
    "None": re.compile(r"\bNone\b"),
    "a snake_case word": re.compile(r"(?<![\w/.-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/.(-])"),
}
# Markdown's own syntax, which the user never sees: escapes, icons, colour directives, link targets.
_ESCAPE = re.compile(r"\\(.)")
_ICON = re.compile(r":material/[a-z_]+:")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_DIRECTIVE = re.compile(r":(?:red|orange|green|blue|violet|gray|grey|rainbow|primary)(?:-background)?\[")


def shown(text: str) -> str:
    """Markdown as the user reads it: escapes resolved, icons, link targets and directives dropped."""
    text = _ICON.sub("", _LINK_TARGET.sub("]", _DIRECTIVE.sub("[", text)))
    return _ESCAPE.sub(r"\1", text).replace("\u2060", "")


def offences(text: str, allowed: Iterable[str] = ()) -> list[str]:
    """What in `text` a newcomer should not meet: '<kind>: <match>' for each bare id, enum word, None or
    research term. Words in `allowed` (the project's own names: its tools, their fields, its procedures)
    are the project's vocabulary, not ours, and pass."""
    plain = shown(text)
    allowed = set(allowed)
    found = [f"a research term: {m.group(0)}" for m in _RESEARCH.finditer(plain)]
    for kind, pattern in _IDS.items():
        found += [f"{kind}: {m.group(0)}" for m in pattern.finditer(plain) if m.group(0) not in allowed]
    return found


def project_vocabulary(store: Any, project_id: str) -> set[str]:
    """The project's own names, which a page may show as they are: its tools, their fields and the values
    their schemas list, its procedures and their intents, its tables' columns (written by the team in the
    project's files), and the domain each of its event-reporting targets publishes: its slots, flows,
    actions and responses (`utter_*`), the names the team gave its assistant in its domain.yml and
    flows.yml, which the Scenarios page shows as the target reported them (a Rasa user looks them up
    there). Rasa's own names (event types, default actions) are not in it: those the page says in words."""
    words: set[str] = set()

    def fields(schema: Any) -> None:
        if isinstance(schema, dict):
            words.update(str(v) for v in schema.get("enum") or [])
            for key, value in (schema.get("properties") or {}).items():
                words.add(key)
                fields(value)
            fields(schema.get("items"))

    for tool in store.tools(project_id):
        words.add(tool.name)
        fields(tool.parameters)
        fields(tool.returns)
    for document in store.documents(project_id):
        words.update(document.columns)
    for procedure in store.procedures(project_id):
        words |= {procedure.name, procedure.intent, *procedure.apis}
    for target in event_targets(store, project_id):
        try:
            domain = target_domain(store, project_id, target.name)
        except EvalcoreError:  # a Rasa server that is not running publishes nothing to allow
            continue
        if domain is not None:
            words |= {*(domain.slots or {}), *(domain.flows or ()), *(domain.actions or ())}
            words |= set(domain.responses or ())
    return words
