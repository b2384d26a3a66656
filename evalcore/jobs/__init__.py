"""The one job mechanism: the machinery under every long arrow of the flow (../shared/DESIGN.md, "Layers").

Spec generation, doc-QA generation and runs against a target (and every later generator) are jobs:
`create` records a run (its parameters, the function that resumes it, its progress total and the code
version), `run_units` claims each unit atomically before it is worked, commits it with its result, and
stops between units when the run's stop request is set; failed units are kept with their error until
`retry_failed` gives them back. Stop, warnings, progress and budget are column-level updates in the
store, so several processes can work one run. A worker process resumes any run with just the store's
URL and the run's id (`resume(url, run_id)`). It knows no generator.
"""

from evalcore.jobs.claims import ClaimLost, retry_failed
from evalcore.jobs.control import failed_units, progress, request_stop
from evalcore.jobs.entry import entry_point, resume
from evalcore.jobs.records import code_version, create
from evalcore.jobs.runner import Claim, JobReport, UnitStopped, run_units

__all__ = [
    "Claim",
    "ClaimLost",
    "JobReport",
    "UnitStopped",
    "code_version",
    "create",
    "entry_point",
    "failed_units",
    "progress",
    "request_stop",
    "resume",
    "retry_failed",
    "run_units",
]
