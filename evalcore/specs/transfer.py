"""Moving specs in and out: YAML and Gherkin exports, and imports that change nothing on error."""

from __future__ import annotations

from dataclasses import dataclass

from evalcore.errors import EvalcoreError, Problem, ValidationFailed
from evalcore.models import Provenance, Spec
from evalcore.specs.formats import read_specs, to_gherkin, to_yaml
from evalcore.specs.store_ops import EDITABLE, KIND, _body, list_specs
from evalcore.store import Store
from evalcore.store.store import new_id

FORMATS = ("yaml", "gherkin")


def export_specs(store: Store, project_id: str, fmt: str, *, selected_only: bool = False) -> str:
    """The project's specs (or only the selected ones) as YAML or Gherkin text."""
    specs = [v.spec for v in list_specs(store, project_id) if v.spec.selected or not selected_only]
    if fmt == "yaml":
        return to_yaml(specs)
    if fmt in ("gherkin", "feature"):
        return to_gherkin(specs, store.project(project_id).title)
    raise EvalcoreError(f"unknown spec format '{fmt}' (use {' or '.join(FORMATS)})")


@dataclass(frozen=True)
class SpecImportResult:
    """Ids of the specs an import added and of those it updated (as new versions)."""

    added: list[str]
    updated: list[str]


def import_specs(store: Store, project_id: str, text: str, file: str, author: str) -> SpecImportResult:
    """Validate a spec file whole, then add its specs (or new versions of known ids) in one transaction."""
    if not author.strip():
        raise EvalcoreError("say who is importing: an author name is required")
    drafts = read_specs(text, file)
    current = {v.spec.id: v for v in list_specs(store, project_id)}
    documents = {d.id for d in store.documents(project_id)}
    problems = [
        Problem(file, f"unknown document '{doc}' (not in project {project_id})", None, f"[{i}].documents")
        for i, draft in enumerate(drafts)
        for doc in draft.documents
        if doc not in documents
    ]
    if problems:
        raise ValidationFailed(problems, file)
    added, updated = [], []
    with store.write() as conn:
        for draft in drafts:
            fields = draft.model_dump(include=set(EDITABLE))
            view = current.get(draft.id or "")
            if view is None:
                spec = Spec(id=new_id("spec"), provenance=Provenance.human(author, [file]), **fields)
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
