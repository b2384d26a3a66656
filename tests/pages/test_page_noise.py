"""What the server console and the Settings page must not show (issue 15, item 12): no deprecated
`use_container_width`, no Arrow conversion traceback on Reports (the 'All' total row in a numeric key
column), and the offline provider's token estimates kept apart from models' usage."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from page_app import open_page
from runs_support import sample_project

from evalcore.llm import status
from evalcore.runs import run_target
from evalcore.specs.generation import generate_specs
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ran(tmp_path, monkeypatch) -> tuple[Store, str]:
    """The sample project with one demo run judged offline."""
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    store = Store(url)
    pid, _ = sample_project(store)
    run_target(store, pid, "demo", judge="offline")
    return store, pid


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_no_page_uses_the_deprecated_use_container_width():
    sources = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
    assert [p.name for p in sources if "use_container_width" in p.read_text()] == []


def test_enter_submits_no_form_that_saves_human_work_or_starts_a_job():
    """Enter in a text field must not save an edit, a rejection or a policy, nor start a paid job (issue 15,
    item 1): every form opts out, but Home's import forms, where Enter after a path is expected, and the
    sign-in form, where Enter after the password signs in."""
    import re

    submitting = []
    for page in sorted((ROOT / "pages").glob("*.py")):
        for line in page.read_text().splitlines():
            expected = "import_" in line or 'st.form("sign_in"' in line
            if "st.form(" in line and "enter_to_submit=False" not in line and not expected:
                submitting.append(f"{page.name}: {line.strip()}")
    assert submitting == []
    assert len(re.findall(r"st\.form\(", (ROOT / "pages" / "specs.py").read_text())) >= 4


def test_reports_render_without_an_arrow_conversion_fallback(ran):
    logger = logging.getLogger("streamlit.dataframe_util")
    records, level = Records(), logger.level
    logger.addHandler(records)
    logger.setLevel(logging.DEBUG)
    try:
        at = open_page("pages/reports.py")
        at.session_state["report_tab"] = "By number of documents"  # only the open tab's table is drawn
        at.run()
    finally:
        logger.removeHandler(records)
        logger.setLevel(level)
    assert not [m for m in records.messages if "Arrow" in m], records.messages
    shown = [df.value for df in at.dataframe if "n_documents" in df.value]
    assert shown and shown[0]["n_documents"].iloc[-1] == "All"


def test_offline_calls_are_counted_apart_and_their_tokens_are_not_usage(ran):
    store, pid = ran
    generate_specs(store, pid, m=5)  # through the model layer, on the offline provider
    summary = status.spend(store, pid)
    assert summary.offline_calls > 0 and summary.offline_tokens > 0
    assert (summary.tokens_in, summary.tokens_out) == (0, 0), "no model was used"
    at = open_page("pages/settings.py")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Model tokens in / out"] == "0 / 0"
    assert any("estimates from text length, not usage" in c.value for c in at.caption)
