"""Sentences of documents, one way for every stage: where a sentence ends (`split_sentences`), and the
subject a customer asks about (`subject_split`: "Opened spare batteries | carry | a 15% restocking fee").

Specs, doc-QA facts, retrieval passages, grounding checks, breakdown rules and scenario wording all cut
text here, so a sentence means the same thing in a spec's Then and in the answer that is checked against
it.
"""

from __future__ import annotations

import re

# In a document a sentence ends at '.', '!' or '?' followed by space and a capital or a digit (optionally
# behind a quote, a bracket or markdown emphasis): "e.g. the" and "3.5 kg" do not end one. What people and
# chatbots type in a chat often starts a sentence in lower case, so chat text ends one at any space.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(*]*[A-Z0-9])")
CHAT_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_sentences(text: str, *, chat: bool = False) -> list[str]:
    """The sentences of one line or block of prose (`chat`: of a chat message), stripped, empty ones
    dropped."""
    pattern = CHAT_SENTENCE_END if chat else SENTENCE_END
    return [s.strip() for s in pattern.split(text) if s.strip()]


# Verbs and auxiliaries that end the grammatical subject of a fact sentence ("Opened spare batteries |
# carry a 15% restocking fee"): the subject is what a customer asks about.
# fmt: off
SUBJECT_VERBS = {
    "is", "are", "was", "were", "be", "can", "cannot", "can't", "must", "will", "may", "might",
    "should", "need", "needs", "has", "have", "had", "do", "does", "get", "gets", "carry", "carries",
    "cost", "costs", "take", "takes", "cover", "covers", "include", "includes", "apply", "applies",
    "require", "requires", "come", "comes", "pay", "pays", "receive", "receives", "run", "runs",
    "open", "opens", "start", "starts", "offer", "offers", "qualify", "qualifies", "last", "lasts",
    "ship", "ships", "arrive", "arrives"
}
# fmt: on
PRONOUNS = {"it", "this", "that", "they", "we", "you", "these", "those", "there", "our", "if", "when"}


def subject_split(
    sentence: str, verbs: frozenset[str] | set[str] = SUBJECT_VERBS
) -> tuple[str, str, str] | None:
    """(subject, verb, rest): the sentence cut at its first verb of `verbs`, when the words before it
    make a short noun phrase ("Opened spare batteries", "carry", "a 15% restocking fee.")."""
    # "(SKU VT-EB-CITY-XR)" after a name is a code for staff, not part of what a customer calls it
    words = re.sub(r"\s*\([^)]*\)", "", re.sub(r"[*_`]", "", sentence)).split()
    for i, word in enumerate(words):
        if word.lower().strip(",") in verbs:
            subject = " ".join(words[:i]).strip(" ,")
            if 1 <= i <= 8 and words[0].lower() not in PRONOUNS and "," not in subject:
                proper = any(w[:1].isupper() for w in words[1:i])  # "Westbrook Station" keeps its capital
                subject = subject if proper else lower_first(subject)
                return subject, word.lower().strip(","), " ".join(words[i + 1 :])
            return None
    return None


def sentence_subject(sentence: str) -> str | None:
    """The words before the sentence's first verb, when they make a short noun phrase."""
    split = subject_split(sentence)
    return split[0] if split else None


def lower_first(text: str) -> str:
    """'The Metro E8 ...' -> 'the Metro E8 ...', 'E-bikes' -> 'e-bikes'; a name or an acronym stays."""
    first = text.split(" ", 1)[0]
    if first in ("A", "An", "The") or re.match(r"[A-Z]-[a-z]", first):
        return text[:1].lower() + text[1:]
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() and not proper_name(text) else text


def proper_name(text: str) -> bool:
    """Whether the text opens on a name ("Westbrook Station does ..."): two capitalised words."""
    words = text.split()
    return len(words) > 1 and words[0][:1].isupper() and words[1][:1].isupper()
