"""Conversation generation (seed 000, Algorithm 2, lines 16-23, prompt of Appendix A.6).

One task call turns a chain of documents (plus the spec's policy documents) into an L-turn conversation of
(question, expected answer) pairs. Each pair names its query type (SINGLE-DOC, MULTI-DOC, PRE-FILLER,
FILLER, SYNTHESIS), the documents that ground its answer and the bridging entity it crosses on. At least
one question is unanswerable from the documents (answer `CANNOTANSWER`), and the last pair is a SYNTHESIS
that needs every document of the chain.

`to_conversation` stores a pair as two turns of the shared Conversation model: the question as a `user`
turn and the expected answer as an `assistant` turn, both carrying query type, grounding and bridging
entity; the answer's sources (sentence or table cells, with passage ids) go in the assistant turn's
metadata. The offline implementation is in evalcore.generators.doc_qa.offline.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from evalcore.documents.wording import names_in
from evalcore.generators.doc_qa.offline import offline_conversation
from evalcore.generators.doc_qa.schema import QAConversation, QATurn, is_cannot_answer
from evalcore.llm.tasks import Task
from evalcore.models import Conversation, Document, DocumentKind, Provenance, Spec, Turn

GENERATOR = "doc_qa"
MAX_TABLE_ROWS = 40  # rows of a table shown to the model (and to the offline generator alike)


GENERATE_CONVERSATION = Task(
    "doc_qa_conversation",
    QAConversation,
    offline_conversation,
    prompt="doc_qa_conversation.md",
    temperature=0.7,
    max_tokens=4000,
)


def document_input(doc: Document, max_rows: int = MAX_TABLE_ROWS) -> dict[str, Any]:
    """A document as the task sees it (tables: columns and the first `max_rows` rows)."""
    if doc.kind == DocumentKind.table:
        return {
            "id": doc.id,
            "kind": "table",
            "title": doc.title,
            "columns": list(doc.columns),
            "rows": [dict(r) for r in doc.rows[:max_rows]],
        }
    return {"id": doc.id, "kind": doc.kind.value, "title": doc.title, "text": doc.text}


def conversation_inputs(
    system_description: str,
    spec: Spec,
    chain: list[Document],
    bridges: list[list[str]],
    policies: list[Document],
    num_turns: int,
    variant: int,
    ignore: list[str],
    names: Mapping[str, str] | None = None,
    fresh: list[str] | None = None,
    subject: list[str] | None = None,
    asked: list[str] | None = None,
) -> dict[str, Any]:
    """The task inputs of one conversation: every prompt placeholder, and what the offline generator uses.

    `names` maps codes to what a customer calls them (`wording.code_names` over the project's tables);
    only the codes the chain's and policies' documents use are passed on. `fresh` are the facts (their
    texts) the job gives this conversation, so conversations of one run ask different facts; the offline
    generator picks them first. `subject` are the terms the spec's subject goes by
    (evalcore.generators.doc_qa.subject): the first question asks about it. `asked` are the questions
    earlier conversations of the run asked of these documents: this one asks others.
    """
    links = [
        {"from": a.id, "to": b.id, "bridging_entities": list(ents)}
        for a, b, ents in zip(chain, chain[1:], bridges, strict=False)
    ]
    documents = [document_input(d) for d in chain]
    context = [document_input(d) for d in policies]
    texts = [json.dumps(d, ensure_ascii=False) for d in documents + context]
    return {
        "system_description": system_description,
        "probe": spec.scenario,
        "probe_given": spec.given,
        "probe_when": spec.when,
        "probe_then": spec.then,
        "documents": documents,
        "bridges": links,
        "policies": context,
        "names": names_in(names or {}, texts),
        "num_turns": num_turns,
        "variant": variant,
        "ignore": ignore,
        "fresh": list(fresh or []),
        "subject": list(subject or []),
        "asked": list(asked or []),
    }


def _pair_meta(turn: QATurn, k: int) -> dict[str, Any]:
    return {"pair": k, "theme_relation": turn.theme_relation}


def to_conversation(
    output: QAConversation, *, conversation_id: str, spec_id: str, provenance: Provenance, metadata: dict
) -> Conversation:
    """Pairs as user/assistant turns of the shared Conversation model (see the module docstring)."""
    turns: list[Turn] = []
    for k, qa in enumerate(output.turns):
        answerable = not is_cannot_answer(qa.answer)
        common = {
            "query_type": qa.query_type,
            "grounding": list(dict.fromkeys(qa.document_ids)) if answerable else [],
            "bridging_entity": qa.bridging_entity or None,
        }
        question_meta = {**_pair_meta(qa, k), "resolved_question": qa.resolved_question or qa.question}
        if not answerable:
            question_meta["about"] = list(qa.document_ids)
        sources = [s.model_dump(exclude_none=True) for s in qa.sources]
        answer_meta = {
            **_pair_meta(qa, k),
            "answerable": answerable,
            "sources": sources,
            "passage_ids": list(dict.fromkeys(s["passage_id"] for s in sources if s.get("passage_id"))),
        }
        turns.append(Turn(index=2 * k, role="user", content=qa.question, metadata=question_meta, **common))
        turns.append(
            Turn(index=2 * k + 1, role="assistant", content=qa.answer, metadata=answer_meta, **common)
        )
    return Conversation(
        id=conversation_id,
        generator=GENERATOR,
        spec_id=spec_id,
        turns=turns,
        metadata=metadata,
        provenance=provenance,
    )


def qa_pairs(conversation: Conversation) -> list[tuple[Turn, Turn]]:
    """(question turn, answer turn) pairs of a doc-QA conversation, in order."""
    users = [t for t in conversation.turns if t.role == "user"]
    answers = {t.metadata.get("pair"): t for t in conversation.turns if t.role == "assistant"}
    pairs = []
    for k, question in enumerate(users):
        answer = answers.get(question.metadata.get("pair", k))
        if answer is not None:
            pairs.append((question, answer))
    return pairs
