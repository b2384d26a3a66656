"""Offline breakdown detection by rules (seed 002, Section 3.3; issue 18, item 3: "offline: rules").

The offline stand-in for the LLM breakdown detector: the same output per assistant turn ({reasoning,
decision, score, types}, types by their taxonomy titles), from five rules that need no model:
- a crash: the dialogue ended with `chatbot_error` and this is its last turn -> "Chatbot Crash", score 0;
- an empty reply -> "Uninterpretable";
- a sentence the assistant said before (paraphrases included, by shared content words) -> "Repetition";
- a user question the reply neither answers (less than a third of its content words in common) nor asks
  back about -> "Ignore question";
- a sentence that says the opposite of an earlier sentence (the same content words, the other polarity):
  of the assistant's own -> "Self-contradiction", of the user's -> "Contradiction".
These five types are among the first 17, so they hold for conversational and task-oriented bots alike.
For task-oriented bots, a sixth:
- a vague user turn (a fragment of a few words that neither asks nor answers) acted on without asking
  what was meant -> "Clarification failure".
"""

from __future__ import annotations

import re

from evalcore.documents.retrieval import tokenize
from evalcore.generators.simulation.records import (
    BreakdownAnnotation,
    BreakdownDecision,
    Dialogue,
    DialogueTurn,
    FinishReason,
)
from evalcore.generators.simulation.taxonomy import CHATBOT_CRASH_TITLE
from evalcore.models import TurnRole

# Turn quality per rule (1 = fine, 0 = a crash), ordered by how badly each breaks the dialogue: the
# detector's scores in the published run lie between 0.5 and 0.8 for breakdowns that let it go on.
SCORES = {
    CHATBOT_CRASH_TITLE: 0.0,
    "Uninterpretable": 0.1,
    "Self-contradiction": 0.3,
    "Contradiction": 0.3,
    "Ignore question": 0.4,
    "Repetition": 0.5,
    "Clarification failure": 0.6,
}
# Share of content words two sentences must have in common to count as the same (Jaccard): high enough
# that two sentences on one topic are not a repetition, low enough that a reworded one is.
REPETITION_OVERLAP = 0.8
# Sentences with fewer content words ("Okay!", "Thanks, goodbye!") are allowed to recur.
MIN_REPEATED_WORDS = 4
# Sentences with fewer content words are too vague to contradict each other.
MIN_CLAIM_WORDS = 2
# Share of a question's content words a reply must take up to answer it: one word in common out of four
# ("what's the weather like tomorrow?" answered by a passage that says "like") is a retrieval bot
# matching a stray word, not an answer; one of two ("is there a cost for returns?") is on the question.
TAKEN_UP = 1 / 3
# A user turn of at most this many words that neither asks nor answers is too vague to act on.
VAGUE_WORDS = 3
_COURTESY = re.compile(
    r"\b(?:thanks?|thank you|hi|hello|hey|bye|ok(?:ay)?|yes|no|sure|great|cool|fine)\b", re.I
)
NEGATIONS = frozenset({"not", "no", "never", "cannot", "nothing", "none", "nobody", "nowhere"})
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _words(text: str) -> set[str]:
    return set(tokenize(text))


def _claim(sentence: str) -> tuple[frozenset[str], bool]:
    """A sentence's content words without its negations, and whether it is negated (odd negations)."""
    words = [w.casefold() for w in _WORD.findall(sentence)]
    negations = sum(1 for w in words if w in NEGATIONS or w.endswith(("n't", "n’t")))
    plain = " ".join(re.sub(r"n['’]t$", "", w) for w in words if w not in NEGATIONS)
    return frozenset(tokenize(plain)), negations % 2 == 1


def _claims(text: str) -> list[tuple[frozenset[str], bool]]:
    """The statements of a text (questions claim nothing), each as `_claim` reads it."""
    return [
        c
        for s in _SENTENCE.split(text.strip())
        if not s.rstrip().endswith("?") and len((c := _claim(s))[0]) >= MIN_CLAIM_WORDS
    ]


def _contradicts(text: str, earlier: list[DialogueTurn], role: TurnRole) -> int | None:
    """Turn id (from 1) of the latest earlier turn of `role` one of whose statements `text` negates."""
    mine = _claims(text)
    for position in range(len(earlier) - 1, -1, -1):
        if earlier[position].role != role:
            continue
        for words, negated in _claims(earlier[position].content):
            if any(words == w and negated != n for w, n in mine):
                return position + 1
    return None


def _sentences(text: str) -> list[set[str]]:
    return [w for s in _SENTENCE.split(text.strip()) if len(w := _words(s)) >= MIN_REPEATED_WORDS]


def _repeats(reply: str, turns: list[DialogueTurn], before: int) -> int | None:
    """Turn id (from 1) of an earlier assistant turn that says one of the reply's sentences again, in
    (nearly) the same content words, if any."""
    mine = _sentences(reply)
    for j in range(before):
        if turns[j].role != TurnRole.assistant:
            continue
        for other in _sentences(turns[j].content):
            if any(len(w & other) / len(w | other) >= REPETITION_OVERLAP for w in mine):
                return j + 1
    return None


def _ignored_question(reply: str, words: set[str], previous: DialogueTurn | None) -> bool:
    """The user asked, and the reply takes up less than `TAKEN_UP` of the question's content words and
    asks nothing back."""
    if previous is None or previous.role != TurnRole.user or "?" in reply:
        return False
    questions = [s for s in _SENTENCE.split(previous.content.strip()) if s.rstrip().endswith("?")]
    asked = set().union(*(_words(q) for q in questions)) if questions else set()
    return bool(asked) and len(asked & words) < TAKEN_UP * len(asked)


def _vague_input_acted_on(reply: str, turns: list[DialogueTurn], index: int) -> bool:
    """The user's turn was a fragment (at most VAGUE_WORDS words, no question, no courtesy, not an answer
    to a question of the bot) and the reply goes ahead without asking what was meant."""
    if index < 1 or turns[index - 1].role != TurnRole.user or "?" in reply:
        return False
    said = turns[index - 1].content.strip()
    answering = index >= 2 and turns[index - 2].role == TurnRole.assistant and "?" in turns[index - 2].content
    return (
        not answering
        and "?" not in said
        and not _COURTESY.search(said)
        and 0 < len(said.split()) <= VAGUE_WORDS
    )


def _annotation(findings: dict[str, str]) -> BreakdownAnnotation:
    if not findings:
        return BreakdownAnnotation(
            reasoning="Offline rules: no crash, empty reply, repetition, ignored question or contradiction.",
            score=1.0,
            decision=BreakdownDecision.no_breakdown,
        )
    return BreakdownAnnotation(
        reasoning="Offline rules: " + " ".join(findings.values()),
        score=min(SCORES[t] for t in findings),
        decision=BreakdownDecision.breakdown,
        breakdown_types=list(findings),
    )


def judge_turn(dialogue: Dialogue, index: int, task_oriented: bool = False) -> BreakdownAnnotation:
    """The rules' verdict on the assistant turn at `index` (from 0), given the turns before it; the
    task-oriented rule only for a task-oriented bot."""
    turns = dialogue.turns
    reply = turns[index].content
    crashed = dialogue.finish_reason == FinishReason.chatbot_error and index == len(turns) - 1
    if crashed:
        return _annotation(
            {CHATBOT_CRASH_TITLE: f"The target failed with an error: {dialogue.error or 'unknown'}."}
        )
    if not reply.strip():
        return _annotation({"Uninterpretable": "The reply is empty."})
    findings: dict[str, str] = {}
    words = _words(reply)
    if (same := _repeats(reply, turns, index)) is not None:
        findings["Repetition"] = f"It repeats turn {same}."
    if _ignored_question(reply, words, turns[index - 1] if index else None):
        findings["Ignore question"] = "It does not take up the user's question."
    if (said := _contradicts(reply, turns[:index], TurnRole.assistant)) is not None:
        findings["Self-contradiction"] = f"It says the opposite of its own turn {said}."
    if (said := _contradicts(reply, turns[:index], TurnRole.user)) is not None:
        findings["Contradiction"] = f"It says the opposite of the user's turn {said}."
    if task_oriented and _vague_input_acted_on(reply, turns, index):
        findings["Clarification failure"] = "It acts on a vague user turn without asking what was meant."
    return _annotation(findings)


def detect_offline(dialogue: Dialogue, task_oriented: bool = False) -> list[BreakdownAnnotation | None]:
    """One annotation per turn: the rules' verdict on each assistant turn, None for user turns."""
    return [
        judge_turn(dialogue, i, task_oriented) if turn.role == TurnRole.assistant else None
        for i, turn in enumerate(dialogue.turns)
    ]


def annotate_offline(dialogue: Dialogue, task_oriented: bool = False) -> Dialogue:
    """The dialogue with every unannotated assistant turn annotated by the rules; annotations already
    there (a crash recorded by the simulator, a model's verdict) are kept."""
    verdicts = detect_offline(dialogue, task_oriented)
    turns = [
        turn
        if turn.breakdown is not None or verdict is None
        else turn.model_copy(update={"breakdown": verdict})
        for turn, verdict in zip(dialogue.turns, verdicts, strict=True)
    ]
    return dialogue.model_copy(update={"turns": turns})
