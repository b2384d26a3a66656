"""Status counts: how many records each stage of the data flow holds (the Home page and `evalcore status`),
and how many items are in each tier (the annotation pages and `evalcore annotate progress`). Progress of a
single job is the job's own (`evalcore.jobs`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import sqlalchemy as sa

from evalcore.generators.simulation.records import RUN_KIND as SIMULATION_KIND
from evalcore.items.state import REVIEWED_KINDS, refresh_states
from evalcore.models import Tier
from evalcore.review.queue import CONVERSATION, DISAGREEMENT
from evalcore.runs.records import RUN_KIND
from evalcore.store import Store
from evalcore.store import schema as t

# Item kinds in data-flow order, with the label users see.
STAGES: list[tuple[str, str]] = [
    ("spec", "Specs"),
    ("conversation", "Conversations"),
    ("test", "Tests"),
    ("persona", "Personas"),
]
# How the Runs row names each kind of run against a target: one, and more than one.
RUN_LABELS = {
    RUN_KIND: ("conversation run", "conversation runs"),
    "procedure_tests": ("procedure test run", "procedure test runs"),
    SIMULATION_KIND: ("simulation", "simulations"),
    "scenario": ("scenario run", "scenario runs"),
    "rubric_scoring": ("rubric scoring", "rubric scorings"),
}


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
        StageCount("Documents", len(documents), ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items()))),
        StageCount("Tools", len(store.tools(project_id)), ""),
        StageCount("Procedures", len(store.procedures(project_id)), ""),
    ]
    items = store.count_items(project_id)
    for kind, label in STAGES:
        count = items.get(kind, 0)
        # Conversations and tests say how many are in each tier (nothing to say of an empty stage).
        detail = _tier_detail(store, project_id, kind) if count and kind in REVIEWED_KINDS else ""
        rows.append(StageCount(label, count, detail))
    # Runs against a target (conversations played, procedure tests, simulations, scenarios) are what
    # leads read; generation and selection jobs are counted apart. A ChatChecker import names no target
    # of ours, but it is a simulation of one.
    jobs = store.runs(project_id)
    played = [r for r in jobs if r.kind == RUN_KIND or r.target or r.kind == SIMULATION_KIND]
    kinds = Counter(r.kind for r in played)
    statuses = Counter(r.status.value for r in played)
    detail = ", ".join(f"{n:,} {RUN_LABELS.get(kind, (kind, kind))[n > 1]}" for kind, n in kinds.items())
    detail += (" (" + ", ".join(f"{n:,} {status}" for status, n in statuses.items()) + ")") if played else ""
    others = len(jobs) - len(played)
    if others:
        detail += ("; " if detail else "") + f"{others:,} generation or selection job(s)"
    rows.append(StageCount("Runs", len(played), detail))
    return rows


def tier_counts(store: Store, project_id: str, kind: str = CONVERSATION) -> dict[str, int]:
    """How many items are in each tier, and how many await adjudication ('disagreement')."""
    refresh_states(store, project_id, kind)
    s = t.annotation_states
    where = (s.c.project_id == project_id, s.c.kind == kind)
    with store.read() as conn:
        counts = dict(
            conn.execute(sa.select(s.c.tier, sa.func.count()).where(*where).group_by(s.c.tier)).all()
        )
        disagreements = conn.scalar(
            sa.select(sa.func.count()).select_from(s).where(*where, s.c.needs_adjudication.is_(True))
        )
    return {**{x.value: counts.get(x.value, 0) for x in Tier}, DISAGREEMENT: disagreements}


def _tier_detail(store: Store, project_id: str, kind: str) -> str:
    """'2 gold, 1,666 silver, ...': the tiers that hold items of `kind`, counts with separators as the
    metrics beside them show theirs."""
    counts = tier_counts(store, project_id, kind)
    return ", ".join(f"{n:,} {tier}" for tier, n in counts.items() if n)
