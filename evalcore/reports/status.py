"""Counts per stage of the data flow, for the Home page and `evalcore status`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from evalcore.runs.records import RUN_KIND
from evalcore.store import Store

# Item kinds in data-flow order, with the label users see.
STAGES: list[tuple[str, str]] = [
    ("spec", "Specs"),
    ("conversation", "Conversations"),
    ("test", "Tests"),
    ("persona", "Personas"),
]


@dataclass(frozen=True)
class StageCount:
    """One row of the status table."""

    stage: str
    count: int
    detail: str


def project_status(store: Store, project_id: str) -> list[StageCount]:
    """How many records each stage holds in a project, with a short breakdown."""
    store.project(project_id)
    documents = store.documents(project_id)
    kinds = Counter(d.kind.value for d in documents)
    rows = [
        StageCount("System card", 1 if store.system_card(project_id) else 0, ""),
        StageCount("Documents", len(documents), ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))),
        StageCount("Tools", len(store.tools(project_id)), ""),
        StageCount("Procedures", len(store.procedures(project_id)), ""),
    ]
    items = store.count_items(project_id)
    rows += [StageCount(label, items.get(kind, 0), "") for kind, label in STAGES]
    # Runs against a target are what leads read; generation and selection jobs are counted apart.
    jobs = store.runs(project_id)
    played = [r for r in jobs if r.kind == RUN_KIND]
    statuses = Counter(r.status.value for r in played)
    detail = ", ".join(f"{n} {status}" for status, n in statuses.items())
    others = len(jobs) - len(played)
    if others:
        detail += ("; " if detail else "") + f"{others} generation or selection job(s)"
    rows.append(StageCount("Runs", len(played), detail))
    return rows
