"""End to end: a real headless Chromium generates conversations, stops, resumes, and opens a passage."""

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.generators.doc_qa.job import RUN_KIND
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.jobs.control import holders
from evalcore.specs.generation import generate_specs
from evalcore.store import Store
from tests.browser import button, click, server_process, wait_idle

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]

# A queue worker that lets its first unit through and holds the next ones while the test's hold file
# exists: offline generation is fast enough that the job could end before the Stop click (which waits for
# the page to be idle) lands. The test removes the file once Stop is pressed, never a fixed delay.
HELD_WORKER = """
import os, sys, time
import evalcore.jobs.runner as runner
real = runner._execute
passed = []
def held(work, claim, loop):
    deadline = time.monotonic() + 120
    while passed and os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
        time.sleep(0.05)
    passed.append(claim)
    return real(work, claim, loop)
runner._execute = held
from evalcore.jobs.worker import run_worker
run_worker(sys.argv[1], 1)
"""


@contextmanager
def held_dashboard(url: str, hold: Path):
    """The dashboard with the held worker beside it; yields the base URL."""
    env = {**os.environ, "EVALCORE_DATABASE_URL": url}
    worker = subprocess.Popen([sys.executable, "-c", HELD_WORKER, url, str(hold)], cwd=ROOT, env=env)
    try:
        with server_process(url, worker=False) as (base, _):
            yield base
    finally:
        worker.terminate()
        worker.wait(timeout=60)


def _wait_for(browser, text: str, timeout: float = 120) -> None:
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while text not in browser.find_element(By.TAG_NAME, "body").text:
        assert time.monotonic() < deadline, f"'{text}' never appeared"
        time.sleep(0.3)


def _left_out(store, run_id: str) -> int:
    """Units done without a conversation: it could only repeat the run's questions (issue 33)."""
    return sum("left_out" in (u["result"] or {}) for u in store.finished_units(run_id).values())


def test_generate_stop_resume_and_open_a_passage(tmp_path, browser):
    from selenium.webdriver.common.by import By

    url = f"sqlite:///{tmp_path / 'e2e.db'}"
    store = Store(url)
    project_id = import_project(store, SAMPLE_PROJECT).project_id
    generate_specs(store, project_id, m=40, batch=5, from_card=False)
    hold = tmp_path / "hold"
    hold.touch()
    with held_dashboard(url, hold) as base:
        browser.get(base + "/conversations")
        _wait_for(browser, "No document-grounded conversation yet")
        click(browser, button("Generate"))
        deadline = time.monotonic() + 120
        while not any("plan" in r.params for r in store.runs(project_id, kind=RUN_KIND)):
            assert time.monotonic() < deadline, "no plan was made"
            time.sleep(0.3)
        run = store.runs(project_id, kind=RUN_KIND)[0]
        total = len(run.params["plan"]["units"])  # 10 a spec unless its documents' facts run out first
        _wait_for(browser, f"/ {total:,} conversations · running")  # the job panel's progress line
        deadline = time.monotonic() + 60
        while not store.finished_units(run.id):  # stop mid-way: the plan is made, a conversation is saved
            assert time.monotonic() < deadline, "no conversation was generated"
            time.sleep(0.1)
        click(browser, button("Stop generating"))
        hold.unlink()  # the stop is recorded: the held conversation may finish now
        deadline, quiet = time.monotonic() + 60, 0
        while quiet < 3:  # marked stopped at once; the worker ends the conversations in flight, then lets go
            quiet = 0 if holders(store, run.id) else quiet + 1
            assert time.monotonic() < deadline, "the job did not stop"
            time.sleep(0.3)
        stopped_at = len(store.finished_units(run.id))
        assert store.run(run.id).status.value == "stopped" and 0 < stopped_at < total
        assert len(list_conversations(store, project_id)) == stopped_at - _left_out(store, run.id)

        browser.get(base + "/conversations")  # as a person coming back later
        _wait_for(browser, "Resume the unfinished generation")
        assert f"({stopped_at}/{total} conversations)" in browser.find_element(By.TAG_NAME, "body").text
        click(browser, button("Resume the unfinished generation"))
        deadline = time.monotonic() + 180
        while store.run(run.id).status.value != "finished":
            assert time.monotonic() < deadline, "the resumed job did not finish"
            time.sleep(0.3)
        assert len(list_conversations(store, project_id)) == total - _left_out(store, run.id)
        _wait_for(browser, f"finished: {total}/{total} conversations")  # the page that resumed it says so
        _wait_for(browser, "Open conversation")

        def grounding(driver):
            summaries = driver.find_elements(By.CSS_SELECTOR, "[data-testid='stExpander'] summary")
            return next(s for s in summaries if s.text.strip() and "Generate" not in s.text)  # a document

        click(browser, grounding)
        wait_idle(browser)
        bold = browser.find_elements(By.CSS_SELECTOR, "[data-testid='stExpander'] strong")
        assert any(b.text.strip() for b in bold), "the answer's source is highlighted in its passage"
        browser.save_screenshot(str(tmp_path / "conversations.png"))
