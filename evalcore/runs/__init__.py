"""Runs (the arrow "runs: a target system answers tests / plays conversations -> judgments").

run = run_target(store, pid, "demo", judge="offline")          # create + play (resumable job)
execute_run(store, run.run.id)                                 # resume after a stop or a crash

`evalcore.targets` (a lower package) reaches the systems under test; `judges` and `offline_judge` score
replies; `assertions` are the deterministic checks. Reports over runs live in `evalcore.reports` (a
higher package).
"""

from evalcore import lazy_exports

# Imported on first use: a command or page loads only the modules it touches.
__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "evalcore.jobs": ("code_version", "request_stop"),
        "evalcore.runs.control": ("run_progress",),
        "evalcore.runs.job": (
            "RunOutcome",
            "create_run",
            "execute_run",
            "run_target",
        ),
        "evalcore.runs.judges": (
            "JUDGE_TURN",
            "LLMJudge",
            "OfflineJudge",
            "make_judge",
        ),
        "evalcore.runs.records": (
            "ERROR_TYPES",
            "JUDGE_ERROR_TYPES",
            "RUN_KIND",
            "JudgedTurn",
        ),
    },
)
