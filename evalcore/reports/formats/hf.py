"""Hugging Face datasets out: JSONL with a `messages` column of OpenAI chat messages (a conversation's
turns, a test's context followed by its expected turn), as `datasets.load_dataset("json", ...)` reads it
and chat fine-tuning takes it. Our fields travel in an `evalcore` column as one JSON text per row (a
column of mappings whose keys differ row to row is not a table Arrow can type).
"""

from __future__ import annotations

import json
from typing import Any

from evalcore.reports.formats.common import KIND, OURS, SPEC_KIND, TEST_KIND, Case, messages

NAME = "hf"
SUFFIX = "jsonl"
LAYOUT = "jsonl"
KINDS = (SPEC_KIND, KIND, TEST_KIND)


def record(case: Case) -> dict[str, Any]:
    """One row."""
    turns = [*case.turns, *([case.expected] if case.expected is not None else [])]
    return {"id": case.id, "messages": messages(turns), OURS: json.dumps(case.ours, ensure_ascii=False)}
