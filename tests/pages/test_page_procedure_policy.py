"""Page test (AppTest): a procedure read from the project's policy shows the policy passages of its steps
(issue 26, item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.generators.procedure.job import generate
from evalcore.inputs import import_project
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db_url(tmp_path, monkeypatch) -> str:
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    return url


def test_a_policy_procedure_lists_the_passages_its_steps_cite(db_url):
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "retail").project_id
    generate(store, pid, paths=2, seed=0)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.run()
    at.switch_page("pages/procedures.py").run()
    assert not at.exception, at.exception
    next(s for s in at.selectbox if s.label == "Procedure").set_value("policy_cancel_order").run()
    assert not at.exception, at.exception
    passages = next(e for e in at.expander if e.label == "Policy passages each step comes from")
    text = " ".join(m.value for m in passages.markdown).replace("\\", "")  # markdown escapes undone
    assert (
        "step 4 (get_order): retail/policies/02_order_states.md: Cancel an order with `cancel_order`" in text
    )
