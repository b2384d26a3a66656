"""Outputs of the doc-QA tasks: the conversation (pairs with query type, grounding, sources), the answer
corrections, and the adherence check."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

QUERY_TYPES = ("SINGLE-DOC", "MULTI-DOC", "PRE-FILLER", "FILLER", "SYNTHESIS")
CANNOTANSWER = "CANNOTANSWER"

QueryType = Literal["SINGLE-DOC", "MULTI-DOC", "PRE-FILLER", "FILLER", "SYNTHESIS"]


class Source(BaseModel):
    """Where an answer comes from: a sentence copied from a document, or cells of one table row."""

    document_id: str = Field(description="Id of the document.")
    passage_id: str = Field(default="", description="Passage id ('<doc>#p<n>' or '<doc>#r<row>'), if known.")
    sentence: str | None = Field(default=None, description="The supporting sentence, copied exactly.")
    row: int | None = Field(default=None, description="Row index (from 0), for table documents.")
    cells: list[list[str]] = Field(default_factory=list, description="[column, value] pairs of that row.")


class QATurn(BaseModel):
    """One question and its expected answer."""

    question: str = Field(description="What the user asks.")
    answer: str = Field(description="The expected answer from the documents, or CANNOTANSWER.")
    document_ids: list[str] = Field(description="Ids of the documents the answer comes from.")
    query_type: QueryType = Field(description="SINGLE-DOC, MULTI-DOC, PRE-FILLER, FILLER or SYNTHESIS.")
    bridging_entity: str | None = Field(default=None, description="Entity this turn bridges on, if any.")
    theme_relation: str = Field(default="", description="How the pair relates to the spec's theme.")
    resolved_question: str = Field(default="", description="The question with its references spelled out.")
    sources: list[Source] = Field(default_factory=list, description="Sentences or cells the answer uses.")


class QAConversation(BaseModel):
    """A generated conversation: the pairs in order."""

    turns: list[QATurn] = Field(description="Question/answer pairs in order.")


class TurnCorrection(BaseModel):
    """The correction of one answer."""

    pair: int = Field(description="Pair number (from 0) as given in the input.")
    verdict: Literal["supported", "corrected", "unsupported"] = Field(description="Outcome for this answer.")
    answer: str = Field(description="The answer after correction (unchanged unless corrected).")
    passage_ids: list[str] = Field(default_factory=list, description="Passages that support the answer.")
    note: str = Field(default="", description="What was wrong, when not supported.")


class Corrections(BaseModel):
    """Retrieval-augmented correction of every pair."""

    turns: list[TurnCorrection] = Field(description="One entry per pair, in order.")


class AdherenceCheck(BaseModel):
    """The judge's verdict on the whole conversation."""

    adheres: bool = Field(description="The questions test the spec's behaviour.")
    coherent: bool = Field(description="The conversation flows and every reference resolves.")
    score: float = Field(ge=0, le=1, description="Overall quality from 0 to 1.")
    problems: list[str] = Field(default_factory=list, description="What is wrong, one line each.")
    rationale: str = Field(default="", description="Why, in a sentence or two.")


def is_cannot_answer(text: str) -> bool:
    """True when an expected answer says the documents do not answer the question."""
    return text.strip().strip(".").upper().replace(" ", "") == CANNOTANSWER
