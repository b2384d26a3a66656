"""Runs (the arrow "runs: a target system answers tests / plays conversations -> judgments").

run = run_target(store, pid, "demo", judge="offline")          # create + play (resumable job)
execute_run(store, run.run.id)                                 # resume after a stop or a crash

`targets/` reaches the systems under test; `judges` and `offline_judge` score replies; `assertions` are
the deterministic checks. Reports over runs live in `evalcore.reports` (a higher package).
"""

from evalcore.jobs import request_stop
from evalcore.runs.control import code_version, run_progress
from evalcore.runs.job import RunOutcome, create_run, execute_run, run_target
from evalcore.runs.judges import JUDGE_TURN, LLMJudge, OfflineJudge, make_judge
from evalcore.runs.records import ERROR_TYPES, JUDGE_ERROR_TYPES, RUN_KIND, JudgedTurn

__all__ = [
    "ERROR_TYPES",
    "JUDGE_ERROR_TYPES",
    "JUDGE_TURN",
    "RUN_KIND",
    "JudgedTurn",
    "LLMJudge",
    "OfflineJudge",
    "RunOutcome",
    "code_version",
    "create_run",
    "execute_run",
    "make_judge",
    "request_stop",
    "run_progress",
    "run_target",
]
