"""Langfuse dataset items out: JSONL of `CreateDatasetItemRequest` bodies (`id`, `input`,
`expectedOutput`, `metadata`), as `langfuse.create_dataset_item(**item)` takes them.

`input` is `{"messages": [...]}` (OpenAI chat messages: a conversation's turns, a test's context);
`expectedOutput` the expected reply as text, or an expected tool call as an assistant message with
`tool_calls`; a conversation has none. Our fields travel in `metadata.evalcore`.
"""

from __future__ import annotations

from typing import Any

from evalcore.models import TurnRole
from evalcore.reports.formats.common import KIND, OURS, SPEC_KIND, TEST_KIND, Case, message, messages

NAME = "langfuse"
SUFFIX = "jsonl"
LAYOUT = "jsonl"
KINDS = (SPEC_KIND, KIND, TEST_KIND)


def record(case: Case) -> dict[str, Any]:
    """One dataset item."""
    expected: Any = None
    if case.expected is not None:
        tool = case.expected.role == TurnRole.tool_call
        expected = message(case.expected) if tool else case.expected.content
    return {
        "id": case.id,
        "input": {"messages": messages(case.turns)},
        "expectedOutput": expected,
        "metadata": {OURS: case.ours},
    }
