"""Matching words whatever their inflection: a spec's "Calling 999" is what a document says as "Call 999",
its "appointments" what a sentence calls "each appointment" (issue 33).

`stem` is a light English suffix stripper (plural, third person, -ed, -ing, a final e), not a full
stemmer: enough that the forms of one word meet, while different words stay apart. `says` matches a
phrase word by word on those stems, as whole words in order.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+(?:[-'’]\w+)*")
_KEEP_DOUBLE = ("l", "s", "z", "e")  # "calling" -> "call", "agreeing" -> "agree", but "stopping" -> "stop"


def stem(word: str) -> str:
    """The form the inflections of `word` share: 'calling', 'calls', 'called' -> 'call'; 'moves',
    'moving', 'move' -> 'mov'; 'copies' -> 'copy'; words of three letters or fewer and numbers as they are."""
    word = re.sub(r"['’]s$", "", word.casefold())
    if len(word) <= 3 or not word[-1].isalpha():
        return word
    for suffix, by in (("ies", "y"), ("ied", "y"), ("sses", "ss"), ("eed", "ee")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return _final_e(word[: -len(suffix)] + by)
    for suffix in ("ing", "ed"):
        base = word.removesuffix(suffix)
        if base != word and len(base) >= 3 and re.search(r"[aeiouy]", base):
            if len(base) > 3 and base[-1] == base[-2] and base[-1] not in _KEEP_DOUBLE:
                base = base[:-1]  # "stopping" -> "stop"
            return _final_e(base)
    if re.search(r"(?:x|z|ch|sh)es$", word):  # "matches" -> "match" ("uses" -> "use" below)
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return _final_e(word)


def _final_e(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def stems(text: str) -> list[str]:
    """The stems of the words of `text`, in order."""
    return [stem(w) for w in _WORD.findall(text)]


def says(text: str, phrase: str) -> bool:
    """True when `text` has the words of `phrase` in a row, each in any inflection ("Call 999 now" says
    "calling 999"; "the on-call line" does not say "call": a hyphenated word is one word)."""
    needle = stems(phrase)
    if not needle:
        return False
    hay = stems(text)
    n = len(needle)
    return any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))
