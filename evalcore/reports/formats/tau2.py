"""tau2-bench tasks out: a JSON list of `Task`s, as a domain's `tasks.json` holds them.

The last user message is the user's `reason_for_call` (the turns before it `initial_state.message_history`);
an expected tool call is the one assistant `action`, an expected reply the one `nl_assertions` entry, and
our `contains` assertions the `communicate_info` texts. A task has no metadata mapping: our fields travel
as JSON in `description.notes`. Conversations have no task form (a task is a user's goal, not a
dialogue): export them as tests, or in another format.
"""

from __future__ import annotations

import json
from typing import Any

from evalcore.models import Turn, TurnRole
from evalcore.reports.formats.common import OURS, SPEC_KIND, TEST_KIND, Case, split_last

NAME = "tau2"
SUFFIX = "json"
LAYOUT = "json"
KINDS = (SPEC_KIND, TEST_KIND)


def _message(turn: Turn) -> dict[str, Any]:
    if turn.role == TurnRole.tool_call:
        call = {
            "id": f"call_{turn.index}",
            "name": turn.tool_name or "",
            "arguments": turn.arguments or {},
            "requestor": "assistant",
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    if turn.role == TurnRole.tool_result:
        return {
            "role": "tool",
            "id": f"call_{turn.index - 1}",
            "content": turn.content,
            "requestor": "assistant",
        }
    return {"role": str(turn.role), "content": turn.content}


def record(case: Case) -> dict[str, Any]:
    """One tau2 task."""
    history, text, expected = split_last(case)
    criteria: dict[str, Any] = {"reward_basis": []}
    if expected is not None and expected.role == TurnRole.tool_call:
        action = {
            "action_id": f"{case.id}-expected",
            "requestor": "assistant",
            "name": expected.tool_name or "",
            "arguments": expected.arguments or {},
        }
        criteria.update(actions=[action], reward_basis=["ACTION"])
    elif expected is not None and expected.content:
        criteria.update(nl_assertions=[expected.content], reward_basis=["NL_ASSERTION"])
    infos = [
        c["text"] for c in case.assertions if c.get("kind") == "contains" and isinstance(c.get("text"), str)
    ]
    if infos:
        criteria["communicate_info"] = infos
        criteria["reward_basis"].append("COMMUNICATE")
    task: dict[str, Any] = {
        "id": case.id,
        "description": {"purpose": case.title, "notes": json.dumps({OURS: case.ours}, ensure_ascii=False)},
        "user_scenario": {
            "instructions": {"domain": "evalcore", "reason_for_call": text, "task_instructions": text}
        },
        "evaluation_criteria": criteria,
    }
    if history:
        task["initial_state"] = {"message_history": [_message(t) for t in history]}
    return task
