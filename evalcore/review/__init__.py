"""The annotation workbench: annotators turn silver conversations into gold, several at once, nothing lost.

Seeds 000 (human verification of generated conversations) and 004 (gold = human-filtered, silver =
LLM-judge-filtered and tuned for precision on gold). What a verdict makes of an item (its tier under the
project's policy, its corrected content) is the read model's, `evalcore.items` (`tiers`, `state`,
`current`); the pure agreement and calibration rules are `evalcore.review.agreement` and
`evalcore.stats.calibration`. This package is the workflow on top:

- `queue`: filter (generator, spec, tier, assignee, "needs my review") and page the items in SQL;
  progress per annotator (counts per tier are status counts: `evalcore.reports.status.tier_counts`);
- `workitem.open_item`: one conversation with its history, verdicts, corrections, grounding documents;
- `verdicts`: save turn and whole-item verdicts with reasons, corrections, reopen, a lead's
  adjudication; version-checked, one transaction each;
- `assignments`: hand items to annotators with an overlap; name the leads who may adjudicate;
- `reports`: agreement (kappa, alpha), the adjudication queue, silver calibration;
- `breakdown_labels`: annotators' breakdown labels on a simulated dialogue's target turns (saved with
  the verdicts, never read as verdicts); `detector_quality`: a breakdown detector scored against them.

Gold and silver sets are written by the one item exporter, `evalcore.items.jsonl.export_jsonl(...,
tier=..., review=True)`; the project's tier policy (`Policy`, `set_policy`) is re-exported from
`evalcore.items.state` for the pages.
"""

from evalcore import lazy_exports

# Imported on first use: a command or page loads only the modules it touches.
__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "evalcore.items.state": (
            "Policy",
            "project_policy",
            "refresh_states",
            "set_policy",
        ),
        "evalcore.review.assignments": (
            "AssignmentResult",
            "assign_items",
            "assignees_of",
            "leads_of",
            "set_leads",
            "unassign",
        ),
        "evalcore.review.queue": (
            "DISAGREEMENT",
            "TIER_FILTERS",
            "AnnotatorProgress",
            "FilterOptions",
            "QueueFilter",
            "QueuePage",
            "QueueProgress",
            "QueueRow",
            "filter_options",
            "next_item",
            "previous_item",
            "progress",
            "queue_page",
            "queue_progress",
        ),
        "evalcore.review.reports": (
            "Calibration",
            "Disagreement",
            "LevelAgreement",
            "MIN_SHARED",
            "adjudication_queue",
            "agreement_report",
            "judge_human_correlation",
            "annotation_stamp",
            "shown_pairs",
            "silver_calibration",
        ),
        "evalcore.review.verdicts": (
            "REASONS",
            "ItemVerdict",
            "SaveResult",
            "TurnVerdict",
            "adjudicate",
            "reopen",
            "save_review",
        ),
        "evalcore.review.workitem": (
            "ItemView",
            "head_version",
            "open_item",
        ),
    },
)
