"""What can be observed in a tool-use conversation's turns (seed 004, Section 2.1's dimensions seen from
outside): the offline path of every judge and rubric step reads these signals, never a conversation's
intended labels or world state.

Each signal belongs to one evaluation area and leans POS or NEG. Some
situations leave no trace in the turns (a tool that lies convincingly): no signal sees them, and
evaluators that read only the turns miss them, as the seed's do. A skipped step shows when the tools'
prerequisites are known (a booking whose description says an availability check must come first):
`observe` takes them, from the tool descriptions of the conversation's group.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from evalcore.models import Turn, TurnRole

USER_SATISFACTION = "User Satisfaction"
COMMUNICATION = "Communication Clarity"
TOOL_USAGE = "Appropriate Tool Usage"
ERROR_HANDLING = "Error Handling"
TASK_COMPLETION = "Task Completion"
AREAS = (TASK_COMPLETION, COMMUNICATION, ERROR_HANDLING, TOOL_USAGE, USER_SATISFACTION)  # Table 6's five

POSITIVE = re.compile(r"\b(thanks?|thank you|perfect|great|exactly what i needed|helps a lot)\b", re.I)
NEGATIVE = re.compile(
    r"\b(not what i|not helpful|frustrat|annoying|irritating|useless|not great|can't be right|don't trust|"
    r"didn't tell me|doesn't answer|why didn't you|didn't work|too much hassle|seriously|not happy)", re.I
)  # fmt: skip
CONFUSED = re.compile(r"\b(i'm lost|i can't read|what does (all )?(of )?this (actually )?mean|confus)", re.I)
REPEATED = re.compile(r"\b(already (gave|told)|asking again|again\?)", re.I)
FAILED = re.compile(r"\b(timeout|timed out|unavailable|failed)\b", re.I)
SUCCESS_WORDS = re.compile(r"\b(done|all set|went through|confirm|here is what i found|successfully)\b", re.I)
SORRY = re.compile(r"\b(sorry|apologi[sz]e|unfortunately)\b", re.I)
ALTERNATIVE = re.compile(r"\b(instead|try again|colleague|alternative|another)\b", re.I)
SECURITY_ASK = re.compile(r"\b(security|verify|date of birth|last four digits)\b", re.I)
RAW_LOG = re.compile(r"HTTP/\d|trace_id|request=|response=")
TECHNICAL = re.compile(r"\bschema\b|\bpayload\b|\bendpoint\b|field `", re.I)
ASKS_FOR = re.compile(r"(?:tell me|what was|give me) (?:your |the )?([a-z ]+?)(?: first| again)?\?", re.I)


@dataclass(frozen=True)
class Signal:
    """An observable property of a conversation, as an evaluation reason states it."""

    code: str
    area: str
    polarity: str  # "POS" or "NEG"
    statement: str


SIGNALS = {s.code: s for s in (
    Signal("user_thanks", USER_SATISFACTION, "POS", "The user explicitly thanks the agent or says the answer was what they needed."),  # noqa: E501
    Signal("user_complaint", USER_SATISFACTION, "NEG", "The user expresses frustration, disappointment or distrust."),  # noqa: E501
    Signal("user_confused", COMMUNICATION, "NEG", "The user cannot understand the agent's reply."),
    Signal("user_repeats", USER_SATISFACTION, "NEG", "The user has to repeat information given earlier."),
    Signal("concise_reply", COMMUNICATION, "POS", "The agent summarises the tool output briefly in plain words."),  # noqa: E501
    Signal("raw_log_in_reply", COMMUNICATION, "NEG", "The agent pastes raw request/response logs or JSON instead of an answer."),  # noqa: E501
    Signal("technical_dump", COMMUNICATION, "NEG", "The agent buries the answer in technical schema details."),  # noqa: E501
    Signal("grounded_call", TOOL_USAGE, "POS", "Every tool argument comes from what the user said."),
    Signal("ungrounded_argument", TOOL_USAGE, "NEG", "The agent passes a tool argument the user never gave (guessed or changed)."),  # noqa: E501
    Signal("unused_tool_result", TOOL_USAGE, "NEG", "The agent makes tool calls whose results it never uses."),  # noqa: E501
    Signal("skipped_prerequisite", TOOL_USAGE, "NEG", "The agent calls a tool without the call that must come before it."),  # noqa: E501
    Signal("unneeded_verification", TOOL_USAGE, "NEG", "The agent demands security checks for a low-risk request."),  # noqa: E501
    Signal("reasks_given_info", TASK_COMPLETION, "NEG", "The agent asks again for information the user already gave."),  # noqa: E501
    Signal("reply_matches_result", TASK_COMPLETION, "POS", "The agent's reply reports the tool output faithfully."),  # noqa: E501
    Signal("reply_contradicts_result", TASK_COMPLETION, "NEG", "The agent states a value that contradicts the tool output."),  # noqa: E501
    Signal("success_after_failure", ERROR_HANDLING, "NEG", "The agent reports success or results after the tool failed or returned nothing."),  # noqa: E501
    Signal("mismatch_passed_on", ERROR_HANDLING, "NEG", "The tool answered for a different value than requested and the agent passed it on."),  # noqa: E501
    Signal("gives_up", ERROR_HANDLING, "NEG", "After a tool failure the agent neither explains nor offers a way forward."),  # noqa: E501
    Signal("transparent_error", ERROR_HANDLING, "POS", "After a tool failure the agent says so and proposes an alternative."),  # noqa: E501
)}  # fmt: skip


def _parsed(content: str) -> Any:
    try:
        return json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return None


def _scalars(value: Any) -> list[str]:
    """Every scalar inside a JSON value, as text."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _scalars(v)]
    if isinstance(value, list):
        return [s for v in value for s in _scalars(v)]
    if value is None or isinstance(value, bool):
        return []
    return [str(value)]


def _failed(content: str) -> bool:
    """An empty answer, an error object, an HTTP error status, or a failure in the log."""
    text = content.strip()
    data = _parsed(text)
    if text in ("", "null", "{}", "[]"):
        return True
    if isinstance(data, dict) and (
        "error" in data or (isinstance(data.get("status"), int) and data["status"] >= 400)
    ):
        return True
    return bool(FAILED.search(text))


def _field_words(name: str) -> str:
    return re.escape(name.replace("_", " "))


def _conflicts(name: str, value: Any, text: str) -> bool:
    """Whether the text states a value for the field ('start date: 2026-06-12', 'the half day is none')
    and never the given one."""
    shown = re.escape(say_value(value))
    # (?!\w), not \b: a value may end in punctuation ("Customer wants to get help.")
    if re.search(rf"\b{_field_words(name)}(?::| is| must be) {shown}(?!\w)", text, re.I):
        return False
    return bool(re.search(rf"\b{_field_words(name)}(?::| is| must be) \S", text, re.I))


def _ungrounded(args: dict[str, Any], said: str) -> bool:
    """Whether an argument differs from what the user stated for it, or was never said at all."""
    for name, value in args.items():
        if _conflicts(name, value, said):
            return True
        stated = re.search(rf"\b{_field_words(name)}(?::| is| must be) ", said, re.I)
        if not stated and any(v.lower() not in said.lower() for v in _scalars(value)):
            return True
    return False


def say_value(value: Any) -> str:
    """A value as the turns write it (booleans as yes/no, lists comma-separated)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(say_value(v) for v in value)
    return str(value)


def _skipped(turns: list[Turn], prerequisites: dict[str, list[str]]) -> bool:
    """Whether a tool is called before any call of a tool that must come first."""
    called: set[str] = set()
    for turn in turns:
        if turn.role == TurnRole.tool_call and turn.tool_name:
            needed = prerequisites.get(turn.tool_name) or []
            if needed and not called & set(needed):
                return True
            called.add(turn.tool_name)
    return False


def observe(turns: list[Turn], prerequisites: dict[str, list[str]] | None = None) -> set[str]:
    """The codes of the signals the turns show; `prerequisites` (tool -> tools that must be called
    before it) lets a skipped call show."""
    found: set[str] = {"skipped_prerequisite"} if _skipped(turns, prerequisites or {}) else set()
    users = [t.content for t in turns if t.role == TurnRole.user]
    if users and POSITIVE.search(users[-1]) and not NEGATIVE.search(users[-1]):
        found.add("user_thanks")
    found |= {"user_complaint"} if any(NEGATIVE.search(u) for u in users) else set()
    found |= {"user_confused"} if any(CONFUSED.search(u) for u in users) else set()
    found |= {"user_repeats"} if any(REPEATED.search(u) for u in users) else set()
    calls = [i for i, t in enumerate(turns) if t.role == TurnRole.tool_call]
    grounded = bool(calls)
    for n, i in enumerate(calls):
        args = turns[i].arguments or {}
        said = " ".join(t.content for t in turns[:i] if t.role == TurnRole.user)
        if _ungrounded(args, said):
            found.add("ungrounded_argument")
            grounded = False
        result = turns[i + 1] if i + 1 < len(turns) and turns[i + 1].role == TurnRole.tool_result else None
        if result is None:
            continue
        next_call = calls[n + 1] if n + 1 < len(calls) else len(turns)
        replies = [t.content for t in turns[i + 2 : next_call] if t.role == TurnRole.assistant]
        reply = replies[0] if replies else ""
        if _failed(result.content):
            if reply and SUCCESS_WORDS.search(reply) and not SORRY.search(reply):
                found.add("success_after_failure")
            elif reply and SORRY.search(reply) and ALTERNATIVE.search(reply):
                found.add("transparent_error")
            elif reply:
                found.add("gives_up")
            continue
        data = _parsed(result.content)
        values = [v for v in _scalars(data) if len(v) > 2] if data is not None else []
        if isinstance(data, dict):
            if any(name in data and str(data[name]) != str(asked) for name, asked in args.items()):
                found.add("mismatch_passed_on")
            if reply and any(
                _conflicts(name, value, reply) for name, value in data.items() if not isinstance(value, dict)
            ):
                found.add("reply_contradicts_result")
        later = [t.content for t in turns[i + 2 :] if t.role == TurnRole.assistant]
        data_values = [v for v in values if any(c.isdigit() for c in v)]  # ids, amounts, dates: not words
        if next_call < len(turns) and not any(v in text for text in later for v in data_values):
            found.add("unused_tool_result")
        if reply and any(v in reply for v in values):
            found.add("reply_matches_result")
    if grounded:
        found.add("grounded_call")
    for k, turn in enumerate(turns):
        if turn.role != TurnRole.assistant:
            continue
        if RAW_LOG.search(turn.content):
            found.add("raw_log_in_reply")
        elif TECHNICAL.search(turn.content) and len(turn.content.split()) > 40:
            found.add("technical_dump")
        elif SECURITY_ASK.search(turn.content) and (not calls or k < calls[0]):
            found.add("unneeded_verification")
        asked = ASKS_FOR.search(turn.content)
        before = " ".join(t.content for t in turns[:k] if t.role == TurnRole.user).lower()
        if asked and asked.group(1).strip().lower() in before:
            found.add("reasks_given_info")
    if calls and "reply_matches_result" in found and not found & {"raw_log_in_reply", "technical_dump"}:
        found.add("concise_reply")
    return found
