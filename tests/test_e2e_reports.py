"""End to end in a real headless Chromium: run the demo target on the sample project, open a drill-down.
Every click waits for the page to be idle (tests/browser.py), so a loaded machine cannot make one land on
a page that is still drawing."""

import pytest
from runs_support import sample_project

from evalcore.runs import RUN_KIND
from evalcore.store import Store
from tests.browser import button, click, streamlit_server, tab, wait_idle

pytestmark = pytest.mark.e2e
CHART = "[data-testid='stVegaLiteChart']"


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
        click(browser, button("Start run"))
        try:
            wait.until(ec.text_to_be_present_in_element(body, "14 / 14 turns · finished"))
        except Exception:
            browser.save_screenshot(str(tmp_path / "run.png"))
            raise AssertionError(f"runs: {[(r.id, r.status.value) for r in store.runs(pid)]}") from None
        [run] = store.runs(pid, kind=RUN_KIND)
        assert run.status.value == "finished" and run.target == "demo"

        click(browser, button("Open the report"))  # after the rerun the run's end brings, not into it
        try:
            wait.until(ec.text_to_be_present_in_element(body, "Failed / scored turns"))
        except Exception:
            browser.save_screenshot(str(tmp_path / "failed.png"))
            raise
        wait_idle(browser)
        assert not browser.find_elements(By.CSS_SELECTOR, CHART), "the charts are in their tables' tabs"

        # The first tab's drill-down (a react-aria combobox): open it and pick the first failing row.
        drill = "[data-testid='stSelectbox']:has(input[aria-label='Show the failing turns of'])"
        click(browser, lambda d: d.find_element(By.CSS_SELECTOR, f"{drill} button[aria-label='Open']"))
        options = wait.until(ec.visibility_of_all_elements_located((By.CSS_SELECTOR, "[role='option']")))
        assert any("failing" in o.text for o in options), [o.text for o in options]
        click(
            browser,
            lambda d: next(
                o for o in d.find_elements(By.CSS_SELECTOR, "[role='option']") if "failing" in o.text
            ),
        )
        wait.until(ec.text_to_be_present_in_element(body, "failing turn(s)"))
        text = browser.find_element(*body).text
        for part in ("Question:", "Expected", "Got", "Judge (offline)", "Grounding documents", "tier"):
            assert part in text, part
        assert any(cid in text for cid in conversations)
        browser.save_screenshot(str(tmp_path / "drill-down.png"))

        for title in ("By number of documents", "By query type"):
            click(browser, tab(title))
            wait.until(
                lambda d, title=title: (
                    d.find_element(By.CSS_SELECTOR, "[role='tab'][aria-selected='true']").text == title
                )
            )
            wait_idle(browser)
            wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f"{CHART} .marks"))  # drawn
