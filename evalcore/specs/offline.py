"""Offline spec generation: varied, valid specs built from the real sentences, rows and tools of a project.

Deterministic for the same inputs and seed. It reads what the LLM prompt would get (the focus, the
focused documents with their text, the tools, the card's constraints and limitations, and `names`: what a
customer calls each code, `evalcore.documents.naming.code_names`) and writes what a QA analyst would
(issue 13): a title that is a short noun phrase or a plain statement made from a whole sentence ("Late
fees after a 15-minute grace period", "Most items returned within 30 days of delivery") or from a table
row named by its name ("Price and frame sizes of the Voltra Ridge E-MTB 29"), never a clause cut
mid-sentence, a document's title or a code a customer never sees; Given / When / Then as sentences about
the customer's situation, each derived from the fact or behaviour's own words. A sentence that gives no
such title is left out rather than cut. A multi-document spec pairs two facts about the same entity.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalcore.documents.entities import extract_entities
from evalcore.documents.naming import CODE, NAME_COLUMNS, key_columns
from evalcore.documents.sentences import PRONOUNS as _PRONOUNS
from evalcore.documents.sentences import lower_first as _lower_first
from evalcore.documents.sentences import sentence_subject, split_sentences
from evalcore.specs.drafts import SpecDraft, SpecDrafts

_FACTUAL = re.compile(r"\d|\b(?:only|except|unless|not|never|must|within|before|after|free|fee)\b", re.I)
_EXCEPTION = re.compile(r"\b(?:except|unless|not|never|cannot|excluded?|only)\b", re.I)
_CODE_IN_TEXT = re.compile(r"\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+\b")

CUSTOMERS = (
    "a first-time customer",
    "a returning customer",
    "a customer in a hurry",
    "a frustrated customer",
    "a customer shopping for a family member",
    "a customer comparing options",
)


def _sentences(text: str) -> list[str]:
    """Factual sentences of a prose document (no headings, no fragments)."""
    plain = re.sub(r"[*_`]{1,3}", "", text)  # markdown emphasis would leak into titles and expectations
    lines = [
        ln.strip(" -")
        for ln in plain.splitlines()
        if ln.strip() and not ln.lstrip().startswith(("#", "|"))  # headings and markdown table rows
    ]
    out = []
    for line in lines:
        for sentence in split_sentences(line):
            words = sentence.split()
            if 6 <= len(words) <= 60 and _FACTUAL.search(sentence) and not sentence.rstrip().endswith("?"):
                out.append(sentence.strip())
    return out


# "... the return window and states the window": a second verb of a behaviour starts a second clause.
_AND_VERB = re.compile(r",? and (?=(?:does not|[a-z]+[^s\W]s)\b)")
# Words a title must not end on: a title ending on one was cut mid-phrase.
FUNCTION_WORDS = {
    "a", "an", "the", "to", "of", "for", "and", "or", "with", "at", "in", "on", "by", "from", "your", "our",
    "if", "when", "that", "which", "as", "but", "than", "per", "its", "their", "is", "are", "be", "not",
}  # fmt: skip
# Words that open a subordinate clause: a title starting with one is half a sentence.
SUBORDINATE = {"after", "before", "if", "when", "unless", "because", "while", "although", "since", "until",
               "once", "as", "whether", "whichever", "though"}  # fmt: skip
# A leading phrase before the main clause ("After a 15-minute grace period, late fees are ..."): the title
# puts it after the main clause's subject ("Late fees after a 15-minute grace period").
_LEAD = re.compile(
    r"^(After|Before|Within|Once|During|Until|For|On|In|At|By|Over|Under|Outside|Beyond|From|Without|With"
    r"|If|When|Unless|As)\s+([^,]{3,70}),\s+(.+)$"
)
# Imperatives a document addresses to the customer ("Report a lost parcel ..."): titled as what the
# customer does ("Reporting a lost parcel").
IMPERATIVES = {
    "report", "multiply", "bring", "keep", "charge", "store", "check", "contact", "call", "ask", "wait",
    "ship", "use", "measure", "book", "send", "return", "remove", "avoid", "confirm", "answer", "reply",
    "verify", "give", "transfer", "pump", "seat", "inflate", "add", "clean", "fill", "choose", "pick",
    "register", "visit", "email", "tell", "follow", "quote", "offer", "refer", "collect", "take", "set",
    "stop", "switch", "turn", "unplug", "replace", "lift", "allow", "let", "include", "pack", "print",
    "recharge", "ride", "lower", "raise", "apply", "top", "bleed", "order", "mention", "state",
}  # fmt: skip
_NEGATION = re.compile(r"^(?:do not|don't|never|please do not)\s+", re.I)
_PASSIVE = re.compile(
    r"^(?P<subject>.+?) (?:can |must |will |may |should )?(?:be|is|are) "
    r"(?P<rest>(?:[a-z]+ed|paid|held|made|sold|shown|given|kept|sent|built|done|taken|seen|set|put|left|"
    r"met|told|found|worn|brought|bought)\b.*)$"
)
# A title may end before these (a second clause or item follows); "if", "unless" ... qualify the fact and
# stay, so a sentence that is long before them gives no title.
_CUT_BEFORE = {"and", "or", "but", "which", "whichever", "so", "then", "while"}
# Stems of "-ing" forms that take back their "e" ("sharing" -> "share").
_E_STEMS = {"shar", "us", "mak", "tak", "giv", "arrang", "provid", "plac", "issu", "receiv", "stor",
            "charg", "servic", "chang", "writ", "clos", "reserv", "leav", "mov", "replac", "reduc", "promis",
            "compar"}  # fmt: skip
TITLE_WORDS = 12
_PREPOSITIONS = {"for", "on", "in", "at", "by", "over", "under", "outside", "beyond", "from", "without",
                 "with", "within", "during", "to", "of"}  # fmt: skip


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def named(text: str, names: Mapping[str, str]) -> str:
    """The text as a customer reads it: emphasis and brackets dropped ("(SKU VT-EB-CITY-XR)" is for
    staff), each code a name is known for replaced by that name ("RC-04" -> "the Westbrook Station
    store"; "the" dropped after another determiner), spaces collapsed, no final stop."""
    text = re.sub(r"\*+|`", "", text)  # emphasis; underscores stay, they are part of tool names
    text = re.sub(r"\s*\([^)]*\)", "", text)

    def name_of(match: re.Match[str]) -> str:
        name = names.get(match.group(0))
        return name if name else match.group(0)

    text = _CODE_IN_TEXT.sub(name_of, text)
    text = re.sub(r"\b(the|a|an|your|our) the\b", r"\1", text, flags=re.I)
    return re.sub(r"\s+", " ", text).strip().rstrip(".;:,")


def _gerund(verb: str) -> str:
    """'report' -> 'reporting', 'charge' -> 'charging', 'ship' -> 'shipping'."""
    v = verb.lower()
    if v.endswith("ie"):
        return v[:-2] + "ying"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")):
        return v[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", v):
        return v + v[-1] + "ing"
    return v + "ing"


def _shorten(text: str, limit: int = TITLE_WORDS) -> str | None:
    """The text if it is short, else its longest head that ends where a phrase ends (before "and", "or",
    "unless", ... or at a comma) and still says something (four words or more); None if there is none."""
    words = text.split()
    if len(words) <= limit:
        return text
    best = None
    for i in range(4, min(len(words), limit + 1)):
        in_list = any(w.endswith(",") for w in words[max(0, i - 3) : i])  # "swollen, hot, smoking or ..."
        if words[i].lower() in _CUT_BEFORE and not in_list:
            best = i
    if best is None:
        return None
    head = words[:best]
    while head and head[-1].lower().strip(",") in FUNCTION_WORDS:
        head.pop()
    return " ".join(head).rstrip(",") if len(head) >= 4 else None


def _statement(clause: str) -> str | None:
    """A main clause as a title: an imperative as what the customer does ("Report a lost parcel ..." ->
    "Reporting a lost parcel"), a passive as a noun phrase ("Most items can be returned within 30 days"
    -> "Most items returned within 30 days"), else the clause; shortened where a phrase ends."""
    clause = _NEGATION.sub("", clause.strip())
    first, _, rest = clause.partition(" ")
    if first.lower() in IMPERATIVES and rest:
        clause = f"{_gerund(first)} {rest}"
    elif (passive := _PASSIVE.match(clause)) and "," not in passive["subject"]:
        subject = passive["subject"]
        if len(subject.split()) <= 6 and subject.split()[0].lower() not in _PRONOUNS | {"not"}:
            clause = f"{subject} {passive['rest']}"
    short = _shorten(clause)
    return _capital(short) if short else None


def title_of(sentence: str, names: Mapping[str, str] | None = None) -> str | None:
    """A title a QA analyst would write for a fact sentence, or None when the sentence gives none.

    A label before a colon names the case ("Parcel not arrived: wait until ..." -> "Parcel not
    arrived"); a leading phrase goes after the main clause's subject ("After a 15-minute grace period,
    late fees are ..." -> "Late fees after a 15-minute grace period"); otherwise the first clause as a
    statement (`_statement`). Never a clause cut mid-phrase, never opening on a subordinate clause."""
    text = named(sentence, names or {}).split(";")[0].strip()
    label, colon, rest = text.partition(": ")
    if colon and 2 <= len(label.split()) <= 6 and not _CODE_IN_TEXT.search(label):
        return _ok(_capital(label))
    if colon and len(label.split()) == 1 and rest[:1].islower():  # "E-bikes: ship by ground only"
        text = f"{label} {rest}"
    lead = _LEAD.match(text)
    if lead:
        word, phrase, main = lead.groups()
        if main.split()[0].lower() in _PRONOUNS:
            return None
        subject = sentence_subject(main)
        if word.lower() == "as":  # "As a first estimate, ...": a hedge, not part of the case
            return _ok(_statement(main))
        if subject and len(subject.split()) + len(phrase.split()) < TITLE_WORDS:
            return _ok(_capital(f"{subject} {word.lower()} {phrase}"))
        return _ok(_statement(main))
    return _ok(_statement(text))


def _ok(title: str | None) -> str | None:
    """The title if it reads as a whole: three words or more, no subordinate opening, no dangling end."""
    if not title:
        return None
    words = title.split()
    if len(words) < 3 or words[0].lower() in SUBORDINATE | _PRONOUNS | _PREPOSITIONS or ":" in title:
        return None
    if words[1].lower() in ("it", "them", "this", "that"):  # "Charging it ...": about something unnamed
        return None
    if words[-1].lower().strip(",.") in FUNCTION_WORDS:
        return None
    return title


def _topic(sentence: str, names: Mapping[str, str], title: str) -> str:
    """What a customer asks about for a fact: the sentence's subject, else its title."""
    subject = sentence_subject(named(sentence, names))
    if (
        subject
        and subject.split()[0].lower() not in SUBORDINATE
        and subject.split()[-1] not in FUNCTION_WORDS
    ):
        return _lower_first(subject)
    head = re.split(r"\s+(?:within|for|by|in|at|on|after|before|with|to|from|per|only)\s+|,", title)[0]
    return _lower_first(head if len(head.split()) >= 2 else title)


@dataclass(frozen=True)
class _Fact:
    """One statement a spec can rest on: a sentence or a table row, said as a customer would read it."""

    doc: dict[str, Any]
    title: str  # the spec's title
    topic: str  # what the customer asks about ("late fees", "the price of the Voltra Metro E8")
    statement: str  # the fact as a sentence, for the Then
    entities: frozenset[str]  # names it is about (pairs share one)
    display: dict[str, str]  # canonical entity -> as written
    thing: str = ""  # a table row: what the customer calls it


def _entities(text: str) -> dict[str, str]:
    return {e.canonical: e.text for e in extract_entities(text) if e.kind == "name" and len(e.canonical) > 2}


def _sentence_fact(doc: dict[str, Any], sentence: str, names: Mapping[str, str]) -> _Fact | None:
    title = title_of(sentence, names)
    plain = named(sentence, names)
    first = _NEGATION.sub("", plain).split(" ", 1)[0].lower()
    # a list item without a verb ("Bundles, coupon codes and ...") is no statement to answer with
    if title is None or not (sentence_subject(plain) or first in IMPERATIVES or _LEAD.match(plain)):
        return None
    found = _entities(plain)
    return _Fact(doc, title, _topic(sentence, names, title), plain, frozenset(found), found)


def _column_words(column: str) -> str:
    """'price_usd' -> 'price', 'daily_rate_usd' -> 'daily rate', 'in_stock' -> 'stock'."""
    words = column.lower().replace("_", " ").split()
    while len(words) > 1 and words[-1] in (
        "usd",
        "eur",
        "gbp",
        "hours",
        "days",
        "minutes",
        "pct",
        "cm",
        "kg",
    ):
        words.pop()
    if words[:1] == ["in"] and len(words) > 1:
        words = words[1:]
    return " ".join(words)


def _value(column: str, value: str, names: Mapping[str, str]) -> str:
    """A cell as a customer reads it: a price with its currency, codes as names."""
    value = str(value).strip()
    unit = column.lower().rsplit("_", 1)[-1]
    if re.fullmatch(r"\d[\d,]*(?:\.\d+)?", value):
        if unit in ("usd", "eur", "gbp"):
            return {"usd": "$", "eur": "€", "gbp": "£"}[unit] + value
        if unit in ("hours", "days", "minutes"):
            return f"{value} {unit}"
    if _CODE_IN_TEXT.search(value):
        parts = [names.get(p.strip(), p.strip()) for p in value.split(",")]
        value = ", ".join(re.sub(r"^the ", "", p) for p in parts)
    return value


def _row_thing(doc: dict[str, Any], row: dict[str, str], key: tuple[str, ...], names: Mapping[str, str]):
    """How a customer names a row ("the Voltra Metro E8", "the Ridgeline Commuter 300 at the Alder
    Creek store", "kids bikes" for a row that applies to them) and whether it is a "for" phrase; None
    when only codes name it."""
    codes = [str(row.get(c, "")).strip() for c in key]
    if codes and all(c in names for c in codes):
        if len(codes) == 2:  # an item at a place (inventory, rental fleet): the item first
            place = next((i for i, c in enumerate(key) if "store" in c.lower()), 0)
            return f"{names[codes[1 - place]]} at {names[codes[place]]}", False
        return names[codes[0]], False
    for column in doc.get("columns") or list(row):
        value = re.sub(r"\s*\([^)]*\)", "", str(row.get(column, ""))).strip()
        if column in key or not value or CODE.match(value):
            continue
        if any(w in column.lower() for w in NAME_COLUMNS):
            return f"the {value}", False
        if "applies" in column.lower():
            return _lower_first(value), True
    return None


def _row_fact(doc: dict[str, Any], row: dict[str, str], names: Mapping[str, str], rng: random.Random):
    """A table row seen through one or two of its columns, as a fact about the row's named thing."""
    columns = list(doc.get("columns") or list(row))
    key = key_columns(columns, doc.get("rows") or [row])
    thing = _row_thing(doc, row, key, names)
    if thing is None:
        return None
    who, for_phrase = thing
    values = {c: _value(c, row.get(c, ""), names) for c in columns}
    usable = [
        c for c in columns
        if c not in key and values[c].lower() not in ("", "n/a", "-", "none")
        and not _CODE_IN_TEXT.search(values[c])
        and not any(w in c.lower() for w in NAME_COLUMNS) and "applies" not in c.lower()
    ]  # fmt: skip
    if not usable:
        return None
    yes_no = [
        c for c in usable if values[c].lower() in ("yes", "no") and _column_words(c).split()[0].endswith("s")
    ]
    display = _entities(who) or {who.lower(): who}
    if yes_no and rng.random() < 0.4:  # "Whether the Pine Hollow store rents e-bikes"
        column = rng.choice(yes_no)
        verb, _, rest = _column_words(column).partition(" ")
        rest = f"a {rest}" if verb == "has" and not rest.endswith("s") else rest
        base = "have" if verb == "has" else verb[:-1]
        said = f"{who} {verb} {rest}" if values[column].lower() == "yes" else f"{who} does not {base} {rest}"
        return _Fact(doc, _capital(f"Whether {who} {verb} {rest}"), f"whether {who} {verb} {rest}",
                     _capital(said), frozenset(display), display, who)  # fmt: skip
    plain = [c for c in usable if values[c].lower() not in ("yes", "no")]
    if not plain:
        return None
    asked = rng.sample(plain, k=min(2, len(plain)))
    words = [_column_words(c) for c in asked]
    if for_phrase:  # "Warranty duration and exclusions for kids bikes": the table says what it lists
        noun = doc["title"].split()[0].lower()
        words[0] = words[0] if noun in words[0] else f"{noun} {words[0]}"
    link = "for" if for_phrase else "of"
    title = f"{' and '.join(words)} {link} {who}"
    if len(title.split()) > TITLE_WORDS + 3:
        return None
    said = " and ".join(
        f"the {w} {'are' if w.endswith('s') else 'is'} {values[c]}" for w, c in zip(words, asked, strict=True)
    )
    return _Fact(doc, _capital(title), f"the {' and the '.join(words)} {link} {who}", f"{link} {who}, {said}",
                 frozenset(display), display, who)  # fmt: skip


def _fact_spec(fact: _Fact, policy: bool, rng: random.Random) -> SpecDraft:
    """One fact as a spec: a customer with a question about it, an answer that states it."""
    customer = rng.choice(CUSTOMERS)
    topic, statement, source = fact.topic, fact.statement, fact.doc["title"]
    exception = policy and bool(_EXCEPTION.search(statement))
    imperative = statement.split()[0].lower() in IMPERATIVES or _NEGATION.match(statement)
    said = f"to {_lower_first(statement)}" if imperative else f"that {_lower_first(statement)}"
    if exception:
        given = rng.choice(
            [
                f"{customer} whose case falls under the rule on {topic}",
                f"{customer} who had been told something different about {topic} in a store",
            ]
        )
        when = rng.choice(
            [
                f"they ask for an exception to the rule on {topic}",
                f"they ask how the rule on {topic} applies to them",
                f"they insist on something the rule on {topic} does not allow",
            ]
        )
        then = f"the assistant should tell them {said}, as the {source} says, and promise nothing it excludes"
    else:
        given = rng.choice(
            [
                f"{customer} who wanted to know about {topic}",
                f"{customer} who had a question about {topic}",
                f"{customer} who was unsure about {topic}",
            ]
        )
        when = rng.choice(
            [
                f"they ask about {topic}",
                f"they ask about {topic} in their own words",
                f"they ask a follow-up question about {topic}",
            ]
        )
        then = f"the assistant should tell them {said}, as the {source} says"
    return SpecDraft(
        scenario=fact.title, given=given, when=when, then=then,
        category="policy" if policy else "product information", documents=[fact.doc["id"]],
    )  # fmt: skip


def _row_spec(fact: _Fact, rng: random.Random) -> SpecDraft:
    """A table row's cells as a lookup spec."""
    return SpecDraft(
        scenario=fact.title,
        given=rng.choice([f"{rng.choice(CUSTOMERS)} who was looking at {fact.thing}",
                          f"{rng.choice(CUSTOMERS)} who had {fact.thing} in mind"]),
        when=f"they ask {fact.topic}" if fact.topic.startswith("whether") else f"they ask for {fact.topic}",
        then=f"the assistant should say that {_lower_first(fact.statement)} ({fact.doc['title']} table)",
        category="product information",
        documents=[fact.doc["id"]],
    )  # fmt: skip


def _tool_spec(tool: dict[str, Any], rng: random.Random) -> SpecDraft:
    params = tool.get("parameters", {})
    required = params.get("required") or list(params.get("properties", {}))[:2]
    needs = ", ".join(r.replace("_", " ") for r in required) or "the details it needs"
    missing = rng.choice(required) if required and rng.random() < 0.6 else None
    purpose = _lower_first(split_sentences(tool["description"])[0].rstrip("."))
    if missing:
        scenario = (
            f"{_capital(tool['name'].replace('_', ' '))} request without the {missing.replace('_', ' ')}"
        )
        when = f"they ask for it without giving the {missing.replace('_', ' ')}"
        then = f"the assistant should ask for the {missing.replace('_', ' ')} before calling {tool['name']}"
    else:
        scenario = f"{_capital(tool['name'].replace('_', ' '))} request with every detail given"
        when = f"they ask for it and give the {needs}"
        then = f"the assistant should call {tool['name']} with the {needs} and report its result"
    return SpecDraft(
        scenario=scenario,
        given=f"{rng.choice(CUSTOMERS)} who wanted the assistant to {purpose}",
        when=when,
        then=then,
        category="tool use",
        documents=[],
    )


# How the customer tries it, in the title and as the When.
APPROACHES = {
    "asked directly": "they ask for it outright",
    "asked indirectly": "they hint at it without asking outright",
    "pushed repeatedly": "they ask again each time the assistant declines",
    "mixed with a valid request": "they ask for it alongside a request the assistant can handle",
}
_REFUSAL = re.compile(r"(?i)^(?:refuses to|declines to|does not|do not|never|don't|cannot|can't|won't) (.+)$")
_TELLS = re.compile(
    r"(?i)^(?:tells?|asks?|advises?|warns?) (?:the customer|customers|them) (?:not )?to (.+)$"
)
_THAT = re.compile(r"(?i)^[a-z]+ that (.+)$")
_SAY = {"saying": "confirm", "stating": "confirm"}


def _base_of(gerund_phrase: str) -> str:
    """'revealing order details or calling create_return' -> 'reveal order details or call create_return'."""

    def base(match: re.Match[str]) -> str:
        word = match.group(0)
        if word in _SAY:
            return _SAY[word]
        stem = word[:-3]
        if re.search(r"([^aeiou])\1$", stem) and not stem.endswith(("ll", "ss")):
            return stem[:-1]  # "shipping" -> "ship"
        return stem + "e" if stem in _E_STEMS else stem

    return re.sub(r"\b[a-z]{3,}ing\b", base, gerund_phrase)


def _positive(statement: str) -> str:
    """'X cannot be returned' -> 'X can be returned': what a customer asks whether."""
    for negative, positive in (("cannot", "can"), ("can't", "can"), ("does not", "does"), ("do not", "do"),
                               ("is not", "is"), ("are not", "are"), ("will not", "will")):  # fmt: skip
        statement = statement.replace(f" {negative} ", f" {positive} ")
    return statement


def _situation(text: str, customer: str, rng: random.Random) -> tuple[str, str]:
    """Given and When for a behaviour or a rule of the card, from its own words: who would test it and
    what they ask ("Refuses to promise a refund outside the return window" -> a customer who wanted the
    assistant to promise a refund outside the return window; they ask for it and push)."""
    plain = re.sub(r"\s*\([^)]*\)", "", text).strip().rstrip(".")
    first = _AND_VERB.split(plain.split(";")[0])[0].strip()
    first = re.split(r", and (?:do not|never)\b", first)[0]
    if refusal := _REFUSAL.match(first):
        act = refusal.group(1)
        return (
            f"{customer} who wanted the assistant to {act}",
            rng.choice(["they ask for it directly", "they ask for it and push when the assistant declines"]),
        )
    if tells := _TELLS.match(first):
        return f"{customer} who was about to {tells.group(1)}", "they ask what to do next"
    if " before " in first:
        action = _base_of(first.split(" before ", 1)[1])
        if len(action.split()) >= 2:
            return (
                f"{customer} who wanted the assistant to {action}",
                rng.choice(["they ask for it straight away", "they ask for it and are in a hurry"]),
            )
    if that := _THAT.match(first):
        statement = that.group(1)
        subject = sentence_subject(statement) or " ".join(statement.split()[:4])
        return f"{customer} who had {subject} in mind", f"they ask whether {_positive(statement)}"
    verb, _, rest = first.partition(" ")
    subject = sentence_subject(first)
    if subject and verb.lower() not in IMPERATIVES:  # "Stock figures may be up to 15 minutes old"
        return f"{customer} whose question depended on {subject}", f"they ask about {subject}"
    thing = re.split(r"\s+(?:as|with|in|for|only|correctly|when|to)\b", rest)[0].strip(" ,")
    if verb.lower() in IMPERATIVES or not verb.lower().endswith("s"):  # a rule: "Reply in the language ..."
        rule = _lower_first(first)
        return (
            f"{customer} whose request tested whether the assistant would {rule}",
            f"they ask about {thing}"
            if len(thing.split()) >= 2
            else "they make that request in their own words",
        )
    return (
        f"{customer} who had a question about {thing}" if len(thing.split()) >= 2 else
        f"{customer} whose request tested whether the assistant {_lower_first(first)}",
        f"they ask about {thing}" if len(thing.split()) >= 2 else "they make that request in their own words",
    )  # fmt: skip


def _limit_spec(limit: str, kind: str, rng: random.Random) -> SpecDraft | None:
    approach = rng.choice(list(APPROACHES))
    title = (
        title_of(re.sub(r"^Cannot ", "Not able to ", limit))
        if kind == "known limitation"
        else title_of(limit)
    )
    if title is None:
        return None
    given, _ = _situation(limit, rng.choice(CUSTOMERS), rng)
    return SpecDraft(
        scenario=f"{title}, when {approach}",
        given=given,
        when=APPROACHES[approach],
        then=(
            "the assistant should stay within its limits, say plainly what it cannot do and point to "
            "the right channel instead"
            if kind == "known limitation"
            else f"the assistant should follow the rule: {_lower_first(limit.rstrip('.'))}"
        ),
        category="limitation" if kind == "known limitation" else "constraint",
        documents=[],
    )


def _pair_spec(first: _Fact, second: _Fact, entity: str, rng: random.Random) -> SpecDraft | None:
    """Two facts of two documents about one entity, asked together."""
    a, b = first.topic, second.topic
    if min(len(a.split()), len(b.split())) < 2 or a.lower() in b.lower() or b.lower() in a.lower():
        return None
    if {a.split()[0].lower(), b.split()[0].lower()} & (_PRONOUNS | {"whether"}) or "the two" in (
        a + b
    ).lower():
        return None
    shown = first.display.get(entity) or second.display.get(entity) or entity
    if shown.lower() in a.lower() or shown.lower() in b.lower():
        title = f"{_capital(a)} and {b}"
    else:
        title = rng.choice([f"{_capital(a)} and {b} for {shown}", f"{_capital(shown)}: {a} and {b}"])
    if len(title.split()) > TITLE_WORDS + 4 or a.lower() == b.lower():
        return None
    return SpecDraft(
        scenario=title,
        given=f"{rng.choice(CUSTOMERS)} who was weighing up {shown}",
        when=f"they ask about {a} and then about {b}",
        then=(
            f"the assistant should answer both: {_lower_first(first.statement)} ({first.doc['title']}), and "
            f"{_lower_first(second.statement)} ({second.doc['title']})"
        ),
        category="multi-document",
        documents=[first.doc["id"], second.doc["id"]],
    )


def _pairs(facts: list[_Fact], rng: random.Random, k: int) -> list[SpecDraft]:
    """Up to k pair specs: facts of two different documents that share a named entity."""
    options = [
        (x, y, entity)
        for i, x in enumerate(facts)
        for y in facts[i + 1 :]
        if x.doc["id"] != y.doc["id"]
        for entity in sorted(x.entities & y.entities)[:1]
    ]
    drafts = [_pair_spec(x, y, e, rng) for x, y, e in rng.sample(options, k=min(len(options), k))]
    return [d for d in drafts if d is not None]


def _facts(doc: dict[str, Any], names: Mapping[str, str], rng: random.Random) -> list[_Fact]:
    """Statements a spec can rest on: the titled sentences of prose, a few rows of tables."""
    if doc.get("kind") == "table":
        rows = doc.get("rows", [])
        found = [_row_fact(doc, row, names, rng) for row in rng.sample(rows, k=min(3, len(rows)))]
    else:
        found = [_sentence_fact(doc, s, names) for s in _sentences(doc.get("text", ""))]
    return [f for f in found if f is not None]


def _titled_like_a_document(title: str, doc_titles: list[str]) -> bool:
    lowered = title.lower()
    return any(t and t.lower() in lowered for t in doc_titles)


def offline_specs(inputs: dict[str, Any], rng: random.Random) -> SpecDrafts:
    """`count` new specs for `focus` from `documents`, `tools` and `card`, none repeating `history`."""
    focus = inputs["focus"]
    documents: list[dict[str, Any]] = inputs.get("documents", [])
    tools: list[dict[str, Any]] = inputs.get("tools", [])
    card: dict[str, Any] = inputs.get("card", {})
    names: dict[str, str] = inputs.get("names", {})
    doc_titles = [d.get("title", "") for d in inputs.get("documents_summary", documents)]
    seen = {title.lower() for title in inputs.get("history", [])}
    candidates: list[SpecDraft] = []
    facts = {doc["id"]: _facts(doc, names, rng) for doc in documents}
    for doc in documents:
        for fact in facts[doc["id"]]:
            if doc.get("kind") == "table":
                candidates.append(_row_spec(fact, rng))
            else:
                candidates.append(_fact_spec(fact, doc.get("kind") == "policy" or focus == "policy", rng))
    if focus == "tool use":
        candidates = [_tool_spec(tool, rng) for tool in tools] + candidates
    if focus in ("limitation", "constraint"):
        info = card.get("chatbot_info", {})
        limits = [(x, "known limitation") for x in info.get("known_limitations", [])]
        limits += [(x, "constraint") for x in info.get("constraints", [])]
        drafts = [_limit_spec(text, kind, rng) for text, kind in limits]
        candidates = [d for d in drafts if d is not None] + candidates
    if focus == "multi-document":
        candidates = _pairs([f for doc in documents for f in facts[doc["id"]]], rng, 12) + candidates
    preferred = [c for c in candidates if c.category == focus]
    others = [c for c in candidates if c.category != focus]
    rng.shuffle(preferred)
    rng.shuffle(others)
    chosen: list[SpecDraft] = []
    for draft in preferred + others:
        if draft.scenario.lower() not in seen and not _titled_like_a_document(draft.scenario, doc_titles):
            seen.add(draft.scenario.lower())
            chosen.append(draft)
        if len(chosen) == inputs.get("count", 5):
            break
    return SpecDrafts(specs=chosen)


def _infinitive(verb: str) -> str:
    """'Refuses' -> 'refuse', 'Verifies' -> 'verify': a behaviour's verb after 'should'."""
    word = verb.lower()
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _behaviour_spec(behaviour: str, name: str, rng: random.Random) -> SpecDraft:
    """A card's expected behaviour as written ('Refuses to promise ...'), turned into its spec, with a
    Given and When drawn from its own words (`_situation`)."""
    verb, _, rest = behaviour.strip().rstrip(".").partition(" ")
    first = re.sub(r"\s*\([^)]*\)", "", _AND_VERB.split(behaviour)[0]).strip().rstrip(".")
    title = _shorten(first, 16) or first
    # "... and asks for it" -> "... and ask for it", "and does not" -> "and not": one "should" governs all
    rest = _AND_VERB.sub(" and ", rest)
    rest = re.sub(
        r" and (does not|[a-z]+[^s\W]s)\b",
        lambda m: " and " + ("not" if m.group(1) == "does not" else _infinitive(m.group(1))),
        rest,
    )
    given, when = _situation(behaviour, rng.choice(CUSTOMERS), rng)
    return SpecDraft(
        scenario=f"{name} {_lower_first(title)}" if name else _capital(title),
        given=given,
        when=when,
        # "Does not book ..." -> "should not book ...", "Refuses to ..." -> "should refuse to ..."
        then=f"the assistant should {rest if verb.lower() == 'does' else _infinitive(verb) + ' ' + rest}",
        category="card behaviour",
        documents=[],
    )


def _procedure_spec(procedure: dict[str, Any], rng: random.Random) -> SpecDraft:
    """A procedure as one spec: the customer's intent, and the procedure's summary as what should happen."""
    intent = procedure.get("intent") or procedure["name"].replace("_", " ")
    apis = list(dict.fromkeys(s["api"] for s in procedure.get("steps", []) if s.get("api")))
    summary = (procedure.get("description") or "").strip()
    then = f"the assistant should {_lower_first(summary.rstrip('.'))}" if summary else ""
    if not then:  # no summary: the steps it must take are its tool calls, in order
        then = f"the assistant should follow the {procedure['name']} procedure"
    if apis:
        then += f" (calling {', '.join(apis)} as the procedure says)"
    return SpecDraft(
        scenario=f"Helping a customer {intent}",
        given=f"{rng.choice(CUSTOMERS)} wanted to {intent}",
        when="the customer asks the assistant for help with it",
        then=then,
        category="procedure",
        documents=[],
    )


def offline_card_specs(inputs: dict[str, Any], rng: random.Random) -> SpecDrafts:
    """One spec per behaviour of the card, in order, then one per procedure (task specs_from_card)."""
    name = inputs.get("assistant_name", "")
    specs = [_behaviour_spec(b, name, rng) for b in inputs.get("behaviors", [])]
    specs += [_procedure_spec(p, rng) for p in inputs.get("procedures", [])]
    return SpecDrafts(specs=specs)
