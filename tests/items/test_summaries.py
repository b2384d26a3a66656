"""Summaries kept in the store (issue 28): a reader of thousands reads one small row per item, made once
per item version by any server, so a restarted one does not read every item again; a save (an edit, an
annotation) makes the item's summary anew."""

from __future__ import annotations

from runs_support import sample_project
from summary_support import reads_whole

from evalcore.items.current import CurrentItem, head_versions
from evalcore.items.summaries import summaries
from evalcore.review import ItemVerdict, TurnVerdict, open_item, save_review

NAME = "test.first_answer"


def first_answer(item: CurrentItem) -> dict:
    return {"answer": item.conversation().turns[1].content, "tier": item.content.get("tier")}


def test_a_summary_is_made_once_per_version_and_follows_a_correction(store, monkeypatch):
    project_id, ids = sample_project(store)
    read = reads_whole(monkeypatch)
    versions = head_versions(store, project_id, "conversation")
    made = summaries(store, versions, NAME, first_answer)
    assert list(made) == list(versions) == read
    assert all(version == versions[i] for i, (version, _) in made.items())

    read.clear()
    assert summaries(store, versions, NAME, first_answer) == made  # a restarted server, or another one
    assert read == [], "kept summaries are read, not the items"

    item = ids[0]
    fixed = "Within 14 days, under 25 km on the display."
    correction = TurnVerdict(turn_index=1, label="reject", reason="wrong answer", edited_content=fixed)
    save_review(store, item, "ann", open_item(store, item).version, [correction], ItemVerdict(label="accept"))
    versions = head_versions(store, project_id, "conversation")
    again = summaries(store, versions, NAME, first_answer)
    assert read == [item], "only the item saved since is read again"
    assert again[item] == (versions[item], {"answer": fixed, "tier": "gold"})
    assert {i: again[i] for i in ids[1:]} == {i: made[i] for i in ids[1:]}


def test_another_name_is_another_summary_and_unknown_items_are_left_out(store, monkeypatch):
    project_id, _ = sample_project(store)
    versions = head_versions(store, project_id, "conversation")
    summaries(store, versions, NAME, first_answer)
    read = reads_whole(monkeypatch)
    other = summaries(
        store, {**versions, "no-such-item": 1}, "test.turns", lambda i: {"n": len(i.content["turns"])}
    )
    assert read[:-1] == list(versions) and list(other) == list(versions)
    assert all(body["n"] > 0 for _, body in other.values())
