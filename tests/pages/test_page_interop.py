"""The format pickers on the pages (AppTest): another tool's tests imported on Home, with what was kept
reported and a broken file's problems listed; the Agreement page's export in another tool's format."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.inputs import import_project
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]
TESTS = """\
- vars: {input: "How long can I return an e-bike?"}
  assert: [{type: icontains, value: 14 days}, {type: is-json}]
"""


@pytest.fixture
def store(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    import_project(store, SAMPLE_PROJECT)
    yield store
    store.close()


def _app(page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["user_name"] = "ana"
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _upload(at: AppTest, fmt: str, name: str, data: bytes) -> AppTest:
    assert not at.get("file_uploader"), "Home draws its import boxes only once their expander is opened"
    at.session_state["home_other_tools"] = True  # the expander opened
    at.run()
    at.selectbox(key="home_interop:fmt").select(fmt)
    at.file_uploader(key="home_interop:file").set_value((name, data, "application/x-yaml"))
    next(b for b in at.button if b.label == "Import file").click()
    return at.run()


def _said(elements) -> list[str]:
    """What elements show, without the escapes of markdown (`md`)."""
    return [str(e.value).replace("\\", "") for e in elements]


def test_home_imports_another_tools_tests_and_says_what_it_kept(store):
    at = _upload(_app(), "promptfoo", "team.yaml", TESTS.encode())
    assert not at.exception, at.exception
    assert "Imported 0 conversation(s), 1 test(s) from team.yaml." in _said(at.success)
    assert "1 promptfoo assertions of type is-json kept as metadata: not evaluable here" in _said(at.caption)
    (stored,) = store.list_current(store.projects()[0].id, "test")
    assert stored.item_id.startswith("promptfoo-") and stored.body["assertions"] == [
        {"kind": "contains", "text": "14 days"}
    ]


def test_home_lists_every_problem_of_a_broken_file_and_imports_nothing(store):
    at = _upload(_app(), "promptfoo", "bad.yaml", b"- vars: {a: 1, b: 2}\n- assert: 3\n")
    assert "2 problem(s) found; nothing was imported. Fix them and import again." in _said(at.error)
    rows = next(d.value for d in at.dataframe if "problem" in d.value.columns)
    assert list(rows["file"]) == ["bad.yaml", "bad.yaml"] and list(rows["line"]) == [1, 2]
    assert "cannot tell which var" in rows["problem"][0]
    assert not store.list_current(store.projects()[0].id, "test")


def test_the_agreement_export_offers_every_format_with_a_place_for_the_items(store):
    at = _app("pages/agreement.py")
    at.session_state["agreement_tab"] = "Export"
    at.run()
    picker = at.selectbox(key="agreement_interop:fmt")
    assert "tau2-bench tasks" not in picker.options  # a tau2 task is a goal, not a conversation
    assert "DeepEval goldens" in picker.options
    at.radio(key="interop_kind").set_value("test").run()
    assert "tau2-bench tasks" in at.selectbox(key="agreement_interop:fmt").options
    at.selectbox(key="agreement_interop:fmt").select("promptfoo").run()
    assert not at.exception, at.exception
    assert any(b.label == "Download as promptfoo tests" for b in at.get("download_button"))
