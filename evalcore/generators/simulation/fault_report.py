"""Which failures to discount (issue 31, item 1): a simulation run's dialogues checked for simulator faults,
and its breakdown rate and rating verdict with and without the dialogues whose simulated user was at fault.

Works on any run in the store, simulated here or imported (ChatChecker): the check needs only the dialogue
and the persona that played its user. Where a check job stored its findings (fault_check), they are read;
dialogues no check has covered are checked by the offline rules on the spot, and the report says which.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from evalcore.generators.simulation import stats
from evalcore.generators.simulation.fault_check import StoredFaults, stored_faults
from evalcore.generators.simulation.records import Dialogue
from evalcore.generators.simulation.store_ops import SimulationRun, load_simulation_run
from evalcore.generators.simulation.user_faults import UserFault, detect_user_faults
from evalcore.store import Store

VERDICT = "overall_performance"  # the rated dimension read as the run's verdict, when rated


@dataclass
class FaultReport:
    """The faults per dialogue (faulted dialogues only) and the run's figures over all dialogues and over
    the dialogues without a fault."""

    faults: dict[str, list[UserFault]]
    with_faulted: dict[str, Any]
    without_faulted: dict[str, Any]
    source: str = "offline rules (no model), computed now"  # who found the faults

    def kind_counts(self) -> dict[str, int]:
        """How many dialogues have each kind of fault."""
        return dict(Counter(k for found in self.faults.values() for k in {f.kind.value for f in found}))


def _figures(dialogues: list[Dialogue], task_oriented: bool) -> dict[str, Any]:
    broken = stats.run_breakdown_stats(dialogues, task_oriented)
    verdict = stats.rating_stats(dialogues, [VERDICT]).get(VERDICT, {}).get("average")
    return {
        "dialogues": len(dialogues),
        "dialogues_with_breakdowns": broken["n_dialogues_with_breakdowns"],
        "breakdowns_per_chatbot_turn": broken["breakdowns_per_chatbot_turn"],
        "average_overall_rating": verdict,
    }


def fault_report(sim: SimulationRun, stored: StoredFaults | None = None) -> FaultReport:
    """Every dialogue of `sim` with its faults: as `stored` holds them, else by the offline rules against
    its user's persona."""
    faults = {}
    unchecked = 0
    for dialogue in sim.dialogues:
        if stored is not None and dialogue.dialogue_id in stored.faults:
            found = stored.faults[dialogue.dialogue_id]
        else:
            unchecked += 1
            persona = sim.personas.get(dialogue.user_name)
            found = detect_user_faults(dialogue, persona.model_dump(mode="json") if persona else None)
        if found:
            faults[dialogue.dialogue_id] = found
    kept = [d for d in sim.dialogues if d.dialogue_id not in faults]
    source = FaultReport.source
    if stored is not None:
        rest = f"; {unchecked} dialogue(s) it did not cover by the offline rules, now" if unchecked else ""
        source = f"stored: {stored.label}{rest}"
    return FaultReport(
        faults=faults,
        with_faulted=_figures(sim.dialogues, sim.task_oriented),
        without_faulted=_figures(kept, sim.task_oriented),
        source=source,
    )


def run_fault_report(store: Store, run_id: str) -> FaultReport:
    """The fault report of a simulation run in the store, from its latest stored check where there is one."""
    return fault_report(load_simulation_run(store, run_id), stored_faults(store, run_id))
