"""DeepEval goldens out, as `EvaluationDataset.save_as("json")` writes them (and its loader reads them).

A test or a spec is a `Golden`: the last user message is the `input`, the expected reply the
`expected_output` (an expected tool call the `expected_tools`). A conversation is a `ConversationalGolden`:
its user and assistant turns are `turns`, tool calls (with the result that follows, as `output`) go into
the next assistant turn's `tools_called`. Our fields travel in `additional_metadata.evalcore`.
"""

from __future__ import annotations

from typing import Any

from evalcore.models import Turn, TurnRole
from evalcore.reports.formats.common import KIND, OURS, SPEC_KIND, TEST_KIND, Case, split_last

NAME = "deepeval"
SUFFIX = "json"
LAYOUT = "json"
KINDS = (SPEC_KIND, KIND, TEST_KIND)


def _tool(turn: Turn) -> dict[str, Any]:
    return {"name": turn.tool_name or "", "input_parameters": turn.arguments or {}}


def _turns(turns: list[Turn]) -> list[dict[str, Any]]:
    out, calls = [], []
    for turn in turns:
        if turn.role == TurnRole.tool_call:
            calls.append(_tool(turn))
        elif turn.role == TurnRole.tool_result:
            if calls and "output" not in calls[-1]:
                calls[-1]["output"] = turn.content
        else:
            row: dict[str, Any] = {"role": str(turn.role), "content": turn.content}
            if turn.role == TurnRole.assistant and calls:
                row["tools_called"], calls = calls, []
            out.append(row)
    return out


def record(case: Case) -> dict[str, Any]:
    """One golden."""
    metadata = {OURS: case.ours}
    if case.kind == KIND:
        return {
            "scenario": case.title,
            "turns": _turns(case.turns),
            "name": case.id,
            "additional_metadata": metadata,
        }
    _, text, expected = split_last(case)
    row: dict[str, Any] = {"input": text, "name": case.id, "additional_metadata": metadata}
    if expected is not None and expected.role == TurnRole.tool_call:
        row["expected_tools"] = [_tool(expected)]
    elif expected is not None:
        row["expected_output"] = expected.content
    return row
