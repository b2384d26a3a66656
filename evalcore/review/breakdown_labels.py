"""Human breakdown labels: per target turn of a simulated dialogue, breakdown or not and its types (seed
002, Section 4.1: the human labels a breakdown detector is scored against; issue 18, item 7).

Labels are annotations like verdicts, appended and never overwritten, saved with `save_review` in the
same version-checked transaction as the reviewer's verdicts, under their own role (`breakdown`), so that
tiers and agreement, which read the verdict roles only, never see them. One save of a turn's label is a
head row without a reason (`reject`: a breakdown, `accept`: none, `reopen`: withdrawn; the note on it)
followed, for a breakdown, by one `reject` row per type with the type's title as `reason`. An
annotator's current label on a turn is their latest save on it; each annotator has their own, so two
annotators never overwrite each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import Field, field_validator, model_validator

from evalcore.generators.simulation.taxonomy import CHATBOT_CRASH_TITLE, breakdown_types
from evalcore.models import Annotation, AnnotationLabel
from evalcore.models.common import Record

BREAKDOWN_ROLE = "breakdown"
BREAKDOWN_CHOICES = ("breakdown", "no breakdown")  # what an annotator picks per target turn


def label_titles(task_oriented: bool) -> list[str]:
    """The type titles an annotator picks from: the detector's (17 or 26) and the crash pseudo-type."""
    return [t.title for t in breakdown_types(task_oriented)] + [CHATBOT_CRASH_TITLE]


_CANONICAL = {title.lower(): title for title in label_titles(True)}


class BreakdownLabel(Record):
    """An annotator's label on one target turn."""

    turn_index: int = Field(ge=0, description="The target (assistant) turn labelled.")
    breakdown: bool = Field(description="Whether the turn is a dialogue breakdown.")
    types: list[str] = Field(default_factory=list, description="Type titles of the breakdown, in order.")
    note: str = Field(default="", description="Free text.")

    @field_validator("types")
    @classmethod
    def _known(cls, types: list[str]) -> list[str]:
        titles = []
        for given in types:
            title = _CANONICAL.get(given.strip().lower())
            if title is None:
                raise ValueError(f"unknown breakdown type {given!r}: pick titles of the taxonomy")
            if title not in titles:
                titles.append(title)
        return titles

    @model_validator(mode="after")
    def _typed_breakdown(self) -> BreakdownLabel:
        if self.types and not self.breakdown:
            raise ValueError(f"turn {self.turn_index}: types are named only for a breakdown")
        return self


def current_labels(annotations: Sequence[Annotation]) -> dict[str, dict[int, BreakdownLabel]]:
    """Each annotator's current label per turn (their latest save on it; a withdrawn one absent), from an
    item's history in append order; rows of other roles are ignored."""
    latest: dict[tuple[str, int], list[Annotation]] = {}
    for a in annotations:
        if a.role != BREAKDOWN_ROLE or a.turn_index is None:
            continue
        key = (a.author, a.turn_index)
        if a.reason is None or key not in latest:  # a head row starts a save
            latest[key] = [a]
        else:
            latest[key].append(a)
    found: dict[str, dict[int, BreakdownLabel]] = {}
    for (author, turn), rows in latest.items():
        first = rows[0]
        if first.label == AnnotationLabel.reopen:
            continue
        broken = first.label == AnnotationLabel.reject
        types = [r.reason for r in rows[1:] if r.reason] if broken else []
        label = BreakdownLabel(turn_index=turn, breakdown=broken, types=types, note=first.note)
        found.setdefault(author, {})[turn] = label
    return {author: dict(sorted(turns.items())) for author, turns in sorted(found.items())}


def plan_labels(
    item_kind: str,
    item_id: str,
    history: Sequence[Annotation],
    author: str,
    labels: Sequence[BreakdownLabel],
    cleared: Sequence[int] = (),
) -> list[Annotation]:
    """The rows to append so the author's current labels become `labels` (and those on `cleared` turns
    are withdrawn): only turns whose label changes."""
    mine = current_labels(history).get(author, {})
    rows: list[Annotation] = []

    def row(turn: int, label: str, reason: str | None = None, note: str = "") -> Annotation:
        return Annotation(item_kind=item_kind, item_id=item_id, turn_index=turn, label=label,
                          reason=reason, note=note, author=author, role=BREAKDOWN_ROLE)  # fmt: skip

    seen: set[int] = set()
    for label in labels:
        if label.turn_index in seen or label.turn_index in cleared:
            raise ValueError(f"two breakdown labels for turn {label.turn_index}")
        seen.add(label.turn_index)
        label = label.model_copy(update={"note": label.note.strip()})
        if mine.get(label.turn_index) == label:
            continue
        rows.append(row(label.turn_index, "reject" if label.breakdown else "accept", note=label.note))
        rows += [row(label.turn_index, "reject", title) for title in label.types]
    rows += [row(turn, "reopen") for turn in sorted(set(cleared)) if turn in mine]
    return rows


def form_label(
    turn_index: int, choice: str | None, types: Sequence[str] = (), note: str = ""
) -> BreakdownLabel | None:
    """A label from a review form: `choice` is 'breakdown', 'no breakdown' or None (not labelled); types
    picked for a turn marked 'no breakdown' are an error, types alone mark a breakdown."""
    if choice is None and not types:
        return None
    if choice not in (None, BREAKDOWN_CHOICES[0], BREAKDOWN_CHOICES[1]):
        raise ValueError(f"unknown breakdown choice {choice!r} for turn {turn_index}")
    broken = choice != BREAKDOWN_CHOICES[1]
    return BreakdownLabel(turn_index=turn_index, breakdown=broken, types=list(types), note=note)


def form_labels(
    values: Mapping[int, tuple[str | None, Sequence[str], str]], mine: Mapping[int, BreakdownLabel]
) -> tuple[list[BreakdownLabel], list[int]]:
    """The labels a review form gives ({turn: (choice, types, note)}) and the turns whose earlier label
    (`mine`) the annotator took back by leaving the turn unlabelled."""
    labels, cleared = [], []
    for index, (choice, types, note) in values.items():
        label = form_label(index, choice, types, note)
        if label is not None:
            labels.append(label)
        elif index in mine:
            cleared.append(index)
    return labels, cleared
