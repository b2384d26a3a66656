"""Simulated users against a target, breakdowns and ratings (seed 002, ChatChecker): the `simulation` arrow.

Today: the records of a simulated dialogue and their mapping onto Conversation (records), the breakdown
taxonomy (taxonomy), the offline breakdown detector (breakdown_rules), ChatChecker's run statistics
(stats), ChatChecker run folders both ways (chatchecker), and simulation runs in the store: import, read
back, statistics, export (store_ops).
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
