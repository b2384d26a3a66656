"""The paper's per-run figures and their run-wise mean and standard deviation (seed 002, Tables 4 and 5;
issue 31, item 3): dialogues, target turns per dialogue (ST/D), median user and target turn lengths,
MTLD of both sides, breakdowns and crashes and the overall rating, per persona type over several runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalcore.generators.simulation import stats
from evalcore.generators.simulation.records import Dialogue
from evalcore.generators.simulation.store_ops import SimulationRun, load_simulation_run
from evalcore.store import Store

# The columns of Tables 4 and 5, under our names, with the heading each is printed under.
COLUMNS = {
    "dialogues": "D",
    "chatbot_turns_per_dialogue": "ST/D",
    "median_user_turn_length": "med |UT|",
    "median_chatbot_turn_length": "med |ST|",
    "user_turn_mtld": "MTLD u",
    "chatbot_turn_mtld": "MTLD st",
    "dialogues_with_breakdowns": "D with B",
    "breakdowns": "#B",
    "breakdowns_per_chatbot_turn": "B/ST",
    "unique_breakdown_types": "unique B",
    "crashes": "crash",
    "overall_rating": "overall",
}
ALL = "all"  # the row of every persona type together


def figures(dialogues: Sequence[Dialogue], task_oriented: bool) -> dict[str, float | None]:
    """One run's (or one persona type's) figures, keyed as `COLUMNS`; None where there is nothing to
    measure."""
    if not dialogues:
        return dict.fromkeys(COLUMNS)
    chat = stats.run_chat_statistics(dialogues)
    broken = stats.run_breakdown_stats(dialogues, task_oriented)
    overall = stats.rating_stats(dialogues, ["overall_performance"]).get("overall_performance", {})
    return {
        "dialogues": len(dialogues),
        "chatbot_turns_per_dialogue": chat["avg_chatbot_turns_per_dialogue"],
        "median_user_turn_length": chat["five_num_summary_avg_user_turn_length"]["median"],
        "median_chatbot_turn_length": chat["five_num_summary_avg_chatbot_turn_length"]["median"],
        "user_turn_mtld": chat["user_turn_mtld"],
        "chatbot_turn_mtld": chat["chatbot_turn_mtld"],
        "dialogues_with_breakdowns": broken["n_dialogues_with_breakdowns"],
        "breakdowns": broken["total_breakdown_count"],
        "breakdowns_per_chatbot_turn": broken["breakdowns_per_chatbot_turn"],
        "unique_breakdown_types": broken["n_unique_breakdown_types"],
        "crashes": chat["num_dialogues_with_chatbot_errors"],
        "overall_rating": overall.get("average"),
    }


def by_persona_type(sim: SimulationRun) -> dict[str, dict[str, float | None]]:
    """The run's figures per persona type (standard, challenging, ... as its personas say) and for all."""
    groups: dict[str, list[Dialogue]] = {}
    for dialogue in sim.dialogues:
        persona = sim.personas.get(dialogue.user_name)
        groups.setdefault(str(persona.type) if persona else "unknown", []).append(dialogue)
    rows = {kind: figures(dialogues, sim.task_oriented) for kind, dialogues in sorted(groups.items())}
    return {**rows, ALL: figures(sim.dialogues, sim.task_oriented)}


def mean_std(
    per_run: Sequence[dict[str, dict[str, float | None]]],
) -> dict[str, dict[str, tuple[float, float]]]:
    """Per persona type and column: the mean and population standard deviation over the runs that have
    the figure (a run without that type, or without a value, is left out of that cell)."""
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for kind in dict.fromkeys(k for run in per_run for k in run):
        cells = {}
        for column in COLUMNS:
            values = [run[kind][column] for run in per_run if kind in run and run[kind][column] is not None]
            if values:
                cells[column] = (float(np.mean(values)), float(np.std(values)))
        out[kind] = cells
    return out


def runs_table(store: Store, run_ids: Sequence[str]) -> dict[str, dict[str, tuple[float, float]]]:
    """Tables 4 and 5 shaped: mean and standard deviation over the runs, per persona type."""
    return mean_std([by_persona_type(load_simulation_run(store, run_id)) for run_id in run_ids])
