"""Rubric sets of SPUR (seed 004, Section 3.1, Appendix D) and SCOPE (Section 3.2, Appendix C): records,
the rules they must keep, label estimation from rubric scores, and versioned storage.

Rules, refused with the field named: SCOPE has at most 5 areas and at most 5 rubrics per area and polarity,
weights 1-10, make-or-break rubrics are NEG with weight 100; SPUR has at most 10 SAT (POS) and 10 DSAT
(NEG) rubrics with impact 1-10 and no make-or-break; every set has a POS and a NEG rubric, and every
rubric's area is one of the set's areas. A set is an item (kind `rubric_set`): edits append versions and a
stale edit is refused, as for specs; an edit that breaks a rule is refused whole, naming the field, and
saves nothing (`edit_rubric_set`, from plain data or from YAML as `rubric_yaml` writes it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, ValidationInfo, model_validator

from evalcore.errors import Problem, ValidationFailed
from evalcore.inputs.sources import Located, dotted, parse_yaml, validation_problems
from evalcore.models.common import Record
from evalcore.store import Store

KIND = "rubric_set"
MAX_AREAS = 5  # Appendix C.3: "we set the maximum number of areas to 5"
MAX_PER_AREA = 5  # Appendix C.3: "maximum number of rubric per area to 5"
MAX_SPUR = 10  # Section 3.1: "up to 10 each for SAT and DSAT"
MAKE_OR_BREAK = 100  # Appendix C.3: "set the weight of <make-or-break> NEG rubric to 100"
MAX_WEIGHT = 10  # weights and impacts are 1-10


class Area(Record):
    """An evaluation area found by area discovery (Table 6)."""

    name: str = Field(min_length=1, description="Short name, e.g. 'Error Handling'.")
    description: str = Field(default="", description="What the area covers.")


class Rubric(Record):
    """One rubric: a statement that applies to a conversation or not, with its weight."""

    id: str = Field(min_length=1, description="Stable id within the set, e.g. 'neg-3'.")
    area: str = Field(min_length=1, description="Area the rubric belongs to.")
    polarity: Literal["POS", "NEG"] = Field(description="POS (SAT for SPUR) or NEG (DSAT).")
    text: str = Field(min_length=1, description="The rubric as a statement about the conversation.")
    weight: int = Field(default=1, description="Importance 1-10; 100 for a make-or-break NEG rubric.")
    make_or_break: bool = Field(default=False, description="A single hit warrants a NEG label.")
    support: int = Field(default=0, ge=0, description="Training reasons summarised into it.")

    @model_validator(mode="after")
    def _weight(self, info: ValidationInfo) -> Rubric:
        if _checking(info) and (found := weight_problem(self)):
            raise ValueError(f"{found[0]}: {found[1]}")
        return self


def weight_problem(rubric: Rubric) -> tuple[str, str] | None:
    """(field, why) when the rubric's weight breaks the rules, else None."""
    if rubric.make_or_break and rubric.polarity != "NEG":
        return "make_or_break", "only a NEG rubric can be make-or-break"
    if rubric.make_or_break and rubric.weight != MAKE_OR_BREAK:
        return "weight", f"a make-or-break rubric has weight {MAKE_OR_BREAK}, not {rubric.weight}"
    if not rubric.make_or_break and not 1 <= rubric.weight <= MAX_WEIGHT:
        return (
            "weight",
            f"must be 1-{MAX_WEIGHT} (or {MAKE_OR_BREAK} when make-or-break), not {rubric.weight}",
        )
    return None


def _checking(info: ValidationInfo) -> bool:
    """False while `validate_rubric_set` parses fields first, to report the rules with their fields."""
    return not (isinstance(info.context, dict) and info.context.get("rules") is False)


Method = Literal["scope", "spur"]  # the two ways of learning rubrics (SCOPE and its SPUR baseline)
METHODS: tuple[Method, ...] = ("scope", "spur")


class RubricSet(Record):
    """The rubrics of one method, learnt from labelled training conversations."""

    method: Method = Field(description="scope or spur.")
    areas: list[Area] = Field(description="Evaluation areas (SPUR: the one area 'User Satisfaction').")
    rubrics: list[Rubric] = Field(description="The rubrics, POS and NEG.")
    max_score: int = Field(default=5, ge=1, le=10, description="Highest score a rubric gets when it applies.")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Ablations and settings it was made with."
    )
    trained_on: list[str] = Field(default_factory=list, description="Ids of the training conversations.")
    producer: str = Field(default="offline", description="Model (or 'offline', or a person) that made it.")

    @model_validator(mode="after")
    def _rules(self, info: ValidationInfo) -> RubricSet:
        if _checking(info) and (found := rule_problems(self)):
            raise ValueError("; ".join(f"{dotted(loc) or 'rubric set'}: {why}" for loc, why in found))
        return self

    def of(self, polarity: str) -> list[Rubric]:
        """The rubrics of one polarity."""
        return [r for r in self.rubrics if r.polarity == polarity]


def rule_problems(rubrics: RubricSet) -> list[tuple[tuple[str | int, ...], str]]:
    """(field location, why) of every rule the set breaks (see the module docstring)."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    names = [a.name for a in rubrics.areas]
    if rubrics.method == "scope" and len(names) > MAX_AREAS:
        found.append((("areas",), f"at most {MAX_AREAS} areas, not {len(names)}"))
    for needed in ("POS", "NEG"):
        if not rubrics.of(needed):
            found.append((("rubrics",), f"needs at least one {needed} rubric"))
    seen: Counter[tuple[str, str]] = Counter()
    ids: set[str] = set()
    for i, rubric in enumerate(rubrics.rubrics):
        if problem := weight_problem(rubric):
            found.append((("rubrics", i, problem[0]), problem[1]))
        if rubric.area not in names:
            found.append((("rubrics", i, "area"), f"'{rubric.area}' is not one of the areas {names}"))
        if rubrics.method == "spur" and rubric.make_or_break:
            found.append((("rubrics", i, "make_or_break"), "SPUR has no make-or-break rubrics"))
        if rubric.id in ids:
            found.append((("rubrics", i, "id"), f"'{rubric.id}' is given twice"))
        ids.add(rubric.id)
        seen[rubric.area, rubric.polarity] += 1
        if rubrics.method == "scope" and seen[rubric.area, rubric.polarity] == MAX_PER_AREA + 1:
            found.append(
                (
                    ("rubrics", i),
                    f"area '{rubric.area}' has more than {MAX_PER_AREA} {rubric.polarity} rubrics",
                )
            )
    for polarity in ("POS", "NEG"):
        n = len(rubrics.of(polarity))
        if rubrics.method == "spur" and n > MAX_SPUR:
            found.append((("rubrics",), f"{n} {polarity} rubrics, SPUR keeps at most {MAX_SPUR}"))
    return found


def estimate_label(rubrics: RubricSet, scores: dict[str, int]) -> tuple[str, dict[str, float]]:
    """The label from rubric scores (missing = 0, not applicable), and the two sides it compared.

    SCOPE (Section 3.2, CLE): each rubric's score normalised by the maximum, weighted, averaged over the
    rubrics of its label; POS when avg_POS - avg_NEG > 0 (decision threshold 0, Appendix C.3).
    SPUR (Section 3.1, USE): the impacts of the applicable SAT and DSAT rubrics summed; SAT (POS) when the
    SAT total exceeds the DSAT total.
    A make-or-break rubric that applies makes the label NEG whatever the averages say (Appendix C.3).
    """
    sides: dict[str, float] = {}
    # Appendix C.3: the make-or-break weight is there "to ensure that hitting that rubric will guarantee a
    # NEG overall label"; an average over many NEG rubrics could dilute 100 below the POS side, so a hit
    # decides by itself.
    decided = any(r.make_or_break and scores.get(r.id, 0) > 0 for r in rubrics.rubrics)
    for polarity in ("POS", "NEG"):
        group = rubrics.of(polarity)
        if rubrics.method == "spur":
            sides[polarity] = float(sum(scores.get(r.id, 0) for r in group))
        else:
            total = sum(r.weight * scores.get(r.id, 0) / rubrics.max_score for r in group)
            sides[polarity] = total / len(group) if group else 0.0
    return ("POS" if sides["POS"] - sides["NEG"] > 0 and not decided else "NEG"), sides


def parse_rubric_set(text: str, shown: str) -> RubricSet:
    """A rubric set from YAML (as `rubric_yaml` writes it); ValidationFailed names every bad field."""
    problems: list[Problem] = []
    located = parse_yaml(text, shown, problems)
    if located is None:
        raise ValidationFailed(problems, "rubric set")
    return validate_rubric_set(located.data, shown, located)


def validate_rubric_set(data: Any, shown: str = "rubric set", located: Located | None = None) -> RubricSet:
    """A rubric set from plain data, or ValidationFailed naming each problem's field (and line)."""
    located = located or Located(data, None)
    try:
        rubrics = RubricSet.model_validate(data, context={"rules": False})
    except ValidationError as exc:
        raise ValidationFailed(validation_problems(exc, shown, located), "rubric set") from None
    problems = [Problem(shown, why, located.line_of(loc), dotted(loc)) for loc, why in rule_problems(rubrics)]
    if problems:
        raise ValidationFailed(problems, "rubric set")
    return rubrics


def save_rubric_set(
    store: Store, project_id: str, rubrics: RubricSet, author: str, *, item_id: str | None = None,
    expected_version: int | None = None,
) -> tuple[str, int]:  # fmt: skip
    """Store a new rubric set, or a new version of `item_id` on top of `expected_version` (a stale version
    is refused by the store). Returns (item id, version)."""
    body = rubrics.model_dump(mode="json")
    if item_id is None:
        return store.add_item(project_id, KIND, body, author, note="discovered"), 1
    if expected_version is None:
        expected_version = store.current(item_id).version
    return item_id, store.save_revision(item_id, body, author, expected_version)


def load_rubric_set(store: Store, item_id: str, version: int | None = None) -> tuple[RubricSet, int]:
    """A stored rubric set at `version` (default the current one), and that version's number."""
    revision = store.current(item_id)
    if revision.kind != KIND:
        raise ValidationFailed([Problem(item_id, f"is a {revision.kind}, not a rubric set")], "rubric set")
    if version is not None and version != revision.version:
        revision = next((r for r in store.history(item_id) if r.version == version and r.body), None)
        if revision is None:
            raise ValidationFailed([Problem(item_id, f"has no version {version}")], "rubric set")
    return RubricSet.model_validate(revision.body), revision.version


def rubric_yaml(rubrics: RubricSet) -> str:
    """The set as YAML for people to edit (areas, then a mapping per rubric); `parse_rubric_set` reads it."""
    return yaml.safe_dump(rubrics.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=100)


def edit_rubric_set(
    store: Store, item_id: str, edited: dict[str, Any] | str, author: str, expected_version: int
) -> int:
    """Save an edit of a stored set (plain data, or YAML text) as a new version on top of
    `expected_version`; returns it. An edit breaking a rule raises ValidationFailed naming each field (and
    line), a stale version StaleVersionError; either way nothing is saved."""
    load_rubric_set(store, item_id)  # refuses an item that is not a rubric set
    shown = f"rubric set {item_id}"
    rubrics = (
        parse_rubric_set(edited, shown) if isinstance(edited, str) else validate_rubric_set(edited, shown)
    )
    return store.save_revision(item_id, rubrics.model_dump(mode="json"), author, expected_version)


def with_rubric(rubrics: RubricSet, rubric_id: str, changes: dict[str, Any] | None) -> dict[str, Any]:
    """The set as plain data with one rubric's fields changed (None: the rubric removed), unvalidated, for
    `edit_rubric_set` to check."""
    body = rubrics.model_dump(mode="json")
    if rubric_id not in {r["id"] for r in body["rubrics"]}:
        raise ValidationFailed([Problem(f"rubric {rubric_id}", "is not in the set", None, "rubrics")], "edit")
    body["rubrics"] = [
        r if r["id"] != rubric_id else {**r, **changes}
        for r in body["rubrics"]
        if r["id"] != rubric_id or changes is not None
    ]
    return body


@dataclass(frozen=True)
class StoredRubricSet:
    """A project's rubric set as stored now: its id, version, content and last author."""

    item_id: str
    version: int
    rubrics: RubricSet
    author: str
    saved_at: datetime


def project_rubric_sets(store: Store, project_id: str) -> list[StoredRubricSet]:
    """The project's rubric sets at their current versions, newest first."""
    found = [
        StoredRubricSet(r.item_id, r.version, RubricSet.model_validate(r.body), r.author, r.created_at)
        for r in store.list_current(project_id, KIND)
    ]
    return found[::-1]


def rubric_history(store: Store, item_id: str) -> list[dict[str, Any]]:
    """Every version of a set, oldest first: who saved it, when, why, and how many rubrics it held."""
    return [
        {
            "version": r.version,
            "saved by": r.author,
            "saved at": r.created_at,
            "note": r.note,
            "rubrics": len((r.body or {}).get("rubrics") or []),
            "make-or-break": sum(bool(x.get("make_or_break")) for x in (r.body or {}).get("rubrics") or []),
        }
        for r in store.history(item_id)
    ]
