"""A deterministic, offline named-entity extractor for linking documents.

The document graph (evalcore.documents.graph) links documents that mention the same things.
Seed 000 asks an LLM for named entities; this module is the offline implementation of that step:
regular expressions and a few heuristics, with no model and no network. It is the only offline one: the
model path, the `extract_entities` task (evalcore.documents.entity_task), falls back on it and maps a
model's entities into its canonical forms, so an LLM-backed `Extractor` (a callable
`text -> list[Entity]`) can replace it anywhere one is accepted.

Three kinds of entity:
- `id`: codes such as RC-01, VT-BAT-500, WEB-204518, WB-STD: uppercase letters and digits joined by hyphens,
  with a digit somewhere or every part at least two characters (so 'E-MTB' is not a code);
- `quantity`: money ($129), percentages (15%), numbers with a unit (14 days, 500 charge cycles, 2-hour,
  500Wh), dates (1 March 2025, 25 December) and years (1998);
- `name`: runs of capitalised words (Alder Creek, Voltra Metro E8, Ridgeline Commuter 300). A single
  capitalised word at the start of a sentence, a list item or a table cell is skipped, because there
  capitals mark the position rather than a name ('Charge indoors', 'Bikes must be ...'); leading function
  words are stripped from longer runs ('The Metro E8' -> 'Metro E8').

Canonical forms make matching robust: ids upper-case, names lower-case with unicode dashes and spacing
normalised, quantities as '<number> <singular unit>' ('2 years' and '2-year' both -> '2 year').
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

EntityKind = Literal["name", "quantity", "id"]


@dataclass(frozen=True)
class Entity:
    """One mention: the text as written, its kind, and the canonical form used for matching."""

    text: str
    kind: EntityKind
    canonical: str


Extractor = Callable[[str], list[Entity]]

# Units a number may carry; the value is the canonical (singular) unit. Longer alternatives first, so
# '500 charge cycles' is one quantity rather than '500 charge'.
_UNITS: dict[str, str] = {
    "charge cycles": "charge cycle",
    "charge cycle": "charge cycle",
    "business days": "business day",
    "business day": "business day",
    "cycles": "cycle",
    "cycle": "cycle",
    "seconds": "second",
    "minutes": "minute",
    "minute": "minute",
    "hours": "hour",
    "hour": "hour",
    "days": "day",
    "day": "day",
    "weeks": "week",
    "week": "week",
    "months": "month",
    "month": "month",
    "years": "year",
    "year": "year",
    "miles": "mile",
    "mile": "mile",
    "km": "km",
    "cm": "cm",
    "mm": "mm",
    "ml": "ml",
    "psi": "psi",
    "wh": "wh",
    "points": "point",
    "units": "unit",
    "kg": "kg",
}
_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December"
    "|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_NUM = r"\d+(?:[.,]\d+)*"
_UNIT_ALT = "|".join(re.escape(u).replace(r"\ ", r"\s+") for u in _UNITS)

# Order matters: earlier patterns claim their span first, so a date is not also read as a year.
_PATTERNS: list[tuple[EntityKind, str, re.Pattern[str]]] = [
    ("id", "id", re.compile(r"(?<![\w-])[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+(?![\w-])")),
    ("quantity", "date", re.compile(r"\b\d{4}-\d{2}-\d{2}\b")),
    ("quantity", "date", re.compile(rf"\b\d{{1,2}}\s+(?:{_MONTHS})\b(?:\s+\d{{4}}\b)?")),
    ("quantity", "date", re.compile(rf"\b(?:{_MONTHS})\s+\d{{1,2}}(?:,\s*\d{{4}})?\b")),
    ("quantity", "money", re.compile(rf"\$\s?{_NUM}")),
    ("quantity", "percent", re.compile(rf"\b{_NUM}\s?%")),
    ("quantity", "unit", re.compile(rf"\b({_NUM})(?:\s*-\s*|\s*)({_UNIT_ALT})\b", re.IGNORECASE)),
    ("quantity", "year", re.compile(r"\b(?:19|20)\d{2}\b")),
]

# Function words stripped from the front of a name ('The Metro E8'); also words that are never a name alone.
_LEADING_WORDS = """a an the this that these those our your their its my we you they it he she i all any each
every some no not if when where while for from with without in on at by to of and or but as so use see ask
call bring please also only most more many other"""
_LEADING = frozenset(_LEADING_WORDS.split())
_GENERIC_WORDS = "monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun yes no"
_GENERIC = frozenset(_GENERIC_WORDS.split() + [m.lower() for m in _MONTHS.split("|")])
_WORD = re.compile(r"[^\W_](?:[\w'’.-]*[^\W_])?")
_MARKUP = re.compile(r"[*_`#>|]+")


def _clean(text: str) -> str:
    """Unicode-normalised text without markdown emphasis, so '**Alder Creek**' reads as 'Alder Creek'."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"[\u2010-\u2015\u2212]", "-", text)
    return _MARKUP.sub(" ", text)


def is_date(text: str) -> bool:
    """True when a quantity's text is a date (2025-03-01, 1 March 2025, March 1)."""
    return any(sub == "date" and p.fullmatch(text.strip()) for _, sub, p in _PATTERNS)


def canonical_name(text: str) -> str:
    """The matching form of a name: NFKC, lower-case, plain hyphens, single spaces, no possessive."""
    text = _clean(text).strip(" .,;:!?()[]\"'")
    text = re.sub(r"['’]s$", "", text)
    return re.sub(r"\s+", " ", text).casefold()


def _canonical_quantity(kind: str, match: re.Match[str]) -> str:
    raw = re.sub(r"\s+", " ", match.group(0)).strip()
    if kind == "unit":
        number = match.group(1).replace(",", "")
        unit = _UNITS[re.sub(r"\s+", " ", match.group(2).lower())]
        return f"{number} {unit}"
    if kind == "money":
        return "$" + raw.lstrip("$ ").replace(",", "")
    if kind == "percent":
        return raw.replace(" ", "")
    return raw.casefold()


def _sentence_start(text: str, pos: int) -> bool:
    """True when only punctuation/space lies between `pos` and the previous sentence or item boundary."""
    before = text[:pos].rstrip(" \t\"'(*[")
    return not before or before[-1] in ".!?:;\n-|"


def _is_capitalised(word: str) -> bool:
    return word[0].isupper() or (word[0].isdigit() and any(c.isupper() for c in word))


def _acronym(word: str) -> bool:
    return word.isupper() and word.isalpha() and len(word) <= 3


def _names(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, Entity]]:
    """Runs of capitalised words (numbers may continue a run: 'Commuter 300'), outside taken spans."""
    found: list[tuple[int, Entity]] = []
    run: list[re.Match[str]] = []

    def flush() -> None:
        words = list(run)
        run.clear()
        if not words:
            return
        initial = _sentence_start(text, words[0].start())
        while words and words[0].group(0).casefold() in _LEADING:
            words.pop(0)
        while words and words[-1].group(0).casefold() in _LEADING:
            words.pop()
        if not words or not _is_capitalised(words[0].group(0)):
            return
        surface = text[words[0].start() : words[-1].end()]
        canonical = canonical_name(surface)
        # A lone word is too weak a name at a sentence start, when short, generic, or a short acronym (SKU).
        lone = len(words) == 1
        if lone and (initial or len(canonical) < 3 or canonical in _GENERIC or _acronym(surface)):
            return
        found.append((words[0].start(), Entity(surface, "name", canonical)))

    for match in _WORD.finditer(text):
        word = match.group(0)
        inside_taken = any(start <= match.start() < end for start, end in taken)
        # A run continues only across single spaces; punctuation or a line break ends it.
        contiguous = bool(run) and text[run[-1].end() : match.start()] == " "
        numeric_tail = bool(run) and word[0].isdigit() and contiguous
        if not inside_taken and (_is_capitalised(word) or numeric_tail):
            if run and not contiguous:
                flush()
            if run or not word[0].isdigit():
                run.append(match)
            continue
        flush()
    flush()
    return found


def extract_entities(text: str) -> list[Entity]:
    """Entities in `text`, in order of first mention, one per (kind, canonical form).

    Deterministic and offline; the same callable signature as the LLM-backed extractor that may replace it.
    """
    clean = _clean(text)
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, Entity]] = []
    for kind, sub, pattern in _PATTERNS:
        for match in pattern.finditer(clean):
            if any(s < match.end() and match.start() < e for s, e in taken):
                continue
            if kind == "id":
                parts = match.group(0).split("-")
                if not any(c.isdigit() for c in match.group(0)) and min(len(p) for p in parts) < 2:
                    continue
                canonical = match.group(0)
            else:
                canonical = _canonical_quantity(sub, match)
            taken.append(match.span())
            found.append((match.start(), Entity(match.group(0).strip(), kind, canonical)))
    found.extend(_names(clean, taken))
    found.sort(key=lambda item: item[0])
    seen: set[tuple[str, str]] = set()
    result: list[Entity] = []
    for _, entity in found:
        if (entity.kind, entity.canonical) not in seen:
            seen.add((entity.kind, entity.canonical))
            result.append(entity)
    return result
