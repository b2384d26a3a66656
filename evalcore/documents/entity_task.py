"""Task `extract_entities`: the names, quantities, identifiers and dates a passage mentions, by a model.

The model path of the one entity extractor (`evalcore.documents.entities`, seed 000 Algorithm 2: documents
linked by shared entities). Its offline path is that extractor itself, and what a model returns is put
into that extractor's matching form by `as_entity`, so the graph links documents the same way whichever
path found the entities. Call it with
`ModelClient(store, project_id).run_task(EXTRACT_ENTITIES, {"passage": text})`.

The task's `Entity` is what a model is asked to write (a kind a model understands, the text as written);
`evalcore.documents.entities.Entity` adds the canonical form used for matching. The task's schema keeps
its names, because the schema is part of every cached request's key.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, Field

from evalcore.documents import entities
from evalcore.llm.tasks import Task

# Seed 000's eight categories (its "Named Entity Extraction Prompt": time intervals, people's names, dates,
# organisations, locations, events, products, works), and two a business's documents need besides:
# quantities with their units and identifiers (order numbers, codes). "name" stays for any other name.
SEED_KINDS = ("time", "person", "date", "organization", "location", "event", "product", "work")
EntityKind = Literal[
    "time", "person", "date", "organization", "location", "event", "product", "work", "quantity",
    "identifier", "name",
]  # fmt: skip


class Entity(BaseModel):
    """One entity mentioned in the passage."""

    text: str = Field(description="The entity exactly as written in the passage.")
    kind: EntityKind = Field(
        description="time, person, date, organization, location, event, product, work, quantity, "
        "identifier, or name for another name."
    )


class Entities(BaseModel):
    """Entities of a passage, in order of first appearance, without repeats."""

    entities: list[Entity] = Field(description="The entities found.")


# The extractor's kinds and the task's: a date is a quantity to the extractor (both match by value).
_TO_TASK: dict[entities.EntityKind, EntityKind] = {"name": "name", "quantity": "quantity", "id": "identifier"}
# Every seed category but dates and times is a name to the extractor (matched by its canonical words).
_FROM_TASK: dict[str, entities.EntityKind] = {"identifier": "id", "quantity": "quantity", "date": "quantity",
                                              "time": "quantity"}  # fmt: skip


def offline_entities(inputs: dict[str, Any], rng: random.Random) -> Entities:
    """The offline path: the extractor of evalcore.documents.entities (id/quantity patterns, names)."""
    found = entities.extract_entities(str(inputs["passage"]))
    return Entities(
        entities=[
            Entity(text=e.text, kind="date" if entities.is_date(e.text) else _TO_TASK[e.kind]) for e in found
        ]
    )


def as_entity(found: Entity) -> entities.Entity | None:
    """An entity a model found, in the matching form of the offline extractor (None when it is blank).

    Ids and quantities the extractor recognises get its canonical form ('2 years' -> '2 year'); anything
    else keeps the model's kind and is matched as a name.
    """
    text = found.text.strip()
    if not text:
        return None
    recognised = entities.extract_entities(text)
    if len(recognised) == 1 and recognised[0].text.strip() == text:
        return recognised[0]
    return entities.Entity(text, _FROM_TASK.get(found.kind, "name"), entities.canonical_name(text))


EXTRACT_ENTITIES = Task("extract_entities", Entities, offline_entities, prompt="extract_entities.md")
