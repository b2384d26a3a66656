"""Records of a simulated dialogue in ChatChecker's shape (seed 002, Sections 3.2-3.4), and their mapping
onto the one Conversation model every generator writes.

A dialogue is a list of user and assistant turns (ChatChecker's "user" and "dialogue_system"); each
assistant turn may carry a breakdown annotation, the dialogue a 1-5 rating per dimension and the reason it
ended. In the store it is a Conversation of generator `simulation`: the annotation sits in its turn's
metadata (`breakdown`), the rest in the conversation's metadata, so pages and exports read one model.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field, field_validator

from evalcore.models import Conversation, Provenance, Turn, TurnRole
from evalcore.models.common import Record

GENERATOR = "simulation"
RUN_KIND = "simulation"
BREAKDOWN_KEY = "breakdown"  # key of a turn's annotation in Turn.metadata


class BreakdownDecision(StrEnum):
    """The detector's verdict on one assistant turn."""

    breakdown = "breakdown"
    no_breakdown = "no_breakdown"


class BreakdownAnnotation(Record):
    """A breakdown detector's output for one assistant turn (ChatChecker's `breakdown_annotation`)."""

    reasoning: str = Field(default="", description="Why the detector decided so.")
    score: float = Field(ge=0.0, le=1.0, description="Turn quality, 1 = no problem at all, 0 = a crash.")
    decision: BreakdownDecision = Field(description="breakdown or no_breakdown.")
    breakdown_types: list[str] = Field(
        default_factory=list, description="Type titles as returned, kept even when not in the taxonomy."
    )


class DimensionRating(Record):
    """A 1-5 rating of the whole dialogue on one dimension, with its reasoning."""

    reasoning: str = Field(default="", description="Why the rater gave this rating.")
    rating: int = Field(ge=1, le=5, description="1 (worst) to 5 (best).")


class FinishReason(StrEnum):
    """Why a simulated dialogue ended (ChatChecker's values)."""

    max_turns_reached = "max_turns_reached"
    user_ended_chat = "user_ended_chat"
    chatbot_ended_chat = "chatbot_ended_chat"
    user_simulator_error = "user_simulator_error"
    chatbot_error = "chatbot_error"


class DialogueTurn(Record):
    """One turn of a simulated dialogue; its ChatChecker turn id is its position counted from 1."""

    role: TurnRole = Field(description="user or assistant.")
    content: str = Field(description="What was said.")
    breakdown: BreakdownAnnotation | None = Field(
        default=None, description="The breakdown annotation, for annotated assistant turns."
    )

    @field_validator("role")
    @classmethod
    def _spoken(cls, role: TurnRole) -> TurnRole:
        if role not in (TurnRole.user, TurnRole.assistant):
            raise ValueError("a simulated dialogue has only user and assistant turns")
        return role


class Dialogue(Record):
    """A simulated dialogue with its annotations and ratings, in ChatChecker's terms."""

    dialogue_id: str = Field(description="ChatChecker's id, e.g. 'generated_standard_persona_01_dialogue_1'.")
    user_name: str = Field(description="The simulated user who led it (its folder in a run).")
    file: str = Field(
        default="dialogue_1.yaml", description="File name of the dialogue in its user's folder."
    )
    turns: list[DialogueTurn] = Field(default_factory=list, description="Turns in order.")
    finish_reason: FinishReason = Field(description="Why the dialogue ended.")
    error: str | None = Field(default=None, description="The error that ended it, if one did.")
    ratings: dict[str, DimensionRating] | None = Field(default=None, description="Rating per dimension.")
    persona_item: str | None = Field(default=None, description="Id of the persona item that played the user.")
    user_file: dict[str, Any] | None = Field(
        default=None,
        description="The user's file beside the dialogue when it is no persona: {name, content}.",
    )
    extra: dict[str, Any] = Field(
        default_factory=dict,
        description="Other fields of the ChatChecker file (timings, costs, human ratings), kept for export.",
    )

    def sort_key(self) -> tuple[str, str]:
        """ChatChecker reads a run's dialogues in path order (user folder, then file); statistics that
        pool turns over dialogues (MTLD) depend on that order."""
        return (self.user_name, self.file)


def to_conversation(dialogue: Dialogue, conversation_id: str, provenance: Provenance) -> Conversation:
    """The dialogue as a Conversation of generator `simulation`."""
    turns = [
        Turn(
            index=i,
            role=turn.role,
            content=turn.content,
            metadata={BREAKDOWN_KEY: turn.breakdown.model_dump(mode="json")} if turn.breakdown else {},
        )
        for i, turn in enumerate(dialogue.turns)
    ]
    metadata = dialogue.model_dump(mode="json", exclude={"turns"})
    return Conversation(
        id=conversation_id, generator=GENERATOR, turns=turns, metadata=metadata, provenance=provenance
    )


def from_conversation(conversation: Conversation) -> Dialogue:
    """The dialogue a `simulation` Conversation holds."""
    turns = [
        DialogueTurn(
            role=turn.role,
            content=turn.content,
            breakdown=BreakdownAnnotation.model_validate(turn.metadata[BREAKDOWN_KEY])
            if BREAKDOWN_KEY in turn.metadata
            else None,
        )
        for turn in conversation.turns
    ]
    return Dialogue.model_validate({**conversation.metadata, "turns": turns})
