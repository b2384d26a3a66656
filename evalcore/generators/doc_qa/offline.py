"""The offline conversation generator: the seed's structure, with answers copied from the documents.

No model: every expected answer is one or more facts (evalcore.documents.facts) of the chain's
documents, i.e. actual sentences and table cells (said as sentences about the row as a customer names it,
each cited value verbatim: `wording.cells_answer`), so it is correct by construction and a retrieval bot
over the same documents can answer the single-document questions. Questions are what a customer would type
around the fact's most specific entity (a name before an id; an id only when the system card shows it to
customers; for a table row, the row's name rather than its key): they never quote a document's title. The
unanswerable question is a near-miss: the same kind of question about a neighbour of an entity the
conversation used (the "Commuter 400" when the documents know the "Commuter 300"), which no document of
the context mentions; only without such an entity a plausible aspect nobody documents. The page marks
offline items as such.

The turn plan for a chain of d documents and L pairs (`plan_turns`):
- the last pair is SYNTHESIS over all d documents; one pair is unanswerable (CANNOTANSWER), placed after
  the first FILLER (or mid-way), never between a PRE-FILLER and its FILLER;
- with room, the first pair is a SINGLE-DOC lookup on the first document (the spec's own), about the
  spec's subject (`subject`, evalcore.generators.doc_qa.subject) and naming it;
- the first document switch is a PRE-FILLER (answer names the bridging entity) then a FILLER on the next
  document (refers to the entity without naming it); later switches are PRE-FILLER/FILLER pairs while
  the pairs left allow one for every remaining switch and one more, else MULTI-DOC pairs (one fact
  from each side of the bridge); with room left, one MULTI-DOC over the last switch, then SINGLE-DOC
  lookups on unvisited chain documents, then policies.
- questions are distinct across the run: the job passes the questions and answers of the conversations
  before (`asked_run`, `answered`); a fact already answered is picked only when no other fits, a question
  already asked is asked another way (`distinct`), else another fact of its document is asked.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evalcore.documents.entities import canonical_name, extract_entities
from evalcore.documents.facts import Fact, column_label, document_facts, mentions, relevance
from evalcore.documents.inflection import says
from evalcore.documents.phrases import nouns, title_phrase
from evalcore.documents.retrieval import tokenize
from evalcore.documents.sentences import sentence_subject
from evalcore.documents.wording import (
    ADDRESS,
    a_thing,
    cells_answer,
    cells_question,
    customer_side,
    inside_question,
    key_noun,
    measure,
    place_columns,
    quantity_question,
    sentence_question,
    topic_question,
    without_article,
)
from evalcore.generators.doc_qa.schema import (
    CANNOTANSWER,
    QAConversation,
    QATurn,
    QueryType,
    Source,
    is_cannot_answer,
)
from evalcore.models.common import content_hash

_ID = re.compile(r"^[A-Z0-9]+(?:-[A-Z0-9]+)+$")
_ID_IN_TEXT = re.compile(r"\b[A-Z][A-Z0-9]*-[A-Z0-9][A-Z0-9-]*\b")
_NUMBER = re.compile(r"\d+")
_DOCUMENT_NAME = re.compile(r"\b[A-Z]\w*(?: [A-Z&]\w*)* (?:Policy|Guide|FAQ|Terms|Overview)\b")
_VERB_AFTER = {"be", "have", "cost", "include", "require", "take", "come", "need", "apply", "mean"}
_PLACE_FIRST = re.compile(r"([A-Z][\w'-]*(?: [A-Z][\w'-]*)*) *[(,]")  # "Alder Creek (RC-01), ..."
_PRONOUN = re.compile(r"(?:It|They|This|These|That|Those|There)\b")
_QUANTITY = re.compile(r"^[$€£]?\d[\d.,]*\s*[%\w-]*(?: \w+)?$")  # "$99", "15%", "90 days", "14 business days"
# Unanswerable questions when no entity has a near-miss neighbour: what a customer plausibly asks about
# a thing, kept only when none of its phrases occurs in any document of the context.
ASPECTS = (
    ("Is there a student discount on {e}?", ("student",)),
    ("Can I pay for {e} in monthly instalments?", ("instalment", "installment", "financing")),
    ("Does {e} come in other colours?", ("colour", "color")),
    ("Can {e} be shipped to Canada?", ("canada", "international")),
    ("Is there a loyalty points scheme that covers {e}?", ("loyalty", "points")),
)
OPENING_TRIES = 12  # facts on the spec's subject tried for a first question the run has not asked
RETRIES = 4  # other facts a step is tried on when the run already asked its question
UNANSWERABLE_SUBJECTS = 12  # facts of the document whose entities an unanswerable question may be about
FOLLOW = (
    "And what about the {noun} you just mentioned?",
    "What else should I know about that {noun}?",
    "Is there anything more about that {noun}?",
)
# The SYNTHESIS question: everything the conversation found about one entity, as one answer.
SUM_UP = (
    "So, all in all, what do I need to know about {e}?",
    "Putting it all together, what does this mean for {e}?",
    "Can you sum up what applies to {e}?",
    "To recap, what's the full picture for {e}?",
)
SUM_UP_ON = (
    "So, for {e}, what do I need to know about {a}?",
    "Can you sum up {a} for {e}?",
    "All in all, what about {a} for {e}?",
)
# The first question's subject in front of it, when the question's own words do not name it.
LEAD_INS = (
    "Quick question about {e}: {q}",
    "I have a question about {e}: {q}",
    "Regarding {e}, {q}",
)
ACROSS = (
    "What do I need to know about {e}, all in all?",
    "How does it all fit together for {e}?",
    "Taking both into account, what applies to {e}?",
)


@dataclass(frozen=True)
class Step:
    """One planned pair: query type ('CANNOT' for the unanswerable one), document positions, switch."""

    type: str
    docs: tuple[int, ...]
    transition: int | None = None


def plan_turns(d: int, pairs: int, extra_docs: int = 0) -> list[Step]:
    """The pair plan for d chain documents and `pairs` pairs (see the module docstring); pairs >= 2."""
    if pairs < 2:
        raise ValueError("a doc-QA conversation needs at least 2 pairs: one CANNOTANSWER and the SYNTHESIS")
    slots = pairs - 2
    plan: list[Step] = []
    if d > 1:
        if slots >= 3:
            plan.append(Step("SINGLE-DOC", (0,)))
        remaining = slots - len(plan)
        for t in range(d - 1):
            if remaining <= 0:
                break
            # Later switches bridge with PRE-FILLER/FILLER only with a pair to spare, else by MULTI-DOC,
            # so every query type of the seed occurs at every d >= 2 (issue 33: each >= 5%).
            if remaining >= 2 and (t == 0 or remaining - 2 > d - 2 - t):
                plan += [Step("PRE-FILLER", (t,), t), Step("FILLER", (t + 1,), t)]
                remaining -= 2
            else:
                plan.append(Step("MULTI-DOC", (t, t + 1), t))
                remaining -= 1
        if remaining > 0 and not any(s.type == "MULTI-DOC" for s in plan):
            plan.append(Step("MULTI-DOC", (d - 2, d - 1), d - 2))  # room left: one cross-document inference
    visited = {i for step in plan for i in step.docs}
    order = [i for i in range(d) if i not in visited] + list(range(d, d + extra_docs)) + list(range(d))
    for k in range(slots - len(plan)):
        plan.append(Step("SINGLE-DOC", (order[k % len(order)],)))
    first_filler = next((i + 1 for i, s in enumerate(plan) if s.type == "FILLER"), None)
    pos = first_filler if first_filler is not None else min(len(plan), max(1, len(plan) // 2))
    about = plan[pos - 1].docs[-1] if pos else 0
    plan.insert(pos, Step("CANNOT", (min(about, d - 1),)))
    plan.append(Step("SYNTHESIS", tuple(range(d))))
    return plan


def _enum(items: list[str]) -> str:
    items = [i for i in items if i]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else ""


class _Writer:
    """Builds the pairs of one conversation from the task inputs."""

    def __init__(self, inputs: dict[str, Any], rng: random.Random) -> None:
        self.rng = rng
        self.chain = list(inputs["documents"])
        self.docs = self.chain + list(inputs.get("policies") or [])
        self.facts = [document_facts(d) for d in self.docs]
        self.position = {d["id"]: i for i, d in enumerate(self.docs)}
        spec_text = " ".join(
            str(inputs.get(k, "")) for k in ("probe", "probe_given", "probe_when", "probe_then")
        )
        self.query = set(tokenize(spec_text))
        self.probe = str(inputs.get("probe", ""))
        self.variant = int(inputs.get("variant") or 0)
        self.fresh = set(inputs.get("fresh") or [])  # facts no earlier conversation of the run was given
        self.ignore = {canonical_name(x) for x in inputs.get("ignore") or []}
        # Codes the system card itself shows (store ids a customer is told, say); others are internal.
        self.exposed = set(_ID_IN_TEXT.findall(str(inputs.get("system_description", ""))))
        self.names: dict[str, str] = dict(inputs.get("names") or {})  # code -> what a customer calls it
        self.titles = [str(d.get("title", "")) for d in self.docs if len(str(d.get("title", ""))) > 3]
        self.subject = [str(t) for t in inputs.get("subject") or [] if str(t).strip()]  # spec_subject's
        self.known: frozenset[str] | None = None  # nouns of the context (`subject_phrase`), when needed
        self.used: set[tuple[str, str]] = set()
        # Questions earlier conversations of the run asked of these documents, then this one's own.
        self.seen = {_key(q) for q in [*(inputs.get("asked") or []), *(inputs.get("asked_run") or [])]}
        self.repeats: list[str] = []  # questions this conversation had to ask again (`unasked`)
        self.last_facts: list[Fact] = []  # the facts of the pair made last (`pair`)
        self.answered = "\n".join(str(a) for a in inputs.get("answered") or []).casefold()
        self.by_doc: dict[int, list[Fact]] = defaultdict(list)
        self.bridges = self._bridges(inputs.get("bridges") or [])

    def _bridges(self, links: list[dict[str, Any]]) -> list[str | None]:
        """Per switch, the first bridging entity both documents really mention (None if none does)."""
        chosen: list[str | None] = []
        for t in range(len(self.chain) - 1):
            names = links[t].get("bridging_entities", []) if t < len(links) else []
            ok = [
                b
                for b in names
                if canonical_name(b) not in self.ignore
                and any(f.mentions(b) for f in self.facts[t])
                and any(f.mentions(b) for f in self.facts[t + 1])
            ]
            # Conversation m of a chain bridges on its m-th shared entity: the n conversations differ.
            chosen.append(ok[self.variant % len(ok)] if ok else None)
        return chosen

    # ------------------------------------------------------------------ facts

    def pick(self, i: int, must: str | None = None, avoid_key: str | None = None) -> Fact | None:
        """A fact of document i (mentioning `must`), on the spec's theme, not used yet if possible."""
        pool = [f for f in self.facts[i] if must is None or f.mentions(must)]
        if avoid_key is not None:  # a PRE-FILLER on a table: the entity should be a value, not the key...
            in_value = [
                f for f in pool if not mentions(" ".join(v for _, v in f.cells[: f.key_size]), avoid_key)
            ]
            # ...else the row is asked for by a value only it has ("which sku has model X?")
            pool = in_value or [f for f in pool if self.unique_value(f)] or pool
        if not pool:
            return None
        # Facts earlier conversations of the run gave as answers are asked again only when no other fits.
        pool = [f for f in pool if not self.stale(f)] or pool
        # The job's fresh facts first, while some fit: conversations of one run then ask different facts.
        pool = [f for f in pool if f.text in self.fresh and (f.document_id, f.text) not in self.used] or pool
        # Ties on relevance go by a hash of spec and fact, not document order: specs on one document
        # then ask about different facts of it rather than the same first few.
        ranked = sorted(
            pool, key=lambda f: (-relevance(f.text, self.query), content_hash([self.probe, f.text]))
        )
        window = max(5, len(ranked) // 4)
        # Conversation m of a chain draws from the m-th window of the spec-relevance ranking (then the
        # next ones): the n conversations of one chain ask about different facts of it instead of the
        # same few on-theme ones.
        start = self.variant * window % len(ranked) if len(ranked) > window else 0
        rotated = ranked[start:] + ranked[:start]
        fresh = [f for f in rotated if (f.document_id, f.text) not in self.used]
        stripe = [f for f in rotated[:window] if (f.document_id, f.text) not in self.used]
        fact = self.rng.choice(stripe or fresh[:window] or rotated[:window])
        self.used.add((fact.document_id, fact.text))
        self.by_doc[i].append(fact)
        return fact

    def stale(self, fact: Fact) -> bool:
        """True when an earlier conversation of the run answered with this fact (`answered`)."""
        if not self.answered:
            return False
        said = fact.text if fact.kind != "cells" else self.answer(fact)
        return said.casefold() in self.answered

    def unique_value(self, fact: Fact) -> bool:
        """True when the fact's (last) cited cell value occurs in one row only of its table."""
        if fact.kind != "cells" or len(fact.cells) <= fact.key_size:
            return False
        column, value = fact.cells[-1]
        rows = self.docs[self.position[fact.document_id]].get("rows", [])
        return sum(str(r.get(column, "")).strip() == value for r in rows) == 1

    def topic(self, fact: Fact, avoid: str | None = None) -> str:
        """The fact's most specific entity, rarest in its document (not `avoid`), else key words."""
        if fact.kind == "cells":
            name = self.row_name(fact)
            if not avoid or not mentions(name, avoid):
                return name
            values = [v for _, v in fact.cells[: fact.key_size] if not avoid or not mentions(v, avoid)]
            return values[0] if values else fact.cells[-1][1]
        skip = self.ignore | {canonical_name(t) for t in self.titles}
        found = extract_entities(fact.text)
        entities = [e for e in found if canonical_name(e.text) not in skip and self.clean(e.text)]
        if avoid:
            entities = [e for e in entities if not mentions(e.text, avoid) and not mentions(avoid, e.text)]
        entities = [e for e in entities if len(e.text) > 2]
        if entities:
            facts = self.facts[self.position[fact.document_id]]
            # A customer names a thing; an internal code only when the card shows it to them.
            rank = {"name": 0, "id": 1, "quantity": 2}
            best = min(
                entities,
                key=lambda e: (e.kind == "id" and e.text not in self.exposed, rank[e.kind],
                               sum(f.mentions(e.text) for f in facts)),
            )  # fmt: skip
            subject = sentence_subject(fact.text)
            if (
                best.kind == "quantity"
                and subject
                and a_thing(subject)
                and not (avoid and mentions(subject, avoid))
            ):
                return subject  # "opened spare batteries", not "15%": a customer asks about a thing
            if best.kind != "id" or best.text in self.exposed:
                return best.text
        subject = sentence_subject(fact.text)  # "Opened spare batteries" of "... carry a 15% fee"
        if (
            subject
            and a_thing(subject)
            and self.clean(subject)
            and (not avoid or not mentions(subject, avoid))
        ):
            return subject
        heading = fact.heading if fact.heading and self.clean(fact.heading) else ""  # never a title
        return _lower_first(heading) if heading else "this"

    # -------------------------------------------------------------- questions

    def _row(self, fact: Fact) -> dict[str, str]:
        rows = self.docs[self.position[fact.document_id]].get("rows", [])
        key = fact.cells[: fact.key_size]
        row = next((r for r in rows if all(str(r.get(c, "")).strip() == v for c, v in key)), {})
        return {c: str(v).strip() for c, v in row.items()}

    def row_ref(self, fact: Fact, codes: bool = False) -> tuple[str, str | None]:
        """(thing, place) a customer names a table row by: the names of its key codes ("the Ridgeline
        Commuter 300" at "the Westbrook Station store"), else a name-like cell of the row (not a code,
        not a number), else its key; an unexposed code is kept only when the row has nothing else.

        With `codes` (an answer, which must carry every cell it cites), each key value the words leave
        out follows in brackets: "the Westbrook Station store (RC-04)", "the warranty for new e-bikes
        (WB-EBIKE)"."""
        key = fact.cells[: fact.key_size]
        speakable = all(v in self.names or v in self.exposed or not _ID.match(v) for _, v in key)
        if key and speakable and any(v in self.names for _, v in key):
            places = place_columns(key)
            named = {c: self.names.get(v, v) for c, v in key}
            if codes:
                named = {
                    c: f"{n} ({v})" if n != v else n for (c, v), n in zip(key, named.values(), strict=True)
                }
            things = [n for c, n in named.items() if c not in places] or list(named.values())
            place = next((named[c] for c in places if named[c] not in things), None)
            return " and ".join(things), place
        cells = self._row(fact)
        for column, text in cells.items():
            if re.search(r"[a-z]", text) and not _ID.match(text) and "name" in column.lower():
                return self._with_codes(f"the {text}", key) if codes else f"the {text}", None
        if any(_ID.match(v) and v not in self.exposed for _, v in key):  # a code the customer never sees
            asked = {c for c, _ in fact.cells[fact.key_size :]}
            rows = self.docs[self.position[fact.document_id]].get("rows", [])
            # A cell that describes the row in words, not a list ("frame: lifetime; components: 2 years")
            described = [
                t
                for c, t in cells.items()
                if c not in asked and len(re.findall(r"[a-z]+", t)) >= 2 and not re.search(r";|: ", t)
            ]
            # a described cell only this row has names it without ambiguity
            unique = [
                t for t in described if sum(str(r.get(c, "")).strip() == t for r in rows for c in cells) == 1
            ]
            described = unique or described
            if described and codes:  # "the warranty for new e-bikes (WB-EBIKE)"
                return self._with_codes(
                    f"the {key_noun(key[0][0])} for {_lower_first(described[0])}", key
                ), None
            if described:
                return _lower_first(described[0]), None
        if codes:
            return " and ".join(f"the {key_noun(c)} {v}" for c, v in key), None
        return " and ".join(f"{column_label(c)} {v}" for c, v in key), None

    @staticmethod
    def _with_codes(words: str, key: tuple[tuple[str, str], ...]) -> str:
        """`words` followed by the key values they leave out, in brackets."""
        missing = ", ".join(v for _, v in key if v not in words)
        if missing and words.endswith(")"):  # "accessories (helmets, locks; WA-1Y)", not two brackets
            return f"{words[:-1]}; {missing})"
        return f"{words} ({missing})" if missing else words

    def row_name(self, fact: Fact) -> str:
        """How a customer names a table row (see `row_ref`), as one phrase."""
        thing, place = self.row_ref(fact)
        return f"{thing} at {place}" if place else thing

    def say(self, entity: str) -> str:
        """An entity as the customer refers to it: an unexposed code by its name (from the project's
        tables, else its table row's), else "that code"."""
        if entity in self.names:  # by name even when the card shows the code: "Harbor Point", not RC-02
            return self.names[entity]
        if not _ID.match(entity) or entity in self.exposed:
            return entity
        rows = [f for fs in self.by_doc.values() for f in fs if f.kind == "cells"]
        names = [self.row_name(f) for f in rows if any(v == entity for _, v in f.cells[: f.key_size])]
        return next((n for n in names if not _ID.search(n)), "that code")

    def clean(self, question: str) -> bool:
        """True when a question names no document title (of the context, or any policy, guide or FAQ
        a fact points to) and no code the customer never sees."""
        if any(mentions(question, title) for title in self.titles) or _DOCUMENT_NAME.search(question):
            return False
        return all(code in self.exposed for code in _ID_IN_TEXT.findall(question))

    def ask(self, fact: Fact, avoid: str | None = None) -> str:
        """A customer's question whose answer is `fact` (not naming `avoid`, never a document title)."""
        if fact.kind == "cells":
            thing, place = self.row_ref(fact)
            key_text = self.row_name(fact)
            values = [(c, v) for c, v in fact.cells[fact.key_size :] if not key_text.endswith(v)]
            values = values or fact.cells[fact.key_size :]
            if avoid and mentions(key_text, avoid) and values and self.unique_value(fact):
                column, value = values[0]
                names = _enum([column_label(c) for c, _ in fact.cells[: fact.key_size]])
                return f"Which {names} has {column_label(column)} {value}?"
            column, value = values[0]
            return cells_question(thing, place, column, value, self.rng)
        asked = sentence_question(fact.text, self.rng)
        if asked and self.clean(asked) and (not avoid or not mentions(asked, avoid)):
            return asked
        place = _PLACE_FIRST.match(fact.text) if ADDRESS.search(fact.text) else None
        # "Alder Creek (RC-01), 214 Millrace Street, ...": asked about the place, not its street
        topic = (
            place.group(1) if place and not mentions(place.group(1), avoid or "") else self.topic(fact, avoid)
        )
        if _QUANTITY.match(topic):
            return quantity_question(topic, self.rng)
        return topic_question(topic, self.rng, fact.text)

    def near_miss(self, context: str) -> tuple[str, str] | None:
        """(entity, neighbour): an entity of the conversation with a number, and the same with another
        number that no document of the context mentions ("Commuter 300" -> "Commuter 400")."""
        used = [f for facts in self.by_doc.values() for f in facts]
        for fact in reversed(used):
            entity = self.row_ref(fact)[0].removeprefix("the ") if fact.kind == "cells" else self.topic(fact)
            numbers = list(_NUMBER.finditer(entity))
            if not numbers or (_ID.match(entity) and entity not in self.exposed):
                continue
            last = numbers[-1]
            n = int(last.group())
            for other in (n + 10 ** max(len(last.group()) - 1, 0), n + 1, n * 2):
                variant = entity[: last.start()] + str(other).zfill(len(last.group())) + entity[last.end() :]
                if variant.casefold() not in context:
                    return entity, variant
        return None

    def cannot(self, i: int) -> QATurn:
        """A near-miss of the context the documents do not answer (see the module docstring)."""
        context = " ".join(_text_of(d) for d in self.docs).casefold()
        facts = self.by_doc.get(i) or self.facts[i][:1]
        miss = self.near_miss(context)
        if miss is not None:
            entity, variant = miss
            question = topic_question(variant, self.rng)
            used = [f for fs in self.by_doc.values() for f in fs]
            asked = next((self.ask(f) for f in reversed(used) if entity in self.ask(f)), "")
            if asked:  # the same question as an answerable one, about the neighbour
                question = asked.replace(entity, variant)
        subject = self.topic(facts[-1]) if facts else "this"
        usable = [q for q, phrases in ASPECTS if not any(p in context for p in phrases)] or [ASPECTS[0][0]]
        options = [q.format(e=subject) for q in self.rng.sample(usable, len(usable))]
        if miss is None:
            question = options[0]
        # A question earlier conversations of the run asked is not asked again while another fits: when
        # every aspect of this subject was asked, the same aspects of the document's other entities (as
        # unanswerable: no document of the context has the aspect's words).
        if all(_key(q) in self.seen for q in [question, *options]):
            others = dict.fromkeys(self.topic(f) for f in self.facts[i][:UNANSWERABLE_SUBJECTS])
            options += [q.format(e=e) for e in others if e and e != subject for q in usable]
        question = next((q for q in [question, *options] if _key(q) not in self.seen), question)
        return QATurn(
            question=question,
            answer=CANNOTANSWER,
            document_ids=[self.chain[i]["id"]],
            query_type="SINGLE-DOC",
            theme_relation=f"Checks the system admits what its documents do not say ('{self.probe}').",
            resolved_question=question,
        )

    # ------------------------------------------------------------------ pairs

    def pair(
        self, qtype: QueryType, facts: list[Fact], question: str, bridge: str | None, resolved: str = ""
    ) -> QATurn:
        # Each fact is a whole sentence or whole sentences of table cells: together they read as one answer.
        answer = " ".join(self.answer(f) for f in facts)
        self.last_facts = facts
        return QATurn(
            question=question,
            answer=answer,
            document_ids=list(dict.fromkeys(f.document_id for f in facts)),
            query_type=qtype,
            bridging_entity=bridge,
            theme_relation=f"Looks up what the documents say within '{self.probe}'.",
            resolved_question=resolved or question,
            sources=[Source(**f.source()) for f in facts],
        )

    def answer(self, fact: Fact) -> str:
        """A fact as an answer says it: a sentence as the document has it; table cells as one sentence per
        cited value, about the row as a customer names it with its codes in brackets, every value verbatim
        ("The Westbrook Station store (RC-04) has 2 of the Ridgeline Commuter 300 (RC-HYB-300) in stock.")."""
        if fact.kind != "cells":
            return fact.text
        key = fact.cells[: fact.key_size]
        thing, place = self.row_ref(fact, codes=True)
        said = []
        for column, value in fact.cells[fact.key_size :]:
            # The cell a code's name comes from: "The Ridgeline Commuter 300 has the SKU RC-HYB-300."
            code = next(
                (
                    (c, v)
                    for c, v in key
                    if v in self.names and value.startswith(self.names[v].removeprefix("the "))
                ),
                None,
            )
            if code is not None:
                label = column_label(code[0])
                said.append(f"The {value} has the {label.upper() if len(label) <= 3 else label} {code[1]}.")
            else:
                said.append(cells_answer(thing, place, column, value))
        return " ".join(said)

    def single(self, i: int, qtype: QueryType = "SINGLE-DOC", must: str | None = None) -> QATurn | None:
        fact = self.pick(i, must, avoid_key=must)
        if fact is None:
            return None
        return self.pair(qtype, [fact], self.ask(fact, avoid=must), must)

    def opening(self, i: int) -> QATurn | None:
        """The first pair: a lookup in document i (the spec's own) on the spec's subject, naming it, so
        the conversation starts on what its spec tests; else in another document of the chain (a chain
        through the graph that starts at none of the spec's documents holds one later:
        `chains_for_spec`), else in one of its policies (the spec's own, by default: a spec about
        appointments may cite a one-document chain that names them once, and the policy on them);
        None when no fact of the context names it. Of the questions the run has not asked, the first
        whose own words name the subject wins, else the first that names it by a noun phrase of the
        spec's title in front ("Quick question about late fees: ..."), else the first plain one: a
        subject the title gives no noun phrase for ("cold", "per") is never put in front of it."""
        best: tuple[int, int, Fact, str] | None = None  # (rank, document, fact, question), lowest first
        fallback: tuple[int, int, Fact, str] | None = None  # the run asked it already
        for doc in dict.fromkeys([i, *range(len(self.docs))]):
            for term in self.subject:
                # A table row is about what the customer calls it, whichever of its cells the fact cites.
                about = [f for f in self.facts[doc] if self.on_subject(f, term)]
                about = [f for f in about if not self.stale(f)] or about
                # Conversation m of a spec opens on its m-th fact about the subject: conversations of one
                # spec worked at the same time (not told of each other's questions) still open differently.
                about.sort(key=lambda f: (-relevance(f.text, self.query), content_hash([self.probe, f.text])))
                shift = self.variant % len(about) if about else 0
                for fact in (about[shift:] + about[:shift])[:OPENING_TRIES]:
                    rank, question = self._opening_question(fact, term)
                    if _key(question) in self.seen:
                        fallback = fallback or (rank, doc, fact, question)
                    elif best is None or rank < best[0]:
                        best = (rank, doc, fact, question)
                    if best is not None and best[0] == 0:
                        return self._opening_pair(*best[1:])
        chosen = best or fallback
        return self._opening_pair(*chosen[1:]) if chosen else None

    def _opening_question(self, fact: Fact, term: str) -> tuple[int, str]:
        """(rank, question) on `fact` for the subject `term`: 0 when the question's own words name the
        subject (by any of its terms), 1 when it names `term` by a noun phrase in front, 2 when it is
        asked plainly (no noun phrase of the title holds the term)."""
        question = self.ask(fact)
        if any(mentions(question, t) or says(question, t) for s in self.subject for t in (s, self.say(s))):
            return 0, question
        phrase = self.subject_phrase(term)
        if phrase is None:
            return 2, question
        # One lead-in per question, the next when the run asked it already (it still names the subject).
        at = int(content_hash([self.probe, question])[:8], 16)
        leads = [
            LEAD_INS[(at + k) % len(LEAD_INS)].format(e=phrase, q=_lower_first(question))
            for k in range(len(LEAD_INS))
        ]
        return 1, next((q for q in leads if _key(q) not in self.seen), leads[0])

    def subject_phrase(self, term: str) -> str | None:
        """How a person names the subject `term` in front of a question: a code's or a name's spoken form,
        else the noun phrase of the spec's title that holds the term (`phrases.title_phrase`: nouns
        learnt from the context's documents), else None."""
        spoken = self.say(term)
        if _ID.match(term) or spoken[:1].isupper() or spoken.startswith("the "):
            return spoken
        if self.known is None:
            self.known = nouns([_text_of(d) for d in self.docs])
        return title_phrase(self.probe, term, self.known)

    def _opening_pair(self, i: int, fact: Fact, question: str) -> QATurn:
        """The first pair: `question` on `fact` of document i."""
        self.used.add((fact.document_id, fact.text))
        self.by_doc[i].append(fact)
        return self.pair("SINGLE-DOC", [fact], question, None)

    def on_subject(self, fact: Fact, term: str) -> bool:
        """True when `fact` names the subject `term` (in any inflection: "Call 999" for "Calling 999")."""
        return fact.mentions(term) or says(fact.text, term) or self.row_named(fact, term)

    def row_named(self, fact: Fact, term: str) -> bool:
        """True when `fact` is a table row's cell and the customer's name for the row names `term`."""
        return fact.kind == "cells" and mentions(self.row_name(fact), term)

    def refer(self, question: str, bridge: str, fact: Fact) -> str | None:
        """`question` with the bridging entity referred to, not named ("... at that store"); None when
        the question does not name it."""
        spoken = self.say(bridge)
        at = question.casefold().find(spoken.casefold())
        if at < 0:
            return None
        key = [c for c, v in fact.cells[: fact.key_size] if v == bridge]
        if key:
            pointer = f"that {key_noun(key[0])}"
        elif spoken.startswith("the "):
            pointer = f"that {spoken.split()[-1]}"
        else:
            after = question[at + len(spoken) :].split()
            # "Economy Plus fares" -> "those fares"; a name alone -> "it"
            noun = after[0] if after and after[0].isalpha() and after[0].islower() else ""
            pointer = (
                ("those" if noun.endswith("s") else "that") if noun and noun not in _VERB_AFTER else "it"
            )
        return question[:at] + pointer + question[at + len(spoken) :]

    def filler(self, i: int, bridge: str) -> QATurn | None:
        fact = self.pick(i, bridge)
        if fact is None:
            return None
        resolved = self.ask(fact)
        question = self.refer(resolved, bridge, fact)
        if question is None:
            noun = "code" if _ID.match(bridge) and bridge not in self.names else "one"
            question = self.rng.choice(FOLLOW).format(noun=noun)
            resolved = f"What else should I know about {self.say(bridge)}?"
        return self.pair("FILLER", [fact], question, bridge, resolved)

    def multi(self, a: int, b: int, bridge: str | None) -> QATurn | None:
        first, second = self.pick(a, bridge), self.pick(b, bridge)
        if first is None or second is None:
            return None
        if bridge:
            question = self.rng.choice(ACROSS).format(e=self.say(bridge))
        else:
            question = f"How do {self.topic(first)} and {self.topic(second)} work together?"
        return self.pair("MULTI-DOC", [first, second], question, bridge)

    def aspect(self, fact: Fact) -> str:
        """What a fact says about its entity, as a SYNTHESIS question names it: a table fact's column
        ("stock"), an address, a sentence's subject; empty when there is nothing to name."""
        if fact.kind == "cells":
            asked = fact.cells[-1] if len(fact.cells) > fact.key_size else ("", "yes")
            return "" if asked[1].lower() in ("yes", "no") else measure(asked[0]).removeprefix("in ")
        if ADDRESS.search(fact.text):
            return "the address"
        subject = sentence_subject(fact.text) or ""
        return customer_side(inside_question(subject)) if a_thing(subject) else ""

    def focus(self) -> str | None:
        """The one entity the SYNTHESIS is about: the bridge of the first switch, else (one document)
        the entity of the facts used so far that most of them name, then most facts of the document
        (at least two)."""
        links = [b for b in self.bridges if b]
        if links:
            return links[0]
        used = [f for fs in self.by_doc.values() for f in fs]
        facts = self.facts[0]
        best: tuple[int, int, str] | None = None
        for fact in reversed(used):
            said = " ; ".join(v for _, v in fact.cells) if fact.kind == "cells" else fact.text
            for entity in extract_entities(said):
                if entity.kind == "quantity" or canonical_name(entity.text) in self.ignore:
                    continue
                if not self.clean(entity.text):  # a document title, or a code nobody is told
                    continue
                if entity.kind == "id" and entity.text not in self.exposed and entity.text not in self.names:
                    continue
                count = sum(f.mentions(entity.text) for f in facts)
                score = (sum(f.mentions(entity.text) for f in used), count, entity.text)
                if count >= 2 and (best is None or score[:2] > best[:2]):
                    best = score
        return best[2] if best else None

    def synthesis(self) -> QATurn:
        """Facts about one entity (`focus`) from every document of the chain, as one answer."""
        entity = self.focus()
        links = [b for b in self.bridges if b]
        facts: list[Fact] = []
        for i in range(len(self.chain)):
            used = self.by_doc.get(i, [])
            about = [f for f in used if entity and f.mentions(entity)]
            fact = (about[-1] if about else None) or (self.pick(i, entity) if entity else None)
            if fact is None:
                near = [b for b in (self.bridges[i - 1] if i else None, self._bridge(i)) if b]
                fact = next((f for f in reversed(used) if any(f.mentions(b) for b in near)), None)
                fact = fact or next((f for b in near if (f := self.pick(i, b))), None) or self.pick(i)
            if fact is not None:
                facts.append(fact)
        if len(self.chain) == 1 and entity:
            # One document: two or three of its facts about the entity, the ones asked about first.
            # A sentence opening with a pronoun is about the sentence before it, whatever it names.
            more = sorted(
                (
                    f
                    for f in self.facts[0]
                    if f.mentions(entity) and f not in facts and not _PRONOUN.match(f.text)
                ),
                key=lambda f: (f not in self.by_doc.get(0, []), -relevance(f.text, self.query)),
            )
            facts += more[:2]
        aspects = [self.aspect(f) for f in facts] if entity else []
        named = [entity, self.say(entity)] if entity else []
        aspects = [
            a
            for a in dict.fromkeys(aspects)
            if a and not _QUANTITY.match(a) and self.clean(a)
            and not any(mentions(a, n) or mentions(n, a) for n in named)
        ]  # fmt: skip
        if entity and aspects:
            question = self.rng.choice(SUM_UP_ON).format(e=self.say(entity), a=_enum(aspects[:2]))
        elif entity:
            question = self.rng.choice(SUM_UP).format(e=self.say(entity))
        elif len(self.chain) == 1:  # no entity to gather facts on: the last fact again, summed up
            asked = self.ask(facts[0])
            question = f"So, to sum up: {asked[:1].lower()}{asked[1:]}"
        else:
            topics = _enum([self.topic(f) for f in facts[:3]])
            question = f"Putting it all together, how do {topics} fit together?"
        return self.pair("SYNTHESIS", facts, question, entity or (links[0] if links else None))

    def _bridge(self, i: int) -> str | None:
        return self.bridges[i] if i < len(self.bridges) else None

    def distinct(self, turn: QATurn) -> QATurn:
        """`turn`, or the same pair asked another way when the run already asked its question (issue 33:
        questions distinct across the run): about one aspect of its facts in particular, else each fact
        asked on its own (a FILLER still referring to its bridge). Kept as is when every way was asked."""
        if _key(turn.question) not in self.seen or is_cannot_answer(turn.answer):
            return turn
        question, resolved = turn.question.rstrip("?"), (turn.resolved_question or turn.question).rstrip("?")
        options: list[tuple[str, str]] = []
        for fact in self.last_facts:
            aspect = self.aspect(fact)
            if aspect and self.clean(aspect) and not mentions(question, without_article(aspect)):
                options.append((f"{question}, especially {aspect}?", f"{resolved}, especially {aspect}?"))
        for fact in self.last_facts:
            asked = self.ask(fact)
            bridge = turn.bridging_entity
            said = self.refer(asked, bridge, fact) if turn.query_type == "FILLER" and bridge else None
            options.append((said or asked, asked))
        # Last, other wordings of a generic follow-up or summing-up question about the same entity.
        entity = turn.bridging_entity
        families = {"FILLER": (FOLLOW,), "MULTI-DOC": (ACROSS, SUM_UP), "SYNTHESIS": (SUM_UP, ACROSS)}
        for family in families.get(turn.query_type, ()) if entity else ():
            spoken = self.say(entity)
            options += [(t.format(noun="one", e=spoken), t.format(noun="one", e=spoken)) for t in family]
        for said, meant in options:
            if _key(said) not in self.seen:
                return turn.model_copy(update={"question": said, "resolved_question": meant})
        return turn

    def step(self, step: Step, first: bool) -> QATurn | None:
        """The pair of one planned step, or None when its bridge or facts are missing."""
        bridge = self.bridges[step.transition] if step.transition is not None else None
        if first and step.type == "SINGLE-DOC" and (turn := self.opening(step.docs[0])):
            return turn
        if step.type == "CANNOT":
            return self.cannot(step.docs[0])
        if step.type == "SYNTHESIS":
            return self.synthesis()
        if step.type == "PRE-FILLER" and bridge:
            return self.single(step.docs[0], "PRE-FILLER", must=bridge)
        if step.type == "FILLER" and bridge:
            return self.filler(step.docs[0], bridge)
        if step.type == "MULTI-DOC":
            return self.multi(step.docs[0], step.docs[1], bridge)
        return None

    def write(self, pairs: int) -> QAConversation:
        """The whole conversation; a step whose facts are missing falls back to a SINGLE-DOC lookup, a
        step whose question the run already asked is made again on other facts (`unasked`)."""
        d = len(self.chain)
        turns: list[QATurn] = []
        lost: str | None = None  # the bridge of a PRE-FILLER that had to become a plain lookup
        for step in plan_turns(d, pairs, len(self.docs) - d):
            first = not turns
            bridge = self.bridges[step.transition] if step.transition is not None else None
            if step.type == "FILLER" and bridge and bridge == lost:
                # Its PRE-FILLER no longer names the bridge: "that store" would point at nothing.
                turn = self.named(step.docs[0], bridge)
            else:
                turn = self.step(step, first)
            if turn is None:  # no bridge or no fact for the planned type: a plain lookup instead
                turn = self.single(step.docs[-1]) or self.single(0) or self.cannot(0)
            turn = self.distinct(turn)
            if _key(turn.question) in self.seen and not (first and self.subject):
                turn = self.unasked(step, turn)
            if step.type == "PRE-FILLER" and turn.query_type != "PRE-FILLER":
                lost = bridge
            if _key(turn.question) in self.seen:
                self.repeats.append(turn.question)
            self.seen.add(_key(turn.question))
            turns.append(turn)
        return QAConversation(turns=turns)

    def named(self, i: int, bridge: str) -> QATurn | None:
        """A lookup in document i about the bridge, naming it (a FILLER whose PRE-FILLER was replaced)."""
        fact = self.pick(i, bridge)
        return self.pair("SINGLE-DOC", [fact], self.ask(fact), bridge) if fact is not None else None

    def unasked(self, step: Step, turn: QATurn) -> QATurn:
        """A pair for `step` whose question the run has not asked (issue 33: questions distinct across the
        run): the step again on other facts of its documents (up to RETRIES), then a lookup on any document
        of the context, never a fact an earlier conversation was given (asked again in other words, it would
        be a near-copy); `turn` as it is when the context has nothing left to ask (the conversation then
        counts a repeat, and the job leaves it out)."""
        kept = {i: list(facts) for i, facts in self.by_doc.items()}
        candidates: list[Callable[[], QATurn | None]] = []
        if step.type == "SYNTHESIS":
            candidates.append(lambda: self.summed_up(turn))
        elif step.type != "CANNOT":
            candidates += [lambda: self.step(step, False)] * RETRIES
            order = dict.fromkeys([*step.docs[::-1], *range(len(self.docs))])
            candidates += [lambda i=i, f=f: self.lookup(i, f) for i in order for f in self.unused(i)]
        for make in candidates:
            made = make()
            made = self.distinct(made) if made is not None else None
            # A question made only to differ must not quote a title or a hidden code either.
            if made is not None and _key(made.question) not in self.seen and self.clean(made.question):
                return made
            self.by_doc = defaultdict(list, {i: list(facts) for i, facts in kept.items()})
        return turn

    def unused(self, i: int) -> list[Fact]:
        """Facts of document i that neither this conversation nor an earlier one of the run was given,
        most on the spec's theme first."""
        left = [f for f in self.facts[i] if (f.document_id, f.text) not in self.used and not self.stale(f)]
        return sorted(
            left, key=lambda f: (-relevance(f.text, self.query), content_hash([self.probe, f.text]))
        )

    def lookup(self, i: int, fact: Fact) -> QATurn:
        """A SINGLE-DOC pair asking for `fact` of document i."""
        self.used.add((fact.document_id, fact.text))
        self.by_doc[i].append(fact)
        return self.pair("SINGLE-DOC", [fact], self.ask(fact), None)

    def summed_up(self, turn: QATurn) -> QATurn | None:
        """The SYNTHESIS pair asked by what its facts are about (their topics, else each fact's own
        question summed up), when its entity's summing-up questions were all asked."""
        facts = self.last_facts
        topics = list(dict.fromkeys(t for f in facts if (t := self.topic(f)) and t != "this"))
        options = (
            [f"Putting it all together, how do {_enum(topics[:3])} fit together?"] if len(topics) > 1 else []
        )
        options += [f"So, to sum up: {_lower_first(self.ask(f))}" for f in facts]
        question = next((q for q in options if _key(q) not in self.seen), None)
        if question is None:
            return None
        return turn.model_copy(update={"question": question, "resolved_question": question})


def _key(question: str) -> str:
    return question.strip().casefold()


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _text_of(doc: dict[str, Any]) -> str:
    if doc.get("kind") == "table":
        cells = [str(v) for row in doc.get("rows", []) for v in row.values()]
        return " ".join([doc.get("title", ""), *doc.get("columns", []), *cells])
    return f"{doc.get('title', '')} {doc.get('text', '')}"


def offline_conversation(inputs: dict[str, Any], rng: random.Random) -> QAConversation:
    """The offline implementation of the conversation task (see the module docstring)."""
    if not inputs.get("documents"):
        raise ValueError("a conversation needs at least one document in its chain")
    return _Writer(inputs, rng).write(int(inputs.get("num_turns", 7)))
