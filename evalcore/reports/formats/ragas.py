"""Ragas testset rows out, as `Testset.to_jsonl` writes them (and `Testset.from_list` reads them).

A test or spec whose context is one user message is a single-turn row (`user_input`, `reference`); any
other test, and every conversation, a multi-turn row: `user_input` the messages (human, ai with
`tool_calls`, tool), `reference` the expected reply, or `reference_tool_calls` the expected call.
`synthesizer_name` names our generator. Our fields travel in an extra `evalcore` key (Ragas ignores it).
"""

from __future__ import annotations

from typing import Any

from evalcore.models import Turn, TurnRole
from evalcore.reports.formats.common import KIND, OURS, SPEC_KIND, TEST_KIND, Case

NAME = "ragas"
SUFFIX = "jsonl"
LAYOUT = "jsonl"
KINDS = (SPEC_KIND, KIND, TEST_KIND)


def _messages(turns: list[Turn]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for turn in turns:
        if turn.role == TurnRole.user:
            out.append({"content": turn.content, "type": "human"})
        elif turn.role == TurnRole.assistant:
            out.append({"content": turn.content, "type": "ai"})
        elif turn.role == TurnRole.tool_call:
            call = {"name": turn.tool_name or "", "args": turn.arguments or {}}
            if out and out[-1]["type"] == "ai":
                out[-1].setdefault("tool_calls", []).append(call)
            else:
                out.append({"content": "", "type": "ai", "tool_calls": [call]})
        else:
            out.append({"content": turn.content, "type": "tool"})
    return out


def record(case: Case) -> dict[str, Any]:
    """One testset row."""
    turns, expected = list(case.turns), case.expected
    if case.kind == KIND and turns and turns[-1].role == TurnRole.assistant:
        turns, expected = turns[:-1], turns[-1]  # the reply ending the conversation is its reference
    synthesizer = f"evalcore:{case.ours.get('generator') or case.kind}"
    row: dict[str, Any] = {"synthesizer_name": synthesizer, OURS: case.ours}
    if (
        case.kind != KIND
        and len(turns) == 1
        and turns[0].role == TurnRole.user
        and (expected is None or expected.role == TurnRole.assistant)
    ):
        row.update(user_input=turns[0].content, reference=expected.content if expected else None)
        return row
    row["user_input"] = _messages(turns)
    if expected is not None and expected.role == TurnRole.tool_call:
        row["reference_tool_calls"] = [{"name": expected.tool_name or "", "args": expected.arguments or {}}]
    elif expected is not None:
        row["reference"] = expected.content
    return row
