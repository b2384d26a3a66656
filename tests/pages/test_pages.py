"""Page tests with Streamlit's AppTest: Home (import, counts) and Settings (no secrets shown)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.inputs import import_project
from evalcore.llm.profiles import ModelProfile
from evalcore.llm.records import CallRecord, record_call
from evalcore.llm.repairs import record_repairs
from evalcore.llm.status import set_model_profile
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]


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


def test_settings_shows_the_repair_rate_per_model(db_url):
    store = Store(db_url)
    project_id = import_project(store, SAMPLE_PROJECT).project_id
    store.update_settings(project_id, {"models": {"generator": "compat/qwen2.5-0.5b"}})
    row = {"project_id": project_id, "run_id": None, "task": "judge_turn", "provider": "compat",
           "model": "qwen2.5-0.5b"}  # fmt: skip
    with store.write() as conn:
        call = CallRecord(**row, role="judge", tokens_in=9, tokens_out=9, cost_usd=0.0, latency_ms=1.0,
                          cache_hit=False, attempts=1, status="ok")  # fmt: skip
        for _ in range(4):
            record_call(conn, call)
        record_repairs(conn, **row, attempt=1, valid=True, repairs=("reasoning_block", "score_word"))
    at = _app()
    at.run()
    at.switch_page("pages/settings.py").run()
    assert not at.exception
    (table,) = [d.value for d in at.dataframe if "repaired" in d.value.columns]
    assert table.to_dict("records") == [
        {"model": "compat/qwen2.5-0.5b", "task replies": 4, "repaired": "25%", "asked again": "0%",
         "repairs": "reasoning_block (1), score_word (1)"}
    ]  # fmt: skip


def test_settings_shows_model_profiles(db_url):
    store = Store(db_url)
    project_id = import_project(store, SAMPLE_PROJECT).project_id
    profile = ModelProfile(structured="none", max_tokens=2048, note="ignores json_schema")
    set_model_profile(store, project_id, "compat/qwen2.5-0.5b", profile)
    at = _app()
    at.run()
    at.switch_page("pages/settings.py").run()
    assert not at.exception
    (table,) = [d.value for d in at.dataframe if "probed" in d.value.columns]
    row = table.to_dict("records")[0]
    assert (row["model"], row["structured output"], row["max tokens"], row["temperature"]) == (
        "compat/qwen2.5-0.5b",
        "none",
        2048,
        "yes",
    )
