"""End to end in headless Chromium: generate specs, select them, and see the diversity plots."""

import pytest

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.inputs import import_project
from evalcore.specs.store_ops import current_selection
from evalcore.store import Store
from tests.browser import button, click, streamlit_server, tab, wait_idle

pytestmark = pytest.mark.e2e


def test_generate_select_and_see_the_plots(tmp_path, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    url = f"sqlite:///{tmp_path / 'e2e.db'}"
    store = Store(url)
    import_project(store, SAMPLE_PROJECT)
    project_id = store.projects()[0].id

    with streamlit_server(url) as base:
        wait = WebDriverWait(browser, 180)
        body = (By.TAG_NAME, "body")
        browser.get(base + "/specs")
        wait.until(ec.text_to_be_present_in_element(body, "No specs yet"))
        click(browser, button("Generate"))
        wait.until(ec.text_to_be_present_in_element(body, "finished: "))  # a worker generated them
        click(browser, button("Re-select"))
        wait.until(ec.text_to_be_present_in_element(body, "Coverage"))
        wait.until(lambda _: len(current_selection(store, project_id)) > 0)

        browser.get(base + "/diversity")
        wait.until(ec.text_to_be_present_in_element(body, "Candidates on a 2D map"))
        drawn = "[data-testid='stVegaLiteChart'] .marks"  # Vega's canvas or svg, once the chart is drawn
        wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, drawn)) >= 1)  # the map
        browser.save_screenshot(str(tmp_path / "diversity.png"))
        for title, says in (("Which documents the selected specs cover", "documents covered"),
                            ("What Greedy and Max-Min gain over Random", "minus Random")):  # fmt: skip
            click(browser, tab(title))
            wait.until(ec.text_to_be_present_in_element(body, says))
            wait_idle(browser)  # the map's element is gone once the run that opened the tab has ended
            wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, drawn)) >= 1)
