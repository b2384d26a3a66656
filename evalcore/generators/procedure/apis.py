"""APIs a generated procedure calls that the project lacks (seed 001, Section 3.3, prompt A.3; issue 17,
item 1).

The project's tools come first: a generated procedure is asked to call only them. When its draft still
names an API the project does not have, the API is generated (task `generate_api`: name, description,
input parameters as a JSON schema, output with a `result` enum of the step's outcomes; offline: the
parameters are the details the step before asks the customer for, strings, all required) and kept in the
generation run's parameters (`generated_tools`), never among the project's tools. Everything that shows
an API says when it is a generated one (`generated_names`). A project procedure naming an unknown tool is
bad input: its flowgraph is kept with the reason and not used (no API is generated for it).
"""

from __future__ import annotations

import random
import re
from typing import Any

from pydantic import Field

from evalcore.llm.tasks import Task
from evalcore.models import Procedure, ProcedureStep, Tool
from evalcore.models.common import Record
from evalcore.store import Store

GENERATED_TOOLS = "generated_tools"  # the run parameter that keeps them
_ASKS = re.compile(r"\bask (?:for|about)? ?(?:the |their |a |an )?(.+?)(?:[.;]|$)", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:the|their|your|a|an)\s+")
_SPLIT = re.compile(r",\s*(?:and\s+)?|\s+and\s+|\s+or\s+")


class GeneratedApi(Record):
    """An agent-side API a procedure calls (A.3): what it does, its input and output."""

    name: str = Field(description="snake_case function name, as the procedure's step names it.")
    description: str = Field(description="One sentence: what the API does for the agent.")
    parameters: dict[str, Any] = Field(description="JSON schema (type object) of the input parameters.")
    returns: dict[str, Any] | None = Field(
        default=None, description="JSON schema of the output; a `result` string enum of the outcomes."
    )


def missing_apis(procedure: Procedure, known: set[str]) -> list[ProcedureStep]:
    """The procedure's api steps naming an API not in `known`, one per API, in order."""
    seen: set[str] = set()
    steps = []
    for step in procedure.steps:
        if step.api and step.api not in known and step.api not in seen:
            seen.add(step.api)
            steps.append(step)
    return steps


def api_inputs(procedure: Procedure, step: ProcedureStep) -> dict[str, Any]:
    """The task's inputs: the procedure, the API's name, its step and the message step before it."""
    index = procedure.steps.index(step)
    before = next((s.text for s in reversed(procedure.steps[:index]) if s.kind == "message"), "")
    return {
        "procedure": procedure.model_dump(mode="json"),
        "api": step.api,
        "step": step.text,
        "asked_before": before,
        "outcomes": sorted(step.outcomes),
    }


def _offline(inputs: dict[str, Any], rng: random.Random) -> GeneratedApi:
    asked = _ASKS.search(inputs.get("asked_before") or "")
    names = [
        re.sub(r"[^a-z0-9]+", "_", _ARTICLE.sub("", part.strip().lower())).strip("_")
        for part in (_SPLIT.split(asked.group(1)) if asked else [])
    ]
    names = [n for n in dict.fromkeys(names) if n and len(n) <= 40] or ["request"]
    properties = {
        n: {"type": "string", "description": f"The customer's {n.replace('_', ' ')}."} for n in names
    }
    outcomes = inputs.get("outcomes") or ["done"]
    return GeneratedApi(
        name=inputs["api"],
        description=(inputs.get("step") or f"Call {inputs['api']}.").strip(),
        parameters={"type": "object", "properties": properties, "required": names},
        returns={"type": "object", "properties": {"result": {"type": "string", "enum": outcomes}}},
    )


GENERATE_API = Task("generate_api", GeneratedApi, _offline, prompt="generate_api.md")


def as_tool(api: GeneratedApi, wanted: str) -> Tool | None:
    """The generated API as a Tool, when it is the one asked for and a valid tool (else None)."""
    if api.name != wanted or api.parameters.get("type") != "object":
        return None
    try:
        return Tool(
            name=api.name, description=api.description, parameters=api.parameters, returns=api.returns
        )
    except ValueError:
        return None


def generated_tools(store: Store, project_id: str) -> list[Tool]:
    """The APIs the project's generation runs generated (the first of a name wins)."""
    from evalcore.generators.procedure.job import RUN_KIND

    found: dict[str, Tool] = {}
    for run in reversed(store.runs(project_id, kind=RUN_KIND)):
        for body in run.params.get(GENERATED_TOOLS) or []:
            tool = Tool.model_validate(body)
            found.setdefault(tool.name, tool)
    return list(found.values())


def known_tools(store: Store, project_id: str) -> list[Tool]:
    """The project's tools, then the generated APIs whose names no project tool has."""
    own = store.tools(project_id)
    names = {t.name for t in own}
    return own + [t for t in generated_tools(store, project_id) if t.name not in names]


def generated_names(store: Store, project_id: str) -> set[str]:
    """Names of the generated APIs (not the project's own): what to mark as generated wherever shown."""
    own = {t.name for t in store.tools(project_id)}
    return {t.name for t in generated_tools(store, project_id)} - own
