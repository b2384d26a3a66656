"""Page test (AppTest): on Tool cases a lead finds rubrics without the CLI (issue 28): the form's defaults
work on the sample with one conversation per situation (nothing reviewed yet, so every tool case is
used), the job goes to the workers, and the set it stores is the one the Rubrics tab then shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from queue_support import work_the_queue
from streamlit.testing.v1 import AppTest

from evalcore.generators.tool_case.discovery import discovery_runs
from evalcore.generators.tool_case.job import generate_toolcases
from evalcore.generators.tool_case.rubrics import project_rubric_sets
from evalcore.inputs import import_project
from evalcore.models import RunStatus
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path, monkeypatch) -> tuple[Store, str]:
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    store = Store(url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    generate_toolcases(store, pid, pos_share=None)  # one POS of 26: the job must move it into training
    return store, pid


def open_rubrics(user: str | None = "lee") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if user:
        at.session_state["user_name"] = user
    at.run()
    at.switch_page("pages/tool_cases.py")
    at.session_state["tool_cases_tab"] = "Rubrics"
    at.run()
    assert not at.exception, at.exception
    return at


def test_find_rubrics_with_the_page_defaults_queues_a_job_whose_set_the_tab_shows(project):
    store, pid = project
    at = open_rubrics()
    assert next(c for c in at.checkbox if c.label == "Use every tool case").value is True
    next(b for b in at.button if b.label == "Find rubrics").click().run()
    assert not at.exception, at.exception
    [run] = discovery_runs(store, pid)
    assert run.status == RunStatus.pending and run.params["all_conversations"] is True
    work_the_queue(store.url)
    assert store.run(run.id).status == RunStatus.finished
    [stored] = project_rubric_sets(store, pid)
    at = open_rubrics()
    assert next(s for s in at.selectbox if s.label == "Rubric set").value == stored.item_id
    assert any("moved into it" in str(c.value) for c in at.caption)


def test_without_a_name_the_button_is_off(project):
    at = open_rubrics(user=None)
    assert next(b for b in at.button if b.label == "Find rubrics").disabled
