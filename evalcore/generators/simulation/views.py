"""What the Simulations page shows, read from the store (issue 18, item 8): the project's simulation runs,
their statistics side by side (with, per run, how far the simulated users were from their personas and
how many dialogues they spoilt: issue 31), breakdown types per persona, and a turn's breakdown badge.

The page only lays these out; every figure comes from here or from stats (ChatChecker's statistics).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from evalcore.generators.simulation import run_tables, stats
from evalcore.generators.simulation.fault_report import run_fault_report
from evalcore.generators.simulation.fidelity import fidelity_of
from evalcore.generators.simulation.personas import persona_name
from evalcore.generators.simulation.records import BreakdownDecision, DialogueTurn
from evalcore.generators.simulation.store_ops import SimulationRun, load_simulation_run
from evalcore.generators.simulation.taxonomy import CHATBOT_CRASH_TITLE, TAXONOMY
from evalcore.models import Run
from evalcore.store import Store

OFFLINE_PREFIX = "offline/"


@dataclass(frozen=True)
class RunSummary:
    """One simulation run as the page lists it."""

    run_id: str
    name: str  # the run's name, else its target and start
    source: str  # evalcore (simulated here) or chatchecker (imported)
    target: str
    status: str
    dialogues: int
    offline: bool
    started: str


def is_offline(sim: SimulationRun) -> bool:
    """True when every dialogue's users, verdicts and ratings were made offline (no model): the page
    says so. Imported ChatChecker runs were made by its models."""
    models = [m for d in sim.dialogues for ms in (d.extra.get("models") or {}).values() for m in ms]
    return bool(models) and all(m.startswith(OFFLINE_PREFIX) for m in models)


def summaries(store: Store, project_id: str, runs: list[Run]) -> list[RunSummary]:
    """The runs as the page lists them, in the order given."""
    out = []
    for run in runs:
        sim = load_simulation_run(store, run.id)
        target = run.target or str(run.params.get("chatbot_id") or "-")
        started = run.started_at.strftime("%Y-%m-%d %H:%M") if run.started_at else "-"
        out.append(
            RunSummary(
                run_id=run.id,
                name=str(run.params.get("name") or f"{target} · {started}"),
                source=str(run.params.get("source") or "evalcore"),
                target=target,
                status=run.status.value,
                dialogues=len(sim.dialogues),
                offline=is_offline(sim),
                started=started,
            )
        )
    return out


# ChatChecker's names are for files and CI; a person reads the statistic's meaning (the CLI's --json and
# the exports keep the names).
STATISTIC_LABELS = {
    "num_dialogues": "Dialogues",
    "num_user_turns": "User turns",
    "num_chatbot_turns": "Target turns",
    "user_turn_mtld": "Lexical diversity of user turns (MTLD)",
    "chatbot_turn_mtld": "Lexical diversity of target turns (MTLD)",
    "n_dialogues_with_breakdowns": "Dialogues with a breakdown",
    "total_breakdown_count": "Breakdowns",
    "breakdowns_per_chatbot_turn": "Breakdowns per target turn",
    "n_unique_breakdown_types": "Breakdown types seen",
    "avg_turn_number_of_first_breakdown": "Mean turn of the first breakdown",
    "num_dialogues_with_chatbot_errors": "Dialogues ended by a target error",
}


def statistics_frame(store: Store, run_ids: list[str]) -> pd.DataFrame:
    """ChatChecker's statistics of each run, one column per run, one row per statistic under its plain
    label (`STATISTIC_LABELS`; ratings as 'Rating: <dimension>' rows with the average)."""
    columns = {}
    for run_id in run_ids:
        figures = dict(stats_of(store, run_id))
        ratings = figures.pop("rating_stats")
        column = {STATISTIC_LABELS.get(name, name): value for name, value in figures.items()}
        column.update(
            {f"Rating: {dim.replace('_', ' ')}": values["average"] for dim, values in ratings.items()}
        )
        turns = run_tables.figures(*_dialogues_of(store, run_id))
        column.update({label: turns[key] for key, label in TURN_LABELS.items()})
        column.update(_users_of(store, run_id))
        columns[run_id] = column
    return pd.DataFrame(columns)


# Seed 002's turn figures beside ChatChecker's statistics (Tables 4 and 5).
TURN_LABELS = {
    "chatbot_turns_per_dialogue": "Target turns per dialogue (ST/D)",
    "median_user_turn_length": "Median user turn length (words)",
    "median_chatbot_turn_length": "Median target turn length (words)",
}


def _users_of(store: Store, run_id: str) -> dict[str, float | int | None]:
    """How the run's simulated users did, per run (issue 31): how far from their personas, and how many
    dialogues they spoilt, with the breakdown rate without those."""
    _, played = fidelity_of(store, run_id)
    faults = run_fault_report(store, run_id)
    return {
        "Simulated users off their persona (0 = as given, 1 = nothing kept)": played.get("mean_distance"),
        "Share of simulated users keeping their kind": played.get("type_kept"),
        "Dialogues whose simulated user is at fault": len(faults.faults),
        "Breakdowns per target turn without them": faults.without_faulted["breakdowns_per_chatbot_turn"],
    }


def _dialogues_of(store: Store, run_id: str) -> tuple[list, bool]:
    sim = load_simulation_run(store, run_id)
    return sim.dialogues, sim.task_oriented


def stats_of(store: Store, run_id: str) -> dict:
    """The run's statistics under ChatChecker's names."""
    sim = load_simulation_run(store, run_id)
    return stats.summary(sim.dialogues, sim.task_oriented, sim.rating_dimensions)


def breakdown_matrix(sim: SimulationRun) -> pd.DataFrame:
    """Turns with a breakdown per type (rows) and simulated user (columns). Types in the taxonomy's order,
    then the crash, then titles outside the taxonomy as they were written; only types that occur."""
    counts: dict[str, dict[str, int]] = {}
    for dialogue in sim.dialogues:
        for turn in dialogue.turns:
            if turn.breakdown is None or turn.breakdown.decision != BreakdownDecision.breakdown:
                continue
            for title in turn.breakdown.breakdown_types:
                row = counts.setdefault(title, {})
                row[dialogue.user_name] = row.get(dialogue.user_name, 0) + 1
    order = {t.title.lower(): i for i, t in enumerate(TAXONOMY)} | {
        CHATBOT_CRASH_TITLE.lower(): len(TAXONOMY)
    }
    titles = sorted(counts, key=lambda t: (order.get(t.lower(), len(TAXONOMY) + 1), t))
    users = sorted({d.user_name for d in sim.dialogues})
    return pd.DataFrame([[counts[t].get(u, 0) for u in users] for t in titles], index=titles, columns=users)


def user_label(sim: SimulationRun, user_name: str) -> str:
    """A simulated user as a person reads it: its persona's name and kind ('Ana Ruiz, challenging'); the
    user's folder name when no persona played it. Two users with one name keep their folder beside it."""
    persona = sim.personas.get(user_name)
    if persona is None:
        return user_name
    label = f"{persona_name(persona)}, {persona.type}"
    twins = [u for u, p in sim.personas.items() if f"{persona_name(p)}, {p.type}" == label]
    return label if len(twins) < 2 else f"{label} ({user_name})"


def turn_badge(turn: DialogueTurn) -> str | None:
    """A target turn's verdict in one line ('breakdown 0.60: Ignore request' or 'no breakdown 1.00'),
    None when it has none; titles outside the taxonomy are marked as such."""
    if turn.breakdown is None:
        return None
    verdict = turn.breakdown
    known = {t.title.lower() for t in TAXONOMY} | {CHATBOT_CRASH_TITLE.lower()}
    types = [t if t.lower() in known else f"{t} (not in the taxonomy)" for t in verdict.breakdown_types]
    label = "breakdown" if verdict.decision == BreakdownDecision.breakdown else "no breakdown"
    return f"{label} {verdict.score:.2f}" + (f": {', '.join(types)}" if types else "")
