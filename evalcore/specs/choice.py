"""Which specs a generator writes from: the latest selection, every usable spec, named ones, or every usable
spec with the selected ones first. Doc-QA, scenarios and the pages choose with these, so "the selected
specs" means the same on every page."""

from __future__ import annotations

from collections.abc import Sequence

from evalcore.errors import EvalcoreError
from evalcore.models import Spec, SpecStatus
from evalcore.specs.store_ops import current_selection, list_specs
from evalcore.store import Store


def choose_specs(store: Store, project_id: str, which: str | Sequence[str]) -> tuple[list[Spec], str | None]:
    """The specs to use and, when the choice needed a fallback, a message saying so.

    `which` is 'selected' (the latest selection; without one, every accepted and candidate spec),
    'all' (every spec not rejected) or a list of spec ids.
    """
    views = list_specs(store, project_id)
    usable = [v.spec for v in views if v.spec.status != SpecStatus.rejected]
    note = None
    if isinstance(which, str) and which == "all":
        chosen = usable
    elif isinstance(which, str) and which == "selected":
        selected = current_selection(store, project_id)
        by_id = {s.id: s for s in usable}
        chosen = [by_id[i] for i in selected if i in by_id]
        if not selected:
            chosen = usable
            note = (
                f"no spec selection yet: using all {len(usable)} accepted and candidate specs "
                "(select specs first to generate from a diverse subset)"
            )
    elif isinstance(which, str):
        raise EvalcoreError(f"--specs must be 'selected', 'all' or spec ids, not '{which}'")
    else:
        by_id = {v.spec.id: v.spec for v in views}
        unknown = [i for i in which if i not in by_id]
        if unknown:
            raise EvalcoreError(f"no spec {', '.join(unknown)} in project '{project_id}'")
        chosen = [by_id[i] for i in dict.fromkeys(which)]
    if not chosen:
        raise EvalcoreError(
            f"project '{project_id}' has no spec to generate conversations from: generate specs first"
        )
    return chosen, note


def selected_first(store: Store, project_id: str, limit: int | None = None) -> list[Spec]:
    """Every spec not rejected, those of the current selection first, at most `limit` of them;
    EvalcoreError when the project has none."""
    views = [v for v in list_specs(store, project_id) if v.spec.status != SpecStatus.rejected]
    specs = [v.spec for v in sorted(views, key=lambda v: not v.spec.selected)][:limit]
    if not specs:
        raise EvalcoreError(
            f"project {project_id} has no spec to write from: `evalcore specs generate` first"
        )
    return specs
