"""The project's stages as a checklist (issue 28, Home): documents in, specs written, specs reviewed,
conversations and tests made by each generator, items reviewed by people, runs against a target, reports
to read; each with its count from the store, whether it is done, and the first stage not done (the next
thing to do). The Home page puts a link to each stage's page beside it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import sqlalchemy as sa

from evalcore.generators.simulation.records import RUN_KIND as SIMULATION_KIND
from evalcore.models import RunStatus
from evalcore.models.wording import words
from evalcore.reports.status import tier_counts
from evalcore.runs.records import RUN_KIND
from evalcore.specs.store_ops import spec_status_counts
from evalcore.store import Store
from evalcore.store import schema as t

# Item kinds a generator makes (what a run plays or a person reviews), as the checklist counts them.
MADE_KINDS = ("conversation", "test", "scenario")


@dataclass(frozen=True)
class Stage:
    """One line of the checklist."""

    key: str  # documents, specs, reviewed_specs, generated, reviewed, runs, reports
    label: str  # what the stage is, in plain words
    count: int  # how many records the stage holds
    detail: str  # a short breakdown ('' when there is nothing to say)
    done: bool  # whether the stage has what the next one needs


def checklist(store: Store, project_id: str) -> list[Stage]:
    """The project's stages in data-flow order, each with its count and whether it is done."""
    documents = store.documents(project_id)
    statuses = spec_status_counts(store, project_id)
    specs = sum(statuses.values())
    reviewed_specs = Counter({status: n for status, n in statuses.items() if status != "candidate" and n})
    made = _made_per_generator(store, project_id)
    tiers = tier_counts(store, project_id)
    people = tiers.get("gold", 0) + tiers.get("rejected", 0)
    runs = [r for r in store.runs(project_id) if r.kind == RUN_KIND or r.target or r.kind == SIMULATION_KIND]
    finished = [r for r in runs if r.status == RunStatus.finished]
    return [
        Stage("documents", "Documents imported", len(documents), "", bool(documents)),
        Stage("specs", "Specs written", specs, "", bool(specs)),
        Stage(
            "reviewed_specs",
            "Specs reviewed",
            sum(reviewed_specs.values()),
            ", ".join(f"{n:,} {status}" for status, n in sorted(reviewed_specs.items())),
            bool(reviewed_specs),
        ),
        Stage(
            "generated",
            "Conversations and tests made",
            sum(made.values()),
            " · ".join(f"{words(g)} {n:,}" for g, n in made.items()),
            bool(made),
        ),
        Stage(
            "reviewed",
            "Conversations reviewed by people",
            people,
            f"{tiers.get('silver', 0):,} accepted by the judge only, "
            f"{tiers.get('unreviewed', 0):,} not reviewed",
            bool(people),
        ),
        Stage("runs", "Runs against your assistant", len(runs), "", bool(runs)),
        Stage("reports", "Reports to read", len(finished), "one per finished run", bool(finished)),
    ]


def next_stage(stages: list[Stage]) -> Stage | None:
    """The first stage not done: the next thing to do (None when every stage is done)."""
    return next((s for s in stages if not s.done), None)


def _made_per_generator(store: Store, project_id: str) -> dict[str, int]:
    """How many conversations, tests and scenarios each generator made (an import counts under its own)."""
    i = t.items
    with store.read() as conn:
        rows = conn.execute(
            sa.select(i.c.generator, i.c.kind, sa.func.count())
            .where(i.c.project_id == project_id, i.c.kind.in_(MADE_KINDS))
            .group_by(i.c.generator, i.c.kind)
        ).all()
    made: Counter[str] = Counter()
    for generator, kind, n in rows:
        made[generator or ("scenario" if kind == "scenario" else kind)] += n
    return dict(made)
