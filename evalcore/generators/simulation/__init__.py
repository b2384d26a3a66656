"""Simulated users against a target, breakdowns and ratings (seed 002, ChatChecker): the `simulation` arrow.

Modules: the records of a simulated dialogue and their mapping onto Conversation (records), the breakdown
taxonomy (taxonomy), personas from the system card and ChatChecker persona YAML (personas), the reusable
one-dialogue simulator with ChatChecker's stop rules (simulator; scenario tests drive it with a briefing)
and its offline user (offline_user), the breakdown detector and rater tasks (detection) with the offline
rules (breakdown_rules), the simulation job (job), ChatChecker's run statistics (stats), ChatChecker run
folders both ways (chatchecker), simulation runs in the store (store_ops), and what the Simulations page
shows (views).
"""

from evalcore.generators.simulation.breakdown_rules import annotate_offline, detect_offline
from evalcore.generators.simulation.records import (
    GENERATOR,
    RUN_KIND,
    BreakdownAnnotation,
    BreakdownDecision,
    Dialogue,
    DialogueTurn,
    DimensionRating,
    FinishReason,
)
from evalcore.generators.simulation.store_ops import (
    ImportedRun,
    SimulationRun,
    export_chatchecker_run,
    import_chatchecker_run,
    load_simulation_run,
    simulation_statistics,
)

__all__ = [
    "GENERATOR",
    "RUN_KIND",
    "BreakdownAnnotation",
    "BreakdownDecision",
    "Dialogue",
    "DialogueTurn",
    "DimensionRating",
    "FinishReason",
    "ImportedRun",
    "SimulationRun",
    "annotate_offline",
    "detect_offline",
    "export_chatchecker_run",
    "import_chatchecker_run",
    "load_simulation_run",
    "simulation_statistics",
]
