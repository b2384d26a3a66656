"""The offline judge: a deterministic comparison of a reply with the expected answer and its grounding.

It needs no model and gives the same verdict every time, so runs are judged end to end offline (tests,
CI, the demo). The rules, in order:

1. expected CANNOTANSWER: pass when the reply says it cannot answer, else `failed_to_say_cannot_answer`;
2. the reply says it cannot answer a question that has an answer: `refused_wrongly`;
3. pass when the reply contains every key fact of the expected answer (ids, quantities, names that the
   question does not already give; `evalcore.documents.entities`) and at least `MIN_RECALL` of the expected
   answer's other content words (those not in the question);
4. otherwise the error type (the names of seed 000's Table 10 where it has one): `coreference` for a
   follow-up that refers back ("it", "that store" ...) answered from outside the grounding documents;
   `off_topic` for a reply that does not answer: it gives none of the expected key facts and none of
   the expected answer's own words (those not already in the question), and states no fact outside the
   documents (it is about something else, or only restates the question, so it is not a wrong fact);
   `wrong_fact` when the expected answer has key facts and the reply has facts of the same kind but
   none of them; `multi_doc_retrieval` when the answer draws on several documents and the reply has
   some of its key facts but none of those only one of the documents holds; `incomplete` when part of
   the answer is there;
   `hallucinated` when the reply's facts are in neither the expected answer, the question nor the
   grounding documents; else `wrong_fact`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from evalcore.documents.entities import canonical_name, extract_entities
from evalcore.documents.retrieval import tokenize
from evalcore.generators.doc_qa.schema import is_cannot_answer

VERSION = "4"  # 2: off_topic; 3: the seed's names (coreference, multi_doc_retrieval), a restated question;
# 4: a bracketed code after a name is a reference, a price without its sign the same price
MIN_RECALL = 0.5
MIN_SUPPORT = 0.35
_CANNOT = re.compile(
    r"\b(?:I|we)(?:'m| am|'re| are)? ?(?:can ?not|can't|cannot|couldn't|could not|unable to|don't|do not)"
    r"\b[^.]{0,40}?\b(?:find|answer|know|see|locate|provide|say|help with"
    r"|have (?:any |that |this |the )?(?:information|details|data|record))\b"
    r"|\bno (?:information|details|data|mention)\b"
    r"|\b(?:not|never) (?:mentioned|covered|stated|specified|listed|included) in\b"
    r"|\b(?:documents?|documentation|knowledge base|sources?) (?:do|does) not\b"
    r"|\bI(?:'m| am) not sure\b|\bCANNOTANSWER\b",
    re.IGNORECASE,
)
_REFERRING = re.compile(
    r"\b(?:it|its|they|them|their|that|this|those|these|he|she|his|her|there|one|ones|same|former|latter)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Comparison:
    """The offline verdict: 1 or 0, the error type when 0, and why."""

    score: int
    error_type: str | None
    rationale: str


def says_cannot_answer(reply: str) -> bool:
    """True when the reply declines or says the information is not available."""
    return bool(_CANNOT.search(reply))


def _facts(text: str) -> dict[str, str]:
    """Canonical key facts (ids, quantities, names) of a text -> how they are written."""
    return {e.canonical: e.text for e in extract_entities(text)}


@functools.lru_cache(maxsize=512)
def _document(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(content words, canonical facts) of a grounding document: cached, since every turn of a
    conversation grounded in the same document would otherwise re-read it."""
    return frozenset(tokenize(text)), frozenset(_facts(text))


_BRACKETED_CODE = re.compile(r"\s\((?=[A-Za-z0-9-]*\d)[A-Z0-9][A-Za-z0-9-]*\)")
_NUMBER = re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?(?![\w])")


def _amount(text: str) -> str:
    """A number's matching form: no thousands separators, no zero cents ("1,299.00" -> "1299")."""
    return text.replace(",", "").removesuffix(".00").rstrip(".")


def _present(canonical: str, reply_facts: dict[str, str], reply_plain: str) -> bool:
    if canonical in reply_facts or f" {canonical} " in reply_plain:
        return True
    # A price given without its sign ("749 USD", "price_usd: 749") states the same fact as "$749".
    if canonical.startswith("$"):
        return _amount(canonical[1:]) in {_amount(n) for n in _NUMBER.findall(reply_plain)}
    return False


def compare_reply(
    question: str, expected: str, reply: str, grounding: list[str], *, multi_turn: bool = False
) -> Comparison:
    """Judge `reply` against `expected` and the grounding documents' texts (rules in the module docstring)."""
    refusal = _refusal(expected, reply)
    if refusal is not None:
        return refusal

    question_facts = _facts(question)
    # A code in brackets right after what it names ("the Westbrook Station store (RC-04)") is a reference
    # for the reader, not part of the answer: a reply naming the store answers. Bracketed text with more
    # than the code ("(warranty code WBAT-500)") stays a fact to find.
    wanted = {c: t for c, t in _facts(_BRACKETED_CODE.sub("", expected)).items() if c not in question_facts}
    reply_facts = _facts(reply)
    reply_plain = f" {canonical_name(reply)} "
    found = [t for c, t in wanted.items() if _present(c, reply_facts, reply_plain)]
    missing = [t for c, t in wanted.items() if not _present(c, reply_facts, reply_plain)]
    asked = set(tokenize(question))
    words = set(tokenize(expected)) - asked or set(tokenize(expected))
    said = set(tokenize(reply))
    recall = len(words & said) / len(words) if words else 1.0
    summary = (
        f"key facts found {len(found)}/{len(wanted)}"
        + (f" ({', '.join(found[:4])})" if found else "")
        + (f", missing: {', '.join(missing[:4])}" if missing else "")
        + f"; {recall:.0%} of the expected answer's words"
    )
    if not missing and recall >= MIN_RECALL:
        return Comparison(1, None, f"The reply matches the expected answer: {summary}.")

    documents = [_document(text) for text in grounding]
    source_words = frozenset().union(*(words for words, _ in documents))
    support = len(said & source_words) / len(said) if said else 0.0
    if multi_turn and _REFERRING.search(question) and support < MIN_SUPPORT:
        return Comparison(
            0,
            "coreference",
            f"A follow-up that refers to earlier turns, answered from outside the grounding documents "
            f"({support:.0%} of the reply's words are in them): {summary}.",
        )
    known = set(_facts(expected)) | set(question_facts) | set().union(*(facts for _, facts in documents))
    invented = [t for c, t in reply_facts.items() if c not in known]
    if not found and not invented and not said & words:
        return Comparison(
            0,
            "off_topic",
            f"The reply does not answer the question (it is about something else or restates it): {summary}.",
        )
    same_kind = {c for c, t in reply_facts.items() if any(_kind(c) == _kind(w) for w in wanted)}
    if wanted and not found and same_kind:
        return Comparison(0, "wrong_fact", f"The reply gives other facts than the expected ones: {summary}.")
    if found and len(documents) > 1:
        missed = _missed_documents([facts for _, facts in documents], wanted, reply_facts, reply_plain)
        if missed:
            return Comparison(
                0,
                "multi_doc_retrieval",
                f"The answer needs {len(documents)} documents; the reply has nothing of what "
                f"{len(missed)} of them alone hold{'s' if len(missed) == 1 else ''}: {summary}.",
            )
    if found or recall >= MIN_RECALL / 2:
        return Comparison(0, "incomplete", f"Part of the expected answer is missing: {summary}.")
    if invented:
        return Comparison(
            0,
            "hallucinated",
            f"The reply states {', '.join(invented[:4])}, found neither in the expected answer nor in the "
            f"grounding documents: {summary}.",
        )
    return Comparison(0, "wrong_fact", f"The reply does not give the expected answer: {summary}.")


def _refusal(expected: str, reply: str) -> Comparison | None:
    """The verdict when the expected answer or the reply is "cannot answer"; None when neither is."""
    if is_cannot_answer(expected):
        if says_cannot_answer(reply):
            return Comparison(1, None, "The documents hold no answer and the reply says so.")
        return Comparison(
            0,
            "failed_to_say_cannot_answer",
            "The documents hold no answer to this question, but the reply answers it instead of saying so.",
        )
    if says_cannot_answer(reply) and not says_cannot_answer(expected):
        return Comparison(
            0, "refused_wrongly", "The reply says it cannot answer; the expected answer exists."
        )
    return None


def _missed_documents(
    document_facts: list[frozenset[str]],
    wanted: dict[str, str],
    reply_facts: dict[str, str],
    reply_plain: str,
) -> list[int]:
    """The grounding documents the reply misses: it has none of the key facts only that document holds
    (while it has some key fact of the answer, from another document)."""
    holders = [{c for c in wanted if c in facts} for facts in document_facts]
    return [
        i for i, held in enumerate(holders)
        if (own := held - set().union(*(h for k, h in enumerate(holders) if k != i)))
        and not any(_present(c, reply_facts, reply_plain) for c in own)
    ]  # fmt: skip


def _kind(canonical: str) -> str:
    if re.fullmatch(r"[A-Z0-9]+(?:-[A-Z0-9]+)+", canonical):
        return "id"
    return "quantity" if re.search(r"\d", canonical) else "name"
