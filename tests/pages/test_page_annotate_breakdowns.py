"""Page test (AppTest) of breakdown labels in the annotation workbench (issue 18, item 7): on a simulated
dialogue, each target turn takes breakdown or not and its types by title; labels alone are saved without a
verdict, pre-filled when the dialogue is opened again, and kept per annotator."""

from __future__ import annotations

from pathlib import Path

import pytest
from chatchecker_reference import reference_run
from streamlit.testing.v1 import AppTest

from evalcore.generators.simulation import import_chatchecker_run
from evalcore.generators.simulation.store_ops import run_dialogues
from evalcore.review.breakdown_labels import BreakdownLabel, current_labels
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def dialogue(tmp_path, monkeypatch) -> tuple[Store, str]:
    url = f"sqlite:///{tmp_path / 'labels.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    run_id = import_chatchecker_run(store, reference_run()).run_id
    _, pairs = run_dialogues(store, run_id)
    yield store, next(cid for cid, d in pairs if d.user_name.endswith("_04"))
    store.close()


def opened(name: str, item: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["user_name"] = name
    at.run()
    at.query_params["item"] = item
    at.switch_page("pages/annotate.py").run()
    assert not at.exception, at.exception
    return at


def test_breakdown_labels_are_saved_alone_prefilled_and_kept_per_annotator(dialogue):
    store, item = dialogue
    at = opened("ann", item)
    assert at.multiselect(key=f"bt:{item}:12").options[-1] == "Chatbot Crash", "titles are shown"
    assert not any(c.key == f"bd:{item}:1" for c in at.segmented_control), "user turns take no label"
    labels = [e.label for e in at.expander]
    assert "Write what the assistant should have said (marks the turn 'wrong answer')" in labels
    assert not any(label.startswith("Correct the expected") for label in labels), "it said, nobody expected"
    at.segmented_control(key=f"bd:{item}:12").set_value("breakdown")
    at.multiselect(key=f"bt:{item}:12").select("Contradiction").select("Lack of clarity")
    at.segmented_control(key=f"bd:{item}:14").set_value("no breakdown")
    next(b for b in at.button if b.label == "Save & next").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert current_labels(store.annotations(item)) == {
        "ann": {
            12: BreakdownLabel(turn_index=12, breakdown=True, types=["Contradiction", "Lack of clarity"]),
            14: BreakdownLabel(turn_index=14, breakdown=False),
        }
    }
    assert all(a.role == "breakdown" for a in store.annotations(item)), "no verdict was given"

    again = opened("ann", item)
    assert again.segmented_control(key=f"bd:{item}:12").value == "breakdown"
    assert again.multiselect(key=f"bt:{item}:12").value == ["Contradiction", "Lack of clarity"]
    bea = opened("bea", item)
    assert bea.segmented_control(key=f"bd:{item}:12").value is None, "bea labels on her own"
    bea.segmented_control(key=f"bd:{item}:12").set_value("no breakdown")
    next(b for b in bea.button if b.label == "Save & next").click().run()
    labels = current_labels(store.annotations(item))
    assert labels["bea"] == {12: BreakdownLabel(turn_index=12, breakdown=False)} and len(labels["ann"]) == 2
