"""Offline breakdown detection by rules (seed 002, Section 3.3; issue 18, item 3: "offline: rules").

The offline stand-in for the LLM breakdown detector: the same output per assistant turn ({reasoning,
decision, score, types}, types by their taxonomy titles), from five rules that need no model:
- a crash: the dialogue ended with `chatbot_error` and this is its last turn -> "Chatbot Crash", score 0;
- an empty reply -> "Uninterpretable";
- a sentence the assistant said before (paraphrases included, by shared content words) -> "Repetition";
- a user question the reply neither answers (less than a third of its content words in common), declines
  nor asks back about -> "Ignore question";
- a sentence that says the opposite of an earlier sentence (the same content words, the other polarity):
  of the assistant's own -> "Self-contradiction", of the user's -> "Contradiction".
- a user request (an imperative: "Book it for me", "Just give me ...") the reply neither takes up nor
  declines, and asks nothing back about -> "Ignore request";
- a user turn that changes what it said before ("Actually, forget X, I want Y instead", "I meant Y",
  "it was the other one") answered without taking the change up (the new words, or a question back when
  it names none) -> "Information update failure" for task-oriented bots, "Ignore expectation" for
  conversational ones (whose 17 types lack the former).
These types hold for conversational and task-oriented bots alike. For task-oriented bots, two more:
- a vague user turn (a fragment of a few words that neither asks nor answers) acted on without asking
  what was meant -> "Clarification failure";
- a question or request about nothing the bot is for (few of its topic words among the chatbot info's
  words and the bot's own earlier words) answered as if it were in scope, with no refusal
  -> "Failure to recognize out-of-domain request".
"""

from __future__ import annotations

import re

from evalcore.documents.retrieval import tokenize
from evalcore.documents.sentences import split_sentences
from evalcore.generators.simulation import breakdown_checks
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
    "Ignore request": 0.4,
    "Information update failure": 0.4,
    "Ignore expectation": 0.5,
    "Failure to recognize out-of-domain request": 0.5,
    "Repetition": 0.5,
    "Clarification failure": 0.6,
    "Task performance failure": 0.3,
    "Lack of sociality": 0.3,
    "Lack of information": 0.4,
    "Ignore greeting": 0.6,
    "Ignore proposal": 0.5,
    "Topic transition error": 0.5,
    "Grammatical error": 0.6,
    "Redundancy": 0.6,
    "Lack of clarity": 0.6,
    "Lack of brevity": 0.7,
    "Failure to communicate capabilities": 0.6,
    "Failure to resolve out-of-domain request": 0.5,
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
# A sentence that asks the bot to do something (not a question): an imperative, or a plea.
_REQUEST = re.compile(
    r"^(?:(?:please|just)\W+)+[a-z]|^(?:(?:now|ok(?:ay)?|so|then)\W+)*(?:book|cancel|change|check|find|get|"
    r"give|pick|send|show|tell|make|list|sort|fix|arrange|reschedule|refund|transfer|connect|help|take)\b"
    r"|\b(?:i (?:want|need) you to|please)\b",
    re.IGNORECASE,
)
# A question of the bot's own in the first person ("How often should I top up sealant?", a heading of
# the passage it reads out) asks the user nothing.
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|my|me)\b", re.IGNORECASE)
# Words any question or request uses, whatever it is about: they say nothing of its domain.
_GENERIC = frozenset(
    tokenize("like going tell more know about happen happens next long usually take need ready cost any")
    + tokenize("conditions should get help good around here question random new again also want")
)
# A reply that turns a request down or says what the bot cannot do answers it too.
_DECLINE = re.compile(
    r"\b(?:can ?not|can'?t|unable|not able|no longer|sorry|only|outside|not something)\b", re.IGNORECASE
)
# A user turn that takes back or changes what it said (Listing 8: "modifying previous input", "frequently
# changing the intent"), and the words naming what it drops.
_CORRECTION = re.compile(
    r"\b(?:actually|instead|i meant|changed? my mind|scratch that|forget|no,? wait|said that wrong"
    r"|the other one|the opposite)\b",
    re.IGNORECASE,
)
_DROPPED = re.compile(
    r"\b(?:forget(?: about)?|not|instead of|rather than|said about)\s+([^.,;!?]+)", re.IGNORECASE
)
_CORRECTION_WORDS = frozenset(
    tokenize("actually instead meant mean changed mind scratch forget wait said wrong other one opposite")
    + tokenize("rather make want know about all sorry")
)
# Courtesy and assent carry no request of their own ("Yes, please.").
_FILLER = frozenset(tokenize("yes please thanks thank okay ok sure great fine hi hello hey just now"))


def _stem(word: str) -> str:
    """A word without its -ed or -ing ending ('returned', 'booking' -> 'return', 'book'), so an answer in
    another form of the question's words takes them up."""
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)]
    return word


def _words(text: str) -> set[str]:
    """A text's content words; a shouted text is read as words (tokenize keeps all-caps words whole, as
    ids, so "WHO WON THE MATCH" would keep its stopwords and match any reply)."""
    if sum(c.isupper() for c in text) > sum(c.islower() for c in text):
        text = text.lower()
    return {_stem(w) for w in tokenize(text)}


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
        for s in split_sentences(text, chat=True)
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
    return [w for s in split_sentences(text, chat=True) if len(w := _words(s)) >= MIN_REPEATED_WORDS]


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


def _asks_back(text: str) -> bool:
    """Whether a turn asks the user something (a question not in the first person)."""
    return any(x.endswith("?") and not _FIRST_PERSON.search(x) for x in _sentences_of(text))


def _ignored_question(reply: str, words: set[str], previous: DialogueTurn | None) -> bool:
    """The user asked, and the reply takes up less than `TAKEN_UP` of the question's content words, asks
    nothing back and does not decline (a refusal answers a question the bot is not for)."""
    if previous is None or previous.role != TurnRole.user or _asks_back(reply) or _DECLINE.search(reply):
        return False
    questions = [s for s in split_sentences(previous.content, chat=True) if s.endswith("?")]
    asked = set().union(*(_words(q) for q in questions)) - _GENERIC if questions else set()
    return bool(asked) and len(asked & words) < TAKEN_UP * len(asked)


def _sentences_of(text: str) -> list[str]:
    return split_sentences(text, chat=True)


def _ignored_request(reply: str, words: set[str], previous: DialogueTurn | None) -> bool:
    """The user asked the bot to do something (not a question), and the reply takes up less than
    `TAKEN_UP` of the request's content words, does not decline it and asks nothing back."""
    if previous is None or previous.role != TurnRole.user or _asks_back(reply) or _DECLINE.search(reply):
        return False
    wanted = [x for x in _sentences_of(previous.content) if not x.endswith("?") and _REQUEST.search(x)]
    asked = set().union(*(_words(x) for x in wanted)) - _FILLER if wanted else set()
    return bool(asked) and len(asked & words) < TAKEN_UP * len(asked)


def _update_ignored(reply: str, words: set[str], previous: DialogueTurn | None) -> bool:
    """The user changed what it said before, and the reply does not take the change up: with new details,
    it takes up less than `TAKEN_UP` of them or more of the dropped ones than of the new; with none ('it
    was the other one'), it goes on without asking what was meant."""
    if previous is None or previous.role != TurnRole.user or _asks_back(reply):
        return False
    changed = " ".join(x for x in _sentences_of(previous.content) if _CORRECTION.search(x))
    if not changed:
        return False
    dropped = set().union(*(_words(m) for m in _DROPPED.findall(changed)))
    new = _words(changed) - dropped - _CORRECTION_WORDS
    if not new:
        return True
    taken = len(new & words)
    return taken < TAKEN_UP * len(new) or len(dropped & words) > taken


def _out_of_domain(turns: list[DialogueTurn], index: int, domain: set[str]) -> bool:
    """The user's question or request is about nothing the bot is for (of its topic words, at least
    `MIN_CLAIM_WORDS`, less than `TAKEN_UP` are among the chatbot info's words and the bot's earlier
    words)."""
    if not domain or index < 1 or turns[index - 1].role != TurnRole.user:
        return False
    asked_for = [x for x in _sentences_of(turns[index - 1].content) if x.endswith("?") or _REQUEST.search(x)]
    asked = set().union(*(_words(x) for x in asked_for)) - _FILLER - _GENERIC if asked_for else set()
    known = domain.union(*(_words(t.content) for t in turns[: index - 1] if t.role == TurnRole.assistant))
    return len(asked) >= MIN_CLAIM_WORDS and len(asked & known) < TAKEN_UP * len(asked)


def _vague_input_acted_on(reply: str, turns: list[DialogueTurn], index: int) -> bool:
    """The user's turn was a fragment (at most VAGUE_WORDS words, no question, no courtesy, not an answer
    to a question of the bot) and the reply goes ahead without asking what was meant."""
    if index < 1 or turns[index - 1].role != TurnRole.user or _asks_back(reply):
        return False
    said = turns[index - 1].content.strip()
    answering = (
        index >= 2 and turns[index - 2].role == TurnRole.assistant and _asks_back(turns[index - 2].content)
    )
    return (
        not answering
        and "?" not in said
        and not _COURTESY.search(said)
        and 0 < len(said.split()) <= VAGUE_WORDS
    )


def _annotation(findings: dict[str, str]) -> BreakdownAnnotation:
    if not findings:
        return BreakdownAnnotation(
            reasoning="Offline rules: none of the breakdowns the rules can see from the words.",
            score=1.0,
            decision=BreakdownDecision.no_breakdown,
        )
    return BreakdownAnnotation(
        reasoning="Offline rules: " + " ".join(findings.values()),
        score=min(SCORES[t] for t in findings),
        decision=BreakdownDecision.breakdown,
        breakdown_types=list(findings),
    )


def judge_turn(
    dialogue: Dialogue, index: int, task_oriented: bool = False, domain: str = ""
) -> BreakdownAnnotation:
    """The rules' verdict on the assistant turn at `index` (from 0), given the turns before it; the
    task-oriented rules only for a task-oriented bot, the out-of-domain one only given the chatbot info's
    text (`domain`)."""
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
    previous = turns[index - 1] if index else None
    if _ignored_question(reply, words, previous):
        findings["Ignore question"] = "It does not take up the user's question."
    if _ignored_request(reply, words, previous):
        findings["Ignore request"] = "It neither acts on nor declines the user's request."
    if _update_ignored(reply, words, previous):
        update = "Information update failure" if task_oriented else "Ignore expectation"
        findings[update] = "It does not take up what the user changed."
    if (said := _contradicts(reply, turns[:index], TurnRole.assistant)) is not None:
        findings["Self-contradiction"] = f"It says the opposite of its own turn {said}."
    if (said := _contradicts(reply, turns[:index], TurnRole.user)) is not None:
        findings["Contradiction"] = f"It says the opposite of the user's turn {said}."
    if task_oriented and _vague_input_acted_on(reply, turns, index):
        findings["Clarification failure"] = "It acts on a vague user turn without asking what was meant."
    out_of_domain = task_oriented and _out_of_domain(turns, index, _words(domain))
    declined = bool(_DECLINE.search(reply))
    if out_of_domain and not declined:
        findings["Failure to recognize out-of-domain request"] = (
            "It answers a request about something it is not for as if it were."
        )
    findings |= breakdown_checks.findings(turns, index, task_oriented, out_of_domain and declined)
    return _annotation(findings)


def detect_offline(
    dialogue: Dialogue, task_oriented: bool = False, domain: str = ""
) -> list[BreakdownAnnotation | None]:
    """One annotation per turn: the rules' verdict on each assistant turn, None for user turns."""
    return [
        judge_turn(dialogue, i, task_oriented, domain) if turn.role == TurnRole.assistant else None
        for i, turn in enumerate(dialogue.turns)
    ]


def annotate_offline(dialogue: Dialogue, task_oriented: bool = False, domain: str = "") -> Dialogue:
    """The dialogue with every unannotated assistant turn annotated by the rules; annotations already
    there (a crash recorded by the simulator, a model's verdict) are kept."""
    verdicts = detect_offline(dialogue, task_oriented, domain)
    turns = [
        turn
        if turn.breakdown is not None or verdict is None
        else turn.model_copy(update={"breakdown": verdict})
        for turn, verdict in zip(dialogue.turns, verdicts, strict=True)
    ]
    return dialogue.model_copy(update={"turns": turns})
