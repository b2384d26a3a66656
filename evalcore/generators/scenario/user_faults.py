"""Scenario verdicts with and without the conversations whose simulated user was at fault (issue 31): a
scenario's user is simulated from its `simulation_context` as a persona's is from its task, so the same
simulator-fault check (generators/simulation/user_faults) reads its conversations, with the briefing as
the user's task. Scripted scenarios (an E2E test's own user turns) have no simulated user and are never
flagged. The lead sees the pass rate over all conversations and over those whose user did its part.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evalcore.generators.scenario.run import load_scenario_results
from evalcore.generators.simulation.records import Dialogue, DialogueTurn, FinishReason
from evalcore.generators.simulation.user_faults import UserFault, detect_user_faults
from evalcore.models import Conversation, TurnRole
from evalcore.store import Store

SPOKEN = (TurnRole.user, TurnRole.assistant)


@dataclass
class ScenarioFaults:
    """The faulted conversations of a scenario run (conversation id -> faults) and its pass counts over
    all conversations and over those without a fault."""

    faults: dict[str, list[UserFault]] = field(default_factory=dict)
    passed: int = 0
    played: int = 0
    passed_without: int = 0
    played_without: int = 0


def _dialogue(conversation: Conversation) -> Dialogue:
    turns = [DialogueTurn(role=t.role, content=t.content) for t in conversation.turns if t.role in SPOKEN]
    return Dialogue(
        dialogue_id=conversation.id,
        user_name="scenario",
        turns=turns,
        finish_reason=FinishReason.user_ended_chat,
    )


def scenario_fault_report(store: Store, run_id: str) -> ScenarioFaults:
    """Every played conversation of a scenario run checked for simulator faults, and the pass counts."""
    entries = {e["name"]: e for e in store.run(run_id).params.get("scenarios") or []}
    out = ScenarioFaults()
    for result in load_scenario_results(store, run_id):
        entry = entries.get(result.scenario, {})
        found: list[UserFault] = []
        if "e2e" not in entry:  # a simulated user, not an E2E test's script
            context = str((entry.get("scenario") or {}).get("simulation_context") or "")
            persona = {"type": "standard", "profile": context, "task": context}
            conversation = Conversation.model_validate(store.current(result.conversation_id).body)
            found = detect_user_faults(_dialogue(conversation), persona)
        out.played += 1
        out.passed += result.verdict.passed is True
        if found:
            out.faults[result.conversation_id] = found
        else:
            out.played_without += 1
            out.passed_without += result.verdict.passed is True
    return out
