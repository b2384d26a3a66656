"""Verification of a generated conversation (seed 000, Section 3.2 "Verification", Appendix A.3.3).

1. Retrieval-augmented correction (task `doc_qa_correct`, generator role): each answer is compared with
   the passages retrieved for its question and answer from all of the project's documents; it is kept
   (`supported`), replaced by what the passages say (`corrected`, the original kept in the turn's
   metadata), or flagged (`unsupported`). An unanswerable question is flagged when a passage seems to
   answer it after all. Offline: answers are matched against the passages sentence by sentence (exact,
   else by word coverage); a weak answer is replaced by the best sentence of its grounding documents.
2. Spec-adherence check (task `doc_qa_check`, judge role, never the generator's own model when another
   is configured): does the conversation test the spec's behaviour, is it coherent? It sees the
   deterministic rule problems (evalcore.generators.doc_qa.rules) and the corrections. Offline: a conversation
   adheres when its questions share the spec's vocabulary, and is coherent when every FILLER follows a
   turn whose answer names the same bridging entity.

Both results go in `conversation.metadata["verification"]`; `judge_passed` is the judge's pass with no
rule problem and no flagged answer, and the tier follows from evalcore.items.tiers.derive_tier (silver when
the judge passed, else unreviewed). Nothing is dropped: a failed check keeps the item with its reasons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalcore.documents.retrieval import PassageIndex
from evalcore.generators.doc_qa.generate import qa_pairs
from evalcore.generators.doc_qa.rules import rule_problems
from evalcore.generators.doc_qa.schema import AdherenceCheck, Corrections, is_cannot_answer
from evalcore.generators.doc_qa.verify_offline import offline_check, offline_corrections, sourced_claims
from evalcore.items.tiers import derive_tier
from evalcore.llm.client import ModelClient
from evalcore.llm.tasks import Task
from evalcore.llm.types import TaskResult
from evalcore.models import Conversation, Turn

CORRECT_ANSWERS = Task(
    "doc_qa_correct", Corrections, offline_corrections, prompt="doc_qa_correct.md", max_tokens=3000
)
CHECK_CONVERSATION = Task(
    "doc_qa_check", AdherenceCheck, offline_check, prompt="doc_qa_check.md", max_tokens=1500
)


def _attach_passages(index: PassageIndex, turns: list[dict[str, Any]], k: int) -> None:
    """Give each turn the passages retrieved for its question and for each claim of its answer (a
    synthesis makes several), from all documents, plus the best passages of its grounding documents so
    a correction can draw on them. Queries go in batches: one embedding call per batch."""
    queries: list[str] = []
    owners: list[int] = []
    for n, turn in enumerate(turns):
        found_claims = [] if is_cannot_answer(turn["answer"]) else sourced_claims(turn)
        turn["_claims"] = found_claims
        asked = [
            f"{turn['question']} {turn['resolved']}",
            *(f"{turn['question']} {c}" for c, _ in found_claims),
        ]
        for query in asked:
            queries.append(query)
            owners.append(n)
    found: list[list[Any]] = [[] for _ in turns]
    for n, hits in zip(owners, index.retrieve_many(queries, k=k), strict=True):
        found[n] += hits
    for n, turn in enumerate(turns):
        # Each claim also within the document it cites (else the grounding documents), so a claim is
        # compared with its own document even when other documents share most of its words.
        for claim, doc in turn.pop("_claims"):
            scope = [doc] if doc else turn["document_ids"]
            if scope:
                found[n] += index.retrieve(claim, k=k, document_ids=scope)
        seen: dict[str, dict[str, Any]] = {}
        for hit in found[n]:
            p = hit.passage
            seen.setdefault(p.id, {"id": p.id, "document_id": p.document_id, "text": p.text})
        turn["passages"] = list(seen.values())


@dataclass
class Verified:
    """A conversation after verification, or why verification could not finish."""

    conversation: Conversation
    stopped: str | None = None  # the budget stopped a call: the unit must not be committed


def verify_conversation(
    llm: ModelClient,
    conversation: Conversation,
    spec_inputs: dict[str, Any],
    index: PassageIndex,
    context: dict[str, dict[str, Any]],
    chain: list[str],
    num_turns: int,
    *,
    model: str | None = None,
    judge: str | None = None,
    seed: int | None = None,
    k: int = 3,
) -> Verified:
    """Correction then adherence check (module docstring); results in metadata, tier set from the judge."""
    conversation = conversation.model_copy(deep=True)  # corrections are applied to this copy
    pairs = qa_pairs(conversation)
    rac_turns = _correction_turns(pairs)
    _attach_passages(index, rac_turns, k)
    rac = llm.run_task(
        CORRECT_ANSWERS, {**spec_inputs, "turns": rac_turns}, role="generator", model=model, seed=seed
    )
    if rac.status == "stopped":
        return Verified(conversation, rac.error or "budget")
    correction: dict[str, Any] = {"model": rac.model, "offline": rac.offline, "status": rac.status}
    if rac.ok and rac.output is not None:
        applied = _apply(pairs, rac.output)
        correction |= applied
    else:
        correction["error"] = rac.error
    rules = rule_problems(conversation, chain, context, num_turns)
    check_inputs = {
        **spec_inputs,
        "chain": chain,
        "conversation": _check_turns(pairs),
        "rule_problems": rules,
        "corrections": correction.get("turns", []),
    }
    check = llm.run_task(CHECK_CONVERSATION, check_inputs, role="judge", model=judge, seed=seed)
    if check.status == "stopped":
        return Verified(conversation, check.error or "budget")
    adherence, judge_passed, score, reasons = _judged(check, rules, correction)
    metadata = {
        **conversation.metadata,
        "verification": {"correction": correction, "rules": {"passed": not rules, "problems": rules},
                         "adherence": adherence, "reasons": list(dict.fromkeys(reasons))},
        "judge_passed": judge_passed,
        "judge_score": score,
        "judge_model": check.model,
    }  # fmt: skip
    tier = derive_tier([], judge_passed).tier
    return Verified(conversation.model_copy(update={"metadata": metadata, "tier": tier}))


def _correction_turns(pairs: list[tuple[Turn, Turn]]) -> list[dict[str, Any]]:
    """The pairs as the correction task reads them (passages are attached after)."""
    return [
        {
            "pair": n,
            "question": question.content,
            "resolved": question.metadata.get("resolved_question") or question.content,
            "answer": answer.content,
            "query_type": question.query_type,
            "document_ids": answer.grounding or question.metadata.get("about", []),
            "sources": answer.metadata.get("sources") or [],
        }
        for n, (question, answer) in enumerate(pairs)
    ]


def _check_turns(pairs: list[tuple[Turn, Turn]]) -> list[dict[str, Any]]:
    """The (corrected) pairs as the adherence check reads them."""
    return [
        {
            "pair": n,
            "question": q.content,
            "answer": a.content,
            "query_type": q.query_type,
            "document_ids": a.grounding,
            "bridging_entity": q.bridging_entity,
        }
        for n, (q, a) in enumerate(pairs)
    ]


def _judged(
    check: TaskResult[AdherenceCheck], rules: list[str], correction: dict[str, Any]
) -> tuple[dict[str, Any], bool | None, float | None, list[str]]:
    """What the check and the rules say: the adherence record, whether the judge passed it (None when the
    check could not run: unreviewed), its score, and every reason against it."""
    adherence: dict[str, Any] = {"model": check.model, "offline": check.offline, "status": check.status}
    judge_passed: bool | None = None
    score: float | None = None
    reasons = [f"rule: {p}" for p in rules]
    reasons += [f"correction flagged pair {t['pair'] + 1}: {t['note']}" for t in correction.get("turns", [])
                if t["verdict"] == "unsupported"]  # fmt: skip
    if check.ok and check.output is not None:
        out = check.output
        adherence |= out.model_dump()
        score = out.score
        judge_passed = out.adheres and out.coherent and not rules and correction.get("flagged", 0) == 0
        if not (out.adheres and out.coherent):
            reasons += [f"judge: {p}" for p in out.problems] or [f"judge: {out.rationale}"]
    else:
        adherence["error"] = check.error
        reasons.append(f"the check could not run: {check.error}")  # judge_passed stays None: unreviewed
    return adherence, judge_passed, score, reasons


def _apply(pairs: list[tuple[Turn, Turn]], output: Corrections) -> dict[str, Any]:
    """Put corrected answers in place (originals kept in the turn metadata); summarise per turn."""
    by_pair = {c.pair: c for c in output.turns}
    turns = []
    for n, (_, answer) in enumerate(pairs):
        c = by_pair.get(n)
        if c is None:
            continue
        answer.metadata["correction"] = c.verdict
        if c.passage_ids:
            answer.metadata["supporting_passages"] = c.passage_ids
        if c.verdict == "corrected" and c.answer.strip() and c.answer != answer.content:
            answer.metadata["original_answer"] = answer.content
            answer.metadata["original_sources"] = answer.metadata.get("sources", [])
            answer.metadata["sources"] = []  # the cited sources belonged to the replaced wording
            answer.content = c.answer
        turns.append({"pair": n, "verdict": c.verdict, "note": c.note})
    fired = sum(t["verdict"] == "corrected" for t in turns)
    flagged = sum(t["verdict"] == "unsupported" for t in turns)
    return {"turns": turns, "fired": fired, "flagged": flagged, "checked": len(turns)}
