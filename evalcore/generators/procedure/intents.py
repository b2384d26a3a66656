"""Intents and procedures (seed 001, Sections 3.1-3.3, prompts A.1-A.3; issue 17, item 1).

Intents come from the project's procedures, from the system card's task, or are generated (task
`generate_intents`, A.1; offline: one intent per tool that no procedure calls yet, from the tool's
description). A procedure is the project's, or generated from an intent (task `generate_procedure`, A.2
with the APIs of A.3 taken from the project's tools; offline: the tool whose name and description share
most words with the intent, a step asking for its required parameters, the call with the outcomes of its
`result` enum, so the procedure compiles into a flowgraph). Generated procedures are marked so: their
names start with `generated_`.
"""

from __future__ import annotations

import random
import re
from typing import Any, Literal

from pydantic import Field

from evalcore.generators.procedure.origins import GENERATED_PREFIX
from evalcore.llm.tasks import Task
from evalcore.models import Procedure, ProcedureStep, SystemCard, Tool
from evalcore.models.common import Record

_WORD = re.compile(r"[a-z]+")
_STOP = {"a", "an", "the", "of", "to", "and", "or", "for", "in", "on", "by", "is", "it", "its", "with", "at"}


class Intent(Record):
    """An issue a customer brings (seed 001, Section 3.1)."""

    text: str = Field(description="The intent, e.g. 'cancel an order'.")
    source: Literal["procedure", "card", "generated"] = Field(description="Where it comes from.")
    procedure: str | None = Field(default=None, description="The project's procedure for it, if any.")


class Intents(Record):
    """Generated intents."""

    intents: list[str] = Field(description="Short customer intents, e.g. 'cancel an order'.")


class ProcedureDraft(Record):
    """A generated procedure (A.2): steps an agent follows, calling only the APIs given."""

    name: str = Field(description="snake_case name of the procedure.")
    intent: str = Field(description="The intent it serves.")
    description: str = Field(default="", description="One-sentence summary.")
    steps: list[ProcedureStep] = Field(
        description="Ordered steps: message (agent says) or api (agent calls)."
    )


def known_intents(procedures: list[Procedure], card: SystemCard | None) -> list[Intent]:
    """The intents of the project's procedures, then the clauses of the card's task not among them."""
    found = [Intent(text=p.intent, source="procedure", procedure=p.name) for p in procedures]
    seen = {i.text.lower() for i in found}
    task = card.chatbot_info.task if card else ""
    for clause in re.split(r"[;.]\s*", task):
        clause = clause.strip()
        if clause and clause.lower() not in seen:
            found.append(Intent(text=clause[:1].lower() + clause[1:], source="card"))
            seen.add(clause.lower())
    return found


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower().replace("_", " ")) if w not in _STOP}


def _intents_offline(inputs: dict[str, Any], rng: random.Random) -> Intents:
    used = set(inputs["used_tools"])
    out = []
    for tool in inputs["tools"]:
        if tool["name"] in used:
            continue
        first = re.split(r"(?<=\.)\s", tool["description"].strip(), maxsplit=1)[0].rstrip(".")
        out.append(first[:1].lower() + first[1:])
    return Intents(intents=out[: int(inputs["count"])])


def _procedure_offline(inputs: dict[str, Any], rng: random.Random) -> ProcedureDraft:
    intent = inputs["intent"]
    tools = [Tool.model_validate(t) for t in inputs["tools"]]
    tool = max(tools, key=lambda t: (len(_words(intent) & _words(f"{t.name} {t.description}")), t.name))
    required = tool.parameters.get("required", [])
    asked = ", ".join(r.replace("_", " ") for r in required) or "what they need"
    result = ((tool.returns or {}).get("properties") or {}).get("result") or {}
    outcomes = {
        str(o): f"Tell the customer the outcome ({o}) of {tool.name} and what happens next."
        for o in result.get("enum") or ["done"]
    }
    steps = [
        ProcedureStep(kind="message", text=f"Ask for the {asked}."),
        ProcedureStep(
            kind="api",
            api=tool.name,
            text=f"Call {tool.name} with what the customer gave.",
            outcomes=outcomes,
        ),
    ]
    name = GENERATED_PREFIX + "_".join(sorted(_words(intent), key=intent.lower().find)[:4])
    return ProcedureDraft(name=name, intent=intent, description=f"Help the customer {intent}.", steps=steps)


GENERATE_INTENTS = Task("generate_intents", Intents, _intents_offline, prompt="generate_intents.md")
GENERATE_PROCEDURE = Task(
    "generate_procedure", ProcedureDraft, _procedure_offline, prompt="generate_procedure.md", max_tokens=3000
)


def as_procedure(draft: ProcedureDraft) -> Procedure:
    """The draft as a Procedure, its name marked generated."""
    name = draft.name if draft.name.startswith(GENERATED_PREFIX) else GENERATED_PREFIX + draft.name
    return Procedure(name=name[:64], intent=draft.intent, description=draft.description, steps=draft.steps)
