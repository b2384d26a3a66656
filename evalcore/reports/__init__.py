"""Reports (the arrow "reports: failure-rate tables, breakdowns, plots, exports").

report = build_report(store, [run_id], tiers="silver+gold")
report.tables["by_n_documents"]; failing_turns(store, report.frame, {"n_documents": 3})

`tables` computes failure-rate tables with Wilson intervals, `failures` reads judged turns into them,
`charts` plots them, `table_export` writes CSV/JSONL/Markdown/LaTeX, `status` counts items per stage.
"""

from evalcore import lazy_exports

# Imported on first use: a command or page loads only the modules it touches.
__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "evalcore.reports.failures": (
            "TABLE_TITLES",
            "TIER_SCOPES",
            "Report",
            "TurnDetail",
            "build_report",
            "cell_filter",
            "compare_runs",
            "export_tables",
            "failing_turns",
            "judged_turns",
            "provenance",
            "select_turns",
            "table_name",
        ),
    },
)
