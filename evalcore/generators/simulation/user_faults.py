"""Simulator-fault detection (issue 31, item 1): did the simulated user, not the bot, break the dialogue?

Each user turn is checked against the persona that played it (its briefing: task, background, style, type)
and the dialogue so far. Six kinds of fault, as tau-bench and ChatChecker users commit them:

- `goal_drift`: a user turn about none of the goal, the briefing or anything said before;
- `invented_fact`: the user states a number, age or name that contradicts its briefing;
- `premature_end`: the user ends the dialogue while the bot still waits on it (a question or a request to
  confirm that is not "anything else?");
- `broke_character`: the user speaks as an assistant, a model or a simulator;
- `repetition`: the user says again, nearly word for word, what it said before (unless its persona is
  told to repeat itself);

Drift and repetition are checked on standard personas only: a challenging persona is told to ask
"repetitive or irrelevant questions" (seed 002, Listing 8), so there they are the persona, not a fault;
an adversarial one is told to ask outside the bot's scope and to try again when refused. Nor is a probe
of an adversarial persona (adversarial.is_probe: claiming to be staff, injecting instructions, giving
another customer's name) an invented fact or a break of character: it is what the persona was asked to do.
- `too_cooperative`: a challenging persona that never once shows the behaviour its briefing asks for, or
  an adversarial one that never once probes.

`detect_user_faults` is the offline rule set; `DETECT_USER_FAULTS` is the same check as an LLM task
(prompt `detect_user_faults.md`) with the rules as its offline implementation. A dialogue with any fault
is one whose breakdowns and verdict the lead may discount.
"""

from __future__ import annotations

import random
import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from evalcore.generators.simulation.adversarial import is_probe
from evalcore.generators.simulation.personas import profile_fields
from evalcore.generators.simulation.records import Dialogue, DialogueTurn, FinishReason
from evalcore.llm.tasks import Task
from evalcore.models import TurnRole
from evalcore.models.common import Record


class UserFaultKind(StrEnum):
    """What the simulated user did wrong."""

    goal_drift = "goal_drift"
    invented_fact = "invented_fact"
    premature_end = "premature_end"
    broke_character = "broke_character"
    repetition = "repetition"
    too_cooperative = "too_cooperative"


class UserFault(Record):
    """One simulator fault: its kind, the user turn (index in the dialogue, from 0) and why."""

    kind: UserFaultKind = Field(description="The kind of fault.")
    turn: int = Field(ge=0, description="Index of the user turn in the dialogue, counted from 0.")
    reason: str = Field(description="Why this turn is the simulator's fault, quoting it.")


class UserFaults(BaseModel):
    """The checker's answer for one dialogue: every fault found, none when the user played its part."""

    faults: list[UserFault] = Field(default_factory=list, description="Faults, in turn order.")


_WORD = re.compile(r"[a-z][a-z']+")
_STOP = frozenset(
    [
        "about",
        "after",
        "again",
        "also",
        "been",
        "before",
        "being",
        "could",
        "does",
        "doing",
        "down",
        "from",
        "have",
        "having",
        "here",
        "into",
        "just",
        "like",
        "more",
        "most",
        "much",
        "only",
        "other",
        "over",
        "same",
        "should",
        "some",
        "such",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "under",
        "very",
        "what",
        "when",
        "where",
        "which",
        "while",
        "will",
        "with",
        "would",
        "your",
        "yours",
        "you're",
        "i'm",
        "it's",
        "that's",
        "want",
        "need",
        "know",
        "think",
        "really",
        "thanks",
        "thank",
        "please",
        "okay",
        "sure",
        "great",
        "good",
        "well",
        "make",
        "made",
        "help",
        "tell",
        "give",
        "take",
        "time",
        "things",
        "thing",
        "something",
        "anything",
        "yes",
    ]
)
_ASSISTANT = re.compile(
    r"\b(as an ai|language model|i am an ai|i'm an ai|how (?:can|may) i (?:help|assist) you|"
    r"simulated user|user simulator|my (?:system )?instructions|my persona|as a chatbot|i'm a chatbot|"
    r"i am a chatbot|as your assistant|i'm here to help you)\b"
)
_FAREWELL = re.compile(r"\b(bye|goodbye|that's all|i'm done|gotta go|have to go|never ?mind|forget it)\b")
_OPEN_ENDED = re.compile(r"\b(anything else|something else|any other|further questions|help with today)\b")
_REPEATS_ON_PURPOSE = re.compile(r"repeat|repetit|same question|again and again")
_NUMBER_NOUN = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+([a-z]+)")
_AGE = re.compile(r"\bi(?:'m| am) (\d{1,3})(?: years old)?\b")
_NAME = re.compile(r"\b[Mm]y name is ([A-Z][a-z]+)")
_NUMBERS = {
    w: str(i)
    for i, w in enumerate(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    )
}
# Signs that a user is being difficult: what challenging personas' styles ask for (impatient, rude, vague,
# sarcastic, contradictory, questioning the bot), as surface marks a turn can carry.
_CHALLENGING = re.compile(
    r"!|\?\?|\b(no|not|don't|didn't|wrong|hurry|quick|quickly|faster|now|already|seriously|"
    r"whatever|ugh|why|really\?|useless|annoying|again|actually|wait|instead|changed? my mind|huh|what\?)\b",
    re.IGNORECASE,
)


# A reply to the bot's question may bring a few new words ("At my desk every evening."): a drift is a turn
# with more than that, none of them about the goal, the briefing or the dialogue so far.
_DRIFT_WORDS = 5
# Restating a short goal when asked is no fault; repeating a whole sentence is.
_REPEAT_WORDS = 6


def _stem(word: str) -> str:
    return word[:5]


def content_words(text: str) -> set[str]:
    """Stems of the words of `text` that carry its topic (4+ letters, no function words)."""
    return {_stem(w) for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in _STOP}


def briefing_text(persona: dict[str, Any] | None) -> str:
    """The persona's task, background and style as one text (ChatChecker's persona shape)."""
    if not persona:
        return ""
    profile = profile_fields(persona)
    parts = [str(persona.get("task") or ""), str(profile.get("name") or "")]
    for key in ("background_info", "interaction_style"):
        parts += [str(x) for x in profile.get(key) or []]
    return " ".join(parts)


def _users(dialogue: Dialogue) -> list[tuple[int, DialogueTurn]]:
    return [(i, t) for i, t in enumerate(dialogue.turns) if t.role == TurnRole.user]


def _drift(dialogue: Dialogue, briefing: str) -> list[UserFault]:
    known = content_words(briefing)
    faults = []
    for i, turn in enumerate(dialogue.turns):
        words = content_words(turn.content)
        if turn.role == TurnRole.user and len(words) >= _DRIFT_WORDS and not words & known:
            faults.append(
                UserFault(
                    kind=UserFaultKind.goal_drift,
                    turn=i,
                    reason=f"{turn.content[:80]!r} is about none of the goal, the briefing or the dialogue",
                )
            )
        known |= words
    return faults


def _briefing_numbers(briefing: str) -> dict[str, str]:
    return {noun: _NUMBERS.get(n, n) for n, noun in _NUMBER_NOUN.findall(briefing.lower())}


def _invented(dialogue: Dialogue, persona: dict[str, Any] | None, briefing: str) -> list[UserFault]:
    profile = profile_fields(persona or {})
    counts = _briefing_numbers(briefing)
    faults = []
    for i, turn in _users(dialogue):
        text = turn.content
        found = []
        for n, noun in _NUMBER_NOUN.findall(text.lower()):
            if noun in counts and _NUMBERS.get(n, n) != counts[noun]:
                found.append(f"{n} {noun} (briefing: {counts[noun]})")
        age = _AGE.search(text.lower())
        if age and isinstance(profile.get("age"), int) and int(age.group(1)) != profile["age"]:
            found.append(f"age {age.group(1)} (briefing: {profile['age']})")
        name = _NAME.search(text)
        given = str(profile.get("name") or "")
        if name and given and name.group(1).lower() not in given.lower():
            found.append(f"name {name.group(1)} (briefing: {given})")
        if found:
            faults.append(
                UserFault(
                    kind=UserFaultKind.invented_fact,
                    turn=i,
                    reason="contradicts the briefing: " + "; ".join(found),
                )
            )
    return faults


def asks_user(text: str) -> bool:
    """Whether a bot turn ends by asking the user something (its last sentence is a question)."""
    return text.rstrip(" *_\n").endswith("?")


def _premature(dialogue: Dialogue) -> list[UserFault]:
    turns = dialogue.turns
    if len(turns) < 2 or turns[-1].role != TurnRole.user:
        return []
    last, before = turns[-1].content, turns[-2]
    ended = dialogue.finish_reason == FinishReason.user_ended_chat or _FAREWELL.search(last.lower())
    waiting = before.role == TurnRole.assistant and asks_user(before.content)
    if not (ended and waiting) or _OPEN_ENDED.search(before.content.lower()):
        return []
    return [
        UserFault(
            kind=UserFaultKind.premature_end,
            turn=len(turns) - 1,
            reason=f"ends with {last[:60]!r} while the bot waits on its question {before.content[-80:]!r}",
        )
    ]


def _character(dialogue: Dialogue) -> list[UserFault]:
    return [
        UserFault(
            kind=UserFaultKind.broke_character,
            turn=i,
            reason=f"speaks as an assistant or a model: {found.group(0)!r}",
        )
        for i, turn in _users(dialogue)
        if (found := _ASSISTANT.search(turn.content.lower()))
    ]


def _tokens(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _repeats(dialogue: Dialogue, briefing: str) -> list[UserFault]:
    if _REPEATS_ON_PURPOSE.search(briefing.lower()):
        return []
    faults, said = [], []
    for i, turn in _users(dialogue):
        words = _tokens(turn.content)
        if len(words) >= _REPEAT_WORDS:
            for j, earlier in said:
                if len(words & earlier) / len(words | earlier) >= 0.8:
                    faults.append(
                        UserFault(
                            kind=UserFaultKind.repetition,
                            turn=i,
                            reason=f"says again what it said at turn {j}: {turn.content[:60]!r}",
                        )
                    )
                    break
        said.append((i, words))
    return faults


_SHOUTED = re.compile(r"\b[A-Z]{3,}\b")


def _cooperative(dialogue: Dialogue, persona: dict[str, Any] | None) -> list[UserFault]:
    users = _users(dialogue)
    kind = (persona or {}).get("type")
    if kind == "adversarial" and len(users) >= 2 and not any(is_probe(t.content) for _, t in users):
        return [
            UserFault(
                kind=UserFaultKind.too_cooperative,
                turn=users[0][0],
                reason=f"an adversarial persona, yet none of its {len(users)} turns probes the bot (asks for "
                "its instructions or others' data, injects instructions, claims to be staff, pushes a rule)",
            )
        ]
    if kind != "challenging" or len(users) < 2:
        return []
    if any(_CHALLENGING.search(t.content) or _SHOUTED.search(t.content) for _, t in users):
        return []
    return [
        UserFault(
            kind=UserFaultKind.too_cooperative,
            turn=users[0][0],
            reason=f"a challenging persona, yet none of its {len(users)} turns is impatient, rude, vague, "
            "contradictory or questioning",
        )
    ]


def detect_user_faults(dialogue: Dialogue, persona: dict[str, Any] | None = None) -> list[UserFault]:
    """The offline rules: every simulator fault in `dialogue`, given the persona (ChatChecker's shape:
    {type, profile, task}) that played its user; without a persona only the briefing-free checks run."""
    briefing = briefing_text(persona)
    kind = (persona or {}).get("type")
    faults = _invented(dialogue, persona, briefing) + _premature(dialogue) + _character(dialogue)
    if kind == "adversarial":  # its probes are its part (see the module docstring)
        probing = {i for i, t in _users(dialogue) if is_probe(t.content)}
        faults = [f for f in faults if f.turn not in probing or f.kind == UserFaultKind.premature_end]
    if kind not in ("challenging", "adversarial"):
        faults += _drift(dialogue, briefing) + _repeats(dialogue, briefing)
    faults += _cooperative(dialogue, persona)
    # A turn spoken out of character is off the goal too; one fault explains it.
    out_of_character = {f.turn for f in faults if f.kind == UserFaultKind.broke_character}
    faults = [f for f in faults if not (f.kind == UserFaultKind.goal_drift and f.turn in out_of_character)]
    return sorted(faults, key=lambda f: (f.turn, f.kind.value))


def fault_kinds(faults: list[UserFault]) -> set[UserFaultKind]:
    """The kinds among `faults`."""
    return {f.kind for f in faults}


def user_fault_inputs(dialogue: Dialogue, persona: dict[str, Any] | None) -> dict[str, Any]:
    """The task's inputs: the dialogue (for the rules), its numbered transcript (for the model) and the
    persona ({} when none played the user)."""
    transcript = "\n".join(f"[{i}] {t.role.value}: {t.content}" for i, t in enumerate(dialogue.turns))
    return {
        "dialogue": dialogue.model_dump(mode="json"),
        "transcript": transcript,
        "persona": persona or {},
    }


def offline_user_faults(inputs: dict[str, Any], rng: random.Random) -> UserFaults:
    """The task's offline implementation: the rules on the dialogue and persona given as inputs."""
    dialogue = Dialogue.model_validate(inputs["dialogue"])
    return UserFaults(faults=detect_user_faults(dialogue, inputs.get("persona")))


DETECT_USER_FAULTS = Task("detect_user_faults", UserFaults, offline_user_faults, max_tokens=1200)
