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
    lines = [ln.strip(" -") for ln in plain.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    out = []
    for line in lines:
        for sentence in _SENTENCE.split(line):
            words = sentence.split()
            if 6 <= len(words) <= 60 and _FACTUAL.search(sentence):
                out.append(sentence.strip())
    return out


def _topic(sentence: str) -> str:
    """A few content words of a sentence, for a readable scenario title."""
    words = [w.strip(".,;:()\"'") for w in sentence.split()]
    # Negations are short but decide the meaning ("does not rent bikes"): never drop them.
    keep = [w for w in words if (len(w) > 3 and w.lower() not in _STOP) or w.lower() in _NEGATIONS][:6]
    return " ".join(keep) or sentence[:40]


_NEGATIONS = {"not", "no", "never", "only", "except", "unless", "cannot"}
_STOP = {
    "that",
    "this",
    "with",
    "from",
    "your",
    "their",
    "they",
    "will",
    "have",
    "when",
    "which",
    "there",
    "what",
    "must",
    "also",
    "than",
    "then",
    "into",
    "each",
    "more",
    "such",
    "been",
    "were",
}


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _policy_spec(doc: dict[str, Any], sentence: str, rng: random.Random) -> SpecDraft:
    customer = rng.choice(CUSTOMERS)
    exception = bool(_EXCEPTION.search(sentence))
    when = rng.choice(
        [
            f"the customer asks how the rule on {_topic(sentence).lower()} applies to their case",
            f"the customer asks for something that depends on {_topic(sentence).lower()}",
            f"the customer pushes for an outcome the {doc['title']} does not allow",
        ]
        if exception
        else [
            f"the customer asks about {_topic(sentence).lower()}",
            f"the customer asks a follow-up question about {_topic(sentence).lower()}",
        ]
    )
    then = f'the assistant should answer in line with the {doc["title"]}: "{sentence}"'
    if exception:
        then += " and should not promise anything the policy excludes"
    return SpecDraft(
        scenario=f"{'Exception' if exception else 'Rule'} in {doc['title']}: {_topic(sentence)}",
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
        scenario=f"Answering from {doc['title']}: {_topic(sentence)}",
        given=f"{customer} had a question covered by the {doc['title']}",
        when=f"the customer asks about {_topic(sentence).lower()} in their own words",
        then=f"the assistant should state that {_lower_first(sentence.rstrip('.'))}",
        category="product information",
        documents=[doc["id"]],
    )


def _row_spec(doc: dict[str, Any], row: dict[str, str], rng: random.Random) -> SpecDraft:
    columns = list(row)
    key = row[columns[0]]
    asked = rng.sample(columns[1:], k=min(2, len(columns) - 1)) if len(columns) > 1 else columns
    facts = ", ".join(f"{c.replace('_', ' ')} {row[c]}" for c in asked)
    return SpecDraft(
        scenario=f"Looking up {', '.join(c.replace('_', ' ') for c in asked)} of {key}",
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
        scenario=f"Respecting a {kind} when {approach}: {_topic(limit)}",
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
        scenario=f"Combining {doc_a['title']} and {doc_b['title']}",
        given=f"{rng.choice(CUSTOMERS)} had a question whose answer spans two sources",
        when=f"the customer asks about {_topic(fact_a).lower()} and then about {_topic(fact_b).lower()}",
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
