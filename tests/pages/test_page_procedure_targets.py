"""Page test (AppTest): on Procedures a lead adds a built-in agent or a model that calls tools without the
CLI (issue 26, item 5), and the page lists where each procedure comes from (the policy, for retail)."""

from __future__ import annotations

from pathlib import Path

import pytest
from page_app import open_page

from evalcore.generators.procedure.job import generate
from evalcore.inputs import import_project
from evalcore.store import DATABASE_URL_ENV, Store
from evalcore.targets import list_targets

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db_url(tmp_path, monkeypatch) -> str:
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    return url


def test_a_built_in_agent_and_a_tool_calling_model_are_added_on_the_page(db_url):
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    at = open_page("pages/procedures.py", timeout=90)
    next(r for r in at.radio if r.label == "Agent").set_value("oracle").run()
    assert next(t for t in at.text_input if t.label == "Name").value == "oracle-agent"
    next(b for b in at.button if b.label == "Save target").click().run()
    assert not at.exception, at.exception
    saved = {t.name: t for t in list_targets(store, pid)}
    assert saved["oracle-agent"].kind == "agent" and saved["oracle-agent"].config["agent"] == "oracle"
    assert any("Saved target oracle" in str(s.value) for s in at.success), [s.value for s in at.success]
    assert "oracle-agent" in next(s for s in at.selectbox if s.label == "Target").options

    next(s for s in at.selectbox if s.label == "Kind").set_value("openai").run()
    next(t for t in at.text_input if t.label == "Name").set_value("support-agent")
    next(t for t in at.text_input if t.label == "Model").set_value("gpt-4o-mini")
    next(b for b in at.button if b.label == "Save target").click().run()
    assert not at.exception, at.exception
    saved = {t.name: t for t in list_targets(store, pid)}
    assert saved["support-agent"].kind == "openai" and saved["support-agent"].config["model"] == "gpt-4o-mini"
    playable = next(s for s in at.selectbox if s.label == "Target").options
    assert {"oracle-agent", "support-agent"} <= set(playable)


def test_an_empty_name_is_refused_on_the_page_and_nothing_is_saved(db_url):
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    at = open_page("pages/procedures.py", timeout=90)
    next(t for t in at.text_input if t.label == "Name").set_value("  ")
    next(b for b in at.button if b.label == "Save target").click().run()
    assert not at.exception, at.exception
    assert at.error
    assert not [t for t in list_targets(store, pid) if t.kind == "agent"]


def test_policy_procedures_show_the_policy_as_their_source(db_url):
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "retail").project_id
    generate(store, pid, paths=1, seed=0)
    at = open_page("pages/procedures.py", timeout=90)
    summary = next(d.value for d in at.dataframe if "edge coverage" in d.value.columns)
    assert set(summary["source"]) == {"policy"}
    funnel = next(c.value for c in at.caption if "kept at each stage" in c.value)  # seed 001's Table 1
    assert "procedures 6 -> with known APIs 6 -> valid flowgraphs 6" in funnel and "-> tests " in funnel


def test_a_prompt_based_model_target_is_added_on_the_page(db_url):
    """Seed 001's A.8 mode from the form: the tools and the procedure in the prompt, said in the list."""
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    at = open_page("pages/procedures.py", timeout=90)
    next(s for s in at.selectbox if s.label == "Kind").set_value("openai").run()
    next(t for t in at.text_input if t.label == "Name").set_value("prompted-agent")
    next(t for t in at.text_input if t.label == "Model").set_value("gpt-4o-mini")
    next(r for r in at.radio if r.label == "How the model is offered the tools").set_value("prompt")
    next(b for b in at.button if b.label == "Save target").click().run()
    assert not at.exception, at.exception
    saved = {t.name: t for t in list_targets(store, pid)}
    assert saved["prompted-agent"].config["tool_mode"] == "prompt"
    assert any("procedure in the prompt" in str(s.value) for s in at.success), [s.value for s in at.success]
