"""Moving specs in and out: YAML and Gherkin exports, and imports that change nothing on error."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from evalcore.auth.audit import importing
from evalcore.auth.roles import Actor
from evalcore.errors import EvalcoreError, NotFoundError, Problem, ValidationFailed
from evalcore.inputs.limits import MAX_FILE_MB_ENV, current_limits
from evalcore.inputs.sources import decode_text, read_bounded
from evalcore.models import Provenance, Spec
from evalcore.specs.formats import provenance_header, read_specs, to_gherkin, to_yaml
from evalcore.specs.store_ops import EDITABLE, KIND, _body, list_specs
from evalcore.store import Store, schema
from evalcore.store.store import new_id

FORMATS = ("yaml", "gherkin")


def export_specs(store: Store, project_id: str, fmt: str, *, selected_only: bool = False) -> str:
    """The project's specs (or only the selected ones) as YAML or Gherkin text."""
    specs = [v.spec for v in list_specs(store, project_id) if v.spec.selected or not selected_only]
    header = provenance_header(specs, project_id)
    if fmt == "yaml":
        return to_yaml(specs, header)
    if fmt in ("gherkin", "feature"):
        return to_gherkin(specs, store.project(project_id).title, header)
    raise EvalcoreError(f"unknown spec format '{fmt}' (use {' or '.join(FORMATS)})")


@dataclass(frozen=True)
class SpecImportResult:
    """Ids of the specs an import added and of those it updated (as new versions)."""

    added: list[str]
    updated: list[str]


def import_specs(
    store: Store,
    project_id: str,
    text: str | bytes,
    file: str,
    author: str,
    *,
    actor: Actor | None = None,
) -> SpecImportResult:
    """Validate a spec file (its text, or its bytes: UTF-8) whole, then add its specs (or new versions of
    known ids) in one transaction. The actor must hold the import permission; a signed-in one imports as
    themself."""
    if not author.strip():
        raise EvalcoreError("say who is importing: an author name is required")
    with importing(store, actor, "import.specs", project_id=project_id, target=file, author=author) as name:
        return _import_specs(store, project_id, text, file, name)


def _import_specs(
    store: Store, project_id: str, text: str | bytes, file: str, author: str
) -> SpecImportResult:
    problems: list[Problem] = []
    decoded = decode_text(text, file, problems)
    if decoded is None:
        raise ValidationFailed(problems, file)
    drafts = read_specs(decoded, file)
    current = {v.spec.id: v for v in list_specs(store, project_id)}
    documents = {d.id for d in store.documents(project_id)}
    problems = [
        Problem(file, f"unknown document '{doc}' (not in project {project_id})", None, f"[{i}].documents")
        for i, draft in enumerate(drafts)
        for doc in draft.documents
        if doc not in documents
    ]
    ids = [d.id for d in drafts if d.id]
    limit = schema.items.c.id.type.length
    problems += [
        Problem(file, f"spec id longer than {limit} characters", None, "id") for i in ids if len(i) > limit
    ]
    problems += [
        Problem(file, f"spec id '{i}' is given to two specs", None, "id")
        for i in sorted(set(ids))
        if ids.count(i) > 1
    ]
    if problems:
        raise ValidationFailed(problems, file)
    added, updated = [], []
    with store.write() as conn:
        for draft in drafts:
            fields = draft.model_dump(include=set(EDITABLE))
            view = current.get(draft.id or "")
            if view is None:
                # A file's id is kept when the store has no item by it, so specs moved to another store
                # keep the ids their conversations refer to, and importing the same file again updates.
                spec_id = draft.id if draft.id and not _taken(store, draft.id, conn) else new_id("spec")
                spec = Spec(id=spec_id, provenance=Provenance.human(author, [file]), **fields)
                added.append(
                    store.add_item(
                        project_id, KIND, _body(spec), author, note=f"imported from {file}", conn=conn
                    )
                )
            elif any(getattr(view.spec, k) != v for k, v in fields.items()):
                spec = view.spec.model_copy(update=fields)
                store.save_revision(
                    spec.id, _body(spec), author, view.version, note=f"imported from {file}", conn=conn
                )
                updated.append(spec.id)
    return SpecImportResult(added, updated)


def _taken(store: Store, item_id: str, conn: sa.Connection) -> bool:
    try:
        store.current(item_id, conn=conn)
    except NotFoundError:
        return False
    return True


def import_specs_file(
    store: Store, project_id: str, path: Path, author: str, *, actor: Actor | None = None
) -> SpecImportResult:
    """import_specs on a file, read only within the import limit of one file (evalcore.inputs.limits)."""
    problems: list[Problem] = []
    raw = read_bounded(path, path.name, problems, current_limits().max_file_bytes, MAX_FILE_MB_ENV)
    if raw is None:
        raise ValidationFailed(problems, path.name)
    return import_specs(store, project_id, raw, path.name, author, actor=actor)
