"""The dialogue breakdown taxonomy of seed 002 (ChatChecker, Section 3.3): keys and titles, in its order.

The first 17 types are the conversational errors of Higashinaka et al. (2021); task-oriented bots are also
judged against the 9 that ChatChecker adds. Types are stored and shown by their titles, as detectors
return them; a title that is not in this table is kept as given
(see ../shared/reference/breakdown_taxonomy.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BreakdownType:
    """One type of the taxonomy: its key in statistics files and its title in annotations."""

    key: str
    title: str
    task_oriented_only: bool


_CONVERSATIONAL = (
    ("uninterpretable", "Uninterpretable"),
    ("grammatical_error", "Grammatical error"),
    ("semantic_error", "Semantic error"),
    ("wrong_information", "Wrong information"),
    ("ignore_question", "Ignore question"),
    ("ignore_request", "Ignore request"),
    ("ignore_proposal", "Ignore proposal"),
    ("ignore_greeting", "Ignore greeting"),
    ("ignore_expectation", "Ignore expectation"),
    ("unclear_intention", "Unclear intention"),
    ("topic_transition_error", "Topic transition error"),
    ("lack_of_information", "Lack of information"),
    ("self_contradiction", "Self-contradiction"),
    ("contradiction", "Contradiction"),
    ("repetition", "Repetition"),
    ("lack_of_sociality", "Lack of sociality"),
    ("lack_of_common_sense", "Lack of common sense"),
)
_TASK_ORIENTED = (
    ("in_domain_task_failure", "Task performance failure"),
    ("update_info_failure", "Information update failure"),
    ("clarification_failure", "Clarification failure"),
    ("redundancy", "Redundancy"),
    ("lack_of_brevity", "Lack of brevity"),
    ("lack_of_clarity", "Lack of clarity"),
    ("failure_to_recognize_out_of_domain", "Failure to recognize out-of-domain request"),
    ("failure_to_communicate_capabilities", "Failure to communicate capabilities"),
    ("failure_to_resolve_out_of_domain", "Failure to resolve out-of-domain request"),
)

TAXONOMY: tuple[BreakdownType, ...] = tuple(
    [BreakdownType(k, t, False) for k, t in _CONVERSATIONAL]
    + [BreakdownType(k, t, True) for k, t in _TASK_ORIENTED]
)

# The pseudo-type of a target that raised instead of answering. ChatChecker matches its title exactly
# (case included), unlike the taxonomy's types, so the counting code keeps that difference.
CHATBOT_CRASH_KEY = "chatbot_crash"
CHATBOT_CRASH_TITLE = "Chatbot Crash"

TASK_ORIENTED_TYPE = "task-oriented"


def breakdown_types(task_oriented: bool) -> tuple[BreakdownType, ...]:
    """The types a bot is judged against: all 26 for task-oriented bots, the first 17 otherwise."""
    return TAXONOMY if task_oriented else tuple(t for t in TAXONOMY if not t.task_oriented_only)


def is_task_oriented(chatbot_type: str | None) -> bool:
    """A bot is task-oriented when its `chatbot_info.type` says so (the default). ChatChecker's files say
    exactly 'task-oriented' or 'conversational'; a card may describe its bot in more words ('RAG and
    tool-using task-oriented assistant'), so the words are looked for, not the whole value."""
    return chatbot_type is None or TASK_ORIENTED_TYPE in chatbot_type.lower()


def known_title(title: str) -> bool:
    """Whether a breakdown type title names a type of the taxonomy (or the crash pseudo-type)."""
    lowered = title.lower()
    return lowered == CHATBOT_CRASH_TITLE.lower() or any(t.title.lower() == lowered for t in TAXONOMY)
