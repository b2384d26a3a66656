"""Task `extract_entities`: the names, quantities, identifiers and dates a passage mentions.

Used to link documents by shared entities (the doc-QA document graph) and as the worked example of a
task: schema, offline heuristic, declaration. Call it with
`ModelClient(store, project_id).run_task(EXTRACT_ENTITIES, {"passage": text})`.
"""

from __future__ import annotations

import random
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from evalcore.llm.tasks import Task

EntityKind = Literal["name", "quantity", "identifier", "date"]


class Entity(BaseModel):
    """One entity mentioned in the passage."""

    text: str = Field(description="The entity exactly as written in the passage.")
    kind: EntityKind = Field(description="name, quantity, identifier or date.")


class Entities(BaseModel):
    """Entities of a passage, in order of first appearance, without repeats."""

    entities: list[Entity] = Field(description="The entities found.")


_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_UNITS = (
    r"%|percent|kg|g|mg|km|m|cm|mm|mi|lb|lbs|l|ml|gb|mb|tb|kb|usd|eur|gbp|dollars?|euros?|"
    r"seconds?|minutes?|hours?|days?|weeks?|months?|years?|business days?|items?|users?|seats?"
)
_DATE = (
    r"\b\d{4}-\d{2}-\d{2}\b"  # 2024-03-12
    rf"|\b\d{{1,2}} (?:{_MONTHS}) \d{{4}}\b"  # 12 March 2024
    rf"|\b(?:{_MONTHS}) \d{{1,2}}(?:, \d{{4}})?\b"  # March 12, 2024
)
_IDENTIFIER = (
    r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)+\b"  # ORD-12345, A1-B2
    r"|\b[A-Z]{2,}\d+[A-Z0-9]*\b"  # SKU12, AB123X
    r"|#\d{3,}\b"  # #10042
)
_QUANTITY = rf"[$€£]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:{_UNITS})(?!\w)"
_PATTERNS: list[tuple[EntityKind, re.Pattern[str]]] = [
    ("date", re.compile(_DATE)),
    ("identifier", re.compile(_IDENTIFIER)),
    ("quantity", re.compile(_QUANTITY, re.IGNORECASE)),
]
# Runs of capitalised words (allowing "of", "and", "the", "&" inside): "Bank of Springfield", "Gold Plan".
_NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|and|the|for|&)?\s*[A-Z][\w'’-]*)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)$")


def offline_entities(inputs: dict[str, Any], rng: random.Random) -> Entities:
    """Dates, identifiers and quantities by pattern, then capitalised phrases; no randomness needed."""
    passage = str(inputs["passage"])
    found: list[tuple[int, str, EntityKind]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(passage):
            if not any(a < m.end() and m.start() < b for a, b in taken):
                found.append((m.start(), m.group(0).strip(), kind))
                taken.append((m.start(), m.end()))
    for m in _NAME.finditer(passage):
        words = m.group(0).split()
        start = m.start()
        # A sentence's first word is capitalised anyway: keep it only if the passage capitalises it
        # elsewhere too ("Acme Bank ... at Acme"), else drop it ("Contact Jane Smith" -> "Jane Smith").
        if _SENTENCE_START.search(passage[:start]) and not _capitalised_elsewhere(passage, words[0], start):
            start += len(words[0]) + 1
            words = words[1:]
        text = " ".join(words).rstrip("'’-")
        overlaps = any(a < start + len(text) and start < b for a, b in taken)
        if text and len(text) > 1 and not overlaps and text.upper() not in _MONTHS.upper().split("|"):
            found.append((start, text, "name"))
    seen: set[str] = set()
    entities = []
    for _, text, kind in sorted(found):
        if text.lower() not in seen:
            seen.add(text.lower())
            entities.append(Entity(text=text, kind=kind))
    return Entities(entities=entities)


def _capitalised_elsewhere(passage: str, word: str, at: int) -> bool:
    for m in re.finditer(rf"\b{re.escape(word)}\b", passage):
        if m.start() != at and not _SENTENCE_START.search(passage[: m.start()]):
            return True
    return False


EXTRACT_ENTITIES = Task("extract_entities", Entities, offline_entities, prompt="extract_entities.md")
