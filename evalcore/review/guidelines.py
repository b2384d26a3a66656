"""The project's annotation guidelines beside the task (issue 28): read them, and a lead's edit saved as
a new version (version-checked, with who and when, in the audit trail). The file they come from on
import is `evalcore.inputs.guidelines`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from evalcore.auth.audit import acting_author, record
from evalcore.auth.roles import Actor, Permission
from evalcore.errors import EvalcoreError
from evalcore.inputs.guidelines import KIND, guidelines_item
from evalcore.store import Store

MAX_CHARS = 200_000  # about 60 pages: guidelines longer than that are a manual, not a page beside a task


@dataclass(frozen=True)
class Guidelines:
    """The current guidelines of a project: Markdown text, its version, who saved it and when."""

    text: str
    version: int
    saved_by: str
    saved_at: datetime


def guidelines(store: Store, project_id: str) -> Guidelines | None:
    """The project's current guidelines, or None when it has none yet."""
    with store.read() as conn:
        item = guidelines_item(conn, project_id)
        if item is None:
            return None
        current = store.current(item, conn=conn)
    return Guidelines(
        str((current.body or {}).get("text", "")), current.version, current.author, current.created_at
    )


def edit_guidelines(
    store: Store,
    project_id: str,
    text: str,
    author: str,
    expected_version: int | None,
    *,
    actor: Actor | None = None,
) -> int:
    """Save `text` as the project's guidelines on top of `expected_version` (None: the project has none
    yet); return the new version. A lead's (the role that assigns work). Refused with StaleVersionError
    when someone saved in between, and with a one-line error when the text is empty or too long."""
    author = acting_author(store, actor, Permission.manage_review, "review.guidelines", author)
    if not text.strip():
        raise EvalcoreError("the guidelines are empty: write what annotators should know")
    if len(text) > MAX_CHARS:
        raise EvalcoreError(f"the guidelines are {len(text):,} characters; at most {MAX_CHARS:,}")
    body = {"text": text, "source": "edited on the dashboard"}
    with store.write() as conn:
        item = guidelines_item(conn, project_id)
        if item is None:
            if expected_version is not None:
                raise EvalcoreError(f"project '{project_id}' has no guidelines to edit")
            store.add_item(project_id, KIND, body, author, note="written on the dashboard", conn=conn)
            version = 1
        else:
            version = store.save_revision(
                item, body, author, expected_version or 0, note="edited on the dashboard", conn=conn
            )
    record(store, actor, "review.guidelines", project_id=project_id, target=f"version {version}")
    return version
