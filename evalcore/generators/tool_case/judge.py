"""Task `judge_tool_case`: TRACE's LLM judge (seed 004, Section 2.3, Appendix B.4). Given a synthesized
conversation and its case, the judge says which four labels the conversation shows, whether it matches
the case exactly, and how confident it is; silver filtering keeps what it accepts above a threshold tuned
on gold (evalcore.stats.calibration).

Offline, the labels are read from the observable signals (tool_case/signals.py) and the world state the
conversation records: the user is satisfied when they thank and never complain; the tool failed when a
result is empty, an error, a result for another value, or the world state records a hidden failure, and
the failure is the agent's when an argument was never given or the tool refused the value the agent
passed; the agent is inappropriate when any of its NEG signals shows, or the user complains without the
agent having explained a failure. A case whose template leaves a characteristic trace (SIGNATURE: raw
logs for Verbose Trace Leak, a success claimed after a failure for Hallucinated Edit, ...) must also show
it, so a conversation of one case is not accepted for another with the same labels. The score is the
share of these checks (the four labels, and the trace where the case has one) that pass.
"""

from __future__ import annotations

import json
import random
from typing import Any, Literal

from pydantic import BaseModel, Field

from evalcore.generators.tool_case.records import transcript
from evalcore.generators.tool_case.signals import observe
from evalcore.llm.client import ModelClient
from evalcore.llm.tasks import Task
from evalcore.models import Conversation, Turn, TurnRole

AGENT_FAULTS = {
    "ungrounded_argument", "unused_tool_result", "unneeded_verification", "reasks_given_info",
    "reply_contradicts_result", "success_after_failure", "mismatch_passed_on", "gives_up",
    "raw_log_in_reply", "technical_dump", "skipped_prerequisite",
}  # fmt: skip
DISSATISFIED = {"user_complaint", "user_confused", "user_repeats"}
# The observable trace each case's description implies, by recipe (one of them must show).
SIGNATURE = {
    "bad_params_silent": {"ungrounded_argument"},
    "bad_input_data": {"ungrounded_argument"},
    "misunderstood_need": {"ungrounded_argument"},
    "missing_or_skipped_tool": {"skipped_prerequisite"},
    "bad_parse_silent": {"reply_contradicts_result"},
    "hallucination_with_access": {"reply_contradicts_result"},
    "superfluous_tool_calls": {"unused_tool_result"},
    "security_overkill": {"unused_tool_result"},
    "info_overload": {"technical_dump"},
    "verbose_trace_leak": {"raw_log_in_reply"},
    "unneeded_security_gate": {"unneeded_verification"},
    "context_amnesia": {"reasks_given_info"},
    "propagated_tool_error": {"mismatch_passed_on"},
    "tool_failure_user_aware": {"mismatch_passed_on"},
    "hallucination_fallback": {"success_after_failure"},
    "hallucinated_edit": {"success_after_failure"},
    "tool_unavailable": {"transparent_error"},
    "impossible_action_suggested": {"transparent_error"},
    "null_tool_response": {"gives_up"},
    "bad_params_user_aware": {"gives_up"},
}


class Labels(BaseModel):
    """The four labels of Section 2.1."""

    tool_execution: Literal["correct", "incorrect_agent", "incorrect_tool"] = Field(
        description="correct, incorrect_agent or incorrect_tool."
    )
    agent_appropriate: bool = Field(description="Whether the agent responded appropriately.")
    user_satisfied: bool = Field(description="Whether the user ends satisfied.")
    overall: Literal["POS", "NEG"] = Field(description="POS or NEG.")


class Verdict(BaseModel):
    """The judge's reading of one conversation against its case."""

    labels: Labels = Field(description="The labels the conversation shows.")
    matches: bool = Field(description="True when the conversation exactly matches the case description.")
    score: float = Field(ge=0.0, le=1.0, description="Confidence from 0 to 1 that it matches.")
    reason: str = Field(description="One sentence.")


def _tool_refused_agent_value(turns: list[Turn]) -> bool:
    return any(t.role == TurnRole.tool_result and "invalid value for" in t.content for t in turns)


def read_labels(
    turns: list[Turn], world_state: dict[str, Any] | None, prerequisites: dict[str, list[str]] | None = None
) -> Labels:
    """The labels the turns (and a recorded world state, and the tools' prerequisites) show (see the
    module docstring)."""
    seen = observe(turns, prerequisites)
    failed = seen & {"success_after_failure", "mismatch_passed_on", "gives_up", "transparent_error"}
    if "ungrounded_argument" in seen or _tool_refused_agent_value(turns):
        execution = "incorrect_agent"
    elif failed or world_state:
        execution = "incorrect_tool"
    else:
        execution = "correct"
    satisfied = "user_thanks" in seen and not seen & DISSATISFIED
    appropriate = not seen & AGENT_FAULTS and not (seen & DISSATISFIED and "transparent_error" not in seen)
    overall = "POS" if execution == "correct" and appropriate and satisfied else "NEG"
    return Labels(
        tool_execution=execution, agent_appropriate=appropriate, user_satisfied=satisfied, overall=overall
    )


def agreement(found: Labels, intended: dict[str, Any]) -> float:
    """Share of the four labels that agree with the intended ones."""
    return sum(getattr(found, k) == intended[k] for k in Labels.model_fields) / len(Labels.model_fields)


def offline_verdict(inputs: dict[str, Any], rng: random.Random) -> Verdict:
    """Labels from the signals, and the case's trace; matches when every check passes."""
    turns = [Turn.model_validate(t) for t in inputs["turns"]]
    prerequisites = inputs.get("prerequisites") or {}
    found = read_labels(turns, inputs["world"], prerequisites)
    differ = [k for k in Labels.model_fields if getattr(found, k) != inputs["intended"][k]]
    checks = len(Labels.model_fields)
    if trace := SIGNATURE.get(inputs["recipe"] or ""):
        checks += 1
        if not trace & observe(turns, prerequisites):
            differ.append(f"no sign of {' or '.join(sorted(trace))}")
    reason = "the labels and the case's trace match" if not differ else f"differs on {', '.join(differ)}"
    return Verdict(labels=found, matches=not differ, score=(checks - len(differ)) / checks, reason=reason)


JUDGE_TOOL_CASE = Task(
    "judge_tool_case", Verdict, offline_verdict, prompt="judge_tool_case.md", max_tokens=1024
)
# Appendix B.4: the filtering judge runs at temperature 0 (the Task default).


def judge_inputs(conversation: Conversation, situation: Any) -> dict[str, Any]:
    """The task's inputs for a stored tool-case conversation and its situation."""
    world = conversation.metadata.get("world_state")
    return {
        "case_name": situation.name,
        "description": situation.description,
        "user_details": situation.user_details,
        "tool_details": situation.tool_details,
        "agent_details": situation.agent_details,
        "intended": situation.labels,
        "recipe": situation.recipe,
        "turns": [t.model_dump(mode="json") for t in conversation.turns],
        "transcript": transcript(conversation.turns),
        "world": world,
        "world_state": json.dumps(world) if world else "(none)",
        "prerequisites": conversation.metadata.get("tool_prerequisites") or {},
        "prerequisites_text": _prerequisites_text(conversation.metadata.get("tool_prerequisites") or {}),
    }


def _prerequisites_text(prerequisites: dict[str, list[str]]) -> str:
    """The calls that must come first, as the prompt states them."""
    lines = [f"- {tool} only after {' or '.join(before)}" for tool, before in prerequisites.items()]
    return "\n".join(lines) or "(none)"


def judge_conversation(
    llm: ModelClient, conversation: Conversation, situation: Any, *, model: str | None = None
) -> Verdict | None:
    """The judge's verdict, or None when it could not answer (unscored, never a rejection)."""
    result = llm.run_task(JUDGE_TOOL_CASE, judge_inputs(conversation, situation), role="judge", model=model)
    return result.output if result.ok else None
