"""What a spec is about, so its conversations can be anchored on it and checked for it (issue 13).

A spec's subject is, in order: the codes its title names with what customers call them ("VT-EB-TREK",
"Voltra Trek"); else the names it mentions (a store, a product), the business and assistant aside; else
its key words ("rain", "grace period"), without modal, auxiliary and generic verbs ("Not able to book,
move or cancel appointments" is about "appointments", not "able"), the nouns before the verbs the title or
its given/when/then put after "to" ("cancel"). A text names the subject when it has one of its terms in
any inflection ("Call 999" names "Calling 999", "each appointment" names "appointments"). The offline
generator asks its first question and its SYNTHESIS about the subject; `benchmarks/content.py` counts the
conversations that mention it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from evalcore.documents.entities import canonical_name, extract_entities
from evalcore.documents.facts import mentions
from evalcore.documents.inflection import says, stem
from evalcore.documents.phrases import listed_verbs

_CODE = re.compile(r"\b[A-Z][A-Z0-9]*-[A-Z0-9][A-Z0-9-]*\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z-]+")
# Words of a spec title that say what the assistant or customer does, not what it is about.
_GENERIC = frozenset(
    re.findall(
        r"\S+",
        """a an the and or of to for in on at by with without from as is are be been it its this that these
    those when if only not no do does must should can cannot will would any every each all some given
    customer customers assistant ask asks asked asking pushed repeatedly mixed valid request requests
    indirectly check checks book books booking state states mention mentions answer answers reply
    replies give gives say says verify verifies before after first estimate combining combine what
    how which who help helping your our their whichever comes come fine uses use using goes go details
    detail one two three four five six seven eight nine ten than less more over under within about
    also still usd eur gbp""",
    )
)
# Verbs that say a spec is about a limit or an action, not what the action is on: "Not able to see live
# interruptions" is about interruptions. Compared by stem, so every inflection goes ("moving", "gets").
_GENERIC_VERBS = frozenset(
    stem(w)
    for w in re.findall(
        r"\S+",
        """able unable move get got see make take need want try keep let put tell find know happen allow
        handle deal change look show seem become""",
    )
)


@dataclass(frozen=True)
class Subject:
    """The terms a spec's subject goes by; `named` when they are codes or names (not key nouns)."""

    terms: tuple[str, ...]
    named: bool

    def said_in(self, text: str) -> bool:
        """True when `text` names the subject (any of its terms, as whole words, in any inflection)."""
        return any(mentions(text, term) or says(text, term) for term in self.terms)

    def count(self, texts: Iterable[str]) -> int:
        """How many of `texts` name the subject."""
        return sum(self.said_in(t) for t in texts)


def spec_subject(
    title: str, names: Mapping[str, str], ignore: Sequence[str] = (), context: str = ""
) -> Subject:
    """The subject of a spec titled `title` (see the module docstring); `names` maps codes to what a
    customer calls them (`wording.code_names`), `ignore` holds the business's and assistant's names;
    `context` (the spec's given, when and then) only orders key words, never adds or drops one."""
    codes = list(dict.fromkeys(_CODE.findall(title)))
    if codes:
        spoken = [names[c].removeprefix("the ") for c in codes if c in names]
        return Subject(tuple(codes + spoken), True)
    skip = {canonical_name(x) for x in ignore}
    named = [
        e.text
        for e in extract_entities(title)
        if e.kind == "name" and canonical_name(e.text) not in skip and len(e.text) > 2
    ]
    if named:
        return Subject(tuple(dict.fromkeys(named)), True)
    own = {w.lower() for name in ignore for w in name.split()}  # "Ridgeline Assist" is nobody's subject
    words = [
        w.lower()
        for w in _WORD.findall(title)
        if w.lower() not in _GENERIC | own and len(w) > 2 and stem(w) not in _GENERIC_VERBS
    ]
    return Subject(tuple(_nouns_first(list(dict.fromkeys(words)), f"{title} {context}")), False)


def _nouns_first(words: list[str], text: str) -> list[str]:
    """`words` with the ones `text` uses as verbs (after "to") last, the rest in their order."""
    verbs = listed_verbs(text)
    return sorted(words, key=lambda w: stem(w) in verbs)
