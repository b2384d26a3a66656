"""The seed's rules for a doc-QA conversation, checked deterministically on the stored Conversation.

Used by verification (recorded per item, whatever model generated it), by the offline spec-adherence
check, and by tests. Each problem is one readable line naming the pair (from 1) it is about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.documents.facts import mentions, source_grounded
from evalcore.generators.doc_qa.generate import qa_pairs
from evalcore.generators.doc_qa.schema import QUERY_TYPES, is_cannot_answer
from evalcore.models import Conversation


def rule_problems(
    conversation: Conversation,
    chain: Sequence[str],
    documents: Mapping[str, dict[str, Any]],
    num_turns: int | None = None,
) -> list[str]:
    """Every way the conversation breaks the seed's rules; empty when it follows them all.

    `chain` are the chain's document ids; `documents` maps the ids of every document of the context
    (chain and policies) to its task-input dict (for checking recorded sources).
    """
    pairs = qa_pairs(conversation)
    problems: list[str] = []
    if num_turns is not None and len(pairs) != num_turns:
        problems.append(f"{len(pairs)} question/answer pairs instead of {num_turns}")
    if not pairs:
        return [*problems, "the conversation has no question/answer pair"]
    if not any(is_cannot_answer(a.content) for _, a in pairs):
        problems.append("no question is unanswerable (no CANNOTANSWER answer)")
    last_q, last_a = pairs[-1]
    if last_q.query_type != "SYNTHESIS":
        problems.append(f"the last pair is {last_q.query_type or 'untyped'}, not SYNTHESIS")
    missing = [d for d in chain if d not in last_a.grounding]
    if missing:
        problems.append(f"the last pair does not use every chain document (missing {', '.join(missing)})")
    if is_cannot_answer(last_a.content):
        problems.append("the final SYNTHESIS must have an answer from the documents")
    for k, (question, answer) in enumerate(pairs, start=1):
        problems.extend(f"pair {k}: {p}" for p in _pair_problems(question, answer, documents))
    return problems


def _pair_problems(question, answer, documents: Mapping[str, dict[str, Any]]) -> list[str]:
    problems = []
    if question.query_type not in QUERY_TYPES:
        problems.append(f"query type {question.query_type!r} is not one of {', '.join(QUERY_TYPES)}")
    if not question.content.strip():
        problems.append("the question is empty")
    bridge = question.bridging_entity
    if question.query_type == "FILLER" and not bridge:
        problems.append("a FILLER question without a bridging entity")
    text = answer.content.strip()
    if not text or text.upper().rstrip(".") == "FILLER":
        problems.append("the answer is empty or 'FILLER'")
        return problems
    if is_cannot_answer(text):
        return problems
    if not answer.grounding:
        problems.append("the answer names no grounding document")
    unknown = [d for d in answer.grounding if d not in documents]
    if unknown:
        problems.append(f"grounding {', '.join(unknown)} is not a document of the conversation's context")
    if question.query_type == "PRE-FILLER" and bridge and not mentions(text, bridge):
        problems.append(f"the PRE-FILLER answer does not name its bridging entity '{bridge}'")
    for source in answer.metadata.get("sources") or []:
        doc = documents.get(source.get("document_id", ""))
        if doc is not None and not source_grounded(source, doc, text):
            problems.append(f"a cited source of {source.get('document_id')} is not in the document or answer")
    return problems


def grounded_share(conversation: Conversation, documents: Mapping[str, dict[str, Any]]) -> tuple[int, int]:
    """(answerable answers whose every source is in its document and in the answer, answerable answers)."""
    good = total = 0
    for _, answer in qa_pairs(conversation):
        if is_cannot_answer(answer.content):
            continue
        total += 1
        sources = answer.metadata.get("sources") or []
        if sources and all(
            s.get("document_id") in documents
            and source_grounded(s, documents[s["document_id"]], answer.content)
            for s in sources
        ):
            good += 1
    return good, total
