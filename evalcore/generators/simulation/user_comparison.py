"""Simulated users beside other users (issue 31, "simulator fidelity"): a simulation run's users and, where
the project has them, the users of imported ChatChecker runs and the people of imported conversations, on
the statistics they share (fidelity.user_side: MTLD, turn lengths, questions, breakdowns provoked).

Imported conversations are those no generator of ours made (their generator names the tool they came
from: deepeval, langfuse, ...): their user turns were written by people or by another tool's users, and
carry no breakdown verdicts, so the offline rules judge their assistant turns (the column says so).
"""

from __future__ import annotations

from evalcore.generators.simulation.breakdown_rules import annotate_offline
from evalcore.generators.simulation.fidelity import user_side
from evalcore.generators.simulation.records import RUN_KIND, Dialogue, DialogueTurn, FinishReason
from evalcore.generators.simulation.store_ops import load_simulation_run
from evalcore.items.store_ops import list_conversations
from evalcore.models import Conversation, TurnRole
from evalcore.store import Store

OUR_GENERATORS = frozenset({"doc_qa", "procedure", "simulation", "scenario", "tool_case"})
SPOKEN = (TurnRole.user, TurnRole.assistant)
SHORT_NAME = 20  # ChatChecker run ids run to 40 characters: a column header shows their start


def _dialogue(conversation: Conversation) -> Dialogue:
    """The user and assistant turns of an imported conversation as a dialogue (tool turns left out)."""
    turns = [DialogueTurn(role=t.role, content=t.content) for t in conversation.turns if t.role in SPOKEN]
    return Dialogue(
        dialogue_id=conversation.id,
        user_name="imported",
        turns=turns,
        finish_reason=FinishReason.user_ended_chat,
    )


def imported_dialogues(store: Store, project_id: str) -> list[Dialogue]:
    """The project's conversations no generator of ours made, with at least one user turn, each judged
    by the offline breakdown rules."""
    found = []
    for view in list_conversations(store, project_id):
        conversation = view.conversation
        if conversation.generator in OUR_GENERATORS:
            continue
        dialogue = _dialogue(conversation)
        if any(t.role == TurnRole.user for t in dialogue.turns):
            found.append(annotate_offline(dialogue, task_oriented=True))
    return found


def side_by_side(store: Store, run_id: str) -> dict[str, dict[str, float | int | None]]:
    """Column label -> the users' figures: the run's, every other ChatChecker run imported into the
    project, and the project's imported conversations (when there are any)."""
    sim = load_simulation_run(store, run_id)
    made_here = sim.run.params.get("source") != "chatchecker"
    columns = {
        ("this run's simulated users" if made_here else "this imported ChatChecker run"): user_side(
            sim.dialogues
        )
    }
    for other in store.runs(sim.project_id, kind=RUN_KIND):
        if other.id == run_id or other.params.get("source") != "chatchecker":
            continue
        name = str(other.params.get("chatchecker_run_id") or other.id)
        short = name if len(name) <= SHORT_NAME else name[: SHORT_NAME - 1] + "…"
        columns[f"ChatChecker run {short}"] = user_side(load_simulation_run(store, other.id).dialogues)
    imported = imported_dialogues(store, sim.project_id)
    if imported:
        columns["imported conversations (breakdowns by the offline rules)"] = user_side(imported)
    return columns
