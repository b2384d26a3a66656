"""Which specs a doc-QA job generates from, and the system description it gives the model."""

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


def system_description(store: Store, project_id: str) -> tuple[str, list[str]]:
    """S_desc for the prompt, and names never to link documents on (the business and assistant names)."""
    card = store.system_card(project_id)
    if card is None:
        return store.project(project_id).title, []
    info = card.chatbot_info
    text = f"{info.name}: {info.description}\nTask: {info.task}".strip()
    if info.constraints:
        text += "\nConstraints: " + "; ".join(info.constraints)
    ignore = [name for name in (info.business, info.name) if name]
    return text, ignore
