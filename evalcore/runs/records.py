"""Records of a run: the fixed list of error types, and the judged turn the store keeps per played turn."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import Field

from evalcore.models import Judgment

RUN_KIND = "run"

# The error types a judge chooses from (seed 000's failure modes, in words a lead acts on). A judge may
# only give one of JUDGE_ERROR_TYPES; "crash" and "assertion_failed" are set by the runner itself.
ERROR_TYPES: dict[str, str] = {
    "wrong_fact": "states a fact that contradicts the expected answer or the documents",
    "incomplete": "right as far as it goes, but misses part of the expected answer",
    "multi_doc_retrieval": "an answer that needs several documents uses only some of them: what another "
    "document holds is missing (seed 000: multi-document retrieval failure)",
    "coreference": "misreads a reference to an earlier turn ('it', 'that store') or ignores the conversation "
    "(seed 000: coreference error)",
    "hallucinated": "adds claims found neither in the expected answer nor in the grounding documents",
    "failed_to_say_cannot_answer": "answers a question the documents cannot answer instead of saying so",
    "refused_wrongly": "declines, or says it cannot answer, a question the documents do answer",
    "wrong_tool_order": "calls the wrong tool, or the right tools in the wrong order "
    "(seed 000: Wrong Tool/Order)",
    "multi_correct": "gives another answer the documents also allow, where the question has several "
    "(seed 000: Multi-Correct)",
    "off_spec": "breaks the behaviour the spec requires (its Then), even if the facts are right",
    "off_topic": "does not answer what was asked: about something else, or only restates the question",
    "other": "fails for another reason (say which in the rationale)",
    "crash": "the target gave no usable reply (error, timeout, unreadable or empty response)",
    "assertion_failed": "a deterministic assertion of the test failed",
    # Stored by runs before the seed's names were used; read as `coreference`, never given any more.
    "ignored_context": "misreads a reference to an earlier turn (coreference); the older name of coreference",
}
JudgeErrorType = Literal[
    "wrong_fact",
    "incomplete",
    "multi_doc_retrieval",
    "coreference",
    "hallucinated",
    "failed_to_say_cannot_answer",
    "refused_wrongly",
    "wrong_tool_order",
    "multi_correct",
    "off_spec",
    "off_topic",
    "other",
]
JUDGE_ERROR_TYPES: tuple[str, ...] = get_args(JudgeErrorType)
LEGACY_ERROR_TYPES: dict[str, str] = {"ignored_context": "coreference"}  # old stored name -> judge's name

# Seed 000, Table 10: the three failure classes it counts, and the class of each of our error types.
# "LLM fact retrieval errors include Wrong Tool/Order and Multi-Correct cases" (the table's note); the
# other answer errors are fact retrieval too. What the seed does not classify (a crash, a broken spec
# behaviour, a failed assertion) is "other", so the classes still add up to every failure.
ERROR_CLASSES: dict[str, str] = {
    "multi_doc_retrieval": "Multi-document retrieval failures",
    "coreference": "Coreference errors",
    "fact_retrieval": "LLM fact retrieval errors",
    "other": "Other failures (not in the seed's Table 10)",
}
_FACT_RETRIEVAL = (
    "wrong_fact", "incomplete", "hallucinated", "failed_to_say_cannot_answer", "refused_wrongly",
    "wrong_tool_order", "multi_correct", "off_topic",
)  # fmt: skip
ERROR_CLASS_OF: dict[str, str] = {
    "multi_doc_retrieval": "multi_doc_retrieval",
    "coreference": "coreference",
    "ignored_context": "coreference",
    **dict.fromkeys(_FACT_RETRIEVAL, "fact_retrieval"),
}


def error_class(error_type: str | None) -> str:
    """The seed's Table 10 class of an error type ('other' for what the seed does not classify)."""
    return ERROR_CLASS_OF.get(error_type or "", "other")


class JudgedTurn(Judgment):
    """A judgment plus what the report groups by and what its drill-down shows."""

    spec_id: str | None = Field(default=None, description="Spec the played item exercises.")
    n_documents: int | None = Field(default=None, description="Documents the item draws on (chain length).")
    query_type: str | None = Field(default=None, description="SINGLE-DOC, MULTI-DOC, FILLER, SYNTHESIS ...")
    multi_turn: bool = Field(default=False, description="Asked after earlier exchanges of the conversation.")
    alone: bool = Field(
        default=False,
        description="Played alone: the resolved question of a multi-turn exchange, with no history "
        "(the single-turn half of a pair; its row's multi_turn column is NULL).",
    )
    item_judge_passed: bool | None = Field(
        default=None, description="The item's generation-time judge verdict (tiers fall back to it)."
    )
    item_version: int | None = Field(default=None, description="Version of the item that was played.")
    question: str = Field(default="", description="The user message(s) sent for this turn.")
    expected: str = Field(default="", description="The expected answer.")
    history: list[dict[str, str]] = Field(
        default_factory=list, description="The conversation so far as the target saw it (role, content)."
    )
    grounding: list[str] = Field(default_factory=list, description="Documents that ground the answer.")
    crash: str | None = Field(default=None, description="Why the target gave no usable reply, if so.")
    latency_ms: float | None = Field(default=None, description="How long the target took to reply.")
    cache_hit: bool = Field(default=False, description="Reply served from the model layer's cache.")
    target_details: dict[str, Any] | None = Field(default=None, description="Adapter extras (demo passage).")
    assertions: list[dict[str, Any]] = Field(default_factory=list, description="Results of the assertions.")
    prompt_version: str | None = Field(default=None, description="Version of the judge prompt.")
    judge_repairs: list[str] = Field(
        default_factory=list, description="Repairs the judge's output needed (its raw text is kept then)."
    )
