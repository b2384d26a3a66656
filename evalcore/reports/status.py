"""Status counts: how many records each stage of the data flow holds (the Home page and `evalcore status`),
how many items are in each tier (the annotation pages and `evalcore annotate progress`), and the one status
of a run or job every page shows (`run_state`), with the run list built on it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from evalcore.generators.procedure.origins import (
    FROM_POLICY,
    FROM_PROJECT,
    GENERATED,
    procedure_sources,
)
from evalcore.generators.procedure.origins import RUN_KIND as PROCEDURES_KIND
from evalcore.generators.simulation.records import RUN_KIND as SIMULATION_KIND
from evalcore.items.state import REVIEWED_KINDS, refresh_states
from evalcore.jobs.control import holders, progress
from evalcore.models import Run, RunStatus, Tier
from evalcore.review.queue import CONVERSATION, DISAGREEMENT
from evalcore.runs.control import run_name
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
# What a run of each kind counts its progress in.
RUN_UNITS = {RUN_KIND: "turns", "procedure_tests": "tests", SIMULATION_KIND: "dialogues",
             "scenario": "repetitions", "rubric_scoring": "conversations"}  # fmt: skip


SOURCE_WORDS = {FROM_PROJECT: "from procedure files", FROM_POLICY: "written from the policy",
                GENERATED: "generated for new intents"}  # fmt: skip


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
    jobs = store.runs(project_id)
    # Procedures generation wrote (from the policy, from new intents) count too: tests come from them.
    sources = Counter(
        procedure_sources(store, project_id, [r for r in jobs if r.kind == PROCEDURES_KIND]).values()
    )
    rows = [
        StageCount("System card", 1 if store.system_card(project_id) else 0, ""),
        StageCount("Documents", len(documents), ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items()))),
        StageCount("Tools", len(store.tools(project_id)), ""),
        StageCount(
            "Procedures",
            sum(sources.values()),
            ", ".join(f"{n:,} {SOURCE_WORDS[s]}" for s, n in sources.items())
            if set(sources) - {FROM_PROJECT}
            else "",
        ),
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


# ------------------------------------------------------------------- one run's status (issue 27, item 1)

LIVE_STATUSES = (RunStatus.pending, RunStatus.running)


@dataclass(frozen=True)
class RunState:
    """Where a run or job stands, as every page says it: one word and its progress, read together."""

    run: Run
    word: str  # queued, running, finishing, finished, stopped or failed
    done: int  # records committed
    total: int  # records when finished (0 before the job has planned)
    held: bool  # a live worker holds units of it now

    @property
    def live(self) -> bool:
        """Queued or played right now (a page polls it)."""
        return self.run.status in LIVE_STATUSES

    def text(self, noun: str) -> str:
        """'52 / 62 turns · running', the progress line of every page."""
        return f"{self.done:,} / {self.total:,} {noun} · {self.word}"


def run_state(store: Store, run_id: str) -> RunState:
    """A run's status from the store, read once: its record, its committed units and its workers.

    Every page that shows a run's status calls this, so a banner, a bar and a picker on one screen say the
    same. 'queued' is a run no worker has started; 'finishing' a running run whose every unit is committed
    and that no worker holds any more (its worker is closing it: not a run nobody works)."""
    run = store.run(run_id)
    done, total = progress(store, run)
    held = bool(holders(store, run_id)) if run.status in LIVE_STATUSES else False
    word = "queued" if run.status == RunStatus.pending else run.status.value
    if run.status == RunStatus.running and total and done >= total and not held:
        word = "finishing"
    return RunState(run=run, word=word, done=done, total=total, held=held)


@dataclass(frozen=True)
class RunListRow:
    """One run as the run list shows it."""

    run_id: str
    name: str
    kind: str  # in words (RUN_LABELS)
    target: str
    judge: str
    items: str  # which items it plays: source, filters and how many
    code_version: str
    cost_usd: float
    status: str  # RunState.word
    progress: str  # RunState.text


def run_list(store: Store, project_id: str, kinds: Sequence[str] = tuple(RUN_LABELS)) -> list[RunListRow]:
    """The project's runs of these kinds (default: every kind of run against a target), newest first, with
    kind, target, judge, item scope, code version, cost and status (the status from `run_state`)."""
    with store.read() as conn:
        spent = dict(
            conn.execute(
                sa.select(t.runs.c.id, t.runs.c.spent_usd).where(t.runs.c.project_id == project_id)
            ).all()
        )
    rows = []
    for run in store.runs(project_id):
        if run.kind not in kinds:
            continue
        state = run_state(store, run.id)
        rows.append(
            RunListRow(
                run_id=run.id,
                name=run_name(run),
                kind=RUN_LABELS.get(run.kind, (run.kind,))[0],
                target=run.target or "-",
                judge=run.judge or str(run.params.get("judge_requested") or "the judge role"),
                items=_scope(run) if run.kind == RUN_KIND else _units_scope(run),
                code_version=run.code_version or "-",
                cost_usd=float(spent.get(run.id) or 0.0),
                status=state.word,
                progress=state.text(RUN_UNITS.get(run.kind, "units")),
            )
        )
    return rows


def _scope(run: Run) -> str:
    """'conversations, gold+silver, spec X, first 10 (rejected left out)': what a run plays."""
    params = run.params
    filters = params.get("filters") or {}
    parts = [str(params.get("source") or "items")]
    if filters.get("generator"):
        parts.append(f"generator {filters['generator']}")
    if filters.get("spec_id"):
        parts.append(f"spec {filters['spec_id']}")
    if filters.get("limit"):
        parts.append(f"at most {filters['limit']}")
    parts.append(f"{len(params.get('items') or []):,} items")
    parts.append("rejected included" if filters.get("include_rejected") else "rejected left out")
    return ", ".join(parts)


def _units_scope(run: Run) -> str:
    """What a run of another kind plays: '71 tests', '4 scenarios x 2', '6 dialogues', '30 conversations'."""
    params = run.params
    units = len(params.get("units") or [])
    if run.kind == "scenario":
        return f"{_count(len(params.get('scenarios') or []), 'scenarios')} x {params.get('run_count', 1)}"
    if run.kind == "rubric_scoring":
        return f"{_count(units, 'conversations')}, rubric set {params.get('rubric_set')}"
    return _count(units, RUN_UNITS.get(run.kind, "units"))


def _count(n: int, plural: str) -> str:
    return f"{n:,} {plural[:-1] if n == 1 else plural}"
