"""The Results page and its compare in headless Chromium (`benchmarks/results.py --browser`): see that
module's docstring. Reuses benchmarks/browser.py's probe (idle and every table drawn, timed inside the
browser) and CPU meter (the server's and the browser's processes).

The baseline is the empty two-page app, cold (its first visit on a fresh server: what the page's open is
set against), warm (a visit by the sidebar: what a rerun of an open page, the compare's pick, is set
against) and back (the page loaded a second time, then the server restarted on the same port: a browser
that has used it before, Streamlit's scripts in its cache and compiled; the page opened again so is set
against it). A second baseline, cold and back: the Results page's first screen with no store behind it
(`ELEMENTS_APP`: the same kinds and number of widgets and a table of 50 rows), what Streamlit and
Chromium cost for those elements alone; the page's open is also given as a ratio to it. Beside each wall
time: the wall time estimated from CPU as `browser.estimated` does (the machine may be shared: load
inflates wall time, hardly CPU time)."""

from __future__ import annotations

import os
import statistics
import textwrap

from browser import EMPTY_APP, PROBE, STATE, CpuMeter, Visit, _wait, cold, estimated, measure

from pages._common import USER_COOKIE
from tests.browser import chromium, chromium_path, server_process

GOAL_S = 2.0
# The second baseline: the Results page's first screen as Streamlit draws it with no store behind it, the
# same kinds and number of widgets and a table of 50 rows of 9 text columns, made up. What Streamlit and
# Chromium cost for those elements alone; the page's time above it is what reading the store adds.
ELEMENTS_APP = textwrap.dedent("""
    import pandas as pd
    import streamlit as st

    COLUMNS = ["run", "item", "turn", "generator", "spec", "verdict", "score", "error type", "reason"]

    def results():
        st.title("Results")
        st.multiselect("Runs", ["run a", "run b"], default=["run a"])
        cols = st.columns([1, 1, 2, 2])
        cols[0].selectbox("Generator", ["every generator", "doc_qa"])
        cols[1].selectbox("Verdict", ["every verdict", "fail"])
        cols[2].selectbox("Spec", ["every spec", "spec"])
        cols[3].text_input("Search")
        st.checkbox("Include rejected items")
        st.caption("100,000 rows")
        rows = pd.DataFrame({c: [f"{c} of row {i}, a few words" for i in range(50)] for c in COLUMNS})
        st.dataframe(rows, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row")
        nav = st.columns([1, 1, 4])
        nav[0].number_input("Page", min_value=1, max_value=2000, step=1)
        nav[1].selectbox("Rows per page", (25, 50, 100), index=1)
        nav[2].caption("Page 1 of 2,000")
        st.caption("Select a row to open the item.")
        st.header("Compare with a baseline")
        left, right = st.columns(2)
        left.selectbox("Run to compare", ["run a"])
        right.selectbox("Baseline", ["(no baseline)", "run b"])

    def second():
        st.title("Second")

    st.navigation([st.Page(results, title="Results", default=True), st.Page(second, title="Second")]).run()
""")
# Notes the moment of the pick (in the page's clock) and forgets the idle spell before it.
MARK = """
const b = window.__bench;
Object.assign(b, {clicked: performance.now(), runsAtClick: b.runs, since: null});
"""
BASELINE_BOX = "[data-testid='stSelectbox']:has(input[aria-label='Baseline'])"


def pick_baseline(driver: object, meter: CpuMeter, baseline: str) -> Visit:
    """Open the baseline picker, then time the pick of `baseline` until the compare is shown, idle and
    drawn (the first compare of this server: nothing of it is cached)."""
    from selenium.webdriver.common.by import By

    from tests.browser import click

    click(driver, lambda d: d.find_element(By.CSS_SELECTOR, f"{BASELINE_BOX} button[aria-label='Open']"))
    option = next(o for o in driver.find_elements(By.CSS_SELECTOR, "[role='option']") if baseline in o.text)
    before = meter.read()
    driver.execute_script(MARK)
    option.click()

    def shown(state: dict) -> bool:
        # textContent, not selenium's visible text: that computes every element's style on each poll, about
        # a second of the browser's CPU over a visit, which the figure would count as the page's.
        return (
            state["since"] >= state["clicked"]
            and state["runs"] > state["runsAtClick"]
            and driver.execute_script("return document.body.textContent.includes('McNemar')")
        )

    state = _wait(driver, shown)
    server, browser, main = CpuMeter.spent(before, meter.read())
    return Visit(
        (state["since"] - state["clicked"]) / 1000, server, browser, state["charts"], state["errors"], main
    )


def _line(name: str, v: Visit, base: Visit | None, elements: Visit | None = None) -> str:
    ratio, over = "", ""
    if base:
        est = estimated(v, base)
        ratio = f"  {v.wall / base.wall:.1f}x the baseline's wall; estimated from CPU {est:5.2f} s"
        if elements:
            ratio += f"; {v.wall / elements.wall:.2f}x the same elements' wall"
        over = ("  OVER 2 s" if v.wall >= GOAL_S else "") + ("  ESTIMATED OVER 2 s" if est >= GOAL_S else "")
    return (
        f"   {name:<34} wall {v.wall:5.2f} s  server CPU {v.server_cpu:5.2f} s  browser CPU "
        f"{v.browser_cpu:5.2f} s  tables {v.plots:.0f}{ratio}{over}"
        + ("  THE PAGE SHOWS AN ERROR" if v.errors else "")
    )


def _median(visits: list[Visit]) -> Visit:
    return Visit(
        *(statistics.median(getattr(v, f) for v in visits) for f in ("wall", "server_cpu", "browser_cpu")),
        visits[0].plots,
        max(v.errors for v in visits),
        statistics.median(v.renderer_main for v in visits),
    )


def browse(url: str, repeat: int = 2) -> None:
    """Print the baseline's, the Results page's and its compare's times (median of `repeat` fresh
    servers), with CPU of the server and of the browser beside each."""
    import tempfile
    from pathlib import Path

    if chromium_path() is None:
        raise SystemExit(
            "error: Debian's chromium and chromium-driver are needed: run scripts/setup.sh --test"
        )
    with tempfile.TemporaryDirectory() as tmp, chromium() as driver:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
        empty = Path(tmp) / "empty_app.py"
        empty.write_text(EMPTY_APP, encoding="utf-8")
        app = ("-m", "streamlit", "run", str(empty), "--server.fileWatcherType", "none")
        base_cold, base_warm, base_back = measure(
            driver, lambda port: server_process(url, app, worker=False, port=port), "", "second", 3, repeat
        )
        print(
            f"in headless Chromium, median of {repeat} fresh servers; goal: usable in under {GOAL_S:.0f} s;"
            f" load average {os.getloadavg()[0]:.1f}"
        )
        print(_line("baseline (empty app, cold)", base_cold, None))
        print(_line("baseline (empty app, warm)", base_warm, None))
        print(_line("baseline (empty app, back)", base_back, None), flush=True)
        shown = Path(tmp) / "elements_app.py"
        shown.write_text(ELEMENTS_APP, encoding="utf-8")
        app = ("-m", "streamlit", "run", str(shown), "--server.fileWatcherType", "none")
        same_cold, _, same_back = measure(
            driver, lambda port: server_process(url, app, worker=False, port=port), "", "second", 1, repeat
        )
        print(_line("same elements, no data (cold)", same_cold, None))
        print(_line("same elements, no data (back)", same_back, None), flush=True)
        pages, compares, backs = [], [], []
        for _ in range(repeat):
            with server_process(url) as (base, process):
                driver.get(base + "/_stcore/health")
                driver.add_cookie({"name": USER_COOKIE, "value": "dana", "path": "/"})
                meter = CpuMeter(process.pid, driver)
                pages.append(cold(driver, meter, f"{base}/results"))
                compares.append(pick_baseline(driver, meter, "(base)"))
                assert driver.execute_script(STATE)["errors"] == 0, "the Results page shows an error"
                cold(driver, meter, f"{base}/results")  # the second load: Chromium keeps the compiled scripts
            # The server restarted on the same port: a browser that has used the dashboard before.
            with server_process(url, port=int(base.rsplit(":", 1)[1])) as (base, process):
                backs.append(cold(driver, CpuMeter(process.pid, driver), f"{base}/results"))
        print(_line("Results page (opened, cold)", _median(pages), base_cold, same_cold))
        print(_line("compare with the baseline picked", _median(compares), base_warm))
        print(_line("Results page (returning browser)", _median(backs), base_back, same_back), flush=True)
        print(f"   load average {os.getloadavg()[0]:.1f} at the end")
