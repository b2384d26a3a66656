"""Reading documents: prose (.md/.txt) with optional front matter, and tables (.csv)."""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalcore.errors import Problem
from evalcore.inputs.limits import MAX_TABLE_CELLS_ENV, current_limits
from evalcore.inputs.sources import Located, check_length, parse_yaml, read_text, validation_problems
from evalcore.models import Document, DocumentKind
from evalcore.store import schema

PROSE_SUFFIXES = {".md", ".txt"}
TABLE_SUFFIXES = {".csv"}
FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)


def document_id(path: Path) -> str:
    """A stable, readable id from a file name: 'Returns Policy.md' -> 'returns-policy'; letters of any
    script are kept ('Доставка.md' -> 'доставка'), so a name without ASCII letters still gives an id."""
    stem = unicodedata.normalize("NFKC", path.stem).casefold()
    return re.sub(r"[\W_]+", "-", stem).strip("-")


def read_prose(
    path: Path, shown: str, default_kind: DocumentKind, problems: list[Problem]
) -> Document | None:
    """A text or policy document; YAML front matter may set title, kind and metadata."""
    text = read_text(path, shown, problems)
    if text is None:
        return None
    meta: dict = {}
    located = Located({}, None)
    match = FRONT_MATTER.match(text)
    if match:
        located = parse_yaml(match.group(1), shown, problems, line_offset=1)
        if located is None:
            return None
        if not isinstance(located.data, dict):
            problems.append(Problem(shown, "front matter must be a mapping of fields", 2))
            return None
        meta = dict(located.data)
        text = text[match.end() :]
    body = text.strip()
    if not body:
        problems.append(Problem(shown, "the document is empty"))
        return None
    heading = re.search(r"^#\s+(.+)$", body, re.MULTILINE)
    fields = {
        "id": meta.pop("id", document_id(path)),
        "kind": meta.pop("kind", default_kind.value),
        "title": meta.pop(
            "title", heading.group(1).strip() if heading else path.stem.replace("_", " ").title()
        ),
        "path": shown,
        "text": body,
        "metadata": meta,
    }
    if fields["kind"] == DocumentKind.table.value:  # before validation, whose complaint would be the columns
        line = located.line_of(("kind",))
        problems.append(Problem(shown, "a prose file cannot be a table; tables are .csv files", line, "kind"))
        return None
    try:
        doc = Document.model_validate(fields)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, shown, located))
        return None
    if not check_fields(doc, problems, located):
        return None
    return doc


def check_fields(doc: Document, problems: list[Problem], located: Located | None = None) -> bool:
    """The document has an id, and its id and title fit the store's columns; False after a problem."""
    found = len(problems)
    if not doc.id.strip():
        how = "name the file with a letter or digit" + (
            " or set 'id:' in its front matter" if doc.kind != DocumentKind.table else ""
        )
        line = located.line_of(("id",)) if located is not None else None
        problems.append(Problem(doc.path, f"the document id is empty: {how}", line, "id"))
    check_length(doc.id, schema.documents.c.id, doc.path, problems, located, ("id",))
    check_length(doc.title, schema.documents.c.title, doc.path, problems, located, ("title",))
    return len(problems) == found


def _records(reader: Any, shown: str, problems: list[Problem]) -> Iterator[list[str]]:
    """The reader's rows, until one it cannot read (a cell over the csv module's 131,072 characters, a
    NUL): that is a problem with its line, and the rows stop there."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            problems.append(Problem(shown, f"cannot be read as CSV: {exc}", reader.line_num or 1))
            return


def read_table(path: Path, shown: str, problems: list[Problem]) -> Document | None:
    """A table document from a CSV file with a header row; every row must have the header's width."""
    found_before = len(problems)
    text = read_text(path, shown, problems)
    if text is None:
        return None
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(_records(reader, shown, problems), None)
    if header is None:
        if not problems[found_before:]:
            problems.append(Problem(shown, "the table is empty (no header row)", 1))
        return None
    header = [h.strip() for h in header]
    max_cells = current_limits().max_table_cells
    if len(header) > max_cells:
        problems.append(Problem(shown, f"more than {max_cells} cells (set {MAX_TABLE_CELLS_ENV})", 1))
        return None
    found = len(problems)
    for position, name in enumerate(header):
        if not name:
            problems.append(Problem(shown, f"column {position + 1} has no name", 1))
    for name, count in sorted(Counter(header).items()):
        if name and count > 1:
            problems.append(Problem(shown, "column name used twice", 1, name))
    rows = []
    for record in _records(reader, shown, problems):
        if not any(cell.strip() for cell in record):
            continue
        if (len(rows) + 1) * len(header) > max_cells:  # stop reading: the rows held are what costs memory
            problems.append(
                Problem(shown, f"more than {max_cells} cells (set {MAX_TABLE_CELLS_ENV})", reader.line_num)
            )
            return None
        if len(record) != len(header):
            problems.append(
                Problem(
                    shown, f"row has {len(record)} cells but the header has {len(header)}", reader.line_num
                )
            )
            continue
        rows.append({h: cell.strip() for h, cell in zip(header, record, strict=True)})
    if len(problems) > found:
        return None
    if not rows:
        problems.append(Problem(shown, "the table has a header but no rows", 1))
        return None
    title = path.stem.replace("_", " ").replace("-", " ").title()
    doc = Document(
        id=document_id(path),
        kind=DocumentKind.table,
        title=title,
        path=shown,
        text=render_table(header, rows),
        columns=header,
        rows=rows,
    )
    return doc if check_fields(doc, problems) else None


def render_table(columns: list[str], rows: list[dict[str, str]]) -> str:
    """The table as plain text, one 'column: value' line group per row, so prose tools can read it."""
    return "\n".join("; ".join(f"{c}: {row[c]}" for c in columns) for row in rows)
