"""Task `extract_entities`: the names, quantities, identifiers and dates a passage mentions.

Used to link documents by shared entities (the doc-QA document graph) and as the worked example of a
task: schema, offline heuristic, declaration. Call it with
`ModelClient(store, project_id).run_task(EXTRACT_ENTITIES, {"passage": text})`.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, Field

from evalcore.documents.entities import extract_entities, is_date
from evalcore.llm.tasks import Task

EntityKind = Literal["name", "quantity", "identifier", "date"]


class Entity(BaseModel):
    """One entity mentioned in the passage."""

    text: str = Field(description="The entity exactly as written in the passage.")
    kind: EntityKind = Field(description="name, quantity, identifier or date.")


class Entities(BaseModel):
    """Entities of a passage, in order of first appearance, without repeats."""

    entities: list[Entity] = Field(description="The entities found.")


_KINDS: dict[str, EntityKind] = {"name": "name", "quantity": "quantity", "id": "identifier"}


def offline_entities(inputs: dict[str, Any], rng: random.Random) -> Entities:
    """The offline extractor of evalcore.documents.entities (id/quantity patterns, capitalised phrases)."""
    found = extract_entities(str(inputs["passage"]))
    return Entities(
        entities=[Entity(text=e.text, kind="date" if is_date(e.text) else _KINDS[e.kind]) for e in found]
    )


EXTRACT_ENTITIES = Task("extract_entities", Entities, offline_entities, prompt="extract_entities.md")
