"""LangSmith examples out: JSONL of `inputs`, `outputs` and `metadata`, as `Client.create_examples` takes
them (and `ExampleCreate` validates).

`inputs` is `{"messages": [...]}` (OpenAI chat messages: a conversation's turns, a test's context);
`outputs` the expected reply as `{"output": text}`, or an expected tool call as
`{"messages": [assistant message with tool_calls]}`; a conversation has none. Our fields travel in
`metadata.evalcore`.
"""

from __future__ import annotations

from typing import Any

from evalcore.models import TurnRole
from evalcore.reports.formats.common import KIND, OURS, SPEC_KIND, TEST_KIND, Case, message, messages

NAME = "langsmith"
SUFFIX = "jsonl"
LAYOUT = "jsonl"
KINDS = (SPEC_KIND, KIND, TEST_KIND)


def record(case: Case) -> dict[str, Any]:
    """One example."""
    outputs: dict[str, Any] | None = None
    if case.expected is not None:
        tool = case.expected.role == TurnRole.tool_call
        outputs = {"messages": [message(case.expected)]} if tool else {"output": case.expected.content}
    return {"inputs": {"messages": messages(case.turns)}, "outputs": outputs, "metadata": {OURS: case.ours}}
