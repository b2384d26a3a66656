"""The output schema of spec generation: drafts of Scenario / Given / When / Then specs."""

from __future__ import annotations

from pydantic import BaseModel, Field

CATEGORIES = (
    "policy",
    "product information",
    "tool use",
    "multi-document",
    "limitation",
    "constraint",
)


class SpecDraft(BaseModel):
    """One generated specification, before it is stored."""

    scenario: str = Field(description="Short title of the behaviour under test.")
    given: str = Field(description="Precondition, in the past tense.")
    when: str = Field(description="What the user does, in the present tense.")
    then: str = Field(description="What the assistant should do ('should ...').")
    category: str = Field(description="One of the scenario focuses, e.g. 'policy', 'tool use'.")
    documents: list[str] = Field(default_factory=list, description="Ids of the documents it relies on.")


class SpecDrafts(BaseModel):
    """A batch of generated specifications."""

    specs: list[SpecDraft] = Field(description="The new specifications, none repeating earlier ones.")
