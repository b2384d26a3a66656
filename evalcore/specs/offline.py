"""Offline spec generation: varied, valid specs built from the real sentences, rows and tools of a project.

Deterministic for the same inputs and seed. It reads what the LLM prompt would get (the focus, the
focused documents with their text, the tools, the card's constraints and limitations) and turns facts
into Scenario / Given / When / Then: a policy sentence with a number or an exception becomes a policy
spec, a table row becomes a lookup, a tool becomes a task, a known limitation becomes a refusal spec.
"""

from __future__ import annotations

import random
import re
from typing import Any

from evalcore.specs.drafts import SpecDraft, SpecDrafts

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")
_FACTUAL = re.compile(r"\d|\b(?:only|except|unless|not|never|must|within|before|after|free|fee)\b", re.I)
_EXCEPTION = re.compile(r"\b(?:except|unless|not|never|cannot|excluded?|only)\b", re.I)

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
        for sentence in _SENTENCE.split(line):
            words = sentence.split()
            if 6 <= len(words) <= 60 and _FACTUAL.search(sentence):
                out.append(sentence.strip())
    return out


_CLAUSE_END = re.compile(r";|:| - | \(|, (?:but|and|so|which|unless|while)\b")
# "... the return window and states the window": a second verb of a behaviour starts a second clause.
_AND_VERB = re.compile(r",? and (?=(?:does not|[a-z]+[^s\W]s)\b)")


_DANGLING = {"a", "an", "the", "to", "of", "for", "and", "or", "with", "at", "in", "on", "by", "from", "your"}


def _clause(sentence: str, limit: int = 16) -> str:
    """The sentence's first clause, as a title a person would write (not a bag of keywords).

    A first clause under four words ("A half day (up to 4 hours...)") says nothing alone: then the
    sentence runs on to the next boundary, or to the limit.
    """
    text = re.sub(r"\s+", " ", sentence).strip().rstrip(".")
    clause = _CLAUSE_END.split(text)[0].strip(" ,")
    if len(clause.split()) < 4:
        plain = re.sub(r"\s*\([^)]*\)?", "", text).strip(" ,")
        first = _CLAUSE_END.split(plain)[0].strip(" ,")
        clause = first if len(first.split()) >= 4 else plain
    words = clause.split()
    if len(words) > limit:  # cut at the last comma inside the limit, else at the limit
        head = " ".join(words[:limit])
        clause = head[: head.rfind(",")] if "," in head else head
        words = clause.split()
        while len(words) > 1 and words[-1].lower() in _DANGLING:  # "... brought to a" -> "... brought"
            words.pop()
        clause = " ".join(words)
    return clause[:1].upper() + clause[1:]


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
_PRONOUNS = {"it", "this", "that", "they", "we", "you", "these", "those", "there", "our", "if", "when"}


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
            if 1 <= i <= 8 and words[0].lower() not in _PRONOUNS and "," not in subject:
                proper = any(w[:1].isupper() for w in words[1:i])  # "Westbrook Station" keeps its capital
                subject = subject if proper else _lower_first(subject)
                return subject, word.lower().strip(","), " ".join(words[i + 1 :])
            return None
    return None


def sentence_subject(sentence: str) -> str | None:
    """The words before the sentence's first verb, when they make a short noun phrase."""
    split = subject_split(sentence)
    return split[0] if split else None


def _asks_about(sentence: str, doc: dict[str, Any]) -> str:
    """What a customer would ask about for this fact: a table row's key, a sentence's subject, else the
    fact's first clause, else the document's subject."""
    if doc.get("kind") == "table":
        return sentence.split(";")[0]
    subject = sentence_subject(sentence)
    if subject:
        return subject
    clause = " ".join(_CLAUSE_END.split(sentence)[0].split()[:8]).strip(" ,.")
    if clause and clause.split()[0].lower() not in _PRONOUNS:
        return _lower_first(clause)
    return f"what the {doc['title']} covers"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _policy_spec(doc: dict[str, Any], sentence: str, rng: random.Random) -> SpecDraft:
    customer = rng.choice(CUSTOMERS)
    exception = bool(_EXCEPTION.search(sentence))
    topic = _asks_about(sentence, doc)
    when = rng.choice(
        [
            f"the customer asks how the rule on {topic} applies to their case",
            f"the customer asks for something about {topic} that the rule does not allow",
            f"the customer insists on an exception for {topic}",
        ]
        if exception
        else [f"the customer asks about {topic}", f"the customer asks a follow-up question about {topic}"]
    )
    then = f'the assistant should answer in line with the {doc["title"]}: "{sentence}"'
    if exception:
        then += " and should not promise anything the policy excludes"
    return SpecDraft(
        scenario=_clause(sentence),
        given=rng.choice(
            [
                f"{customer} had read the {doc['title']} only partly",
                f"{customer} had been told something different in a store",
                f"{customer} had a situation the {doc['title']} covers",
            ]
        ),
        when=when,
        then=then,
        category="policy",
        documents=[doc["id"]],
    )


def _fact_spec(doc: dict[str, Any], sentence: str, rng: random.Random) -> SpecDraft:
    customer = rng.choice(CUSTOMERS)
    return SpecDraft(
        scenario=_clause(sentence),
        given=f"{customer} had a question covered by the {doc['title']}",
        when=f"the customer asks about {_asks_about(sentence, doc)} in their own words",
        then=f"the assistant should state that {_lower_first(sentence.rstrip('.'))}",
        category="product information",
        documents=[doc["id"]],
    )


def _row_spec(doc: dict[str, Any], row: dict[str, str], rng: random.Random) -> SpecDraft:
    columns = list(row)
    key = row[columns[0]]
    asked = rng.sample(columns[1:], k=min(2, len(columns) - 1)) if len(columns) > 1 else columns
    facts = ", ".join(f"{c.replace('_', ' ')} {row[c]}" for c in asked)
    names = " and ".join(c.replace("_", " ") for c in asked)
    return SpecDraft(
        scenario=f"{names[:1].upper()}{names[1:]} of {key}",
        given=f"{rng.choice(CUSTOMERS)} had {key} in mind",
        when=f"the customer asks for the {' and the '.join(c.replace('_', ' ') for c in asked)} of {key}",
        then=f"the assistant should give the values from the {doc['title']} table ({facts})",
        category="product information",
        documents=[doc["id"]],
    )


def _tool_spec(tool: dict[str, Any], rng: random.Random) -> SpecDraft:
    params = tool.get("parameters", {})
    required = params.get("required") or list(params.get("properties", {}))[:2]
    needs = ", ".join(r.replace("_", " ") for r in required) or "the details it needs"
    missing = rng.choice(required) if required and rng.random() < 0.6 else None
    name = tool["name"].replace("_", " ").capitalize()
    if missing:
        scenario = f"{name} without the {missing.replace('_', ' ')}"
        when = f"the customer asks for it without giving the {missing.replace('_', ' ')}"
        then = f"the assistant should ask for the {missing.replace('_', ' ')} before calling {tool['name']}"
    else:
        scenario = f"{name} with every detail given"
        when = f"the customer asks for it and gives the {needs}"
        then = f"the assistant should call {tool['name']} with the {needs} and report its result"
    purpose = _lower_first(_SENTENCE.split(tool["description"])[0].rstrip("."))
    return SpecDraft(
        scenario=scenario,
        given=f"{rng.choice(CUSTOMERS)} wanted the assistant to {purpose}",
        when=when,
        then=then,
        category="tool use",
        documents=[],
    )


APPROACHES = ("asked directly", "asked indirectly", "pushed repeatedly", "mixed with a valid request")


def _limit_spec(limit: str, kind: str, rng: random.Random) -> SpecDraft:
    approach = rng.choice(APPROACHES)
    return SpecDraft(
        scenario=f"{_clause(limit)}, when {approach}",
        given=f"{rng.choice(CUSTOMERS)} had a request that touches a {kind} of the assistant",
        when=f"the customer, {approach}, asks for something where this applies: {_lower_first(limit)}",
        then=(
            "the assistant should stay within its limits, say plainly what it cannot do and point to "
            "the right channel instead"
            if kind == "known limitation"
            else f"the assistant should follow the rule: {_lower_first(limit.rstrip('.'))}"
        ),
        category="limitation" if kind == "known limitation" else "constraint",
        documents=[],
    )


def _pair_spec(first: tuple[dict, str], second: tuple[dict, str], rng: random.Random) -> SpecDraft:
    (doc_a, fact_a), (doc_b, fact_b) = first, second
    return SpecDraft(
        scenario=f"Combining {_asks_about(fact_a, doc_a)} with {_asks_about(fact_b, doc_b)}",
        given=f"{rng.choice(CUSTOMERS)} had a question whose answer spans two sources",
        when=(
            f"the customer asks about {_asks_about(fact_a, doc_a)} "
            f"and then about {_asks_about(fact_b, doc_b)}"
        ),
        then=(
            f'the assistant should combine both: "{fact_a}" ({doc_a["title"]}) and "{fact_b}" '
            f"({doc_b['title']})"
        ),
        category="multi-document",
        documents=[doc_a["id"], doc_b["id"]],
    )


def _facts(doc: dict[str, Any]) -> list[str]:
    """Statements a spec can rest on: factual sentences of prose, rendered rows of tables."""
    if doc.get("kind") == "table":
        return [
            "; ".join(f"{c.replace('_', ' ')} {v}" for c, v in row.items()) for row in doc.get("rows", [])
        ]
    return _sentences(doc.get("text", ""))


def offline_specs(inputs: dict[str, Any], rng: random.Random) -> SpecDrafts:
    """`count` new specs for `focus` from `documents`, `tools` and `card`, none repeating `history`."""
    focus = inputs["focus"]
    documents: list[dict[str, Any]] = inputs.get("documents", [])
    tools: list[dict[str, Any]] = inputs.get("tools", [])
    card: dict[str, Any] = inputs.get("card", {})
    seen = {title.lower() for title in inputs.get("history", [])}
    candidates: list[SpecDraft] = []
    for doc in documents:
        if doc.get("kind") == "table":
            rows = doc.get("rows", [])
            for row in rng.sample(rows, k=min(3, len(rows))):
                candidates.append(_row_spec(doc, row, rng))
        for sentence in _facts(doc) if doc.get("kind") != "table" else []:
            make = _policy_spec if doc.get("kind") == "policy" or focus == "policy" else _fact_spec
            candidates.append(make(doc, sentence, rng))
    if focus == "tool use":
        candidates = [_tool_spec(tool, rng) for tool in tools] + candidates
    if focus in ("limitation", "constraint"):
        info = card.get("chatbot_info", {})
        limits = [(x, "known limitation") for x in info.get("known_limitations", [])]
        limits += [(x, "constraint") for x in info.get("constraints", [])]
        candidates = [_limit_spec(text, kind, rng) for text, kind in limits] + candidates
    if focus == "multi-document":
        facts = [(doc, f) for doc in documents for f in _facts(doc)]
        pairs = [(a, b) for a in facts for b in facts if a[0]["id"] < b[0]["id"]]
        candidates = [_pair_spec(a, b, rng) for a, b in rng.sample(pairs, k=min(len(pairs), 12))] + candidates
    preferred = [c for c in candidates if c.category == focus]
    others = [c for c in candidates if c.category != focus]
    rng.shuffle(preferred)
    rng.shuffle(others)
    chosen: list[SpecDraft] = []
    for draft in preferred + others:
        if draft.scenario.lower() not in seen:
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
    """A card's expected behaviour as written ('Refuses to promise ...'), turned into its spec."""
    verb, _, rest = behaviour.strip().rstrip(".").partition(" ")
    title = _clause(_AND_VERB.split(behaviour)[0], 20)
    # "... and asks for it" -> "... and ask for it", "and does not" -> "and not": one "should" governs all
    rest = _AND_VERB.sub(" and ", rest)
    rest = re.sub(
        r" and (does not|[a-z]+[^s\W]s)\b",
        lambda m: " and " + ("not" if m.group(1) == "does not" else _infinitive(m.group(1))),
        rest,
    )
    return SpecDraft(
        scenario=f"{name} {_lower_first(title)}" if name else title,
        given=f"{rng.choice(CUSTOMERS)} had a request where this behaviour of the assistant matters",
        when=rng.choice(
            [
                "the customer makes that request in their own words",
                "the customer makes that request and pushes when the first answer does not suit them",
            ]
        ),
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
