"""End to end: a real headless Chromium imports the sample project through the dashboard."""

import pytest

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.store import Store
from tests.browser import button, click, streamlit_server

pytestmark = pytest.mark.e2e


def test_import_the_sample_project_and_see_its_counts(tmp_path, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    url = f"sqlite:///{tmp_path / 'e2e.db'}"
    with streamlit_server(url) as base:
        browser.get(base)
        wait = WebDriverWait(browser, 60)
        wait.until(ec.text_to_be_present_in_element((By.TAG_NAME, "body"), "The store has no project yet"))

        field = wait.until(
            ec.element_to_be_clickable(
                (By.CSS_SELECTOR, "input[aria-label='Project folder on this machine']")
            )
        )
        field.send_keys(str(SAMPLE_PROJECT), Keys.TAB)
        click(browser, button("Import folder"))
        wait.until(ec.text_to_be_present_in_element((By.TAG_NAME, "body"), "Where the project stands"))

        def metrics(b) -> dict[str, str]:
            return {
                m.find_element(By.CSS_SELECTOR, "[data-testid='stMetricLabel']").text: m.find_element(
                    By.CSS_SELECTOR, "[data-testid='stMetricValue']"
                ).text
                for m in b.find_elements(By.CSS_SELECTOR, "[data-testid='stMetric']")
            }

        # The page streams in: wait for the checklist's next step, not just the heading.
        wait.until(ec.text_to_be_present_in_element((By.TAG_NAME, "body"), "Next: Generate specs"))
        store = Store(url)
        project_id = store.projects()[0].id
        documents = len(store.documents(project_id))
        tools = len(store.tools(project_id))
        metrics = metrics(browser)
        assert metrics["Documents"] == str(documents)
        assert metrics["Tools"] == str(tools)
        assert documents >= 12
        browser.save_screenshot(str(tmp_path / "home.png"))

        # Every page is one click away: none hidden behind Streamlit's "View N more".
        nav = browser.find_element(By.CSS_SELECTOR, "[data-testid='stSidebarNav']").text
        for title in ("Tool cases", "Procedures", "Runs", "Reports", "Simulations", "Scenarios"):
            assert title in nav, nav
        assert "more" not in nav, nav
