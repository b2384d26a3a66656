"""What the agent says for a procedure step, in offline conversations (seed 001, Section 3.8; issue 17,
item 6): a step is an instruction to the agent ("Ask for the dates...", "Explain the terms: ..."), the
conversation needs the utterance that carries it out ("Could you tell me the dates...?", "Here are the
terms: ...").

Each sentence of the step is rewritten by its opening verb (ask, explain, give, offer, check, collect,
confirm, tell, suggest, point out, remind, apologise, do not reveal, ...), the customer spoken to ("the
customer", "they", "their" -> "you", "your") and tool names said as words; a clause joined by "and" with
another verb ("..., and read the booking back") becomes its own sentence. A sentence with no known verb
stays as it is (it already states a fact: "E-bikes 14 days and under 25 km on the display.").

`asked_parameters` reads which of the APIs' parameters an agent's question asks for, so the customer
answers only those.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_PRONOUNS = (
    (r"\bthe customer's\b", "your"),
    (r"\bthe customer\b", "you"),
    (r"\bcustomer's\b", "your"),
    (r"\bthey are\b", "you are"),
    (r"\bthey're\b", "you're"),
    (r"\bthey\b", "you"),
    (r"\bthemselves\b", "yourself"),
    (r"\bthem\b", "you"),
    (r"\btheir\b", "your"),
    (
        r"\byou (want|need|dispute|ha|i|wa)s\b",
        lambda m: "you " + {"ha": "have", "i": "are", "wa": "were"}.get(m.group(1), m.group(1)),
    ),
)
# Opening verb -> how the agent says it; {rest} is the sentence after the verb, {Rest} capitalised.
_FRAMES: tuple[tuple[str, str], ...] = (
    (r"ask the customer to|ask them to|ask to", "Could you {rest}?"),
    (r"ask for|ask", "Could you tell me {rest}?"),
    (r"collect", "Could I have {rest}?"),
    (r"explain ([^:]+):", "Here {be} {1}: {rest}."),
    (r"explain how", "Here's how {rest}."),
    (r"explain that|explain", "Let me explain {rest}."),
    (r"give", "Here {be} {rest}."),
    (r"offer", "I can offer {rest}."),
    (r"suggest", "I'd suggest {rest}."),
    (r"say so(?: plainly)?", "I'm afraid it isn't {rest}."),
    (r"(?:tell the customer|tell them|say) that", "{Rest}."),
    (r"tell the customer|tell them|say", "{Rest}."),
    (r"point out", "Please note {rest}."),
    (r"remind (?:them|the customer)(?: that)?", "Just a reminder: {rest}."),
    (r"confirm", "I can confirm {rest}."),
    (r"do not reveal|don't reveal", "I can't share {rest}."),
    (r"read", "I'll read {rest}."),
    (r"mention", "I should mention {rest}."),
    (r"apologise|apologize", "I'm sorry about that{rest}."),
    (r"stay with the customer|stay with them", "I'll stay with you{rest}."),
    (r"re-run|rerun", "Let me run {rest} again."),
    (
        r"check|verify|find|note|look up|agree|match|screen|call|transfer|mark|summarise|summarize|book|open",
        "Let me {verb} {rest}.",
    ),
)
_COMPILED = [
    (re.compile(rf"^(?:{pattern})(?![A-Za-z])\s*", re.IGNORECASE), frame) for pattern, frame in _FRAMES
]
_CONDITION = re.compile(r"^((?:only\s+)?(?:if|when|for)\b[^,]*,\s*)(.*)$", re.IGNORECASE | re.DOTALL)
_THEN = re.compile(
    r",?\s+(?:and|then)\s+(?=(?:ask|read|give|offer|say|confirm|explain|check|remind|call|tell|note|find)\b)",
    re.IGNORECASE,
)


def _speak_to_customer(text: str) -> str:
    for pattern, replacement in _PRONOUNS:
        text = re.sub(pattern, replacement, text, flags=re.IGNORECASE)
    return re.sub(r"\b([a-z]+(?:_[a-z]+)+)\b", lambda m: m.group(1).replace("_", " "), text)


def _sentence(text: str) -> str:
    text = text.strip().rstrip(".;")
    if not text:
        return ""
    condition = ""
    if match := _CONDITION.match(text):
        condition, text = match.group(1), match.group(2)
    for pattern, frame in _COMPILED:
        match = pattern.match(text)
        if not match:
            continue
        rest = text[match.end() :].strip().rstrip("?")
        verb = match.group(0).strip().lower()
        said = frame.replace("{rest}", rest).replace("{verb}", verb)
        said = said.replace("{Rest}", rest[:1].upper() + rest[1:])
        if match.groups():
            head = match.group(1).strip()
            said = said.replace("{1}", head).replace("{be}", "are" if head.endswith("s") else "is")
        said = said.replace("{be}", "are" if re.search(r"\band\b|,", rest) else "is")
        said = re.sub(r"\s+([.?,])", r"\1", said)
        if condition:
            said = (
                condition[:1].upper()
                + condition[1:]
                + (said if said[:2] in ("I ", "I'") else said[:1].lower() + said[1:])
            )
        return said
    if condition:
        text = condition + text
    return text[:1].upper() + text[1:] + "."


# an instruction to the agent that is not said: "..., then close the conversation", "End the conversation."
_UNSAID = re.compile(
    r"[,;]?\s*(?:\b(?:and|then)\s+)?"
    r"\b(?:(?:end|close) the conversation|change nothing|reveal nothing about it)\b"
    r"|:\s*go on(?=\.?\s*$)",
    re.IGNORECASE,
)


def agent_utterance(step: str) -> str:
    """What the agent says to carry out a procedure step (module docstring)."""
    parts: list[str] = []
    for sentence in re.split(r"(?<=[.;])\s+", " ".join(_UNSAID.sub("", step).split())):
        pieces = _THEN.split(sentence.strip().rstrip(".;"))
        parts += [_speak_to_customer(_sentence(p)) for p in pieces if p.strip()]
    return " ".join(p[:1].upper() + p[1:] for p in parts if p)


# Words a question uses for a parameter, beyond the words of its name.
_SYNONYMS = {
    "date": ("date", "dates", "day", "when"),
    "start": ("dates", "start", "from"),
    "end": ("dates", "until", "end"),
    "store": ("store", "shop", "workshop"),
    "age": ("age", "ride", "rider", "old"),
    "rider": ("ride", "rider"),
    "order": ("order", "receipt"),
    "phone": ("phone", "mobile"),
    "reason": ("why", "reason"),
    "sku": ("item", "product"),
    "service": ("service", "services"),
    "bike": ("bike",),
    "description": ("problem",),
    "waiver": ("waiver",),
    "damage": ("waiver", "damage"),
    "customer": ("you", "your", "name", "mobile", "phone"),
    "slot": ("slot", "morning", "afternoon"),
}
_GENERIC = {"id", "usd", "is", "type", "code", "codes"}


def _words(text: str) -> set[str]:
    return {w.removesuffix("'s") for w in re.findall(r"[a-z][a-z0-9'\-]*", text.lower())}


def asked_parameters(utterance: str, schemas: Iterable[dict[str, Any]]) -> list[str]:
    """The parameters (of the given object schemas, in order) that an agent's questions (its sentences
    ending in "?") ask for: every word of the name (or a synonym of it) is in a question."""
    said = _words(" ".join(re.findall(r"[^.?!]*\?", utterance)))
    found: list[str] = []
    for schema in schemas:
        for name in (schema.get("properties") or {}) if schema else {}:
            tokens = [t for t in name.lower().split("_") if t not in _GENERIC] or name.lower().split("_")
            if all({t, t + "s", *_SYNONYMS.get(t, ())} & said for t in tokens) and name not in found:
                found.append(name)
    return found
