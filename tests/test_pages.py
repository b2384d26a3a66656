"""Page tests with Streamlit's AppTest: Home (import, counts) and Settings (no secrets shown)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.inputs import import_project
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def db_url(tmp_path, monkeypatch) -> str:
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    return url


def _app() -> AppTest:
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [m.value for m in at.info] + [m.value for m in at.caption]
    return "\n".join(str(p) for p in parts)


def test_empty_store_invites_an_import(db_url):
    at = _app().run()
    assert not at.exception
    assert any("no project yet" in str(i.value) for i in at.info)


def test_import_a_folder_from_home_then_see_counts(db_url):
    at = _app().run()
    at.text_input[0].input(str(SAMPLE_PROJECT))
    at.button[0].click().run()
    assert not at.exception
    assert any("Imported project" in str(s.value) for s in at.success)
    store = Store(db_url)
    project_id = store.projects()[0].id
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Documents"] == str(len(store.documents(project_id)))
    assert metrics["Procedures"] == str(len(store.procedures(project_id)))


def test_a_broken_folder_shows_every_problem_and_imports_nothing(db_url, tmp_path):
    folder = tmp_path / "broken"
    (folder / "tables").mkdir(parents=True)
    (folder / "system.yaml").write_text("id: x\nchatbot_info:\n  description: no name\n")
    (folder / "tables" / "t.csv").write_text("a,b\n1,2\n3\n")
    at = _app().run()
    at.text_input[0].input(str(folder))
    at.button[0].click().run()
    assert not at.exception
    assert any("2 problem(s)" in str(e.value) for e in at.error)
    table = at.dataframe[0].value
    assert set(table["field"]) == {"chatbot_info.name", ""}
    assert 3 in set(table["line"])
    assert Store(db_url).projects() == []


def test_settings_shows_providers_but_never_a_key(db_url, monkeypatch):
    sentinel = "sk-test-SENTINEL-never-shown-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", sentinel)
    import_project(Store(db_url), SAMPLE_PROJECT)
    at = _app()
    at.run()
    at.switch_page("pages/settings.py").run()
    assert not at.exception
    assert any("Settings" in t.value for t in at.title)
    rendered = repr(at._tree)
    assert sentinel not in rendered
    assert "sqlite" in _text(at)
