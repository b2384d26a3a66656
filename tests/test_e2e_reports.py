"""End to end in a real headless Chromium: run the demo target on the sample project, open a drill-down."""

import time

import pytest
from runs_support import sample_project

from evalcore.runs import RUN_KIND
from evalcore.store import Store
from tests.browser import streamlit_server

pytestmark = pytest.mark.e2e


def _eventually(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.3)
    return False


def test_run_the_demo_target_then_drill_into_failing_turns(tmp_path, browser, monkeypatch):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    url = f"sqlite:///{tmp_path / 'e2e.db'}"
    store = Store(url)
    pid, conversations = sample_project(store)
    body = (By.TAG_NAME, "body")
    with streamlit_server(url) as base:
        browser.get(base + "/runs")
        wait = WebDriverWait(browser, 120)
        for _ in range(3):
            # A click that lands while the page is still rerunning is lost: click again until a run exists.
            start = wait.until(ec.element_to_be_clickable((By.XPATH, "//button[.//p[text()='Start run']]")))
            start.click()
            if _eventually(lambda: store.runs(pid, kind=RUN_KIND), seconds=20):
                break
        try:
            wait.until(ec.text_to_be_present_in_element(body, "14 / 14 turns · finished"))
        except Exception:
            browser.save_screenshot(str(tmp_path / "run.png"))
            raise AssertionError(f"runs: {[(r.id, r.status.value) for r in store.runs(pid)]}") from None
        [run] = store.runs(pid, kind=RUN_KIND)
        assert run.status.value == "finished" and run.target == "demo"

        time.sleep(3)  # the page reruns once when the run ends; click after that, not into it
        wait.until(ec.element_to_be_clickable((By.XPATH, "//button[.//p[text()='Open the report']]"))).click()
        try:
            wait.until(ec.text_to_be_present_in_element(body, "Failed / scored turns"))
        except Exception:
            browser.save_screenshot(str(tmp_path / "failed.png"))
            raise
        charts = wait.until(
            ec.presence_of_all_elements_located((By.CSS_SELECTOR, "[data-testid='stPlotlyChart']"))
        )
        assert len(charts) == 2

        # The first tab's drill-down (a react-aria combobox): open it and pick the first failing row.
        drill = wait.until(
            ec.presence_of_element_located(
                (
                    By.CSS_SELECTOR,
                    "[data-testid='stSelectbox']:has(input[aria-label='Show the failing turns of'])",
                )
            )
        )
        drill.find_element(By.CSS_SELECTOR, "button[aria-label='Open']").click()
        options = wait.until(ec.visibility_of_all_elements_located((By.CSS_SELECTOR, "[role='option']")))
        failing = [o for o in options if "failing" in o.text]
        assert failing, [o.text for o in options]
        failing[0].click()
        wait.until(ec.text_to_be_present_in_element(body, "failing turn(s)"))
        text = browser.find_element(*body).text
        for part in ("Question:", "Expected", "Got", "Judge (offline)", "Grounding documents", "tier"):
            assert part in text, part
        assert any(cid in text for cid in conversations)
        browser.save_screenshot(str(tmp_path / "drill-down.png"))
