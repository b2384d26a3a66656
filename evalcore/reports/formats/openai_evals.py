"""OpenAI evals samples out: JSONL with `input` (chat messages up to the last user message) and `ideal`
(the expected reply; an expected tool call: the tool's name). Samples have no metadata field: our
fields travel in an extra `evalcore` key, which the evals runner ignores.
"""

from __future__ import annotations

from typing import Any

from evalcore.models import TurnRole
from evalcore.reports.formats.common import KIND, OURS, SPEC_KIND, TEST_KIND, Case, messages, split_last

NAME = "openai-evals"
SUFFIX = "jsonl"
LAYOUT = "jsonl"
KINDS = (SPEC_KIND, KIND, TEST_KIND)


def record(case: Case) -> dict[str, Any]:
    """One sample."""
    history, text, expected = split_last(case)
    ideal = ""
    if expected is not None:
        ideal = expected.tool_name or "" if expected.role == TurnRole.tool_call else expected.content
    return {"input": [*messages(history), {"role": "user", "content": text}], "ideal": ideal, OURS: case.ours}
