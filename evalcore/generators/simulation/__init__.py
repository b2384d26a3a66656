"""Simulated users against a target, breakdowns and ratings (seed 002, ChatChecker): the `simulation` arrow.

Modules: the records of a simulated dialogue and their mapping onto Conversation (records), the breakdown
taxonomy (taxonomy), personas from the system card and ChatChecker persona YAML (personas; what
adversarial ones aim at and how their probes read: adversarial), the reusable
one-dialogue simulator with ChatChecker's stop rules (simulator; scenario tests drive it with a briefing)
and its offline user (offline_user), the breakdown detector and rater tasks (detection) with the offline
rules (breakdown_rules, breakdown_checks) and their scores against labels (detector_scores), the
simulation job (job), ChatChecker's run statistics (stats) and Tables 4 and 5 (run_tables), ChatChecker
run folders both ways (chatchecker), simulation runs in the store (store_ops), simulator faults (the
rules and task: user_faults; the stored check: fault_check; the figures with and without: fault_report),
how far simulated users are from their personas and beside other users (fidelity, user_comparison), and
what the Simulations page shows (views).
"""

from evalcore import lazy_exports

# Imported on first use: a reader of the taxonomy or the records does not load statistics and run folders.
__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "evalcore.generators.simulation.breakdown_rules": ("annotate_offline", "detect_offline"),
        "evalcore.generators.simulation.records": (
            "GENERATOR",
            "RUN_KIND",
            "BreakdownAnnotation",
            "BreakdownDecision",
            "Dialogue",
            "DialogueTurn",
            "DimensionRating",
            "FinishReason",
        ),
        "evalcore.generators.simulation.store_ops": (
            "ImportedRun",
            "SimulationRun",
            "export_chatchecker_run",
            "import_chatchecker_run",
            "load_simulation_run",
            "simulation_statistics",
        ),
    },
)
