"""The criteria judge (seed 003, "goals.criteria"): "The LLM judge evaluates each criterion independently
after the conversation ends and produces a pass/fail verdict with a written rationale. A run is marked
failed if any criterion fails."

Each criterion is the task `judge_criterion` (prompt `evalcore/prompts/judge_criterion.md`) over the
whole transcript, run through the model layer with the `judge` role, so calls are cached, retried,
accounted and budgeted, and the judge is chosen by the model layer's guard (never the target's own
model when another is configured). A verdict the judge cannot give (output unparseable after the
re-asks, or the budget spent) is recorded as unscored, with the raw text: never as a failure.

Offline, a checkable heuristic that can fail stands in for the judge: the criterion's key terms (words
of four letters or more, minus function words, the parties' names and adverbs) are looked up in the
assistant's turns, a term counting as found when a word there shares its first five letters ("delay"
finds "delayed"). The criterion passes when at least half of its terms are found; a prohibition ("does
not", "never", "without") passes when fewer than half are.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from evalcore.llm.client import ModelClient
from evalcore.llm.guard import guard_judge
from evalcore.llm.tasks import Task
from evalcore.models import Turn
from evalcore.models.common import Record
from evalcore.targets.events import (
    EVENTS_KEY,
    ActionExecuted,
    ClarificationRequested,
    Event,
    FlowCancelled,
    FlowCompleted,
    FlowInterrupted,
    FlowStarted,
    SlotSet,
    events_from_json,
)

STEM = 5  # letters two words must share to count as one term: "delay" / "delayed", "refund" / "refunds"
_WORD = re.compile(r"[a-z][a-z'-]+")
_NEGATION = re.compile(r"\b(not|never|no|without|avoids?)\b|n't\b")
# fmt: off
_IGNORED = frozenset([  # the parties' names and function words: they say nothing about the behaviour
    "agent", "assistant", "user", "users", "bot", "customer", "the", "that", "this", "these", "those",
    "with", "from", "into", "onto", "about", "their", "there", "them", "they", "what", "when", "where",
    "which", "while", "will", "would", "should", "could", "must", "does", "doesn", "have", "has", "had",
    "been", "being", "were", "also", "only", "just", "more", "most", "very", "such", "than", "then",
    "each", "other", "already",
])
# fmt: on


class CriterionVerdict(BaseModel):
    """A judge's verdict on one criterion."""

    rationale: str = Field(default="", description="One to three sentences citing what the assistant did.")
    passed: bool = Field(description="True if the assistant's behaviour meets the criterion.")


class CriterionResult(Record):
    """The outcome of one criterion of a scenario on one conversation."""

    criterion: str = Field(description="The criterion as written.")
    passed: bool | None = Field(description="True, False, or None when the judge could not give a verdict.")
    rationale: str = Field(default="", description="The judge's reason.")
    model: str = Field(description="'provider/model' that judged it.")
    offline: bool = Field(description="True when judged by the offline heuristic.")
    raw: str | None = Field(default=None, description="The judge's raw output, when it was unscored.")


def key_terms(criterion: str) -> list[str]:
    """The words of a criterion the offline heuristic looks for, in order, without repeats."""
    words = _WORD.findall(criterion.lower())
    terms = [w for w in words if len(w) >= 4 and w not in _IGNORED and not w.endswith("ly")]
    return list(dict.fromkeys(terms))


def offline_criterion(inputs: dict[str, Any], rng: random.Random) -> CriterionVerdict:
    """The judge task's offline implementation: key terms of the criterion in the assistant's turns."""
    criterion = str(inputs["criterion"])
    said = {w[:STEM] for w in _WORD.findall(str(inputs.get("assistant_text", "")).lower())}
    terms = key_terms(criterion)
    found = [t for t in terms if t[:STEM] in said]
    prohibition = bool(_NEGATION.search(criterion.lower()))
    most = bool(terms) and 2 * len(found) >= len(terms)
    passed = not most if prohibition else most
    rule = "a prohibition: passes when fewer than half are" if prohibition else "passes when half or more are"
    rationale = (
        f"Offline check of key terms in the assistant's turns: {len(found)} of {len(terms)} found "
        f"({', '.join(found) or 'none'}); {rule}."
    )
    return CriterionVerdict(rationale=rationale, passed=passed)


JUDGE_CRITERION = Task("judge_criterion", CriterionVerdict, offline_criterion, max_tokens=600)


def event_note(event: Event) -> str | None:
    """How an event of the assistant's reads in the transcript: flows, actions and slots (what the user
    saw, its messages, is the text itself)."""
    if isinstance(event, FlowStarted | FlowCompleted | FlowCancelled | FlowInterrupted):
        return f"flow {event.type.removeprefix('flow_')}: {event.flow_id}"
    if isinstance(event, ActionExecuted) and event.action_name != "action_listen":
        return f"action: {event.action_name}"
    if isinstance(event, SlotSet):
        return f"slot {event.name} = {json.dumps(event.value, ensure_ascii=False)}"
    if isinstance(event, ClarificationRequested):
        return f"clarification offered: {', '.join(event.flow_ids or event.flow_names)}"
    return None


def transcript(turns: Sequence[Turn]) -> str:
    """The conversation as the judge reads it: one 'role: text' paragraph per user or assistant turn, and
    after a turn what the assistant did behind it (its flows, actions and slots, from the events the
    target reported), one '[...]' line each, so criteria about step order and tool calls can be judged."""
    shown = {"user": "User", "assistant": "Assistant"}
    parts = []
    for turn in sorted(turns, key=lambda t: t.index):
        if turn.role not in shown:
            continue
        notes = [
            note for e in events_from_json(turn.metadata.get(EVENTS_KEY) or []) if (note := event_note(e))
        ]
        parts.append("\n".join([f"{shown[turn.role]}: {turn.content}", *(f"[{n}]" for n in notes)]))
    return "\n\n".join(parts)


def judge_criteria(
    client: ModelClient,
    criteria: Sequence[str],
    turns: Sequence[Turn],
    *,
    judge: str | None = None,
    target_model: str | None = None,
) -> list[CriterionResult]:
    """One verdict per criterion, each judged independently over the whole transcript (`judge`: a model
    name, else the `judge` role; never `target_model` when another model is configured)."""
    choice = guard_judge(client, target_model, judge)
    text = transcript(turns)
    assistant_text = "\n".join(t.content for t in turns if t.role == "assistant")
    results = []
    for criterion in criteria:
        inputs = {"criterion": criterion, "transcript": text, "assistant_text": assistant_text}
        result = client.run_task(JUDGE_CRITERION, inputs, role="judge", model=choice.model)
        verdict = result.output if result.ok else None
        results.append(
            CriterionResult(
                criterion=criterion,
                passed=verdict.passed if verdict is not None else None,
                rationale=verdict.rationale if verdict is not None else (result.error or ""),
                model=result.model,
                offline=result.offline,
                raw=None if verdict is not None else result.raw,
            )
        )
    return results
