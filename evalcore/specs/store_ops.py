"""Specs in the store: listing, adding, editing, reviewing, locking, version history and diffs.

Every change is a new revision with who and when (never an overwrite), and carries the version the
user saw: a save on top of someone else's change is refused with StaleVersionError.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from evalcore.auth.audit import acting_author
from evalcore.auth.roles import Actor, Permission
from evalcore.errors import EvalcoreError
from evalcore.models import Provenance, Spec, SpecStatus
from evalcore.specs.drafts import SpecDraft
from evalcore.store import Revision, Store
from evalcore.store import schema as t
from evalcore.store.store import new_id

KIND = "spec"
SELECT_KIND = "specs.select"
EDITABLE = ("scenario", "given", "when", "then", "category", "documents")


@dataclass(frozen=True)
class SpecView:
    """A spec's current state, the version it is at, and who saved it last."""

    spec: Spec
    version: int
    saved_by: str
    saved_at: datetime


def _view(rev: Revision, selected: set[str]) -> SpecView:
    spec = Spec.model_validate({**(rev.body or {}), "selected": rev.item_id in selected})
    return SpecView(spec, rev.version, rev.author, rev.created_at)


def _body(spec: Spec) -> dict[str, Any]:
    # `selected` is derived from the latest selection run, so it is never stored in a revision.
    return spec.model_dump(mode="json", exclude={"selected"})


def current_selection(store: Store, project_id: str) -> list[str]:
    """Ids of the specs the latest finished selection picked, in pick order (empty before any)."""
    for run in store.runs(project_id, kind=SELECT_KIND):
        if run.status.value == "finished":
            result = store.finished_units(run.id).get("selection", {}).get("result") or {}
            return list(result.get("selected", []))
    return []


def list_specs(store: Store, project_id: str) -> list[SpecView]:
    """Every spec of a project, oldest first, with its selection flag."""
    selected = set(current_selection(store, project_id))
    return [_view(rev, selected) for rev in store.list_current(project_id, KIND)]


def spec_status_counts(store: Store, project_id: str) -> dict[str, int]:
    """How many of a project's specs are at each review status (candidate, accepted, rejected): one query
    reading only the status of each spec's current body (Home's checklist; listing 5,000 specs to count
    them took a quarter of a second)."""
    rev, items = t.revisions, t.items
    latest = (
        sa.select(rev.c.item_id, sa.func.max(rev.c.version).label("v"))
        .where(rev.c.body.is_not(None))
        .group_by(rev.c.item_id)
        .subquery()
    )
    status = rev.c.body["status"].as_string()
    query = (
        sa.select(status, sa.func.count())
        .join(latest, (latest.c.item_id == rev.c.item_id) & (latest.c.v == rev.c.version))
        .join(items, items.c.id == rev.c.item_id)
        .where(items.c.project_id == project_id, items.c.kind == KIND)
        .group_by(status)
    )
    counts: dict[str, int] = {}
    with store.read() as conn:
        for value, n in conn.execute(query):
            key = value or SpecStatus.candidate.value  # a body without a status is a candidate (the default)
            counts[key] = counts.get(key, 0) + int(n)
    return counts


def spec_versions(store: Store, project_id: str) -> dict[str, int]:
    """Each spec's head version, by id: one query, no body read (what a cached view of the specs is
    compared against)."""
    rev, items = t.revisions, t.items
    query = (
        sa.select(rev.c.item_id, sa.func.max(rev.c.version))
        .join(items, items.c.id == rev.c.item_id)
        .where(items.c.project_id == project_id, items.c.kind == KIND)
        .group_by(rev.c.item_id)
    )
    with store.read() as conn:
        return {item_id: int(version) for item_id, version in conn.execute(query)}


def spec_stamp(store: Store, project_id: str) -> tuple[int, str, str]:
    """What the project's spec list depends on, cheaply: the number of spec revisions, the latest one's
    time, and the latest selection's end. Any add, edit, review, lock or re-selection changes it, so a
    page caches its spec list on it."""
    runs = t.runs
    with store.read() as conn:
        selection = conn.scalar(
            sa.select(sa.func.max(runs.c.finished_at)).where(
                runs.c.project_id == project_id, runs.c.kind == SELECT_KIND, runs.c.status == "finished"
            )
        )
    return (*store.revision_stamp(project_id, KIND), str(selection))


def get_spec(store: Store, project_id: str, spec_id: str) -> SpecView:
    """One spec's current state."""
    return _view(store.current(spec_id), set(current_selection(store, project_id)))


def add_specs(
    store: Store,
    project_id: str,
    drafts: Sequence[SpecDraft],
    provenance: Provenance,
    *,
    author: str | None = None,
    conn: sa.Connection | None = None,
) -> list[str]:
    """Store drafts as new candidate specs (version 1, saved by `author` or their producer); return ids."""
    ids = []
    for draft in drafts:
        spec = Spec(id=new_id("spec"), provenance=provenance, **draft.model_dump(include=set(EDITABLE)))
        ids.append(
            store.add_item(
                project_id,
                KIND,
                _body(spec),
                author or provenance.producer,
                run_id=provenance.run_id,
                conn=conn,
            )
        )
    return ids


def add_human_spec(
    store: Store, project_id: str, draft: SpecDraft, author: str, *, actor: Actor | None = None
) -> str:
    """A spec written by a person; it is always part of the selection."""
    author = acting_author(store, actor, Permission.review_specs, "spec.add", author)
    return add_specs(store, project_id, [draft], Provenance.human(author), author=author)[0]


def _change(
    store: Store,
    spec_id: str,
    author: str,
    expected_version: int,
    note: str,
    actor: Actor | None,
    **changes: Any,
) -> int:
    author = acting_author(store, actor, Permission.review_specs, f"spec.{note}", author)
    current = store.current(spec_id)
    if current.kind != KIND:
        raise EvalcoreError(f"'{spec_id}' is a {current.kind}, not a spec")
    spec = Spec.model_validate(current.body).model_copy(update=changes)
    validated = Spec.model_validate(spec.model_dump())
    return store.save_revision(spec_id, _body(validated), author, expected_version, note=note)


def edit_spec(
    store: Store,
    spec_id: str,
    author: str,
    expected_version: int,
    *,
    actor: Actor | None = None,
    **changes: Any,
) -> int:
    """Save an edit of scenario/given/when/then/category/documents as a new version; return it."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise EvalcoreError(f"cannot edit {sorted(unknown)} of a spec (editable: {', '.join(EDITABLE)})")
    return _change(store, spec_id, author, expected_version, "edited", actor, **changes)


def review_spec(
    store: Store,
    spec_id: str,
    author: str,
    expected_version: int,
    status: SpecStatus,
    reason: str = "",
    *,
    actor: Actor | None = None,
) -> int:
    """Accept or reject a spec (a rejection needs a reason), or set it back to candidate."""
    status = SpecStatus(status)
    if status == SpecStatus.rejected and not reason.strip():
        raise EvalcoreError("say why the spec is rejected: a reason is required")
    return _change(
        store, spec_id, author, expected_version, status.value, actor, status=status, reason=reason.strip()
    )


def lock_spec(
    store: Store,
    spec_id: str,
    author: str,
    expected_version: int,
    locked: bool = True,
    *,
    actor: Actor | None = None,
) -> int:
    """Lock a spec (always selected, kept as it is) or unlock it."""
    note = "locked" if locked else "unlocked"
    return _change(store, spec_id, author, expected_version, note, actor, locked=locked)


def spec_text(spec: dict[str, Any] | Spec) -> str:
    """A spec as Gherkin-like lines, for diffs and embeddings."""
    s = spec.model_dump() if isinstance(spec, Spec) else spec
    lines = [f"Scenario: {s['scenario']}", f"Given {s['given']}", f"When {s['when']}", f"Then {s['then']}"]
    lines.append(
        f"Category: {s.get('category', '')}; status: {s.get('status', '')}; locked: {s.get('locked')}"
    )
    return "\n".join(lines)


def version_diffs(store: Store, spec_id: str) -> list[tuple[Revision, str]]:
    """Each revision with a unified diff against the one before it (the first against nothing)."""
    out = []
    previous: list[str] = []
    for rev in store.history(spec_id):
        if rev.body is None:
            continue
        lines = spec_text(rev.body).splitlines()
        diff = "\n".join(
            difflib.unified_diff(previous, lines, f"v{rev.version - 1}", f"v{rev.version}", lineterm="", n=3)
        )
        out.append((rev, diff))
        previous = lines
    return out
