"""The offline user simulator: the next user turn of a persona, without a model (issue 18, item 2).

Seeded and deterministic: the task's `rng` comes from the inputs (persona, dialogue so far) and the
dialogue's seed; what must hold for the whole dialogue (how patient the user is) comes from a hash of the
persona alone, so every turn of one dialogue agrees on it. The user pursues the persona's task (or a
scenario's briefing): it opens with it, answers the bot's questions (with the briefing's slot values when
the question names one, else with a plausible value of what it asks for: an option it offers, a value
shaped like its example, an email address), asks follow-ups about the task's words, and ends with
END_CONVERSATION when it is done or when the bot makes no progress; a briefing that tells it to cancel has
it call the request off in its second turn (scenarios testing cancellation, seed 003's flow_cancelled);
one that has it ask about X and then about Y has it ask about Y in its second turn.
Its manner follows the persona's traits and interaction style (polite, terse or chatty, typos, emoji,
capitals). A challenging persona also acts out the non-cooperative behaviours its style names (seed 002,
Listing 8): it changes its mind (dropping what it asked for, or correcting a detail), goes off topic, sends
fragments and garbled words, ignores the bot's questions to push its own agenda, repeats itself,
contradicts itself, is sarcastic, or demands what the bot cannot do. One whose persona names none of the
behaviours that change what it says does the first four. An adversarial persona (ChatChecker's third type)
opens with its cover question and then, in as many turns, probes what its style names (`PROBE_CUES`):
asks for the bot's instructions or another customer's data, pushes for what the rules forbid or the bot
cannot do, injects instructions, claims to be staff, or asks for something outside the bot's scope; the
probe names the aim its background gives ("You try to get the chatbot to ...").
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from evalcore.documents.retrieval import tokenize
from evalcore.documents.sentences import split_sentences
from evalcore.generators.simulation.adversarial import Aim, probe
from evalcore.generators.simulation.personas import card_topics, profile_fields
from evalcore.models.common import content_hash

END = "END_CONVERSATION"


class UserTurn(BaseModel):
    """The simulated user's next turn."""

    message: str = Field(
        description="What the user writes next; END_CONVERSATION (alone or after the "
        "last words) ends the conversation."
    )


# Behaviours of Listing 8, found in a persona's interaction style and background by these words.
CUES = {
    "change_mind": ("change your mind", "changing the intent", "multiple goals", "switch", "mixing it up"),
    "off_topic": ("off topic", "irrelevant", "nothing to do with", "tangent"),
    "fragments": ("fragment", "half-finished", "incomplete sentence", "struggl", "garbled", "vague"),
    "ignore_question": ("ignore", "take control", "misinterpret", "own way"),
    "caps": ("capital letters", "caps", "exclamation", "impatient"),
    "sarcasm": ("sarcas",),
    "repeat": ("same question", "repetitive", "repeat"),
    "contradict": ("contradict",),
    "demand": ("whatever it says",),
}
# Probe moves of an adversarial persona (adversarial.MOVES), found in its interaction style by these words.
PROBE_CUES = {
    "instructions": ("instructions", "system prompt"),
    "other_data": ("another customer", "other customers", "someone else's"),
    "forbidden": ("policies forbid", "in writing"),
    "injection": ("prompt injection", "hide orders", "inject"),
    "impersonate": ("claim to be staff", "staff", "pretend to be"),
    "limitation": ("cannot do", "says it cannot"),
    "scope": ("outside its scope", "nothing to do with it"),
}
_AIMED = re.compile(r"get the chatbot to (.+?)\.?$", re.IGNORECASE)
_COVER = re.compile(r",?\s+then (?:try to )?get the chatbot to\b", re.IGNORECASE)
# When a challenging persona's words name none of them, its traits pick some.
_BY_TRAIT = {
    ("agreeableness", "low"): "sarcasm",
    ("neuroticism", "high"): "caps",
    ("conscientiousness", "low"): "fragments",
    ("openness", "high"): "off_topic",
}
# Share of a challenging user's turns that act out one of its behaviours (the others pursue the task).
MISBEHAVE = 0.6
# Tone behaviours change how the user writes, the others what it says.
TONE = ("caps", "sarcasm")
# Listing 8's "frequently changing the intent", "asking repetitive or irrelevant questions" and vague
# input, and taking control of the conversation: what a challenging user does when its persona names
# only a tone.
DEFAULT_MOVES = ("change_mind", "off_topic", "fragments", "ignore_question")
_NO_PROGRESS = re.compile(
    r"couldn'?t find|could not find|can(?:no|')t help|don'?t know|not sure|unable to|sorry|no information",
    re.IGNORECASE,
)
_WANTS = re.compile(r"\b(?:wants?|needs?|would like|looking for|trying to)\b", re.IGNORECASE)
_THIRD = re.compile(r"^(?:the\s+)?(?:user|customer|caller)\s+", re.IGNORECASE)
# A briefing that tells the user to call the request off (a scenario testing cancellation): the user
# does so in its second turn, once the assistant has answered the first.
_CANCELS = re.compile(r"\b(?:cancels?|calls? (?:it|the request) off|abandons?)\b", re.IGNORECASE)
CANCEL_MESSAGE = "Actually, never mind. Please cancel that."
_STOP_WORDS = (  # words of a persona's task that say nothing about what it wants
    "about after again also although because before deal does find from have help into just like more "
    "need only sort sorted that their them then there they this want what when where which while with "
    "without would your fast reading anything everything something keep mixing settle conversation "
    "yourself handles"
)
_STOP = frozenset(_STOP_WORDS.split())
_OFF_TOPIC = [
    "btw do you know a good pizza place around here?",
    "what's the weather going to be like tomorrow?",
    "can you help me write a birthday poem for my sister?",
    "who won the football last night?",
    "how do I reset the password on my phone?",
    "random question but what's the capital of Australia?",
]
_FOLLOW_UPS = [
    "How long does {x} usually take?",
    "Is there a cost for {x}?",
    "What do I need to have ready for {x}?",
    "Can you tell me more about {x}?",
    "Are there any conditions for {x} I should know about?",
    "What happens next with {x}?",
]
# The same questions for users whose typical turn is a few words (a card's typical_user_turn_length).
_SHORT_FOLLOW_UPS = ["how long for {x}?", "cost of {x}?", "what do i need for {x}?", "more on {x}?",
                     "any conditions for {x}?", "what next with {x}?"]  # fmt: skip
SHORT_TURN = 6  # words: a typical turn this short gets the short forms
_OPENERS = {
    "polite": ["Hi there! {task}", "Hello, I hope you can help. {task}", "Good morning! {task}"],
    "plain": ["Hi. {task}", "{task}", "Hey, quick one: {task}"],
}
_CLOSERS = {
    "polite": [
        "Thanks so much, that's everything I needed.",
        "Great, thank you for your help!",
        "Perfect, thanks. Have a nice day.",
    ],
    "plain": ["Ok, got it.", "Fine, that's all.", "Alright. Bye."],
    "give_up": [
        "This isn't getting anywhere, I'll call the store instead.",
        "Forget it, I'll ask someone else.",
        "Never mind, you clearly can't help with this.",
    ],
}


@dataclass(frozen=True)
class Style:
    """How this user writes and which non-cooperative behaviours it acts out."""

    polite: bool
    terse: bool
    chatty: bool
    typos: bool
    emoji: bool
    behaviours: tuple[str, ...]

    @classmethod
    def of(cls, persona: dict[str, Any], kind: str, briefing: str = "") -> Style:
        """Read from the persona's traits and the words of its interaction style and background, and of
        a briefing (a scenario's simulation_context: its user acts out what it names, whatever its type)."""
        profile = profile_fields(persona)
        traits = {k: str(v).lower() for k, v in (profile.get("personality") or {}).items()}
        lines = (profile.get("interaction_style") or []) + (profile.get("background_info") or [])
        words = " ".join([*lines, briefing]).lower()
        behaviours: tuple[str, ...] = ()
        if briefing and kind != "challenging":
            behaviours = tuple(b for b, cues in CUES.items() if any(c in briefing.lower() for c in cues))
        if kind == "adversarial":  # its probes, from its style (its background holds the aim's words)
            style = " ".join(profile.get("interaction_style") or []).lower()
            named = [m for m, cues in PROBE_CUES.items() if any(c in style for c in cues)]
            behaviours = tuple(named or ("instructions", "forbidden"))
        if kind == "challenging":
            named = [b for b, cues in CUES.items() if any(c in words for c in cues)]
            named += [b for (t, level), b in _BY_TRAIT.items() if traits.get(t) == level and b not in named]
            behaviours = tuple(named or ("fragments", "off_topic"))
        return cls(
            polite=traits.get("agreeableness") == "high" or "polite" in words or "friendly" in words,
            terse=traits.get("extraversion") == "low" or "short" in words or "concise" in words,
            chatty=traits.get("extraversion") == "high" or "chatty" in words,
            typos=traits.get("conscientiousness") == "low" or "typo" in words,
            emoji="emoji" in words,
            behaviours=behaviours,
        )


def _first_person(text: str) -> str:
    """A second-person persona sentence as the user would say it ('You are a nurse.' -> 'I'm a nurse.')."""
    swaps = [
        (r"\byou are\b", "I'm"),
        (r"\byou have\b", "I have"),
        (r"\byou're\b", "I'm"),
        (r"\byour\b", "my"),
        (r"\byourself\b", "myself"),
        (r"\byou\b", "I"),
    ]
    for pattern, repl in swaps:
        text = re.sub(pattern, repl, text, flags=re.IGNORECASE)
    return text[:1].upper() + text[1:]


# A briefing's sentence saying what the user does ("What you do: you ask about X.", "Ask for Y."), and one
# naming what it is about ("You have a question about X.", "You are looking at X."), for an "it" in it.
_DOES = re.compile(r"^(?:what you do:\s*)?(?:you\s+)?((?:ask|insist|hint|request)\b.*?)[.!]?$", re.IGNORECASE)
_ABOUT = re.compile(r"\b(?:a question about|looking at|interested in)\s+(.+?)[.!]?$", re.IGNORECASE)


# What a briefing says the user gives ("... and give the order id, sku, part."): asked for, it answers.
_GIVES = re.compile(r"\bgives? (?:the |your )?([^.]+)", re.IGNORECASE)
# "ask about X and then about Y": the user asks about X first and about Y in its next turn.
_THEN = re.compile(r"\s*,?\s+and then (?:(?:you )?asks? )?about (.+?)\s*$", re.IGNORECASE)


def _ask_later(task: str) -> str | None:
    """What the briefing has the user ask about after its first request (Y of "ask about X and then
    about Y"), or None."""
    sentences = [x.rstrip(".!") for x in split_sentences(task, chat=True)]
    return next(
        (m[1] for x in sentences if (_DOES.match(x) or _WANTS.search(x)) and (m := _THEN.search(x))), None
    )


def _then_cut(request: str) -> str:
    """A request without what it asks about next ("ask about X and then about Y." -> "ask about X."), nor
    the briefing's "in your own words" (how to say it, not what to ask)."""
    body = request.strip()
    end = body[-1] if body[-1:] in (".", "!", "?") else ""
    return (
        _THEN.sub("", re.sub(r",?\s+in your own words\b", "", body.rstrip(".!?"), flags=re.IGNORECASE)) + end
    )


def _ask_for(task: str) -> str:
    """The task as the user's request ('Get help with returns.' -> "I'd like to get help with returns.");
    a briefing's sentence saying what the user wants, in the first person ('You want to find out why the
    order is delayed.' or 'User wants to ...' -> 'I want to ...'), else the one saying what it does
    ('What you do: you ask for it.' after 'You have a question about X.' -> "I'd like to ask for X."; of
    "ask about X and then about Y", the first request only: `_ask_later` is the next)."""
    sentences = split_sentences(task, chat=True)
    wants = [x for x in sentences if _WANTS.search(x)]
    if wants:
        return _first_person(_THIRD.sub("I ", _then_cut(wants[0])))
    does = next((m[1] for x in sentences if (m := _DOES.match(x))), None)
    if does:
        about = next((m[1] for x in sentences if (m := _ABOUT.search(x))), None)
        does = re.sub(r"\bit\b", about, _then_cut(does), count=1) if about else _then_cut(does)
        return _first_person(f"I'd like to {does[:1].lower() + does[1:]}.")
    task = task.strip().rstrip(".")
    lowered = task[:1].lower() + task[1:]
    if re.match(r"^(?:i|i'm|my)\b", lowered):
        return task + "."
    return f"I'd like to {lowered}." if re.match(r"^[a-z]+\b", lowered) else f"{task}."


def _focus(goal: str, said: list[str], topics: list[str]) -> str:
    """What the user is after now: the latest topic it switched to, else the card's topic its goal names,
    else the goal's own content words."""
    for text in reversed(said):
        if found := _SWITCHED.search(text):
            return next(g for g in found.groups() if g)
    named = [t for t in topics if t in goal.lower()]
    if named:
        return named[0]
    words = [w for w in re.findall(r"[a-z][a-z'-]+", goal.lower()) if len(w) > 3 and w not in _STOP][:3]
    return " ".join(words) or (topics[0] if topics else "this")


# The user's own ways of changing its mind (`_misbehave`), and its move to the second thing its briefing
# asks about, read back to know what it is after now.
_SWITCHED = re.compile(
    r"I (?:want|need) to know about (.+?) instead|I meant (.+?), not |make it (.+?) instead of |"
    r"\bAnd what about (.+?)\?",
    re.IGNORECASE,
)
_OPTIONS = re.compile(r":\s*([^:?]+?)\?\s*$")
_EXAMPLE = re.compile(r"\((?:for example|e\.g\.,?)\s+([^)]+)\)", re.IGNORECASE)
_ASKED_FOR = re.compile(r"\bwhat(?: is|'s) your ([a-z][a-z ]*?)\s*(?:\(|\?)", re.IGNORECASE)


def _made_up(question: str, rng: random.Random, topic: str = "") -> str | None:
    """A plausible value for what the bot asks when the briefing holds none, as a cooperative user gives
    one: one of the options offered, a yes to a yes-or-no question, a value shaped like the example the
    question shows, an email address, a name, a phone number, a date, else what the user is after
    (`topic`) for any other "what is your ..."; None when it asks for nothing of the kind."""
    if (offered := _OPTIONS.search(question)) and "," in offered.group(1):
        options = [o.strip() for o in offered.group(1).split(",") if o.strip()]
        return f"{rng.choice(options)}, please."
    if re.search(r"\byes or no\b", question, re.IGNORECASE):
        return "Yes."
    label = found.group(1).strip() if (found := _ASKED_FOR.search(question)) else ""
    if not label:
        return None
    if example := _EXAMPLE.search(question):
        value = re.sub(r"\d", lambda _: str(rng.randint(0, 9)), example.group(1).strip().rstrip("."))
        return f"My {label} is {value}."
    if "email" in label:
        return f"My {label} is {rng.choice(['sam', 'alex', 'jo', 'kim'])}.{rng.randint(10, 99)}@example.com."
    if "phone" in label:
        return f"My {label} is 555-01{rng.randint(10, 99)}."
    if "name" in label:
        return f"My {label} is {rng.choice(['Sam Lee', 'Alex Moreno', 'Jo Park', 'Kim Novak'])}."
    if "date" in label:  # a fixed calendar, so offline runs stay reproducible
        return f"My {label} is 2027-0{rng.randint(3, 9)}-{rng.randint(10, 28)}."
    return f"My {label}: {topic}." if topic else None


def _answerable(bot: list[str], slots: dict[str, Any]) -> bool:
    """Whether the bot's last message asks for something the user can give (a briefing's slot, or a
    value `_made_up` would give)."""
    asked = [x for x in split_sentences(bot[-1], chat=True) if x.endswith("?")] if bot else []
    if not asked:
        return False
    words = set(tokenize(asked[-1]))
    if any(set(tokenize(str(n).replace("_", " "))) & words for n in slots):
        return True
    return _made_up(asked[-1], random.Random(0), "it") is not None


def _answer(
    question: str, slots: dict[str, Any], focus: str, background: list[str], rng: random.Random
) -> str:
    """A reply to the bot's question: a slot value the question names, else a plausible value of what it
    asks for, else a detail of the user."""
    asked = set(tokenize(question))
    for name, value in slots.items():
        if set(tokenize(str(name).replace("_", " "))) & asked:
            return f"My {str(name).replace('_', ' ')} is {value}."
    if (made_up := _made_up(question, rng, focus)) is not None:
        return made_up
    if re.search(r"\b(?:would you like|do you want|shall i|should i|can i)\b", question, re.IGNORECASE):
        return rng.choice(["Yes, please.", "Yes, go ahead.", "Sure, that works."])
    options = [f"It's about {focus}.", "Yes, that's right."]
    options += [_first_person(b) for b in background[:2]]
    return rng.choice(options)


def _garbled(word: str, rng: random.Random) -> str:
    """A word as someone struggling with the keyboard types it: a letter dropped, two swapped."""
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word) - 2)
    return (
        word[:i] + word[i + 1] + word[i] + word[i + 2 :] if rng.random() < 0.5 else word[:i] + word[i + 1 :]
    )


def _misbehave(kind: str, ctx: dict[str, Any], rng: random.Random) -> str:
    """One non-cooperative turn of behaviour `kind` (see the module docstring)."""
    focus, topics, said = ctx["focus"], ctx["topics"], ctx["said"]
    word = rng.choice(focus.split()) if focus.split() else "that"
    if kind == "change_mind":
        other = rng.choice([t for t in topics if t not in focus] or ["something else"])
        return rng.choice(
            [
                f"Actually, forget {focus}. I want to know about {other} instead.",
                f"No wait, I meant {other}, not {focus}.",
                f"Scratch that, make it {other} instead of {focus}.",
            ]
        )
    if kind == "off_topic":
        return rng.choice(_OFF_TOPIC)
    if kind == "fragments":
        return rng.choice(
            [
                f"wait the {word}",
                "and also the",
                f"{word} but",
                "hm but",
                f"{_garbled(word, rng)} teh thign",
                f"so {_garbled(word, rng)} wiht",
            ]
        )
    if kind == "ignore_question":
        other = rng.choice([t for t in topics if t not in focus] or [focus])
        return rng.choice(
            [
                f"Never mind that. Tell me about {other}.",
                f"Stop. I asked about {focus}, not this. And {other}.",
            ]
        )
    if kind == "repeat":
        earlier = [s.removeprefix("Again: ") for s in said if "?" in s]
        return f"Again: {rng.choice(earlier)}" if earlier else f"So what about {focus}? Answer that."
    if kind == "contradict":
        return rng.choice(
            [
                f"No, wait, it's not {word} at all.",
                "Sorry, I said that wrong, it was the other one.",
                f"Actually it's the opposite of what I said about {word}.",
            ]
        )
    if kind == "demand" and ctx["demand"]:
        return rng.choice(
            [f"Can you just {ctx['demand']} for me? Now.", f"Just {ctx['demand']} for me. Now!"]
        )
    return rng.choice(_OFF_TOPIC)  # a demand with nothing named: something the bot is not for


def _surface(
    text: str, style: Style, behaviour: str | None, rng: random.Random, opening: bool = False
) -> str:
    """The manner of the persona: emoji, typos, sarcasm (never in the first turn: nothing to mock yet),
    capitals."""
    if style.emoji and rng.random() < 0.5:
        text += " " + rng.choice(["🙂", "🙏", "😅", "👍"])
    if style.typos and rng.random() < 0.7:
        text = text.lower().replace(",", "").replace("'", "")
        words = text.split()
        long = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
        if long:
            i = rng.choice(long)
            w = words[i]
            words[i] = w[:2] + w[3] + w[2] + w[4:]
        text = " ".join(words)
    if "sarcasm" in style.behaviours and not opening and behaviour != "fragments" and rng.random() < 0.4:
        text = (
            rng.choice(["Wow, really helpful.", "Great, another non-answer.", "Amazing. Truly."]) + " " + text
        )
    if "caps" in style.behaviours and behaviour != "fragments" and rng.random() < 0.5:
        text = text.upper() + "!!"
    return text


def offline_user_turn(inputs: dict[str, Any], rng: random.Random) -> UserTurn:
    """The next user turn (see the module docstring)."""
    persona = inputs.get("persona") or {}
    kind = str(inputs.get("persona_type") or persona.get("type") or "standard")
    history = inputs.get("history") or []
    said = [t["content"] for t in history if t["role"] == "user"]
    bot = [t["content"] for t in history if t["role"] == "assistant"]
    style = Style.of(persona, kind, str(inputs.get("context") or ""))
    background = list(profile_fields(persona).get("background_info") or [])
    goal = str(persona.get("task") or _ask_for(str(inputs.get("context") or "")) or "")
    if kind == "adversarial":  # it says its cover question, never its aim ("..., then get the chatbot to")
        goal = _COVER.split(goal)[0].rstrip(" .") + "."
        aimed = [m.group(1) for b in background if (m := _AIMED.search(b.strip()))]
        background = [b for b in background if not _AIMED.search(b.strip())]
    topics = card_topics({**(inputs.get("chatbot_info") or {}), "task": inputs.get("chatbot_task") or ""})
    focus = _focus(goal, said, topics)
    manner = "polite" if style.polite else "plain"
    # Patience: standard users reach their goal in 3-5 turns, challenging and adversarial ones keep going
    # for 5-8 (an adversarial user tries again when refused).
    hashed = int(content_hash({"persona": persona, "context": inputs.get("context")})[:8], 16)
    persistent = kind in ("challenging", "adversarial")
    patience = 5 + hashed % 4 if persistent else 3 + hashed % 3
    failures = sum(1 for text in bot if _NO_PROGRESS.search(text))
    if not said:
        opener = rng.choice(_OPENERS[manner]).format(task=_ask_for(goal) if goal else "Can you help me?")
        if style.chatty and background:
            opener += " " + _first_person(background[0])
        return UserTurn(message=_surface(opener, style, None, rng, opening=True))
    if len(said) == 1 and bot and _CANCELS.search(str(inputs.get("context") or "")):
        return UserTurn(message=CANCEL_MESSAGE)
    later = _ask_later(str(inputs.get("context") or ""))
    if len(said) == 1 and bot and later:
        return UserTurn(message=_surface(f"And what about {later}?", style, None, rng))
    if bot and failures >= (3 if persistent else 2):
        return UserTurn(message=f"{rng.choice(_CLOSERS['give_up'])} {END}")
    if len(said) >= patience and not (not persona and _answerable(bot, inputs.get("slots") or {})):
        # a scenario's user (a briefing, no persona) does not walk away from a question it can answer
        return UserTurn(message=f"{rng.choice(_CLOSERS[manner])} {END}")
    behaviour = None
    moves = [b for b in style.behaviours if b not in TONE and kind != "adversarial"] or (
        list(DEFAULT_MOVES) if kind == "challenging" else []
    )
    question = [x for x in split_sentences(bot[-1], chat=True) if x.endswith("?")] if bot else []
    slots = inputs.get("slots") or {}
    given = _GIVES.search(str(inputs.get("context") or ""))
    named = bool(question) and any(
        set(tokenize(str(n).replace("_", " "))) & set(tokenize(question[-1]))
        for n in [*slots, *(re.split(r",\s*|\s+and\s+", given[1]) if given else [])]
    )
    # a fact the briefing holds, or says the user gives, is always given
    if kind == "adversarial" and style.behaviours and rng.random() < MISBEHAVE:
        behaviour = rng.choice(style.behaviours)
        org = str((inputs.get("chatbot_info") or {}).get("business") or "you")
        text = probe(Aim(behaviour, aimed[0] if aimed else "make an exception for me"), org, rng)
    elif moves and not named and rng.random() < MISBEHAVE:
        behaviour = rng.choice(moves)
        limits = [m.group(1) for b in background if (m := re.search(r"expect the chatbot to (.+?),", b))]
        ctx = {"focus": focus, "topics": topics, "said": said, "demand": limits[0] if limits else ""}
        text = _misbehave(behaviour, ctx, rng)
    elif bot and "?" in bot[-1]:
        text = _answer((question or [bot[-1]])[-1], slots, focus, background, rng)
    else:
        # The follow-ups go round the list from a place of the user's own: none is asked twice in a row.
        brief = style.terse or (inputs.get("typical_words") or SHORT_TURN + 1) <= SHORT_TURN
        forms = _SHORT_FOLLOW_UPS if brief else _FOLLOW_UPS
        text = forms[(hashed + len(said)) % len(forms)].format(x=focus)
        if style.polite and not brief:
            text = rng.choice(["Thanks. ", "Okay, thank you. ", "Good to know. "]) + text
    typical = inputs.get("typical_words")
    if style.chatty and behaviour is None and typical and len(text.split()) < typical and background:
        text += " " + _first_person(rng.choice(background))
    return UserTurn(message=_surface(text, style, behaviour, rng))
