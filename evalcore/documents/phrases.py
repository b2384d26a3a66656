"""Noun phrases of a spec's title, so a question can name what the spec is about in words a person uses
("late fees", "a cold battery", "an online order"), never by a bare adjective, preposition or verb of
the title ("cold", "per", "out").

No tagger: a word counts as a noun when the documents use it as the last word of a noun phrase, after
an article, a determiner or a number (directly or past one more word) and before a closed-class word, a
past participle or the end of a clause ("the battery is", "a late fee of", "2 ml.", "an appointment
cancelled"). English's closed classes (articles, determiners, pronouns, prepositions, conjunctions,
auxiliaries, particles) are fixed lists; the open classes are learnt from the project's own text, so
nothing here is tuned to one corpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from evalcore.documents.inflection import stem, stems
from evalcore.documents.sentences import lower_first

# fmt: off
ARTICLES = frozenset({"a", "an", "the"})
DETERMINERS = ARTICLES | {
    "each", "every", "any", "no", "some", "this", "that", "these", "those", "your", "our", "their",
    "its", "my", "his", "her", "another", "other", "both", "either", "neither", "all", "per",
}
CLOSED = DETERMINERS | {
    "about", "above", "across", "after", "against", "along", "among", "around", "as", "at", "before",
    "behind", "below", "beside", "between", "beyond", "by", "despite", "down", "during", "except",
    "for", "from", "in", "inside", "into", "like", "near", "of", "off", "on", "onto", "out", "outside",
    "over", "past", "since", "than", "through", "throughout", "till", "to", "toward", "towards",
    "under", "until", "up", "upon", "via", "with", "within", "without", "and", "or", "but", "nor",
    "so", "yet", "if", "when", "whenever", "where", "wherever", "while", "whether", "because",
    "although", "though", "unless", "once", "which", "who", "whom", "whose", "what", "how", "why",
    "i", "me", "you", "he", "him", "she", "it", "we", "us", "they", "them", "there", "here",
    "is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had", "do", "does", "did",
    "can", "cannot", "could", "may", "might", "must", "shall", "should", "will", "would", "not",
    "also", "only", "just", "then", "too", "very", "away", "back", "least", "most", "more", "less",
    "much", "many", "few",
}
# fmt: on
_TOKEN = re.compile(r"[A-Za-z0-9][\w'’-]*|[^\w\s]")
# "to book, move or cancel": the words after "to" (and the ones listed with them) are verbs.
_AFTER_TO = re.compile(r"\bto ((?:[a-z]+(?:, | or | and |, or |, and ))*[a-z]+)")
# What a customer calls "your inseam" is "my inseam".
_POSSESSIVE = {"your": "my"}
_NUMBER = re.compile(r"\d[\d.,]*$")


def listed_verbs(text: str) -> set[str]:
    """The stems of the words `text` puts after "to", with the ones listed with them ("Not able to
    book, move or cancel appointments" -> book, move, cancel)."""
    found = {stem(v) for m in _AFTER_TO.finditer(text.lower()) for v in re.findall(r"[a-z]+", m.group(1))}
    return found - {"or", "and"}


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _word(token: str) -> bool:
    return token[:1].isalnum() and token.casefold() not in CLOSED


def _ends_phrase(tokens: list[str], i: int) -> bool:
    """Whether the token after position i ends a noun phrase: a closed-class word other than a
    determiner (a word before "a" or "the" is a verb with its object: "in a row receive a reminder"),
    punctuation, the end, or a past participle ("An appointment cancelled late")."""
    after = tokens[i + 1] if i + 1 < len(tokens) else ""
    if after.casefold() in DETERMINERS:
        return False
    return not _word(after) or (after.islower() and after.endswith("ed"))


def _after_determiner(tokens: list[str], i: int) -> bool:
    def opener(j: int) -> bool:
        return j >= 0 and (tokens[j].casefold() in DETERMINERS or tokens[j][:1].isdigit())

    return opener(i - 1) or (opener(i - 2) and _word(tokens[i - 1]))


def nouns(texts: Iterable[str]) -> frozenset[str]:
    """The stems of the words `texts` use as the last word of a noun phrase (see the module docstring)."""
    found = set()
    for text in texts:
        tokens = _tokens(text)
        for i, token in enumerate(tokens):
            if (
                _word(token)
                and token[:1].isalpha()
                and _after_determiner(tokens, i)
                and _ends_phrase(tokens, i)
            ):
                found.add(stem(token))
    return frozenset(found)


def is_noun_phrase(phrase: str, known: frozenset[str]) -> bool:
    """True when `phrase` reads as a noun phrase: a name or code (capitalised), or words with no
    closed-class word but an opening article (or "my") whose last word is a noun of `known`."""
    words = [w for w in _tokens(phrase) if w[:1].isalnum()]
    if words and (words[0].casefold() in ARTICLES or words[0].casefold() in _POSSESSIVE.values()):
        words = words[1:]
    if not words or any(w.casefold() in CLOSED for w in words):
        return False
    if all(w[:1].isupper() or w[:1].isdigit() for w in words):
        return True
    return stem(words[-1]) in known


def title_phrase(title: str, term: str, known: frozenset[str]) -> str | None:
    """The noun phrase of `title` that holds `term` (any inflection), ending on a noun of `known`, with
    its article ("Letting a cold battery warm up" and "cold" -> "a cold battery"; "your" said "my");
    None when the title uses the term outside any noun phrase (an adjective alone, a verb, a
    preposition) or only in a measure ("12 months" is when, not what)."""
    tokens = _tokens(title)
    needle = stems(term)
    if not needle:
        return None
    hay = [stem(t) for t in tokens]
    verbs = listed_verbs(title)
    n = len(needle)
    for at in (i for i in range(len(hay) - n + 1) if hay[i : i + n] == needle):
        if not all(_word(t) and hay[j] not in verbs for j, t in enumerate(tokens[at : at + n], at)):
            continue
        start = at
        while start > 0 and _word(tokens[start - 1]) and hay[start - 1] not in verbs:
            start -= 1
        # A run that opens the title on "-ing" or "-ed" with more words after is a verb and its object
        # ("Charging cold batteries"): the phrase starts after it. So is a run listed after a verb put
        # after "to" ("to see a courier's location or reschedule deliveries"), unless it opens on a noun.
        verb_first = start == 0 and tokens[0].casefold().endswith(("ing", "ed"))
        listed = verbs and start > 0 and tokens[start - 1].casefold() in {"or", "and", ","}
        if (verb_first or (listed and hay[start] not in known)) and start < at:
            start += 1
        elif listed and hay[start] not in known:
            continue
        end = at + n
        while end < len(tokens) and _word(tokens[end]):
            end += 1
        # The longest phrase that ends on a noun and holds no number: "Sessions last 4 hours" is about
        # "sessions" ("last 4 hours" is a verb and a measure).
        heads = [j for j in range(at + n - 1, end) if hay[j] in known and tokens[j][:1].isalpha()]
        for head in reversed(heads):
            words = tokens[start : head + 1]
            if any(_NUMBER.match(w) for w in words):
                continue
            before = tokens[start - 1].casefold() if start > 0 else ""
            if before in ARTICLES or before in _POSSESSIVE:
                words = [_POSSESSIVE.get(before, before), *words]
            return lower_first(" ".join(words))
    return None
