"""Offline verification: retrieval-augmented correction and the adherence check without a model.

Correction compares each claim of an answer (its cited sentences or cells, else its own sentences) with
the retrieved passages: exact containment, else word coverage of at least COVERAGE with every number
of the claim in the passage. A claim not supported is replaced by the passage sentence that best
answers the question with the claim's words, if that sentence covers at least REPAIR of them (a fix
stays close to the claim); else by the sentence of its documents' passages that holds most of the
question's words (at least ANSWERS of them): the answer is rewritten from its passage, as seed 000's
retrieval-augmented correction does. Only an answer no passage answers is flagged. The original answer
is kept in the turn's metadata (verify._apply).
The check: a conversation adheres when enough pairs use the spec's vocabulary, and is coherent when each
FILLER follows a turn whose answer names its bridging entity; rule problems and flags fail it.
"""

from __future__ import annotations

import random
import re
from typing import Any

from evalcore.documents.facts import plain
from evalcore.documents.retrieval import tokenize
from evalcore.documents.sentences import split_sentences
from evalcore.generators.doc_qa.schema import AdherenceCheck, Corrections, TurnCorrection, is_cannot_answer

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
COVERAGE = 0.8  # share of an answer sentence's words a passage must hold for it to count as supported
REPAIR = 0.5  # share of the claim's words the replacing sentence must cover
ANSWERS = 0.5  # share of the question's words a sentence must hold to replace an answer far from it


def _words(text: str) -> set[str]:
    return set(tokenize(text))


def _coverage(part: str, passage: str) -> float:
    words = _words(part)
    return len(words & _words(passage)) / len(words) if words else 1.0


def sourced_claims(turn: dict[str, Any]) -> list[tuple[str, str | None]]:
    """What an answer claims, with the document each claim cites (None when the answer cites nothing):
    its cited sentences or cells, else its own sentences."""
    parts: list[tuple[str, str | None]] = []
    for source in turn.get("sources") or []:
        if source.get("sentence"):
            parts.append((source["sentence"], source.get("document_id")))
        elif source.get("cells"):
            parts.append((" ".join(f"{c} {v}" for c, v in source["cells"]), source.get("document_id")))
    return parts or [(s, None) for s in split_sentences(plain(turn["answer"]))]


def answer_claims(turn: dict[str, Any]) -> list[str]:
    """The claims of an answer (see `sourced_claims`)."""
    return [claim for claim, _ in sourced_claims(turn)]


def _best_sentence(question: str, claim: str, passages: list[dict[str, Any]]) -> tuple[str, str, float]:
    """The passage sentence that best answers the question with the claim's words, and how much of the
    claim it covers (a fix must stay close to the claim: a different answer is flagged, not swapped in)."""
    best = ("", "", 0.0, 0.0)
    for passage in passages:
        for line in passage["text"].splitlines():
            for sentence in split_sentences(plain(line)):
                rank = _coverage(f"{question} {claim}", sentence)
                if rank > best[3]:
                    best = (sentence, passage["id"], _coverage(claim, sentence), rank)
    return best[0], best[1], best[2]


def _same_numbers(part: str, passage: str) -> bool:
    """True when every number the claim states is in the passage: a claim with one figure changed keeps
    most of its words, but it is a different claim (a price, a limit, a period)."""
    return set(_NUMBER.findall(part)) <= set(_NUMBER.findall(passage))


def _answering_sentence(question: str, passages: list[dict[str, Any]]) -> tuple[str, str, float]:
    """The passage sentence holding most of the question's words, and the share it holds."""
    best = ("", "", 0.0)
    for passage in passages:
        for line in passage["text"].splitlines():
            for sentence in split_sentences(plain(line)):
                share = _coverage(question, sentence)
                if share > best[2]:
                    best = (sentence, passage["id"], share)
    return best


def _correct_one(turn: dict[str, Any]) -> TurnCorrection:
    passages = turn.get("passages") or []
    if is_cannot_answer(turn["answer"]):
        question = turn["question"]
        for p in passages:
            if _coverage(question, p["text"]) >= 0.9:
                note = f"passage {p['id']} seems to answer this question"
                return TurnCorrection(
                    pair=turn["pair"], verdict="unsupported", answer=turn["answer"], note=note
                )
        return TurnCorrection(pair=turn["pair"], verdict="supported", answer=turn["answer"])
    support: list[str] = []
    fixes: list[tuple[str, str]] = []
    for part in answer_claims(turn):
        hit = next((p["id"] for p in passages if plain(part) in plain(p["text"])), None)
        hit = hit or next(
            (
                p["id"]
                for p in passages
                if _coverage(part, p["text"]) >= COVERAGE and _same_numbers(part, p["text"])
            ),
            None,
        )
        if hit:
            support.append(hit)
            continue
        own = [p for p in passages if p["document_id"] in turn.get("document_ids", [])] or passages
        sentence, pid, score = _best_sentence(turn["question"], part, own)
        if score < REPAIR:
            # Not close to any passage: rewritten from the passage sentence that answers the question
            # (seed 000's retrieval-augmented correction), flagged only when none does.
            sentence, pid, score = _answering_sentence(turn["question"], own)
            if score < ANSWERS:
                note = f"no retrieved passage supports: {part[:120]}"
                return TurnCorrection(
                    pair=turn["pair"], verdict="unsupported", answer=turn["answer"], note=note
                )
        fixes.append((part, sentence))
        support.append(pid)
    support = list(dict.fromkeys(support))
    if not fixes:
        return TurnCorrection(
            pair=turn["pair"], verdict="supported", answer=turn["answer"], passage_ids=support
        )
    answer = turn["answer"]
    for old, new in fixes:
        answer = answer.replace(old, new) if old in answer else f"{answer} {new}".strip()
    note = "replaced with what the retrieved passages say"
    return TurnCorrection(
        pair=turn["pair"], verdict="corrected", answer=answer, passage_ids=support, note=note
    )


def offline_corrections(inputs: dict[str, Any], rng: random.Random) -> Corrections:
    """Offline retrieval-augmented correction (see the module docstring)."""
    return Corrections(turns=[_correct_one(turn) for turn in inputs["turns"]])


def offline_check(inputs: dict[str, Any], rng: random.Random) -> AdherenceCheck:
    """Offline spec-adherence and coherence check (see the module docstring)."""
    spec = _words(
        " ".join(str(inputs.get(k, "")) for k in ("probe", "probe_given", "probe_when", "probe_then"))
    )
    turns = inputs["conversation"]
    on_theme = [t for t in turns if _words(f"{t['question']} {t['answer']}") & spec]
    adheres = len(on_theme) >= max(1, len(turns) // 3)
    problems = list(inputs.get("rule_problems") or [])
    if not adheres:
        problems.append(f"only {len(on_theme)} of {len(turns)} pairs use the spec's vocabulary")
    incoherent = []
    for k, turn in enumerate(turns):
        if turn["query_type"] == "FILLER":
            before = turns[k - 1] if k else None
            bridge = turn.get("bridging_entity") or ""
            if before is None or not bridge or bridge.casefold() not in plain(before["answer"]).casefold():
                incoherent.append(k)
    coherent = not incoherent
    if incoherent:
        problems.append(
            f"FILLER pair(s) {', '.join(str(k + 1) for k in incoherent)} refer to nothing just said"
        )
    flagged = [c for c in inputs.get("corrections") or [] if c.get("verdict") == "unsupported"]
    problems += [
        f"pair {c['pair'] + 1}: answer flagged by the correction: {c.get('note', '')}" for c in flagged
    ]
    checks = [adheres, coherent, not inputs.get("rule_problems"), not flagged]
    score = round(sum(checks) / len(checks), 3)
    rationale = "all checks passed" if all(checks) else f"{len(problems)} problem(s) found"
    return AdherenceCheck(
        adheres=adheres, coherent=coherent, score=score, problems=problems, rationale=rationale
    )
