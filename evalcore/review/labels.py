"""The one label set of a review: what an annotator (or a lead) picks for a turn and for the whole
conversation, the words shown for each, and the key that picks it (issue 28).

A turn and a conversation take the same choices, shown with the same words and the same keys: accept, or
one of the rejection reasons (`verdicts.REASONS`), which rejects. Stored values do not change (the
verdict's `label` and `reason`, as every export writes them); only how they are shown is decided here,
so a turn rejected as "not grounded" and a conversation rejected as "not grounded" read the same on the
page, in the history and in every export.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalcore.models import Annotation
from evalcore.review.verdicts import ACCEPT, REASONS, TURN_CHOICES

REJECT = "reject"


@dataclass(frozen=True)
class Label:
    """One choice of the label set: its stored value, the words shown, its key and what it means."""

    value: str
    text: str
    key: str
    help: str


_HELP = {
    ACCEPT: "Right as it is.",
    "wrong answer": "The answer (or tool call) is wrong; correct it below if you can.",
    "not grounded": "Says something the documents beside it do not support.",
    "unnatural": "No person would say or ask it this way.",
    "off-spec": "Does not test what its spec asks for.",
    "unsafe": "Harmful, rude or leaks something it must not.",
    "other": "Something else: say what in the note.",
}
# Keys 1-7 in the order of the choices: what Label Studio and Argilla users press for a label.
LABELS: tuple[Label, ...] = tuple(
    Label(value, value.capitalize(), str(n), _HELP[value]) for n, value in enumerate(TURN_CHOICES, start=1)
)
BY_VALUE = {label.value: label for label in LABELS}
CHOICES: tuple[str, ...] = TURN_CHOICES


def text_of(value: str | None) -> str:
    """The words shown for a stored choice or reason ('' for none; an unknown one as it was saved)."""
    if value is None:
        return ""
    label = BY_VALUE.get(value)
    return label.text if label else value


def choice_of(annotation: Annotation | None) -> str | None:
    """The choice a saved verdict shows as in the form: 'accept', its reason, or None (no verdict, or a
    reason outside the label set: the control stays empty and the saved verdict stays as it is, since a
    save only appends what the annotator picks)."""
    if annotation is None:
        return None
    if str(annotation.label) == ACCEPT:
        return ACCEPT
    return annotation.reason if annotation.reason in REASONS else None


def verdict_of(choice: str | None) -> tuple[str | None, str | None]:
    """(label, reason) of a choice: accept with no reason, a reason rejects, None picks nothing."""
    if choice is None:
        return None, None
    if choice not in BY_VALUE:
        raise ValueError(f"unknown choice {choice!r}; one of: {', '.join(CHOICES)}")
    return (ACCEPT, None) if choice == ACCEPT else (REJECT, choice)
