"""promptfoo test cases out: a YAML list for a config's `tests:` (`tests: file://tests.yaml`).

`vars.input` is the last user message, `vars.history` the chat messages before it; our assertions become
promptfoo's where one means the same (contains -> icontains, not_contains -> not-icontains,
contains_any/all -> icontains-any/all, regex, not_regex, max_words -> a javascript word count), the
expected reply an `llm-rubric`, an expected tool call a `tool-call-f1` naming the tool. Ours that
promptfoo has no form for (cannot_answer, answers) travel only in `metadata.evalcore`, with the rest of
our fields.

Personas are tests for promptfoo's simulated user (`defaultTest.provider: promptfoo:simulated-user` in
the config): `vars.instructions` is who the persona is and what it wants done; the persona travels whole
in `metadata.evalcore`.
"""

from __future__ import annotations

from typing import Any

from evalcore.models import Persona, TurnRole
from evalcore.reports.formats.common import KIND as CONVERSATION
from evalcore.reports.formats.common import OURS, SPEC_KIND, TEST_KIND, Case, messages, split_last

NAME = "promptfoo"
SUFFIX = "yaml"
LAYOUT = "yaml"
PERSONA_KIND = "persona"
KINDS = (SPEC_KIND, CONVERSATION, TEST_KIND, PERSONA_KIND)
MAX_WORDS_JS = "output.trim().split(/\\s+/).length <= {n}"  # read back by evalcore.inputs.formats.promptfoo
TEXT = {
    "contains": "icontains",
    "not_contains": "not-icontains",
    "bot_uttered": "icontains",
    "bot_did_not_utter": "not-icontains",
}
PATTERN = {
    "regex": "regex",
    "not_regex": "not-regex",
    "bot_uttered": "regex",
    "bot_did_not_utter": "not-regex",
}
LISTS = {"contains_any": "icontains-any", "contains_all": "icontains-all"}


def assertion(check: dict[str, Any]) -> dict[str, Any] | None:
    """promptfoo's form of one of our assertions, or None when it has none."""
    kind = check.get("kind")
    if kind in TEXT and isinstance(check.get("text"), str):
        return {"type": TEXT[kind], "value": check["text"]}
    if kind in PATTERN and isinstance(check.get("pattern"), str):
        return {"type": PATTERN[kind], "value": check["pattern"]}
    if kind in LISTS and isinstance(check.get("texts"), list):
        return {"type": LISTS[kind], "value": check["texts"]}
    if kind == "max_words" and isinstance(check.get("value"), int):
        return {"type": "javascript", "value": MAX_WORDS_JS.format(n=check["value"])}
    return None


def record(case: Case) -> dict[str, Any]:
    """One promptfoo test case."""
    history, text, expected = split_last(case)
    variables: dict[str, Any] = {"input": text}
    if history:
        variables["history"] = messages(history)
    checks = [a for a in (assertion(c) for c in case.assertions) if a is not None]
    if expected is not None and expected.role == TurnRole.tool_call:
        checks.append({"type": "tool-call-f1", "value": [expected.tool_name or ""]})
    elif expected is not None and expected.content:
        checks.append({"type": "llm-rubric", "value": expected.content})
    return {"description": case.title, "vars": variables, "assert": checks, "metadata": {OURS: case.ours}}


def _who(persona: Persona) -> str:
    """Who the persona is, as instructions to a simulated user."""
    profile = persona.profile
    if isinstance(profile, str):
        return profile
    lines = [f"You are {profile.name}" + (f", {profile.age}" if profile.age is not None else "") + "."]
    lines += profile.background_info
    if profile.personality:
        lines.append("Personality: " + ", ".join(f"{k} {v}" for k, v in profile.personality.items()))
    if profile.interaction_style:
        lines.append("How you write: " + "; ".join(profile.interaction_style))
    return "\n".join(lines)


def persona_record(item_id: str, persona: Persona) -> dict[str, Any]:
    """One test for promptfoo's simulated user, played as the persona."""
    who = _who(persona)
    instructions = f"{who}\n\nWhat you want done: {persona.task}".strip()
    ours = {"kind": PERSONA_KIND, "id": item_id, "persona": persona.model_dump(mode="json")}
    title = f"persona {persona.persona_id} ({persona.type})"
    return {"description": title, "vars": {"instructions": instructions}, "metadata": {OURS: ours}}
