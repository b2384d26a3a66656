"""tau2-bench tasks in: a JSON list of `Task`s (`tasks.json` of a domain).

A task becomes a test: the turns of `initial_state.message_history`, then the user's reason for calling
(or the instructions, when they are one text) as the user turn; the first assistant action of
`evaluation_criteria.actions` is the expected tool call, else the first `nl_assertions` entry the
expected reply; each `communicate_info` text is a `contains` assertion (tau2 checks them as substrings of
the agent's messages, as ours does). The persona, the rest of the instructions, later actions and the
environment assertions are kept in metadata: they need tau2's simulated user and environment. Our fields
travel in `description.notes` as JSON (a tau2 task has no metadata mapping).
"""

from __future__ import annotations

from typing import Any

from evalcore.errors import Problem
from evalcore.inputs.formats.common import (
    Foreign,
    Mapped,
    Read,
    Said,
    build,
    document_sources,
    finish,
    from_messages,
    ours_of,
    validate,
)
from evalcore.models import TurnRole

NAME = "tau2"


class ActionIn(Foreign):
    """tau2's `Action`: a reference tool call."""

    action_id: str
    name: str
    arguments: dict[str, Any]
    requestor: str = "assistant"


class CriteriaIn(Foreign):
    """tau2's `EvaluationCriteria`."""

    actions: list[ActionIn] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None


class InstructionsIn(Foreign):
    """tau2's `StructuredUserInstructions`."""

    domain: str
    reason_for_call: str
    task_instructions: str


class ScenarioIn(Foreign):
    """tau2's `UserScenario`."""

    persona: str | None = None
    instructions: InstructionsIn | str


class DescriptionIn(Foreign):
    """tau2's `Description`."""

    notes: str | None = None


class TaskIn(Foreign):
    """tau2's `Task`."""

    id: str
    description: DescriptionIn | None = None
    user_scenario: ScenarioIn
    evaluation_criteria: CriteriaIn | None = None
    initial_state: dict[str, Any] | None = None


def _expected(criteria: CriteriaIn, kept: dict[str, Any], out: Read) -> Said:
    actions = [a for a in criteria.actions or [] if a.requestor == "assistant"]
    later = [a.model_dump(exclude_none=True) for a in criteria.actions or [] if a.requestor != "assistant"]
    nl = list(criteria.nl_assertions or [])
    expected = Said(TurnRole.assistant)
    if actions:
        expected = Said(TurnRole.tool_call, "", actions[0].name, actions[0].arguments)
        later = [a.model_dump(exclude_none=True) for a in actions[1:]] + later
    elif nl:
        expected = Said(TurnRole.assistant, nl.pop(0))
    if later:
        kept["actions"] = later
        out.keep("tau2 actions after the first", "checked by tau2's environment, not here", len(later))
    if nl:
        kept["nl_assertions"] = nl
        out.keep("tau2 nl_assertions beside the expected turn", "a test expects one next turn", len(nl))
    return expected


def read(text: str, shown: str) -> Read:
    """Every task of a tau2 tasks file, as tests of ours; ValidationFailed otherwise."""
    problems: list[Problem] = []
    sources = document_sources(text, shown, problems, yaml_text=False, list_keys=("tasks",))
    out = Read()
    for source in sources:
        task = validate(TaskIn, source, shown, problems)
        if task is None:
            continue
        notes = task.description.notes if task.description else None
        ours, _ = ours_of(notes, ("description", "notes"), source, shown, problems)
        history = (task.initial_state or {}).get("message_history") or []
        where = ("initial_state", "message_history")
        turns, _ = from_messages(history, where, source, shown, problems)
        scenario = task.user_scenario
        instructions = scenario.instructions
        said = instructions if isinstance(instructions, str) else instructions.reason_for_call
        turns.append(Said(TurnRole.user, said))
        kept: dict[str, Any] = {}
        if ours is None:  # ours wrote the scenario from the item's own turns
            kept["user_scenario"] = scenario.model_dump(exclude_none=True)
            out.keep("tau2 user scenarios", "the instructions of tau2's simulated user")
        criteria = task.evaluation_criteria or CriteriaIn()
        expected = _expected(criteria, kept, out)
        checks = [{"kind": "contains", "text": info} for info in criteria.communicate_info or []]
        others = task.model_dump(
            exclude_none=True,
            exclude={"id", "user_scenario", "evaluation_criteria", "initial_state", "description"},
        )
        for key, value in others.items():
            kept[key] = value
            out.keep(f"tau2 task '{key}' fields", "no place for them here")
        mapped = Mapped(turns, expected, checks, kept, key=task.id)
        build(NAME, shown, source, mapped, ours, problems, out)
    return finish(out, shown, problems, "tau2")
