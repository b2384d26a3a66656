"""Page test (AppTest): a scenario run's repetitions whose simulated user was at fault are named on the
Scenarios page with the pass count over all repetitions and without them (issue 31, item 1: the lead sees
which failures to discount)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scenario_results import DELAY, store_run
from streamlit.testing.v1 import AppTest

from evalcore.models import Conversation, Turn
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    store = Store(url)
    store.create_project("demo", "Demo", None)
    return store


def open_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["user_name"] = "ann"
    at.run()
    at.switch_page("pages/scenarios.py").run()
    assert not at.exception, at.exception
    return at


def test_without_a_fault_every_verdict_counts(store):
    store_run(store, "demo")
    at = open_page()
    said = " ".join(str(c.value) for c in at.caption)
    assert "No simulated user was at fault in the 4 repetition(s) played" in said
    assert not at.warning


def test_a_repetition_whose_user_broke_character_is_named_with_the_pass_count_without_it(store):
    store_run(store, "demo")
    body = Conversation.model_validate(store.current("conv-d1").body)
    turns = [
        Turn(index=0, role="user", content="As an AI language model, I cannot have an order."),
        *body.turns[1:],
    ]
    edited = body.model_copy(update={"turns": turns}).model_dump(mode="json")
    store.save_revision("conv-d1", edited, "test", store.current("conv-d1").version)
    at = open_page()
    warned = " ".join(str(w.value) for w in at.warning).replace("\\", "")
    assert (
        "1 of 4 repetition(s) had a simulated user at fault: 2 of 4 passed over all, 1 of 3 without them"
        in warned
    )
    faults = next(d.value for d in at.dataframe if "reason" in d.value.columns)
    assert faults[["repetition", "turn", "kind"]].values.tolist() == [
        [f"{DELAY} · repetition 1 · passed", 1, "Broke character"]
    ]
