"""The one label set of a review (issue 28): the same words and keys for a turn, the conversation and a
lead; stored values unchanged; a saved reason outside the set is never shown as another one; and an
annotator's progress through a queue ("12 of 62 done")."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.inputs import import_project
from evalcore.models import Annotation
from evalcore.review import ItemVerdict, QueueFilter, assign_items, assignees_of, queue_progress, save_review
from evalcore.review.labels import CHOICES, LABELS, choice_of, text_of, verdict_of
from evalcore.review.verdicts import REASONS
from evalcore.store import Store
from tests.annotation_data import add_conversations

ROOT = Path(__file__).resolve().parents[2]


def test_one_label_set_with_a_key_each_over_the_stored_values():
    assert ("accept", *REASONS) == CHOICES
    assert [(x.text, x.key) for x in LABELS[:3]] == [
        ("Accept", "1"),
        ("Wrong answer", "2"),
        ("Not grounded", "3"),
    ]
    assert len({x.key for x in LABELS}) == len(LABELS) == 7
    assert verdict_of("accept") == ("accept", None) and verdict_of("not grounded") == (
        "reject",
        "not grounded",
    )
    assert verdict_of(None) == (None, None)
    with pytest.raises(ValueError, match="unknown choice"):
        verdict_of("ungrounded")
    assert text_of("off-spec") == "Off-spec" and text_of("unsupported claim") == "unsupported claim"


def test_a_saved_verdict_shows_as_its_choice_and_an_unknown_reason_as_none():
    def saved(label: str, reason: str | None) -> Annotation:
        return Annotation(item_kind="conversation", item_id="c", label=label, reason=reason, author="ann")

    assert choice_of(saved("accept", None)) == "accept"
    assert choice_of(saved("reject", "not grounded")) == "not grounded"
    assert choice_of(saved("reject", "unsupported claim")) is None, "kept as saved, never shown as another"
    assert choice_of(None) is None


def test_progress_counts_my_verdicts_in_the_queue_and_keeps_the_done_ones_when_only_mine(store: Store):
    pid = import_project(store, ROOT / "data" / "sample").project_id
    ids = add_conversations(store, pid, 6)
    assign_items(store, pid, ["ann", "bea"], 1, "lee")  # 3 each
    mine = [i for i in ids if "ann" in assignees_of(store, i)]
    others = [i for i in ids if i not in mine]
    save_review(store, mine[0], "ann", 1, [], ItemVerdict(label="accept"))
    save_review(store, others[0], "ann", 1, [], ItemVerdict(label="accept"))  # reviewed, not assigned
    todo = queue_progress(store, pid, QueueFilter(needs_review_by="ann"), "ann")
    assert (todo.done, todo.total) == (1, 3), "the one done left the list but counts, of the 3 assigned"
    everything = queue_progress(store, pid, QueueFilter(), "ann")
    assert (everything.done, everything.total) == (2, 6)
