"""Generated and curated items: specs, conversations, tests, personas, and the annotations on them."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator

from evalcore.models.common import Provenance, Record, Tier, file_name_problem, now_utc


class SpecStatus(StrEnum):
    """Review status of a spec."""

    candidate = "candidate"
    accepted = "accepted"
    rejected = "rejected"


class Spec(Record):
    """A behaviour-driven test specification: Scenario / Given / When / Then."""

    id: str = Field(description="Stable id within the store.")
    scenario: str = Field(description="One-line name of the behaviour.")
    given: str = Field(description="Context the system is in.")
    when: str = Field(description="What the user does.")
    then: str = Field(description="What the system must do.")
    category: str = Field(default="general", description="Behaviour category, e.g. 'policy', 'tool use'.")
    documents: list[str] = Field(default_factory=list, description="Ids of the documents the spec relies on.")
    status: SpecStatus = Field(default=SpecStatus.candidate, description="Review status.")
    selected: bool = Field(default=False, description="Whether the current selection includes it.")
    locked: bool = Field(default=False, description="Locked specs are always selected and not regenerated.")
    reason: str = Field(default="", description="Why it was accepted or rejected.")
    provenance: Provenance = Field(description="Model (or offline, or a person) that wrote it.")


class TurnRole(StrEnum):
    """Who speaks in a turn."""

    user = "user"
    assistant = "assistant"
    tool_call = "tool_call"
    tool_result = "tool_result"


class Turn(Record):
    """One turn of a conversation."""

    index: int = Field(ge=0, description="Position in the conversation, from 0.")
    role: TurnRole = Field(description="user, assistant, tool_call or tool_result.")
    content: str = Field(default="", description="Text of the turn (expected text for assistant turns).")
    query_type: str | None = Field(default=None, description="SINGLE-DOC, MULTI-DOC, FILLER, ... (doc_qa).")
    grounding: list[str] = Field(default_factory=list, description="Ids of documents that ground the turn.")
    bridging_entity: str | None = Field(default=None, description="Entity linking to the previous document.")
    tool_name: str | None = Field(default=None, description="Tool called or answering, for tool turns.")
    arguments: dict[str, Any] | None = Field(default=None, description="Arguments of a tool call.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Generator-specific details.")


class Conversation(Record):
    """A synthesized conversation; every generator writes this one shape."""

    id: str = Field(description="Stable id within the store.")
    generator: str = Field(description="doc_qa, procedure, simulation or tool_case.")
    spec_id: str | None = Field(default=None, description="The spec it exercises, if any.")
    turns: list[Turn] = Field(default_factory=list, description="Turns in order.")
    tier: Tier = Field(default=Tier.unreviewed, description="Derived verification tier.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Chain, checks and other details.")
    provenance: Provenance = Field(description="Model (or offline) that generated it and its inputs.")


class Test(Record):
    """A single test: a conversation context and the expected next turn, plus deterministic assertions."""

    id: str = Field(description="Stable id within the store.")
    conversation_id: str | None = Field(default=None, description="Conversation the test was cut from.")
    generator: str | None = Field(default=None, description="Generator that made it (its conversation's).")
    spec_id: str | None = Field(default=None, description="Spec it exercises.")
    context: list[Turn] = Field(default_factory=list, description="Turns before the expected one.")
    expected: Turn = Field(description="The expected next assistant reply or tool call.")
    assertions: list[dict[str, Any]] = Field(default_factory=list, description="Deterministic checks.")
    tier: Tier = Field(default=Tier.unreviewed, description="Derived verification tier.")
    provenance: Provenance = Field(description="Model (or offline) that generated it.")


# ChatChecker's spellings, as its persona files write them.
PersonaType = Literal["standard", "challenging", "adversarial"]
TraitLevel = Literal["low", "medium", "high"]


class PersonaProfile(Record):
    """Who a simulated user is (ChatChecker's persona profile)."""

    name: str = Field(description="Persona's name.")
    gender: str | None = Field(default=None, description="Gender, free text.")
    age: int | None = Field(default=None, ge=0, description="Age in years.")
    background_info: list[str] = Field(default_factory=list, description="Facts about the persona.")
    personality: dict[str, TraitLevel] = Field(
        default_factory=dict, description="OCEAN traits: low/medium/high."
    )
    interaction_style: list[str] = Field(default_factory=list, description="How the persona writes.")


def _profile_variant(value: Any) -> str | None:
    """Which form a profile takes; None (an error naming both forms) for anything else."""
    if isinstance(value, str):
        return "variant-text"
    return "variant-fields" if isinstance(value, dict | PersonaProfile) else None


# ChatChecker allows `profile: Union[str, dict]`. A tagged union, so a bad field of a profile mapping is
# one error at its own path (the tags are dropped from error paths by evalcore.inputs.sources), not two.
Profile = Annotated[
    Annotated[PersonaProfile, Tag("variant-fields")] | Annotated[str, Tag("variant-text")],
    Discriminator(
        _profile_variant,
        custom_error_type="profile_form",
        custom_error_message="must be a mapping of profile fields or a text",
    ),
]


class Persona(Record):
    """A simulated user (ChatChecker's persona file format)."""

    persona_id: str = Field(description="Stable id.")
    type: PersonaType = Field(default="standard", description="standard, challenging or adversarial.")
    profile: Profile = Field(description="Who the persona is: profile fields, or a free text.")
    task: str = Field(description="What the persona wants to get done.")
    generated: bool = Field(default=True, description="Whether a generator wrote it.")
    provenance: Provenance | None = Field(default=None, description="Who or what produced it.")

    @field_validator("persona_id")
    @classmethod
    def _a_file_name(cls, value: str) -> str:
        # The id names the persona's file on export (`<persona_id>.yaml`): a path part would write elsewhere.
        problem = file_name_problem(value)
        if problem:
            raise ValueError(problem)
        return value


class AnnotationLabel(StrEnum):
    """A human verdict."""

    accept = "accept"
    reject = "reject"
    reopen = "reopen"


class Annotation(Record):
    """A human verdict on a conversation, one of its turns, or a test; appended, never overwritten."""

    item_kind: str = Field(description="conversation, test or spec.")
    item_id: str = Field(description="Id of the annotated item.")
    turn_index: int | None = Field(default=None, description="Turn, or None for the whole item.")
    label: AnnotationLabel = Field(description="accept, reject or reopen.")
    reason: str | None = Field(default=None, description="Reason from the short list, for rejections.")
    note: str = Field(default="", description="Free text.")
    edited_content: str | None = Field(default=None, description="Corrected expected answer, if edited.")
    author: str = Field(description="Who made the annotation.")
    role: str = Field(default="annotator", description="annotator or lead (an adjudication).")
    created_at: datetime = Field(default_factory=now_utc, description="When it was made.")


class Action(Record):
    """What an agent does next: reply with text, or call an API with arguments."""

    kind: Literal["reply", "api"] = Field(description="reply or api.")
    text: str = Field(default="", description="The reply's text.")
    tool_name: str | None = Field(default=None, description="The API called.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The call's arguments.")


def expected_action(test: Test) -> Action:
    """The test's expected action."""
    turn = test.expected
    if turn.role == TurnRole.tool_call:
        return Action(kind="api", tool_name=turn.tool_name, arguments=turn.arguments or {})
    return Action(kind="reply", text=turn.content)
