"""Running scenarios against a target (seed 003; issue 19, items 5 and 6): a job of evalcore.jobs.

A scenario run (run kind `scenario`) records the scenarios (their content, so an edit later does not
change what the run ran), the target, `run_count` (1-10 repetitions of each scenario) and the models.
One unit per repetition of a scenario: claimed, then committed with its conversation (generator
`scenario`, every turn carrying the events the target reported) and its ScenarioVerdict, so a killed run
resumes at the repetitions not committed. `load_scenario_results` reads a run's results back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from evalcore import jobs
from evalcore.errors import EvalcoreError
from evalcore.generators.scenario.e2e import E2ETestCase, PlayedTurn, check_case
from evalcore.generators.scenario.format import ScenarioFile
from evalcore.generators.scenario.records import Scenario
from evalcore.generators.scenario.scoring import scenario_scorer
from evalcore.generators.scenario.store_ops import StoredScenario
from evalcore.generators.scenario.verdict import ScenarioVerdict, combine, judge_conversation
from evalcore.generators.simulation.job import start_simulated_run, work_dialogues
from evalcore.generators.simulation.records import DialogueTurn, FinishReason
from evalcore.generators.simulation.simulator import (
    SIMULATE_USER_TURN,
    Briefing,
    Limits,
    SimulatedDialogue,
    SimulationStopped,
    simulate_dialogue,
)
from evalcore.inputs.sources import dotted
from evalcore.items.store_ops import add_conversation
from evalcore.llm.client import ModelClient
from evalcore.models import Conversation, Provenance, Run, RunStatus, Target, Turn, TurnRole
from evalcore.models.common import Record
from evalcore.store import Store
from evalcore.store.store import new_id
from evalcore.targets import TargetCrash, build_adapter, describe, get_target, run_naming
from evalcore.targets.domain import Domain
from evalcore.targets.events import Event, events_from_json, events_to_json, with_events
from evalcore.targets.sessions import EVENTS_DETAIL, EventSession, EventTarget

RUN_KIND = "scenario"
GENERATOR = "scenario"
SCRIPTED_TASK = "rasa_e2e_script"  # a scripted test's user turns come from its file, not a model


class ScenarioResult(Record):
    """One repetition of one scenario in a run: its conversation and its verdict."""

    scenario: str = Field(description="The scenario's name.")
    repetition: int = Field(description="Which repetition (1..run_count).")
    conversation_id: str = Field(description="The conversation played, with its events per turn.")
    verdict: ScenarioVerdict = Field(description="Every assertion and criterion on that conversation.")


def unit_key(index: int, repetition: int) -> str:
    """The unit of the `repetition`-th run of the run's `index`-th scenario."""
    return f"{index:03d}#{repetition}"


def load_scenario_results(store: Store, run_id: str) -> list[ScenarioResult]:
    """The results of a scenario run committed so far, in the run's scenario order, then by repetition
    (a unit not done yet, or failed, has none)."""
    out: list[tuple[str, ScenarioResult]] = []
    for key, unit in store.finished_units(run_id).items():
        result = unit.get("result") or {}
        if unit.get("status") != "done" or "verdict" not in result:
            continue
        record = ScenarioResult(
            scenario=result["scenario"],
            repetition=int(result["repetition"]),
            conversation_id=result["conversation"],
            verdict=ScenarioVerdict.model_validate(result["verdict"]),
        )
        out.append((key, record))
    out.sort(key=lambda pair: (pair[0].split("#")[0], pair[1].repetition))
    return [record for _, record in out]


# ------------------------------------------------------------------------------------------------ the job

MAX_RUN_COUNT = 10  # seed 003 / issue 19: run_count is 1-10
DEFAULT_CONCURRENCY = 2


@dataclass(frozen=True)
class ScenarioRunOutcome:
    """What one `execute_scenario_run` call did, and where the run stands."""

    run: Run
    played: int  # conversations finished by this call
    done: int  # units of the run committed so far
    total: int
    failed: list[str]


def _entry(stored: Scenario | StoredScenario | ScenarioFile) -> dict[str, Any]:
    if isinstance(stored, ScenarioFile):
        body = stored.scenario.model_dump(mode="json")
        return {"name": stored.scenario.name, "item_id": None, "file": stored.path, "scenario": body}
    if isinstance(stored, StoredScenario):
        body = stored.scenario.model_dump(mode="json")
        script = {"e2e": stored.e2e.model_dump(mode="json")} if stored.e2e is not None else {}
        return {
            "name": stored.scenario.name,
            "item_id": stored.item_id,
            "file": stored.file,
            "scenario": body,
            **script,
        }
    return {"name": stored.name, "item_id": None, "file": None, "scenario": stored.model_dump(mode="json")}


def domain_warnings(
    domain: Domain | None, scenarios: Sequence[Scenario | StoredScenario | ScenarioFile]
) -> list[str]:
    """One line per slot or flow a scenario names that the target's domain lacks: `file:line [field]:
    why` for a scenario read from a file, else `scenario '<name>' [field]: why`."""
    if domain is None:
        return []
    out = []
    for item in scenarios:
        scenario = item if isinstance(item, Scenario) else item.scenario
        for loc, why in domain.check(scenario.initial_slots, enumerate(scenario.assertions)):
            if isinstance(item, ScenarioFile):
                out.append(str(item.problem(loc, why)))
            else:
                out.append(f"scenario '{scenario.name}' [{dotted(loc)}]: {why}")
    return out


def create_scenario_run(
    store: Store,
    project_id: str,
    target: str,
    scenarios: Sequence[Scenario | StoredScenario | ScenarioFile],
    *,
    run_count: int = 1,
    seed: int = 0,
    simulator_model: str | None = None,
    judge_model: str | None = None,
    max_user_turns: int | None = None,
    strict: bool = False,
    budget: dict[str, float] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    name: str | None = None,
    notes: str = "",
) -> Run:
    """Record a scenario run (status pending): each scenario `run_count` times against `target`, named
    `name` (default: target, model and date) with `notes`.

    The target must report events (rasa, http_events, demo_flows). A scenario naming a slot or flow the
    target's domain lacks is a warning on the run, or, with `strict`, refused before anything runs.
    """
    if not 1 <= run_count <= MAX_RUN_COUNT:
        raise EvalcoreError(f"run_count must be 1 to {MAX_RUN_COUNT} (got {run_count})")
    if not scenarios:
        raise EvalcoreError("no scenario to run: give scenario files, or import some and use --all")
    chosen = get_target(store, project_id, target)
    llm = ModelClient(store, project_id)
    adapter = build_adapter(store, project_id, chosen, llm)
    if not isinstance(adapter, EventTarget):
        raise EvalcoreError(
            f"target '{chosen.name}' ({chosen.kind.value}) reports no events, so assertions cannot be "
            "checked: use a rasa, http_events or demo_flows target (the built-in one is demo-flows)"
        )
    entries = [_entry(s) for s in scenarios]
    warnings = domain_warnings(adapter.domain(), scenarios)
    if warnings and strict:
        raise EvalcoreError("the target's domain lacks what scenarios name:\n" + "\n".join(warnings))
    card = store.system_card(project_id)
    info = card.chatbot_info.model_dump(mode="json") if card else {"name": store.project(project_id).title}
    limits = Limits.of_card(card)
    if max_user_turns:
        limits = Limits(max_user_turns, limits.typical_user_turn_length, limits.max_user_turn_length)
    units = [
        {"key": unit_key(i, n), "index": i, "repetition": n}
        for i in range(len(entries))
        for n in range(1, run_count + 1)
    ]
    params: dict[str, Any] = {
        "project_id": project_id,
        **run_naming(chosen, name, notes),
        "target": chosen.model_dump(mode="json"),
        "target_description": describe(chosen),
        "scenarios": entries,
        "run_count": run_count,
        "units": units,
        "seed": seed,
        "simulator_model": simulator_model,
        "judge_model": judge_model,
        "chatbot_info": info,
        "limits": limits.__dict__,
        "concurrency": max(1, int(concurrency)),
    }
    run = jobs.create(
        store, project_id, RUN_KIND, params, entry=resume, total=len(units), target=chosen.name,
        judge=judge_model, budget=budget,
    )  # fmt: skip
    for warning in warnings:
        store.add_run_warning(run.id, warning)
    return store.run(run.id)


def play_script(
    session: EventSession, messages: Sequence[str], should_stop: Callable[[], bool]
) -> tuple[SimulatedDialogue, list[PlayedTurn]]:
    """A scripted test's user messages sent as written: the dialogue (shaped as a simulation's, so it is
    stored and shown like one) and what each message caused. A target that crashes ends it there."""
    turns: list[DialogueTurn] = []
    details: list[dict[str, Any] | None] = []
    played: list[PlayedTurn] = []
    for message in messages:
        if should_stop():
            raise SimulationStopped("stop requested")
        turns.append(DialogueTurn(role=TurnRole.user, content=message))
        details.append(None)
        try:
            text, events, extra = session.send(message)
        except TargetCrash as e:
            turns.append(DialogueTurn(role=TurnRole.assistant, content=""))
            details.append(None)
            return SimulatedDialogue(turns, FinishReason.chatbot_error, str(e), details, offline=True), played
        turns.append(DialogueTurn(role=TurnRole.assistant, content=text))
        details.append({**extra, EVENTS_DETAIL: events_to_json(events)})
        played.append(PlayedTurn(message, list(events)))
    return SimulatedDialogue(turns, FinishReason.user_ended_chat, None, details, offline=True), played


def conversation_turns(sim: SimulatedDialogue, setup: Sequence[Event]) -> list[Turn]:
    """The dialogue's turns, each carrying its events: the setup's on the first turn, a user message's
    own event on its turn, and what the assistant did in reply on the reply's turn."""
    turns = [Turn(index=i, role=t.role, content=t.content) for i, t in enumerate(sim.turns)]
    per_turn: list[list[Event]] = [[] for _ in turns]
    if per_turn:
        per_turn[0] += list(setup)
    for i, details in enumerate(sim.target_details):
        events = events_from_json((details or {}).get(EVENTS_DETAIL) or [])
        split = next((k for k, e in enumerate(events) if e.type != "user_uttered"), len(events))
        if i > 0:
            per_turn[i - 1] += events[:split]
            per_turn[i] += events[split:]
        else:
            per_turn[i] += events
    if sim.error and turns and turns[-1].role == TurnRole.assistant and sim.target_details[-1] is None:
        turns[-1] = turns[-1].model_copy(update={"metadata": {"crash": sim.error}})
    return [with_events(turn, events) for turn, events in zip(turns, per_turn, strict=True)]


class _Worker:
    """Plays and judges the repetitions of one run (shared by the job's threads)."""

    def __init__(self, store: Store, run: Run, llm: ModelClient, adapter: EventTarget) -> None:
        self.store, self.run, self.llm, self.adapter = store, run, llm, adapter
        params = run.params
        self.pid = params["project_id"]
        self.target = Target.model_validate(params["target"])
        self.limits = Limits(**params["limits"])
        self.scenarios = [Scenario.model_validate(e["scenario"]) for e in params["scenarios"]]
        self.played = 0
        self._count = threading.Lock()

    def _play(
        self,
        scenario: Scenario,
        case: E2ETestCase | None,
        session: EventSession,
        briefing: Briefing,
        seed: int,
        stopping: Callable[[], bool],
    ) -> tuple[SimulatedDialogue, list[PlayedTurn]]:
        """The conversation: a scripted test's messages as its file says them, else a simulated user."""
        if case is not None:
            return play_script(session, case.user_messages, stopping)
        params = self.run.params
        sim = simulate_dialogue(
            briefing, session, self.llm, chatbot_info=params["chatbot_info"], limits=self.limits, seed=seed,
            model=params.get("simulator_model"), should_stop=stopping,
        )  # fmt: skip
        return sim, []

    def _verdict(
        self,
        scenario: Scenario,
        case: E2ETestCase | None,
        turns: list[Turn],
        setup: Sequence[Event],
        played: list[PlayedTurn],
    ) -> ScenarioVerdict:
        """A scripted test checked as Rasa's runner checks it, else the scenario's assertions and criteria."""
        judge = self.run.params.get("judge_model")
        if case is None:
            return judge_conversation(self.llm, scenario, turns, judge=judge, target_model=self.target.model)
        checked = check_case(case, setup, played, scenario_scorer(self.llm, judge, self.target.model))
        return ScenarioVerdict(
            scenario=scenario.name, passed=combine([o.passed for o in checked]), assertions=checked
        )

    def work(self, unit: dict[str, Any], claim: jobs.Claim) -> None:
        params = self.run.params
        entry, scenario = params["scenarios"][unit["index"]], self.scenarios[unit["index"]]
        seed = int(params.get("seed") or 0) * 1000 + params["units"].index(unit)
        conversation_id = new_id("scn")
        briefing = Briefing(
            f"scenario_{unit['index'] + 1}", context=scenario.simulation_context, slots=scenario.initial_slots
        )
        try:
            session = self.adapter.open_session(conversation_id, scenario.initial_slots)
        except TargetCrash as e:
            with claim.commit() as writer:
                writer.fail(f"target: session start or slot injection failed: {e}")
            return
        case = E2ETestCase.model_validate(entry["e2e"]) if entry.get("e2e") else None
        try:
            sim, played = self._play(scenario, case, session, briefing, seed, lambda: claim.stopping)
        except SimulationStopped as e:
            raise jobs.UnitStopped(str(e)) from None
        if sim.finish_reason == FinishReason.user_simulator_error:
            with claim.commit() as writer:
                said = [t.model_dump(mode="json") for t in sim.turns]
                writer.fail(f"user simulator: {sim.error}", {"turns": said})
            return
        turns = conversation_turns(sim, session.setup_events)
        verdict = self._verdict(scenario, case, turns, session.setup_events, played)
        models = list(dict.fromkeys(sim.simulator_models + [c.model for c in verdict.criteria]))
        provenance = Provenance(
            producer=", ".join(models) or "offline",
            provider=next((m.split("/")[0] for m in models if not m.startswith("offline/")), "offline"),
            task=SIMULATE_USER_TURN.name if case is None else SCRIPTED_TASK,
            prompt_version=SIMULATE_USER_TURN.prompt_version if case is None else None,
            inputs=[entry["item_id"]] if entry.get("item_id") else [],
            seed=seed,
            run_id=self.run.id,
        )
        metadata = {
            "scenario": scenario.name,
            "scenario_item": entry.get("item_id"),
            "repetition": unit["repetition"],
            "target": self.target.name,
            "finish_reason": sim.finish_reason.value,
            "error": sim.error,
            "passed": verdict.passed,
            "scripted": case is not None,
        }
        conversation = Conversation(
            id=conversation_id, generator=GENERATOR, turns=turns, metadata=metadata, provenance=provenance
        )
        with claim.commit() as writer:
            cid = add_conversation(self.store, self.pid, conversation, conn=writer.conn)
            writer.result = {
                "scenario": scenario.name,
                "repetition": unit["repetition"],
                "conversation": cid,
                "passed": verdict.passed,
                "finish_reason": sim.finish_reason.value,
                "verdict": verdict.model_dump(mode="json"),
            }
        with self._count:
            self.played += 1


def execute_scenario_run(
    store: Store,
    run_id: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    retry_failed: bool = False,
    budget: dict[str, float] | None = None,
) -> ScenarioRunOutcome:
    """Play the run's repetitions not done yet (a first start or a resume). Configuration errors (an
    unreachable target, an unknown model) mark the run failed and raise."""
    run = store.run(run_id)
    if run.kind != RUN_KIND or "units" not in run.params:
        raise EvalcoreError(f"'{run_id}' is not a scenario run (kind {run.kind})")
    started = start_simulated_run(store, run, retry_failed=retry_failed, budget=budget)
    if not isinstance(started.adapter, EventTarget):
        message = f"target '{started.run.target}' reports no events"
        store.finish_run(started.run.id, RunStatus.failed, message)
        raise EvalcoreError(message)
    worker = _Worker(store, started.run, started.llm, started.adapter)
    report, done = work_dialogues(store, started.run, worker.work, on_progress)
    return ScenarioRunOutcome(
        report.run, worker.played, done, len(started.run.params["units"]), report.failed
    )


def resume(store: Store, run_id: str) -> ScenarioRunOutcome:
    """Resume a scenario run with its own parameters (what a queue worker calls)."""
    return execute_scenario_run(store, run_id)


def run_scenarios(
    store: Store,
    project_id: str,
    target: str,
    scenarios: Sequence[Scenario | StoredScenario | ScenarioFile],
    *,
    on_progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> ScenarioRunOutcome:
    """Create a scenario run (options as for `create_scenario_run`) and play it to the end."""
    run = create_scenario_run(store, project_id, target, scenarios, **options)
    return execute_scenario_run(store, run.id, on_progress=on_progress)


def scenario_runs(store: Store, project_id: str) -> list[Run]:
    """The project's scenario runs, newest first."""
    return store.runs(project_id, kind=RUN_KIND)
