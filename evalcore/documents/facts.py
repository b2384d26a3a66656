"""Facts of a document: its sentences and table cells, each ready to be an expected answer.

The offline conversation generator builds every answer from these facts, and verification checks
answers against them, so "grounded" has one meaning everywhere:

- a prose fact is one sentence of a text or policy document, with markdown emphasis removed and spaces
  collapsed (`plain`); it is grounded when `plain(sentence)` occurs in `plain(document text)`;
- a table fact is one row seen through some of its cells: the row's key cells (the leading columns that
  identify a row uniquely) and one or more value cells; it is grounded when every cell it cites holds
  that value in that row.

Each fact remembers the retrieval passage it lies in (`<doc>#p<n>` or `<doc>#r<row>`, the ids of
`evalcore.documents.retrieval.split_passages`), so a page can open the passage in place.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalcore.documents.entities import canonical_name, extract_entities
from evalcore.documents.naming import key_columns
from evalcore.documents.retrieval import split_passages, tokenize
from evalcore.documents.sentences import split_sentences
from evalcore.models.common import content_hash

_EMPHASIS = re.compile(r"\*\*|__|`")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_DASHES = re.compile(r"[\u2010-\u2015\u2212]")
MIN_WORDS = 6


def plain(text: str) -> str:
    """Text as answers quote it: NFKC, plain hyphens, no markdown emphasis, single spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = _DASHES.sub("-", _EMPHASIS.sub("", text))
    return re.sub(r"\s+", " ", text).strip()


def column_label(column: str) -> str:
    """A column name as words: 'price_usd' -> 'price usd'."""
    return column.replace("_", " ").strip()


@dataclass(frozen=True)
class Fact:
    """One sentence, or one table row seen through some cells; `text` is the sentence, or the cells in
    plain words (what matching and ranking read; an offline answer words them as a customer would)."""

    document_id: str
    title: str
    kind: str  # "sentence" or "cells"
    text: str
    passage_id: str
    heading: str = ""
    row: int | None = None
    cells: tuple[tuple[str, str], ...] = ()  # (column, value) cited, key cells first
    key_size: int = 0  # how many of `cells` are the row's key cells
    entities: tuple[str, ...] = field(default=(), compare=False)  # display texts, in order

    def source(self) -> dict[str, Any]:
        """How the fact is recorded in a turn's metadata (enough to re-check it against the document)."""
        out: dict[str, Any] = {"document_id": self.document_id, "passage_id": self.passage_id}
        if self.kind == "sentence":
            out["sentence"] = self.text
        else:
            out["row"] = self.row
            out["cells"] = [list(cell) for cell in self.cells]
        return out

    def mentions(self, entity: str) -> bool:
        """True when the fact's text names `entity` (case-insensitive, whole words)."""
        return mentions(self.text, entity)


def mentions(text: str, entity: str) -> bool:
    """True when `text` names `entity` as whole words, ignoring case, dashes and emphasis."""
    needle = canonical_name(entity)
    if not needle:
        return False
    hay = canonical_name(plain(text))
    return re.search(rf"(?<![\w-]){re.escape(needle)}(?![\w-])", hay) is not None


def _sentences(passage_text: str, heading: str, title: str) -> Iterable[str]:
    lines = passage_text.splitlines()
    if heading != title and lines and lines[0].strip() == heading:
        lines = lines[1:]  # a passage repeats its heading on its first line
    for line in lines:
        line = plain(_ITEM.sub("", line))
        if not line or line.startswith("#"):
            continue
        for sentence in split_sentences(line):
            # Questions (FAQ headings), fragments and pointers elsewhere ("See the ...") make poor answers.
            if (
                len(sentence.split()) >= MIN_WORDS
                and not sentence.endswith(("?", ":"))
                and not sentence.startswith("See ")
            ):
                yield sentence


def render_cells(title: str, key: Sequence[tuple[str, str]], cells: Sequence[tuple[str, str]]) -> str:
    """A table fact as a sentence: 'Stores: for store id RC-04, has workshop is no.'"""
    who = " and ".join(f"{column_label(c)} {v}" for c, v in key)
    what = "; ".join(f"{column_label(c)} is {v}" for c, v in cells)
    return f"{title}: for {who}, {what}."


def _entities(text: str) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for entity in extract_entities(text):
        seen.setdefault(entity.canonical, entity.text)
    return tuple(seen.values())


def prose_facts(doc: dict[str, Any]) -> list[Fact]:
    """Every usable sentence of a text or policy document (a dict as passed to the tasks)."""
    from evalcore.models import Document

    document = Document(id=doc["id"], kind=doc["kind"], title=doc["title"], text=doc.get("text", ""))
    facts: list[Fact] = []
    seen: set[str] = set()
    for passage in split_passages([document]):
        for sentence in _sentences(passage.text, passage.heading, document.title):
            if sentence in seen:
                continue
            seen.add(sentence)
            facts.append(
                Fact(doc["id"], doc["title"], "sentence", sentence, passage.id, passage.heading,
                     entities=_entities(sentence))
            )  # fmt: skip
    return facts


def row_fact(doc: dict[str, Any], row: int, columns: Sequence[str]) -> Fact:
    """A fact citing `columns` of one row (after the row's key cells)."""
    data = doc["rows"][row]
    key_cols = key_columns(doc["columns"], doc["rows"])
    key = tuple((c, str(data.get(c, "")).strip()) for c in key_cols)
    cells = tuple((c, str(data.get(c, "")).strip()) for c in columns if c not in key_cols)
    text = render_cells(doc["title"], key, cells)
    return Fact(
        doc["id"], doc["title"], "cells", text, f"{doc['id']}#r{row}", doc["title"], row, key + cells,
        len(key), entities=_entities(" ; ".join(v for _, v in key + cells)),
    )  # fmt: skip


def table_facts(doc: dict[str, Any]) -> list[Fact]:
    """One fact per non-empty non-key cell of a table document."""
    key_cols = key_columns(doc["columns"], doc["rows"])
    facts = []
    for i, data in enumerate(doc["rows"]):
        for column in doc["columns"]:
            if column not in key_cols and str(data.get(column, "")).strip():
                facts.append(row_fact(doc, i, [column]))
    return facts


def document_facts(doc: dict[str, Any]) -> list[Fact]:
    """The facts of one document given as a task input dict (tables: columns and rows); memoised."""
    key = content_hash(doc)
    if key not in _FACTS:
        if len(_FACTS) > 512:
            _FACTS.clear()
        _FACTS[key] = table_facts(doc) if doc["kind"] == "table" else prose_facts(doc)
    return _FACTS[key]


_FACTS: dict[str, list[Fact]] = {}


def relevance(text: str, query_tokens: set[str]) -> int:
    """How many distinct query tokens a text shares (used to keep facts on the spec's theme)."""
    return len(set(tokenize(text)) & query_tokens)


def source_grounded(source: dict[str, Any], doc: dict[str, Any], answer: str) -> bool:
    """True when a recorded source is really in the document and the answer carries it."""
    if "sentence" in source:
        sentence = plain(source["sentence"])
        return bool(sentence) and sentence in plain(doc.get("text", "")) and sentence in plain(answer)
    row = source.get("row")
    rows = doc.get("rows") or []
    if not isinstance(row, int) or not 0 <= row < len(rows) or not source.get("cells"):
        return False
    for column, value in source["cells"]:
        # Case aside: a "yes" cell is carried by an answer opening "Yes, ...".
        if (
            str(rows[row].get(column, "")).strip() != value
            or plain(value).casefold() not in plain(answer).casefold()
        ):
            return False
    return True
