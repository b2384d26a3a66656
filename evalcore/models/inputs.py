"""What a project is made of: the system card, documents, tools and procedures."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from evalcore.models.common import Record

CHATBOT_TYPES = ("task-oriented", "conversational")
TURN_LENGTH = re.compile(r"[1-9]\d*\s+words?", re.IGNORECASE)


class ChatbotInfo(Record):
    """Description of the system under test (ChatChecker's `chatbot_info`, extended)."""

    name: str = Field(description="Display name of the assistant.")
    description: str = Field(description="What the assistant is and who it serves.")
    interaction_method: str = Field(default="text-based chat interface", description="How users reach it.")
    type: str = Field(default="task-oriented", description="task-oriented, conversational, RAG, agent ...")
    task: str = Field(default="", description="What the assistant must accomplish for users.")
    constraints: list[str] = Field(default_factory=list, description="Rules the assistant must follow.")
    known_limitations: list[str] = Field(default_factory=list, description="What it cannot do.")
    available_languages: list[str] = Field(default_factory=lambda: ["English"], description="Languages.")
    domain: str | None = Field(default=None, description="Business domain, e.g. 'bicycle repair'.")
    business: str | None = Field(default=None, description="The (fictional) organisation it works for.")

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        # ChatChecker's two types decide the taxonomy and the rating dimensions; a longer description
        # ('RAG and tool-using task-oriented assistant') must still name one, or it would silently count
        # as whatever the default is.
        if not any(t in value.lower() for t in CHATBOT_TYPES):
            raise ValueError(f"{value!r} names neither of ChatChecker's types {' nor '.join(CHATBOT_TYPES)}")
        return value


class UserSimulationConfig(Record):
    """Limits for simulated users (ChatChecker's `user_simulation_config`)."""

    typical_user_turn_length: str = Field(default="10 words", description="Typical user turn length.")
    max_user_turn_length: str = Field(default="40 words", description="Longest allowed user turn.")
    # ChatChecker's runner stops after 10 user turns unless the target's config says otherwise.
    max_user_turns: int = Field(default=10, ge=1, description="Most user turns in one simulated dialogue.")

    @field_validator("typical_user_turn_length", "max_user_turn_length")
    @classmethod
    def _word_count(cls, value: str) -> str:
        # The simulator reads lengths as word counts; any other form would be dropped without a word.
        if not TURN_LENGTH.fullmatch(value.strip()):
            raise ValueError(
                f"must be a word count as ChatChecker writes it, e.g. '10 words' (got {value!r})"
            )
        return value


class SystemCard(Record):
    """The system under test: a superset of ChatChecker's target config, so those files load unchanged."""

    id: str = Field(description="Stable identifier of the system, e.g. 'spoke_support'.")
    chatbot_info: ChatbotInfo = Field(description="Description of the assistant.")
    user_simulation_config: UserSimulationConfig = Field(
        default_factory=UserSimulationConfig, description="Limits for simulated users."
    )
    behaviors: list[str] = Field(default_factory=list, description="Behaviours the team wants tested.")
    documents: list[str] = Field(
        default_factory=list, description="Document paths (relative to the project) to import; empty = all."
    )


class DocumentKind(StrEnum):
    """The three kinds of document the generators distinguish."""

    text = "text"
    table = "table"
    policy = "policy"


class Document(Record):
    """One document of the knowledge the system answers from."""

    id: str = Field(description="Stable id derived from the file path, e.g. 'returns-policy'.")
    kind: DocumentKind = Field(description="text, table or policy.")
    title: str = Field(description="Human-readable title.")
    path: str = Field(default="", description="Path relative to the project folder.")
    text: str = Field(default="", description="Prose of text and policy documents; a rendering of tables.")
    columns: list[str] = Field(default_factory=list, description="Column names of a table document.")
    rows: list[dict[str, str]] = Field(default_factory=list, description="Rows of a table document.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Front matter and other metadata.")

    @model_validator(mode="after")
    def _table_has_columns(self) -> Document:
        if self.kind == DocumentKind.table and not self.columns:
            raise ValueError("a table document needs at least one column")
        return self


class Tool(Record):
    """A tool (API) the assistant can call, described by a JSON schema of its parameters."""

    name: str = Field(description="Function name the assistant calls.")
    description: str = Field(description="What the tool does.")
    parameters: dict[str, Any] = Field(description="JSON schema of the arguments (an 'object' schema).")
    returns: dict[str, Any] | None = Field(default=None, description="JSON schema of the result, optional.")

    @field_validator("name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not value.replace("_", "").isalnum():
            raise ValueError("must be letters, digits and underscores")
        return value


class ProcedureStep(Record):
    """One step of a procedure: something the agent says, or an API it calls."""

    kind: Literal["message", "api"] = Field(description="'message' (agent says) or 'api' (agent calls).")
    text: str = Field(default="", description="What the agent says or checks at this step.")
    api: str | None = Field(default=None, description="Tool name, for 'api' steps.")
    outcomes: dict[str, str] = Field(
        default_factory=dict, description="For 'api' steps: outcome name -> what the agent does next."
    )
    replies: dict[str, str] = Field(
        default_factory=dict,
        description="For 'api' steps: outcome name -> what the assistant tells the customer, in its own "
        "words ('{slot}' fills from what was collected); the built-in flow assistant says it.",
    )
    sources: list[str] = Field(
        default_factory=list,
        description="The policy passages the step comes from ('file: sentence'), for procedures read from "
        "the project's policies.",
    )

    @model_validator(mode="after")
    def _api_named(self) -> ProcedureStep:
        if self.kind == "api" and not self.api:
            raise ValueError("an 'api' step needs an 'api' field naming a tool")
        return self


class Procedure(Record):
    """How the agent handles one intent, step by step (ALMITA's procedures)."""

    name: str = Field(description="Stable name, e.g. 'book_repair'.")
    intent: str = Field(description="The customer intent this procedure serves.")
    description: str = Field(default="", description="Summary of the procedure.")
    steps: list[ProcedureStep] = Field(min_length=1, description="Ordered steps.")

    @property
    def apis(self) -> list[str]:
        """Tools the procedure calls, in order of first use."""
        return list(dict.fromkeys(step.api for step in self.steps if step.api))
