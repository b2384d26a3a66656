"""The simulator-fault check as a job (issue 31, item 2): every dialogue of a simulation run (simulated here
or imported) checked by the `detect_user_faults` task through evalcore.llm (the judge role; offline, the
task's own rules), its faults stored in the store beside the dialogue's breakdowns.

A check is a job of kind `simulation_faults` whose units are the run's dialogues (their conversation ids):
each unit commits its dialogue's faults, the model that found them and whether it was offline as the
unit's result, so a closed tab or a killed worker resumes at the dialogues not checked, and a page or
`simulations stats` reads the stored faults (`stored_faults`) instead of checking again. A dialogue the
model gave no usable answer for is a failed unit (retry gives it back), never a made-up "no fault".
Needs no table of its own: the job's unit results are the store's record of each dialogue's check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evalcore import jobs
from evalcore.errors import EvalcoreError
from evalcore.generators.simulation.store_ops import load_simulation_run, run_dialogues
from evalcore.generators.simulation.user_faults import DETECT_USER_FAULTS, UserFault, user_fault_inputs
from evalcore.llm.client import ModelClient
from evalcore.models import Run, RunStatus
from evalcore.store import Store

CHECK_KIND = "simulation_faults"
CONCURRENCY = 2


@dataclass(frozen=True)
class StoredFaults:
    """The latest check of a simulation run: faults per dialogue id (checked dialogues only, [] = none),
    who found them and the check's run."""

    check_run: str
    faults: dict[str, list[UserFault]]
    producers: list[str]
    offline: bool

    @property
    def label(self) -> str:
        """Who checked, in plain words."""
        who = "offline rules (no model)" if self.offline else ", ".join(self.producers)
        return f"{who}, check {self.check_run}"


@dataclass(frozen=True)
class FaultCheckOutcome:
    """What one `execute_fault_check` call left: the check's run, dialogues checked so far, failed ones."""

    run: Run
    checked: int
    failed: list[str]


def create_fault_check(store: Store, simulation_run: str, *, model: str | None = None) -> Run:
    """Record a check of every dialogue of `simulation_run` (pending; `execute_fault_check` works it)."""
    project_id, pairs = run_dialogues(store, simulation_run)
    if not pairs:
        raise EvalcoreError(f"simulation run '{simulation_run}' has no dialogue to check")
    params: dict[str, Any] = {
        "project_id": project_id,
        "simulation_run": simulation_run,
        "units": [cid for cid, _ in pairs],
        "model": model,
    }
    return jobs.create(
        store, project_id, CHECK_KIND, params, entry=execute_fault_check, total=len(pairs), judge=model
    )


def execute_fault_check(
    store: Store,
    run_id: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    retry_failed: bool = False,
) -> FaultCheckOutcome:
    """Check the dialogues of a recorded check not done yet."""
    run = store.run(run_id)
    if run.kind != CHECK_KIND:
        raise EvalcoreError(f"'{run_id}' is not a simulator-fault check (kind {run.kind})")
    params = run.params
    run = store.start_run(params["project_id"], run)
    if retry_failed:
        jobs.retry_failed(store, run.id)
    llm = ModelClient(store, params["project_id"], run_id=run.id)
    try:
        llm.registry.resolve("judge", params.get("model"))
    except EvalcoreError as e:
        store.finish_run(run.id, RunStatus.failed, str(e))
        raise
    sim = load_simulation_run(store, params["simulation_run"])
    dialogues = dict(run_dialogues(store, params["simulation_run"])[1])

    def work(claim: jobs.Claim) -> None:
        dialogue = dialogues[claim.key]
        persona = sim.personas.get(dialogue.user_name)
        inputs = user_fault_inputs(dialogue, persona.model_dump(mode="json") if persona else None)
        result = llm.run_task(DETECT_USER_FAULTS, inputs, role="judge", model=params.get("model"))
        if result.status == "stopped":
            raise jobs.UnitStopped(result.error or "budget")
        with claim.commit() as writer:
            if not result.ok or result.output is None:
                writer.fail(f"no usable answer from {result.model}: {result.error}")
                return
            writer.result = {
                "dialogue": dialogue.dialogue_id,
                "faults": [f.model_dump(mode="json") for f in result.output.faults],
                "model": result.model,
                "offline": result.offline,
            }

    keys = [k for k in params["units"] if k in dialogues]
    report = jobs.run_units(store, run.id, keys, work, concurrency=CONCURRENCY, on_progress=on_progress)
    checked = sum(u["status"] == "done" for u in store.finished_units(run.id).values())
    return FaultCheckOutcome(report.run, checked, report.failed)


def check_user_faults(store: Store, simulation_run: str, *, model: str | None = None) -> FaultCheckOutcome:
    """Record a check of `simulation_run` and work it to the end."""
    return execute_fault_check(store, create_fault_check(store, simulation_run, model=model).id)


def fault_checks(store: Store, simulation_run: str) -> list[Run]:
    """The checks of a simulation run, newest first."""
    project_id = run_dialogues(store, simulation_run)[0]
    return [
        r for r in store.runs(project_id, kind=CHECK_KIND) if r.params.get("simulation_run") == simulation_run
    ]


def stored_faults(store: Store, simulation_run: str) -> StoredFaults | None:
    """The faults the newest check with any checked dialogue stored, or None when none has."""
    for check in fault_checks(store, simulation_run):
        done = [u["result"] for u in store.finished_units(check.id).values() if u["status"] == "done"]
        if not done:
            continue
        return StoredFaults(
            check_run=check.id,
            faults={r["dialogue"]: [UserFault.model_validate(f) for f in r["faults"]] for r in done},
            producers=sorted({r["model"] for r in done}),
            offline=all(r["offline"] for r in done),
        )
    return None
