"""Items and runs in words on the results view (evalcore.reports.item_titles, reports.results.run_name):
an item by what its user first asks, else its spec's title; a run by its name, else target, start and
judge; never an id."""

from __future__ import annotations

from datetime import UTC, datetime

from evalcore.models import Run
from evalcore.reports.item_titles import TITLE_CHARS, item_titles
from evalcore.reports.results import run_name


def test_an_item_is_called_by_its_first_question_else_its_spec(store):
    store.create_project("p", "P")
    long = "Which of the stores in town rents e-bikes on Sundays " * 3
    turns = [{"index": 0, "role": "system", "content": "Be brief."},
             {"index": 1, "role": "user", "content": "  How is the\n rental deposit taken? "},
             {"index": 2, "role": "assistant", "content": "By card."}]  # fmt: skip
    store.add_item("p", "conversation", {"id": "c1", "turns": turns}, "t", item_id="c1")
    store.add_item("p", "conversation", {"id": "c2", "turns": [], "spec_id": "s1"}, "t", item_id="c2")
    store.add_item("p", "conversation", {"id": "c3", "turns": []}, "t", item_id="c3")
    test = {"id": "t1", "context": [{"index": 0, "role": "user", "content": long}], "expected": {}}
    store.add_item("p", "test", test, "t", item_id="t1")
    titles = item_titles(store, ["c1", "c2", "c3", "t1", "returns-policy.yaml#2"], {"s1": "Deposit rules"})
    assert titles["c1"] == "How is the rental deposit taken?"
    assert titles["c2"] == "Deposit rules"
    assert titles["c3"] == "(no question asked)"
    assert (
        len(titles["t1"]) == TITLE_CHARS and titles["t1"].endswith("…") and titles["t1"].startswith("Which")
    )
    assert titles["returns-policy.yaml#2"] == "returns-policy.yaml#2"  # a scenario: the name it was given


def test_a_run_without_a_name_is_called_by_target_start_and_judge():
    started = datetime(2026, 11, 27, 7, 31, tzinfo=UTC)
    named = Run(id="run-0123abcd4567", kind="run", target="demo", params={"name": "Before the fix"})
    assert run_name(named) == "Before the fix"
    bare = Run(
        id="run-0123abcd4567", kind="run", target="demo", judge="offline/heuristic", started_at=started
    )
    assert run_name(bare) == "demo · 2026-11-27 07:31 · judged by offline/heuristic"
