"""End to end in a real headless Chromium: two runs of the demo target with a seeded change between them;
the Results page, compared with the baseline, lists exactly the turns that flipped, and its paired test is
scipy's exact binomial on the discordant counts. Every click waits for the page to be idle
(tests/browser.py), never a fixed sleep."""

import re

import pytest
from results_support import two_demo_runs
from scipy.stats import binomtest

from evalcore.reports.item_titles import item_titles
from evalcore.reports.results import result_runs, run_labels, spec_titles
from evalcore.store import Store
from tests.browser import click, streamlit_server, wait_idle

pytestmark = pytest.mark.e2e


def test_the_results_page_lists_exactly_the_turns_that_flipped(tmp_path, browser, monkeypatch):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    url = f"sqlite:///{tmp_path / 'e2e.db'}"
    store = Store(url)
    pid, base_id, _, broken, fixed = two_demo_runs(store)
    # The page names runs and items in words: the baseline by its label, a turn's item by its question.
    label = run_labels(result_runs(store, pid))[base_id]
    titles = item_titles(store, {i for i, _ in broken | fixed}, spec_titles(store, pid))
    body = (By.TAG_NAME, "body")
    with streamlit_server(url) as base:
        browser.get(base + "/results")
        wait = WebDriverWait(browser, 120)
        wait.until(ec.text_to_be_present_in_element(body, "Compare with a baseline"))
        wait_idle(browser)
        assert "candidate" in browser.find_element(*body).text  # the newest run is shown first
        # The baseline picker (a react-aria combobox): open it and pick the baseline run.
        picker = "[data-testid='stSelectbox']:has(input[aria-label='Baseline'])"
        click(browser, lambda d: d.find_element(By.CSS_SELECTOR, f"{picker} button[aria-label='Open']"))
        click(
            browser,
            lambda d: next(o for o in d.find_elements(By.CSS_SELECTOR, "[role='option']") if o.text == label),
        )
        try:
            wait.until(ec.text_to_be_present_in_element(body, "McNemar p"))
            wait_idle(browser)
        except Exception:
            browser.save_screenshot(str(tmp_path / "results.png"))
            raise
        text = browser.find_element(*body).text
        listed = {
            (m["change"], m["item"], int(m["turn"]))
            for m in re.finditer(
                r"^(?P<change>broken|fixed): (?P<item>.+?) turn (?P<turn>\d+) \(", text, re.M
            )
        }
        expected = {("broken", titles[i], t) for i, t in broken} | {("fixed", titles[i], t) for i, t in fixed}
        assert listed == expected
        p = binomtest(len(broken), len(broken) + len(fixed), 0.5).pvalue
        assert f"{p:.3g}" in text
        browser.save_screenshot(str(tmp_path / "results.png"))
