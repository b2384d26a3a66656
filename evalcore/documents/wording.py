"""How a customer words a question about a fact, for the offline doc-QA generator (issue 13).

A customer names things, not internal codes: `code_names` reads, from the project's tables, the name a
customer knows each code by (a product's model for its SKU, a store's name for its store id), so an
inventory row is asked about as "Is the Ridgeline Commuter 300 in stock at the Westbrook Station store?"
rather than by store id and SKU. A table fact is asked about by what its column means (a price "how
much", a yes/no column "does it ...", a stock count "is it in stock at ..."); a sentence by its own
subject and verb ("An opened spare battery can be returned within 30 days ..." -> "Can an opened spare
battery be returned?"), so two facts about the same thing give two different questions. A table fact
is answered the same way round (`cells_answer`): "The Westbrook Station store (RC-04) has 2 of the
Ridgeline Commuter 300 (RC-HYB-300) in stock.", every cited value verbatim and the row's codes in
brackets, so the answer still carries the cells it is checked against (`facts.source_grounded`).

Deterministic, rule-based English: what a model does better; the offline generator only needs questions
a person would plausibly type, that name no document title and no code the customer never sees.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.documents.facts import column_label, mentions
from evalcore.documents.phrases import CLOSED, DETERMINERS
from evalcore.documents.sentences import SUBJECT_VERBS, subject_split

# Key columns that say where (a store, a branch): "the X at the Y store".
PLACE_COLUMNS = ("store", "branch", "shop", "location", "site")
# Units at the end of a column name: "price_usd" is asked about as the price.
_UNITS = {"usd", "eur", "gbp", "hours", "hrs", "days", "minutes", "min", "km", "kg", "cm", "pct", "percent"}
_MONEY_COLUMNS = ("usd", "eur", "gbp", "price", "cost", "fee", "rate", "deposit")
_TIME_COLUMNS = ("hours", "days", "duration", "minutes", "weeks")
_STOCK_COLUMNS = ("stock", "available", "quantity", "qty")
_YES_NO = {"yes", "no", "true", "false", "y", "n"}
_CURRENCY = {"usd": "$", "eur": "€", "gbp": "£"}
_UNIT_WORDS = {"hours": "hours", "hrs": "hours", "days": "days", "minutes": "minutes", "min": "minutes",
               "weeks": "weeks"}  # fmt: skip

# More verbs than spec titles need: a question is built around the sentence's verb.
QUESTION_VERBS = frozenset(SUBJECT_VERBS) | {
    "show", "shows", "leave", "leaves", "hold", "holds", "accept", "accepts", "allow", "allows",
    "send", "sends", "match", "matches", "charge", "charges", "keep", "keeps", "use", "uses",
    "rent", "rents", "sell", "sells", "provide", "provides", "give", "gives", "mean", "means",
    "end", "ends", "count", "counts", "stay", "stays", "follow", "follows", "cannot", "handle", "handles",
    "list", "lists", "void", "voids", "service", "services", "limit", "limits", "replace", "replaces",
}  # fmt: skip
_MODAL_CAN = {"can", "cannot", "can't", "may"}
# Verbs that take no object: "E-bikes leave the same day" is asked as "When do e-bikes leave?".
_INTRANSITIVE = {"ship", "arrive", "leave", "come", "start", "open", "run", "stay", "end", "last"}
_YES_NO_VERBS = {"qualify", "apply", "count", "follow"}
# A subject holding one of these is a clause or an instruction, not a thing ("report a lost parcel if it").
_NOT_SUBJECT = {"if", "when", "it", "you", "we", "they", "unless", "because", "that", "which", "who", "whose",
                "today", "never", "always", "please", "do", "don't", "only", "also"}  # fmt: skip
_MODAL_RULE = {"must", "should", "need", "needs"}
_BE = {"is", "are", "was", "were"}
_IRREGULAR = {"paid", "held", "made", "sold", "shown", "given", "kept", "sent", "built", "done", "taken",
              "seen", "set", "put", "left", "met", "told", "found", "worn", "brought", "bought"}  # fmt: skip
_STOP = {"within", "for", "at", "in", "on", "by", "with", "from", "to", "after", "before", "if", "unless",
         "when", "until", "up", "of", "and", "or", "but", "as", "than", "per", "via", "once"}  # fmt: skip
_TIME = re.compile(
    r"\b\d+\s*(?:-\s*\d+\s*)?(?:business |working |calendar )?(?:day|hour|week|month|year|minute)s?\b"
)
_MONEY = re.compile(r"[$€£]\s?\d")
ADDRESS = re.compile(r"\b\d+ [A-Z]\w+ (?:Street|St|Avenue|Ave|Road|Rd|Lane|Way|Plaza|Boulevard|Drive)\b")
_PHONE = re.compile(r"\(\d{3}\) \d{3}-\d{4}|\+\d[\d ]{7,}")
_ASK_ABOUT = (
    "What should I know about {topic}?",
    "Can you tell me about {topic}?",
    "What are the details on {topic}?",
    "What's the rule on {topic}?",
)


def names_in(names: Mapping[str, str], texts: Sequence[str]) -> dict[str, str]:
    """The entries of `names` whose code occurs in one of the texts (what a conversation's documents use)."""
    joined = " ".join(texts)
    return {code: name for code, name in names.items() if code in joined}


def _base(verb: str) -> str:
    """The verb after 'does': 'carries' -> 'carry', 'matches' -> 'match', 'has' -> 'have'."""
    special = {"has": "have", "does": "do", "is": "be"}
    if verb in special:
        return special[verb]
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "sses", "xes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") and not verb.endswith("ss") else verb


def _third_person(verb: str) -> bool:
    return (verb.endswith("s") and not verb.endswith("ss")) or verb in ("has", "does")


def _head(rest: str, limit: int = 6) -> str:
    """The start of a verb phrase, up to the first detail (a number, a preposition, a clause break)."""
    out: list[str] = []
    for word in rest.split():
        bare = word.strip(",;:.").lower()
        if re.search(r"\d|[$€£]", word) or (bare in _STOP and out) or len(out) >= limit:
            break
        out.append(word.strip(",;:."))
        if word.endswith((",", ";", ":", ".")):
            break
    return " ".join(out)


def _participle(word: str) -> bool:
    word = word.lower().strip(",;:.")
    return word.endswith("ed") or word in _IRREGULAR


def sentence_question(sentence: str, rng: random.Random) -> str | None:
    """A question whose answer is the sentence, built around its subject and verb; None when the
    sentence has no short subject before a verb (then the caller asks about a topic)."""
    ours = re.match(
        r"We ([a-z]+) (.+)", sentence
    )  # "We hold orders for 7 days" -> "How long do you hold orders?"
    if ours and ours.group(1) not in _BE | _MODAL_CAN | _MODAL_RULE | {"do", "will", "also"}:
        head = _head(ours.group(2))
        if head and _TIME.search(ours.group(2)):
            return f"How long do you {ours.group(1)} {customer_side(head)}?"
    verbs = set(QUESTION_VERBS)
    split = subject_split(sentence, verbs)
    # "Taxes and airport charges are refunded": a plural noun that looks like a verb, followed by the
    # real one; split again without it.
    while split and split[2].split()[:1] and split[2].split()[0].lower() in _BE | _MODAL_CAN | _MODAL_RULE:
        verbs.discard(split[1])
        split = subject_split(sentence, verbs)
    if split is None or split[1] in ("do", "does"):  # "Weather delays do not entitle ...": no question
        return None
    subject, verb, rest = split
    subject = customer_side(inside_question(subject))
    if re.match(r"[A-Z]-[a-z]", subject):  # "E-bike claims" inside a question: "e-bike claims"
        subject = subject[0].lower() + subject[1:]
    if not a_thing(subject) or re.search(r"\d", subject):
        return None
    words = rest.split()
    if verb in _MODAL_CAN:
        head = _head(rest)
        if not head:
            return None
        return rng.choice((f"Can {subject} {head}?", f"Is it possible for {subject} to {head}?"))
    if verb in _MODAL_RULE:
        return rng.choice((f"What are the rules for {subject}?", f"What is required for {subject}?"))
    if verb in _BE:
        if words and _participle(words[0]):
            after = " ".join(words[1:])
            wh = "How much" if _MONEY.search(after) else "When" if _TIME.search(after) else "How"
            if re.match(r"at\s+[A-Z]", after):  # "in Business fares" is no place
                wh = "Where"
            return f"{wh} {verb} {subject} {words[0].strip(',;:.')}?"
        if _MONEY.search(rest):
            return f"How much {verb} {subject}?"
        return None
    if verb == "will" or (words and words[0].lower() == "not"):
        return None  # "My tubeless tyre will not seal": no "What do ... will?"; the caller asks a topic
    do = "does" if _third_person(verb) else "do"
    base = _base(verb)
    if base == "cost":
        return rng.choice((f"How much {do} {subject} cost?", f"What's the cost of {subject}?"))
    if base in ("take", "last") and _TIME.search(rest):
        return f"How long {do} {subject} {base}?"
    if base in _INTRANSITIVE and words and words[0].lower() == "with":
        return f"What {do} {subject} {base} with?"
    if base in _INTRANSITIVE:
        return f"{'When' if _TIME.search(rest) or ':' in rest else 'How'} {do} {subject} {base}?"
    if base in _YES_NO_VERBS:  # "A battery counts as faulty only if ...": "Does a battery count as faulty?"
        head = re.sub(r"\s+only$", "", _head(rest))
        return f"{do.capitalize()} {subject} {base}{' ' + head if head else ''}?"
    if words and words[0].lower() in _STOP:  # "E-bikes ship in ..." : the verb needs its object to ask
        return None
    return rng.choice((f"What {do} {subject} {base}?", f"What exactly {do} {subject} {base}?"))


_INDEFINITE = {"anyone", "anybody", "everyone", "everybody", "someone", "somebody", "nobody"}


def inside_question(phrase: str) -> str:
    """A phrase that opened a sentence as it reads inside a question: its first word lower-cased when it
    is an article, a determiner or an indefinite pronoun ("The Metro E8" -> "the Metro E8", "Anyone
    ordering" -> "anyone ordering"); a name keeps its capital."""
    first, _, rest = phrase.partition(" ")
    if first[:1].isupper() and first[1:].islower() and first.lower() in DETERMINERS | _INDEFINITE:
        return f"{first.lower()} {rest}" if rest else first.lower()
    return phrase


def without_article(phrase: str) -> str:
    """`phrase` without a leading article ("the Metro E8" -> "Metro E8"), to tell whether a text names it."""
    return re.sub(r"^(?:the|a|an)\s+", "", phrase, flags=re.IGNORECASE)


def _is_are(what: str) -> str:
    """The verb a plural measure takes ("exclusions" are, "price" is)."""
    last = what.split()[-1].lower() if what.split() else ""
    return "are" if last.endswith("s") and not last.endswith(("ss", "us", "is")) else "is"


def a_thing(subject: str) -> bool:
    """Whether a sentence's subject names a thing (not a clause: "tyres that", "report a parcel if it";
    not a preposition's object: "After a tooth" of "After a tooth is taken out, ...")."""
    first = subject.split()[0].lower() if subject.split() else ""
    opens = first not in CLOSED or first in DETERMINERS
    return ":" not in subject and opens and not _NOT_SUBJECT & set(subject.lower().split())


def topic_question(topic: str, rng: random.Random, sentence: str = "") -> str:
    """A general question about a topic (a sentence that gives no subject and verb to ask about); where
    the sentence is an address or a phone number, the question asks for that."""
    topic = inside_question(customer_side(topic))
    if ADDRESS.search(sentence):
        return rng.choice((f"Where is {topic}?", f"What's the address of {topic}?"))
    if _PHONE.search(sentence):
        return f"What's the phone number for {topic}?"
    return rng.choice(_ASK_ABOUT).format(topic=topic)


def customer_side(text: str) -> str:
    """The business's words as the customer says them: "our stores" -> "your stores"."""
    return re.sub(r"\b([Oo])ur\b", lambda m: "Your" if m.group(1) == "O" else "your", text)


def quantity_question(quantity: str, rng: random.Random) -> str:
    """A question about what a number stands for ("What is the $99 for?")."""
    if _TIME.search(quantity):
        return rng.choice((f"What applies within {quantity}?", f"What happens after {quantity}?"))
    return rng.choice((f"What is the {quantity} for?", f"What does the {quantity} cover?"))


def measure(column: str) -> str:
    """A column as the thing asked for: 'price_usd' -> 'price', 'daily_rate_usd' -> 'daily rate'."""
    words = column_label(column).split()
    while len(words) > 1 and words[-1].lower() in _UNITS:
        words.pop()
    return " ".join(words)


def cells_question(thing: str, place: str | None, column: str, value: str, rng: random.Random) -> str:
    """A question whose answer is one cell: what the column means, asked about the row's thing (and
    the place it is at, for a row keyed by store and item)."""
    what = measure(column)
    lowered = column.lower()
    who = f"{thing} at {place}" if place else thing
    if any(w in lowered for w in _STOCK_COLUMNS) and place:
        return rng.choice((
            f"Is {thing} in stock at {place}?",
            f"Does {place} have {thing} in stock?",
            f"How many of {thing} does {place} have in stock?",
        ))  # fmt: skip
    if lowered in ("units", "count", "number") and place:
        return f"How many of {thing} does {place} have?"
    first, _, more = what.partition(" ")
    verb = first in QUESTION_VERBS and first.endswith("s") and value.strip().lower() not in _YES_NO
    if verb and not more:  # a column "covers", "includes"
        base = _base(first)
        return f"What is {base}{'d' if base.endswith('e') else 'ed'} for {who}?"
    if verb:  # "applies to"
        return f"What does {who} {_base(first)} {more}?"
    if value.strip().lower() in _YES_NO:
        first, _, more = what.partition(" ")
        if first == "has" and more:
            article = "" if more.endswith("s") else "a "
            return f"Does {who} have {article}{more}?"
        if more and first.endswith("s") and len(first) > 3:
            return f"Does {who} {_base(first)} {more}?"
        return f"Does {who} have {what}?"  # "parking", "step free access": not "For X, is it parking?"
    if any(w in lowered for w in _MONEY_COLUMNS) and re.search(r"\d", value):
        return rng.choice((f"How much is the {what} for {who}?", f"What does {who} cost, {what}-wise?")
                          if what == "price" else (f"How much is the {what} for {who}?",))  # fmt: skip
    if any(w in lowered for w in _TIME_COLUMNS) and re.search(r"\d", value):
        return f"How long does {who} take?" if what == "duration" else f"What is the {what} for {who}?"
    if what.split()[-1].lower() in CLOSED:  # a column "available at": "What is X available at?"
        return f"What is {who} {what}?"
    return rng.choice((
        f"What {_is_are(what)} the {what} of {who}?",
        f"Can you tell me the {what} for {who}?",
        f"What {what} does {who} have?",
    ))  # fmt: skip


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _amount(column: str, value: str) -> str:
    """A bare number with the unit its column names: ('price_usd', '749') -> '$749', ('duration_hours',
    '1.5') -> '1.5 hours'; anything else as it is (the value stays verbatim inside)."""
    unit = column.lower().rsplit("_", 1)[-1]
    if not re.fullmatch(r"\d[\d,]*(?:\.\d+)?", value):
        return value
    if unit in _CURRENCY:
        return f"{_CURRENCY[unit]}{value}"
    return f"{value} {_UNIT_WORDS[unit]}" if unit in _UNIT_WORDS else value


def cells_answer(thing: str, place: str | None, column: str, value: str) -> str:
    """The sentence that answers `cells_question`: what the column means, said of the row's thing (at
    its place), with the cell's value verbatim ("The Westbrook Station store (RC-04) has 2 of the
    Ridgeline Commuter 300 (RC-HYB-300) in stock.")."""
    what = measure(column)
    lowered = column.lower()
    value = value.strip()
    who = f"{thing} at {place}" if place else thing
    if any(w in lowered for w in _STOCK_COLUMNS) and place:
        return f"{_capital(place)} has {value} of {thing} in stock."
    if lowered in ("units", "count", "number") and place:
        unit = " units" if lowered == "units" else ""
        return f"{_capital(place)} has {value}{unit} of {thing}."
    first, _, more = what.partition(" ")
    if value.lower() in ("yes", "no"):  # the value is the "Yes" or "No" the sentence opens with
        yes = value.lower() == "yes"
        if first == "has" and more:
            article = "" if more.endswith("s") else "a "
            return f"Yes, {who} has {article}{more}." if yes else f"No, {who} does not have {article}{more}."
        if more and first.endswith("s") and len(first) > 3:
            return f"Yes, {who} {first} {more}." if yes else f"No, {who} does not {_base(first)} {more}."
        return f"Yes, {who} is {what}." if yes else f"No, {who} is not {what}."
    if first in QUESTION_VERBS and first.endswith("s"):  # a column "covers", "applies to"
        return f"{_capital(who)} {what} {value}."
    amount = _amount(column, value)
    if more and what.split()[-1] in _STOP:  # a column "available at": "X is available at RC-01,RC-02"
        return f"{_capital(who)} is {what} {amount}."
    if what == "price" and amount != value:
        return f"{_capital(who)} costs {amount}."
    if what == "duration" and amount != value:
        return f"{_capital(who)} takes {amount}."
    if amount == value and lowered.rsplit("_", 1)[-1] in _UNIT_WORDS:
        what = column_label(column)  # "opening hours" holds no number to put the hours after
    be = "are" if what.endswith("s") and not what.endswith("ss") else "is"
    of = "for" if any(w in lowered for w in _MONEY_COLUMNS) else "of"  # "the deposit for", "the brand of"
    return f"The {what} {of} {who} {be} {amount}."


def key_noun(column: str) -> str:
    """What a key column's values are, for a follow-up ("that store"): 'store_id' -> 'store',
    'sku' -> 'item', 'warranty_code' -> 'warranty'."""
    words = [
        w for w in column_label(column).lower().split() if w not in ("id", "code", "no", "number", "sku")
    ]
    return words[-1] if words else "item"


def without(question: str, entity: str | None) -> bool:
    """True when the question does not name `entity` (a PRE-FILLER's question must leave it to the answer)."""
    return not entity or not mentions(question, entity)


def place_columns(key: Sequence[tuple[str, Any]]) -> list[str]:
    """The key columns that say where (store id, branch ...)."""
    return [c for c, _ in key if any(w in c.lower() for w in PLACE_COLUMNS)]
