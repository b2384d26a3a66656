"""A project's annotation guidelines: `guidelines.md` beside the system card, read on import and kept in
the store as versions of one item of kind `guidelines` (who and when on each), so a lead's later edit on
the dashboard (`evalcore.review.guidelines`) is a version like any other and nothing is overwritten.

A re-import adds a version only when the file changed since the last import: importing the same folder
again does not undo what a lead wrote on the page in between.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from evalcore.errors import Problem
from evalcore.inputs.sources import read_text
from evalcore.store import Store
from evalcore.store import schema as t

GUIDELINES_FILE = "guidelines.md"
KIND = "guidelines"
IMPORTED = "imported from "  # the note of a version an import wrote, followed by the file's name
IMPORT_AUTHOR = "import"


def read_guidelines(root: Path, label: str, problems: list[Problem]) -> str | None:
    """The text of `root/guidelines.md`, or None when there is none (or after recording why it cannot
    be read: a link out of the folder, too large, not UTF-8)."""
    path = root / GUIDELINES_FILE
    if not path.is_file():
        return None
    shown = f"{label}/{GUIDELINES_FILE}"
    if not path.resolve().is_relative_to(root):
        problems.append(Problem(shown, "a link to a file outside the project folder; refused"))
        return None
    return read_text(path, shown, problems)


def guidelines_item(conn: sa.Connection, project_id: str) -> str | None:
    """The id of the project's guidelines item, if it has one."""
    i = t.items
    return conn.scalar(sa.select(i.c.id).where(i.c.project_id == project_id, i.c.kind == KIND).limit(1))


def import_guidelines(
    store: Store, project_id: str, text: str | None, source: str, conn: sa.Connection
) -> bool:
    """Keep the file's text as the project's guidelines when it is new or changed since the last import
    (in the import's transaction); True when a version was written."""
    if text is None:
        return False
    note = IMPORTED + GUIDELINES_FILE
    body = {"text": text, "source": f"{source}/{GUIDELINES_FILE}"}
    item = guidelines_item(conn, project_id)
    if item is None:
        store.add_item(project_id, KIND, body, IMPORT_AUTHOR, note=note, conn=conn)
        return True
    r = t.revisions
    rows = conn.execute(sa.select(r.c.version, r.c.body, r.c.note).where(r.c.item_id == item)).all()
    head = max(row.version for row in rows)
    imported = [row for row in rows if row.note.startswith(IMPORTED)]
    if imported and max(imported, key=lambda row: row.version).body.get("text") == text:
        return False
    store.save_revision(item, body, IMPORT_AUTHOR, head, note=note, conn=conn)
    return True
