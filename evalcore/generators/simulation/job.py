"""A simulation run: personas against a target, every target turn checked for breakdowns, every dialogue
rated (seed 002; issue 18, items 2-4). A job of evalcore.jobs.

`create_simulation` records the run (kind `simulation`): the target's configuration, the personas (item
ids; missing ones generated from the card first), dialogues per persona, the seed, the card's limits and
chatbot info, and the bot type (which decides the breakdown types and rating dimensions).
`execute_simulation` works the dialogues not done yet: one unit per dialogue, claimed before it is
simulated, committed with its turns, annotations and ratings as one Conversation of generator
`simulation`. A killed run resumes at the dialogues not committed; the model layer's cache serves again
whatever a half-done dialogue had already asked. A spent budget or a stop request stops it between
turns. A dialogue whose simulated user failed (its model never gave a usable turn) is a failed unit, kept
with its error and its turns so far, not a dialogue of the run; `retry_failed` gives it back. A target
that fails is data: its dialogue ends with the crash and is kept. `simulate` does both.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from evalcore import jobs
from evalcore.errors import EvalcoreError, NotFoundError
from evalcore.generators.simulation.detection import judge_dialogue, rating_dimensions
from evalcore.generators.simulation.personas import generate_personas, list_personas
from evalcore.generators.simulation.records import RUN_KIND, Dialogue, FinishReason, to_conversation
from evalcore.generators.simulation.simulator import (
    SIMULATE_USER_TURN,
    Briefing,
    Limits,
    SimulationStopped,
    simulate_dialogue,
)
from evalcore.generators.simulation.taxonomy import is_task_oriented
from evalcore.items.store_ops import add_conversation
from evalcore.llm.client import ModelClient
from evalcore.models import Persona, Provenance, Run, RunStatus, Target
from evalcore.store import Store
from evalcore.store.store import new_id
from evalcore.targets import TargetAdapter, build_adapter, describe, get_target, run_naming

DEFAULT_CONCURRENCY = 2


@dataclass(frozen=True)
class SimulationOutcome:
    """What one `execute_simulation` call did, and where the run stands."""

    run: Run
    simulated: int  # dialogues finished by this call
    crashed: int  # of them, ended by a target error
    done: int  # dialogues of the run committed so far
    total: int
    failed: list[str]


def _units(personas: dict[str, Persona], runs_per_user: int) -> list[dict[str, Any]]:
    """One unit per dialogue: `runs_per_user` per persona; the user folder is the persona id (made
    unique when two persona items share one)."""
    units, seen = [], set()
    for item_id, persona in personas.items():
        user = persona.persona_id
        k = 2
        while user in seen:
            user, k = f"{persona.persona_id}_{k}", k + 1
        seen.add(user)
        for n in range(1, runs_per_user + 1):
            units.append({"key": f"{user}#{n}", "persona_item": item_id, "user_name": user, "n": n})
    return units


def choose_personas(
    store: Store,
    project_id: str,
    personas: list[str] | None,
    standard: int,
    challenging: int,
    *,
    adversarial: int = 0,
    seed: int = 0,
    model: str | None = None,
) -> dict[str, Persona]:
    """The personas to simulate, by item id: those named, else the first `standard`, `challenging` and
    `adversarial` personas of the project, generated from the card where the project has fewer."""
    known = list_personas(store, project_id)
    if personas:
        missing = [p for p in personas if p not in known]
        if missing:
            raise NotFoundError(f"no persona item(s) {', '.join(missing)} in project '{project_id}'")
        return {p: known[p] for p in personas}
    chosen: dict[str, Persona] = {}
    for kind, count in (("standard", standard), ("challenging", challenging), ("adversarial", adversarial)):
        have = [i for i, p in known.items() if p.type == kind][:count]
        if len(have) < count:
            counts = {kind: count - len(have)}
            have += generate_personas(store, project_id, **counts, seed=seed, model=model)
        known = list_personas(store, project_id)
        chosen.update({i: known[i] for i in have})
    if not chosen:
        raise EvalcoreError(
            "no persona to simulate: give --standard N, --challenging N and/or --adversarial N, or personas"
        )
    return chosen


def create_simulation(
    store: Store,
    project_id: str,
    target: str,
    *,
    personas: list[str] | None = None,
    standard: int = 0,
    challenging: int = 0,
    adversarial: int = 0,
    runs_per_user: int = 1,
    seed: int = 0,
    simulator_model: str | None = None,
    judge_model: str | None = None,
    budget: dict[str, float] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    max_user_turns: int | None = None,
    name: str | None = None,
    notes: str = "",
) -> Run:
    """Record a new simulation run (status pending) with everything needed to work and resume it, without
    working it; `max_user_turns` overrides the card's; named `name` (default: target, model and date)
    with `notes`."""
    if max_user_turns is not None and max_user_turns < 1:
        raise EvalcoreError(f"max_user_turns must be at least 1 (got {max_user_turns})")
    chosen: Target = get_target(store, project_id, target)
    found = choose_personas(
        store, project_id, personas, standard, challenging, adversarial=adversarial, seed=seed
    )
    card = store.system_card(project_id)
    info = card.chatbot_info.model_dump(mode="json") if card else {"name": store.project(project_id).title}
    task_oriented = is_task_oriented(info.get("type"))
    limits = Limits.of_card(card)
    if max_user_turns is not None:
        limits = replace(limits, max_user_turns=max_user_turns)
    units = _units(found, max(1, runs_per_user))
    params: dict[str, Any] = {
        "project_id": project_id,
        **run_naming(chosen, name, notes),
        "source": "evalcore",
        "target": chosen.model_dump(mode="json"),
        "target_description": describe(chosen),
        "chatbot_id": card.id if card else project_id,
        "chatbot_info": info,
        "task_oriented": task_oriented,
        "rating_dimensions": [d.key for d in rating_dimensions(task_oriented)],
        "limits": limits.__dict__,
        "units": units,
        "runs_per_user": max(1, runs_per_user),
        "seed": seed,
        "simulator_model": simulator_model,
        "judge_model": judge_model,
        "concurrency": max(1, int(concurrency)),
    }
    return jobs.create(
        store, project_id, RUN_KIND, params, entry=execute_simulation, total=len(units), target=chosen.name,
        judge=judge_model, budget=budget,
    )  # fmt: skip


class _Worker:
    """Simulates, judges and commits the dialogues of one run (shared by the job's threads)."""

    def __init__(self, store: Store, run: Run, llm: ModelClient, adapter) -> None:
        self.store, self.run, self.llm, self.adapter = store, run, llm, adapter
        params = run.params
        self.pid = params["project_id"]
        self.info = params["chatbot_info"]
        self.limits = Limits(**params["limits"])
        self.personas = list_personas(store, self.pid)
        self.simulated = self.crashed = 0
        self._count = threading.Lock()

    def work(self, unit: dict[str, Any], claim: jobs.Claim) -> None:
        params = self.run.params
        persona = self.personas[unit["persona_item"]]
        briefing = Briefing(unit["user_name"], persona)
        seed = int(params.get("seed") or 0) * 1000 + params["units"].index(unit)  # one seed per dialogue
        try:
            sim = simulate_dialogue(
                briefing,
                self.adapter,
                self.llm,
                chatbot_info=self.info,
                limits=self.limits,
                seed=seed,
                model=params.get("simulator_model"),
                should_stop=lambda: claim.stopping,
            )
            if sim.finish_reason == FinishReason.user_simulator_error:
                # Our failure, not the target's: kept with what was said so far, and given back by
                # `retry_failed` rather than counted as a dialogue of the run.
                with claim.commit() as writer:
                    said = [t.model_dump(mode="json") for t in sim.turns]
                    writer.fail(f"user simulator: {sim.error}", {"turns": said})
                return
            judged = judge_dialogue(
                sim.turns,
                sim.finish_reason,
                self.llm,
                chatbot_info=self.info,
                task_oriented=bool(params["task_oriented"]),
                error=sim.error,
                model=params.get("judge_model"),
            )
        except SimulationStopped as e:
            raise jobs.UnitStopped(str(e)) from None
        for warning in judged.warnings:
            self.llm.warn(f"{unit['key']}: {warning}")
        dialogue = Dialogue(
            dialogue_id=f"{unit['user_name']}_dialogue_{unit['n']}",
            user_name=unit["user_name"],
            file=f"dialogue_{unit['n']}.yaml",
            turns=judged.turns,
            finish_reason=sim.finish_reason,
            error=sim.error,
            ratings=judged.ratings,
            persona_item=unit["persona_item"],
            extra={
                "models": {"simulator": sim.simulator_models, "judge": judged.models},
                "unscored_turns": judged.unscored,
            },
        )
        models = list(dict.fromkeys(sim.simulator_models + judged.models))
        provenance = Provenance(
            producer=", ".join(models) or "offline",
            # offline only when no model took part (the producer lists every model that did)
            provider=next((m.split("/")[0] for m in models if not m.startswith("offline/")), "offline"),
            task=SIMULATE_USER_TURN.name,
            prompt_version=SIMULATE_USER_TURN.prompt_version,
            inputs=[unit["persona_item"]],
            seed=seed,
            run_id=self.run.id,
        )
        with claim.commit() as writer:
            cid = add_conversation(
                self.store, self.pid, to_conversation(dialogue, new_id("sim"), provenance), conn=writer.conn
            )
            writer.result = {
                "conversation": cid,
                "finish_reason": sim.finish_reason.value,
                "turns": len(dialogue.turns),
            }
        with self._count:
            self.simulated += 1
            self.crashed += sim.finish_reason == FinishReason.chatbot_error


@dataclass(frozen=True)
class Started:
    """A run of simulated dialogues started (or resumed): the run, its model client and its target."""

    run: Run
    llm: ModelClient
    adapter: TargetAdapter


def start_simulated_run(
    store: Store, run: Run, *, retry_failed: bool = False, budget: dict[str, float] | None = None
) -> Started:
    """Start or resume a recorded run whose units are dialogues simulated against its target (persona
    simulations, scenario runs): the run marked running, failed units given back when asked, the
    simulator and judge models resolved and the target built. A configuration error (an unreachable
    target, an unknown model) marks the run failed and raises."""
    pid = run.params["project_id"]
    run = store.start_run(pid, run.model_copy(update={"budget": budget}) if budget is not None else run)
    if retry_failed:
        jobs.retry_failed(store, run.id)
    llm = ModelClient(store, pid, run_id=run.id)
    try:
        llm.registry.resolve("simulator", run.params.get("simulator_model"))
        llm.registry.resolve("judge", run.params.get("judge_model"))
        adapter = build_adapter(store, pid, Target.model_validate(run.params["target"]), llm)
    except EvalcoreError as e:
        store.finish_run(run.id, RunStatus.failed, str(e))
        raise
    return Started(run, llm, adapter)


def work_dialogues(
    store: Store,
    run: Run,
    work: Callable[[dict[str, Any], jobs.Claim], Any],
    on_progress: Callable[[int, int], None] | None = None,
) -> tuple[jobs.JobReport, int]:
    """Work the run's units (one dialogue each, `work(unit, claim)`) at the run's concurrency; the job's
    report and the units done so far."""
    units = {u["key"]: u for u in run.params["units"]}
    report = jobs.run_units(
        store,
        run.id,
        list(units),
        lambda claim: work(units[claim.key], claim),
        concurrency=int(run.params.get("concurrency") or DEFAULT_CONCURRENCY),
        on_progress=on_progress,
    )
    return report, jobs.progress(store, report.run)[0]


def execute_simulation(
    store: Store,
    run_id: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    retry_failed: bool = False,
    budget: dict[str, float] | None = None,
) -> SimulationOutcome:
    """Simulate the run's dialogues not done yet (a first start or a resume); see the module docstring.

    Configuration errors (an unreachable target, an unknown model) mark the run failed and raise.
    """
    run = store.run(run_id)
    if run.kind != RUN_KIND or "units" not in run.params:
        raise EvalcoreError(f"'{run_id}' is not a simulation run that can be worked (kind {run.kind})")
    started = start_simulated_run(store, run, retry_failed=retry_failed, budget=budget)
    worker = _Worker(store, started.run, started.llm, started.adapter)
    report, done = work_dialogues(store, started.run, worker.work, on_progress)
    total = len(started.run.params["units"])
    return SimulationOutcome(report.run, worker.simulated, worker.crashed, done, total, report.failed)


def simulate(
    store: Store,
    project_id: str,
    target: str,
    *,
    personas: list[str] | None = None,
    standard: int = 0,
    challenging: int = 0,
    on_progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> SimulationOutcome:
    """Create a simulation run (options as for `create_simulation`) and work it to the end."""
    run = create_simulation(
        store, project_id, target, personas=personas, standard=standard, challenging=challenging, **options
    )
    return execute_simulation(store, run.id, on_progress=on_progress)


def simulation_runs(store: Store, project_id: str) -> list[Run]:
    """The project's simulation runs, newest first (simulated here or imported from ChatChecker)."""
    return store.runs(project_id, kind=RUN_KIND)
