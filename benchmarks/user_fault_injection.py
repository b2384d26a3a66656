"""Simulator faults injected into clean dialogues (issue 31, "Done means"): a script makes, from each clean
dialogue and its persona, a copy with one fault of a kind, so the user-fault check can be scored per kind.

Used by benchmarks/simulation.py; the templates are varied on purpose (several wordings per kind) and are
not the words the rules look for alone.
"""

from __future__ import annotations

import random
from typing import Any

from evalcore.generators.simulation.records import Dialogue, DialogueTurn, FinishReason
from evalcore.generators.simulation.user_faults import UserFaultKind, asks_user
from evalcore.models import TurnRole

OFF_TOPIC = [
    "By the way, which football club won the championship in nineteen ninety eight?",
    "Random thought: penguins migrate across frozen oceans during winter, fascinating creatures.",
    "Could you recommend a decent pizza place near Naples harbour tonight?",
    "My neighbour's guitar concert yesterday sounded absolutely dreadful, honestly.",
    "What's your opinion about medieval castle architecture across Scotland?",
    "Tell me a recipe for lemon sponge cake with vanilla frosting.",
]
OUT_OF_CHARACTER = [
    "As an AI language model, I cannot share personal opinions about that.",
    "Hello! How can I help you today?",
    "I'm here to help you with whatever you need.",
    "As a simulated user I should now ask about the next step.",
    "Sorry, my instructions say I must keep the conversation going.",
]
FAREWELLS = ["Ok bye.", "Never mind, goodbye.", "That's all, bye!", "Forget it.", "Gotta go, bye."]
POLITE = [
    "Thank you, that sounds good.",
    "Great, I appreciate your help with this.",
    "Sure, that works perfectly for me.",
    "Lovely, please go ahead.",
    "Thanks, that is very helpful.",
]
OTHER_NAMES = ["Gustavo", "Priya", "Henrik", "Aiko", "Mateus"]


def _user_indices(dialogue: Dialogue) -> list[int]:
    return [i for i, t in enumerate(dialogue.turns) if t.role == TurnRole.user]


def _replace(dialogue: Dialogue, index: int, text: str) -> Dialogue:
    turns = list(dialogue.turns)
    turns[index] = DialogueTurn(role=TurnRole.user, content=text)
    return dialogue.model_copy(update={"turns": turns})


def inject(
    dialogue: Dialogue, persona: dict[str, Any], kind: UserFaultKind, rng: random.Random
) -> Dialogue | None:
    """`dialogue` with one fault of `kind`, or None when this dialogue cannot carry one (too short, no
    question to walk out on, a standard persona for too_cooperative, a challenging one for drift and
    repetition, which its type allows)."""
    users = _user_indices(dialogue)
    if len(users) < 3:
        return None
    middle = rng.choice(users[1:-1])
    profile = persona.get("profile") if isinstance(persona.get("profile"), dict) else {}
    challenging = persona.get("type") == "challenging"
    if kind in (UserFaultKind.goal_drift, UserFaultKind.repetition) and challenging:
        return None
    if kind == UserFaultKind.goal_drift:
        return _replace(dialogue, middle, rng.choice(OFF_TOPIC))
    if kind == UserFaultKind.broke_character:
        return _replace(dialogue, middle, rng.choice(OUT_OF_CHARACTER))
    if kind == UserFaultKind.invented_fact:
        age, name = profile.get("age"), str(profile.get("name") or "")
        choices = []
        if isinstance(age, int):
            choices.append(f"Just so you know, I am {age + rng.randint(5, 20)} years old.")
        others = [n for n in OTHER_NAMES if n.lower() not in name.lower()]
        if name:
            choices.append(f"Oh and my name is {rng.choice(others)}, if that matters.")
        return _replace(dialogue, middle, rng.choice(choices)) if choices else None
    if kind == UserFaultKind.repetition:
        earlier = [i for i in users if i < middle and len(set(dialogue.turns[i].content.split())) >= 7]
        return _replace(dialogue, middle, dialogue.turns[rng.choice(earlier)].content) if earlier else None
    if kind == UserFaultKind.premature_end:
        asks = [
            i
            for i, t in enumerate(dialogue.turns[:-1])
            if t.role == TurnRole.assistant and asks_user(t.content) and i > 1
        ]
        if not asks:
            return None
        cut = rng.choice(asks)
        turns = [*dialogue.turns[: cut + 1], DialogueTurn(role=TurnRole.user, content=rng.choice(FAREWELLS))]
        return dialogue.model_copy(update={"turns": turns, "finish_reason": FinishReason.user_ended_chat})
    if kind == UserFaultKind.too_cooperative:
        if not challenging:
            return None
        turns = [
            DialogueTurn(role=TurnRole.user, content=rng.choice(POLITE)) if t.role == TurnRole.user else t
            for t in dialogue.turns
        ]
        return dialogue.model_copy(update={"turns": turns})
    raise ValueError(f"unknown fault kind {kind}")
