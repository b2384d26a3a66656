"""Task `generate_tool_case` (seed 004, Section 2.2): a conversation for one situation on one tool group.

A model writes it from the case specification and the group's JSON schemas, simulating the tool outputs.
As the seed does, NEG cases are one-shot: the prompt shows an example of the same case, here the offline
template's conversation on the same group; POS cases are zero-shot for diversity. The offline
implementation is that template (evalcore/generators/tool_case/offline.py). `check_case` refuses a
conversation that does not use the group's tools, so a model's drift is a failed unit, not a bad item.
"""

from __future__ import annotations

import json
import random
from typing import Any

from evalcore.generators.tool_case.catalog import Situation
from evalcore.generators.tool_case.groups import ToolGroup, properties
from evalcore.generators.tool_case.offline import realise
from evalcore.generators.tool_case.records import CaseConversation
from evalcore.generators.tool_case.values import Table, result_names
from evalcore.llm.tasks import Task
from evalcore.models import Tool

ZERO_SHOT = "(none: write a fresh conversation for this case)"
# The seed's generation settings (Appendix B.1): temperature 1, up to 4096 tokens.
TEMPERATURE = 1.0
MAX_TOKENS = 4096
TABLE_ROWS = 40  # rows of each table the prompt shows: enough to pick consistent values, bounded in size


def group_tables(group: ToolGroup, tables: tuple[Table, ...]) -> tuple[Table, ...]:
    """The project's tables with a column named like a parameter of the group's tools (or its singular,
    `service_codes` -> `service_code`), keyed by a qualified parameter's last word, or holding two or more
    of the fields the tools return (a shipment's carrier and tracking number), each cut to TABLE_ROWS
    rows."""
    names = {p for t in group.tools for p in properties(t.parameters)}
    names |= {n.removesuffix("s") for n in names}
    # a qualified parameter ("new_skus") reads the table keyed by its last word (the variants' `sku`)
    keys = {n.split("_", 1)[-1] for n in names}
    fields = {f for t in group.tools for f in result_names(t)}
    return tuple(
        (name, rows[:TABLE_ROWS])
        for name, rows in tables
        if rows and (names & set(rows[0]) or next(iter(rows[0])) in keys or len(fields & set(rows[0])) > 1)
    )


def case_inputs(
    situation: Situation, group: ToolGroup, example_seed: int = 0, tables: tuple[Table, ...] = ()
) -> dict[str, Any]:
    """The task's inputs: the case, its labels, the group's tools, the project's tables that match their
    parameters and, for NEG cases with an offline template, the one-shot example."""
    tables = group_tables(group, tables)
    example = ZERO_SHOT
    if situation.overall == "NEG" and situation.recipe:
        made = realise(situation.recipe, group.tools, random.Random(example_seed), tables)
        example = json.dumps(made.model_dump(mode="json"), ensure_ascii=False, indent=1)
    return {
        "situation": situation.model_dump(mode="json"),
        "case_name": situation.name,
        "description": situation.description,
        "user_details": situation.user_details,
        "tool_details": situation.tool_details,
        "agent_details": situation.agent_details,
        "labels": situation.labels,
        "group": group.name,
        "tools": [t.model_dump(mode="json") for t in group.tools],
        "tables": {name: rows for name, rows in tables} or "(none)",
        "example": example,
    }


def offline_case(inputs: dict[str, Any], rng: random.Random) -> CaseConversation:
    """The offline path: the situation's template on the group's tools."""
    tools = tuple(Tool.model_validate(t) for t in inputs["tools"])
    given = inputs.get("tables")
    tables = tuple(given.items()) if isinstance(given, dict) else ()
    return realise(inputs["situation"]["recipe"], tools, rng, tables)


def check_case(case: CaseConversation, group: ToolGroup) -> list[str]:
    """What makes a generated conversation unusable for this group (empty when it is fine)."""
    names = {t.name for t in group.tools}
    problems = []
    calls = [t for t in case.turns if t.role == "tool_call"]
    if not calls:
        problems.append("no tool_call turn")
    if not any(t.role == "user" for t in case.turns):
        problems.append("no user turn")
    for i, turn in enumerate(case.turns):
        if turn.role in ("tool_call", "tool_result") and turn.tool_name not in names:
            problems.append(f"turn {i} uses '{turn.tool_name}', not a tool of group '{group.name}'")
        if turn.role == "tool_result" and (i == 0 or case.turns[i - 1].role != "tool_call"):
            problems.append(f"turn {i} is a tool_result without a tool_call before it")
    return problems


GENERATE_TOOL_CASE = Task(
    "generate_tool_case",
    CaseConversation,
    offline_case,
    prompt="generate_tool_case.md",
    temperature=TEMPERATURE,
    max_tokens=MAX_TOKENS,
)
