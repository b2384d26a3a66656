"""Names from files and models drawn in a chart are text, never live HTML (issue 28), in a real headless
Chromium: a failure-rate chart (Vega-Lite, drawn as SVG here so its texts can be read back) whose title,
group and series names are markup shows that markup as written in its labels, legend and tooltip, and
no element or script of it exists in the page."""

from __future__ import annotations

import textwrap

import pytest

from tests.browser import server_process, wait_idle

pytestmark = pytest.mark.e2e

BOLD = "<b>loud</b>"
IMAGE = "<img src=x onerror='window.pwned=1'>"
SCRIPT = "<script>window.pwned=2</script>"
APP = textwrap.dedent(f"""
    import pandas as pd
    import streamlit as st

    from evalcore.reports.charts import failure_rate_chart

    table = pd.DataFrame(
        [{{"group": g, "target": t, "failure_rate": 0.5, "ci_low": 0.2, "ci_high": 0.8, "failures": 2,
          "n": 4}}
         for g in ({BOLD!r}, "plain") for t in ({IMAGE!r}, {SCRIPT!r})]
    )
    spec = failure_rate_chart(table, "group", {SCRIPT + BOLD!r}, within="target")
    spec["usermeta"] = {{"embedOptions": {{"renderer": "svg"}}}}  # readable texts (canvas draws pixels)
    st.title("Chart text")
    st.vega_lite_chart(spec, width="stretch")
""")
CHART = "[data-testid='stVegaLiteChart']"


def test_markup_in_chart_names_is_shown_as_text(tmp_path, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    app = tmp_path / "chart_text.py"
    app.write_text(APP, encoding="utf-8")
    run = ("-m", "streamlit", "run", str(app))
    with server_process(f"sqlite:///{tmp_path / 'unused.db'}", app=run, worker=False) as (base, _):
        browser.get(base)
        wait = WebDriverWait(browser, 120)
        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, f"{CHART} svg.marks text"))
        wait_idle(browser)
        texts = browser.execute_script(
            f'return Array.from(document.querySelectorAll("{CHART} svg text")).map(t => t.textContent);'
        )
        assert {BOLD, IMAGE, SCRIPT, SCRIPT + BOLD} <= set(texts), texts  # axis label, legend, title
        live = f"{CHART} b, {CHART} img, {CHART} script, #vg-tooltip-element b, #vg-tooltip-element img"
        assert browser.find_elements(By.CSS_SELECTOR, live) == []

        bar = browser.find_elements(By.CSS_SELECTOR, f"{CHART} svg .mark-rect path")[0]
        ActionChains(browser).move_to_element(bar).perform()
        tip = wait.until(
            lambda b: b.execute_script(
                "const t = document.getElementById('vg-tooltip-element');"
                " return t && t.classList.contains('visible') && t.textContent ? t : null;"
            )
        )
        assert BOLD in tip.get_attribute("textContent") and IMAGE in tip.get_attribute("textContent")
        assert browser.find_elements(By.CSS_SELECTOR, live) == []
        assert browser.execute_script("return window.pwned === undefined;")
