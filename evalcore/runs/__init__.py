"""Runs: play conversations and tests against a target, judge each turn, report where it fails.

run = run_target(store, pid, "demo", judge="offline")          # create + play (resumable job)
execute_run(store, run.run.id)                                 # resume after a stop or a crash
report = build_report(store, [run.run.id], tiers="silver+gold")
report.tables["by_n_documents"]; failing_turns(store, report.frame, {"n_documents": 3})
"""

from evalcore.runs.control import (
    code_version,
    is_active,
    last_error,
    request_stop,
    run_progress,
    start_in_background,
    wait_for,
)
from evalcore.runs.job import RunOutcome, create_run, execute_run, run_target
from evalcore.runs.judges import JUDGE_TURN, LLMJudge, OfflineJudge, make_judge
from evalcore.runs.records import ERROR_TYPES, JUDGE_ERROR_TYPES, RUN_KIND, JudgedTurn
from evalcore.runs.report import (
    TABLE_TITLES,
    TIER_SCOPES,
    Report,
    TurnDetail,
    build_report,
    cell_filter,
    compare_runs,
    export_tables,
    failing_turns,
    judged_turns,
    select_turns,
    table_name,
)

__all__ = [
    "ERROR_TYPES",
    "JUDGE_ERROR_TYPES",
    "JUDGE_TURN",
    "RUN_KIND",
    "TABLE_TITLES",
    "TIER_SCOPES",
    "JudgedTurn",
    "LLMJudge",
    "OfflineJudge",
    "Report",
    "RunOutcome",
    "TurnDetail",
    "build_report",
    "cell_filter",
    "code_version",
    "compare_runs",
    "create_run",
    "execute_run",
    "export_tables",
    "failing_turns",
    "is_active",
    "judged_turns",
    "last_error",
    "make_judge",
    "request_stop",
    "run_progress",
    "run_target",
    "select_turns",
    "start_in_background",
    "table_name",
    "wait_for",
]
