"""The dashboard in a real browser at a team's scale (issue 28): each page cold and warm in headless Chromium.

Run: .venv/bin/python benchmarks/browser.py [--store DIR] [PROJECT]   (~5 min, ~3 more to build the store)

1. Builds (or reuses, with --store DIR) the team-scale store of benchmarks/team_store.py from the project
   folder PROJECT (default data/sample): 5,000 specs, 2,000 conversations, 100,000 judgments.
2. The baseline, in the same run: an empty Streamlit app of two pages (a title each) served the same way,
   cold and warm. It is what Streamlit and Chromium cost on this machine right now; every page's time is
   also given as a ratio to it.
3. For each page of the dashboard's sidebar: a fresh server (`dashboard.py`, as `evalcore serve` starts it,
   with a queue worker beside it), then
   - cold: the page's URL opened in the browser, the first request the server gets;
   - warm: the page opened from Home with the sidebar's link, `--warm` times (median printed).
   A visit ends when Streamlit is idle (script not running, connected, nothing stale, a title shown, no
   skeleton) and every visible chart (Vega-Lite) and table has drawn, and this has held for 0.5 s; the
   time printed is from the navigation's start (cold) or the click (warm) to the start of that quiet
   spell, measured inside the browser (`performance.now()`), so the polling adds nothing. Beside each wall
   time: the CPU seconds the Streamlit server spent (psutil on its pid) and those of the browser's
   processes. The machine may be shared: load inflates wall time, hardly CPU time.
   Then the page is loaded once more, the server restarted on the same port and the page opened cold
   again ("back"): the first visit after a server start of a browser that has used the dashboard before,
   Streamlit's scripts in its cache and compiled (Chromium keeps a script's compiled code from its second
   load on). The cold visit above is a new browser profile's first ("fresh"): a new port is a new origin,
   every script loaded and compiled afresh.
   Goals (issue 28): every page under 1 s warm and under 2 s back; fresh is printed against the same
   2 s, and against the empty app, which alone takes over half of it. A summary closes the table.
4. On a shared machine wall time is mostly waiting for a core, so each row also gives the wall time
   estimated from CPU (`estimated`): the baseline's own wall time plus what the page spent above the
   baseline on its critical path (the server's CPU, then the renderer's main thread), and never less than
   all its CPU above the baseline's spread over the cores; cold against cold, warm against warm and back
   against back. On an idle machine it tracks wall time (within 0.1 s back and warm on the sample's
   pages); the CPU of every browser process summed, as before, overstated it by 0.5-1 s: the browser
   compiles, rasterises and composites on other threads beside the main one. With `--cold N` each page
   (and the baseline) gets N fresh servers and every figure is a median over them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import psutil  # noqa: E402
from team_store import SAMPLE, store_in  # noqa: E402

from pages._common import USER_COOKIE  # noqa: E402
from tests.browser import chromium, chromium_path, server_process  # noqa: E402

GOAL_WARM, GOAL_COLD = 1.0, 2.0
CORES = os.cpu_count() or 1
QUIET_S = 0.5  # the page must stay idle and drawn this long: a rerun a widget asks for starts sooner
POLL_S = 0.05
VISIT_LIMIT_S = 180.0

# Runs in every document from its first line (Chrome DevTools' addScriptToEvaluateOnNewDocument): counts
# the script runs Streamlit starts (a MutationObserver sees every change of the app root's state
# attribute, however short the run) and, every frame, whether the page is idle and drawn; `since` is when
# the current idle and drawn spell began.
PROBE = textwrap.dedent("""
    (() => {
      const bench = window.__bench = {runs: 0, since: null, charts: 0, errors: 0};
      const PLOTS = "[data-testid='stVegaLiteChart'], "
        + "[data-testid='stArrowVegaLiteChart'], [data-testid='stDataFrame']";
      const drawn = (el) => el.querySelector("canvas, svg") !== null;
      const ready = () => {
        const app = document.querySelector("[data-testid='stApp']");
        if (!app || app.getAttribute("data-test-script-state") !== "notRunning") return false;
        if (app.getAttribute("data-test-connection-state") !== "CONNECTED") return false;
        if (document.querySelector("[data-stale='true'], [data-testid='stSkeleton']")) return false;
        if (!document.querySelector("[data-testid='stMain'] h1")) return false;
        const plots = [...document.querySelectorAll(PLOTS)].filter((el) => el.offsetParent !== null);
        bench.charts = plots.length;
        bench.errors = document.querySelectorAll("[data-testid='stException']").length;
        return plots.every(drawn);
      };
      let watched = null;
      const tick = () => {
        const app = document.querySelector("[data-testid='stApp']");
        if (app && app !== watched) {
          watched = app;
          new MutationObserver(() => {
            if (app.getAttribute("data-test-script-state") === "running") bench.runs += 1;
          }).observe(app, {attributes: true, attributeFilter: ["data-test-script-state"]});
        }
        if (!ready()) bench.since = null;
        else if (bench.since === null) bench.since = performance.now();
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    })();
""")
# Opens a sidebar link the way a user's click does, and notes when (in the page's clock).
CLICK = """
const link = [...document.querySelectorAll("[data-testid='stSidebarNav'] a")]
  .find((a) => new URL(a.href).pathname.replace(/^\\//, '') === arguments[0]);
if (!link) return false;
const bench = window.__bench;
const title = document.querySelector("[data-testid='stMain'] h1");
Object.assign(bench, {clicked: performance.now(), runsAtClick: bench.runs, since: null,
                      titleAtClick: title ? title.innerText : null});
link.click();
return true;
"""
STATE = """
const b = window.__bench;
const title = document.querySelector("[data-testid='stMain'] h1");
return b ? {...b, now: performance.now(), title: title ? title.innerText : null,
            path: location.pathname.replace(/^\\//, '')} : null;
"""
LINKS = """
return [...document.querySelectorAll("[data-testid='stSidebarNav'] a")]
  .map((a) => [new URL(a.href).pathname.replace(/^\\//, ''), a.innerText.trim().split("\\n").pop()]);
"""
# The baseline: Streamlit's own cost, two pages with a title each, navigation in the sidebar as ours.
EMPTY_APP = textwrap.dedent("""
    import streamlit as st

    def first():
        st.title("First")

    def second():
        st.title("Second")

    st.navigation([st.Page(first, title="First", default=True), st.Page(second, title="Second")]).run()
""")


@dataclass
class Visit:
    """One page visit: seconds until idle and drawn (wall, in the browser), CPU seconds of the server and
    of the browser meanwhile (every process; and the renderer's main thread alone), how many plots and
    tables were drawn and how many errors the page shows."""

    wall: float
    server_cpu: float
    browser_cpu: float
    plots: int
    errors: int
    renderer_main: float = 0.0


class CpuMeter:
    """CPU seconds (user + system) of the server process, of every process of the browser, and of each
    renderer's main thread (where Streamlit's scripts run and the page is laid out and painted)."""

    def __init__(self, server_pid: int, driver: object) -> None:
        self.server = psutil.Process(server_pid)
        self.driver = psutil.Process(driver.service.process.pid)

    def _browser(self) -> tuple[dict[int, float], dict[int, float]]:
        times, main = {}, {}
        for process in self.driver.children(recursive=True):
            try:
                cpu = process.cpu_times()
                if "--type=renderer" in process.cmdline():
                    thread = next(t for t in process.threads() if t.id == process.pid)
                    main[process.pid] = thread.user_time + thread.system_time
            except (psutil.Error, StopIteration):
                continue  # a renderer that ended between listing and reading
            times[process.pid] = cpu.user + cpu.system
        return times, main

    def read(self) -> tuple[float, dict[int, float], dict[int, float]]:
        cpu = self.server.cpu_times()
        return cpu.user + cpu.system, *self._browser()

    @staticmethod
    def spent(before: tuple, after: tuple) -> tuple[float, float, float]:
        """Server, browser and renderers' main-thread CPU seconds between two readings of `read` (a
        browser process born between them counts whole; one that ended is lost, which only makes the
        browser's figures smaller)."""
        browser = sum(cpu - before[1].get(pid, 0.0) for pid, cpu in after[1].items())
        main = sum(cpu - before[2].get(pid, 0.0) for pid, cpu in after[2].items())
        return after[0] - before[0], browser, main


def _wait(driver: object, done: Callable[[dict], bool]) -> dict:
    """Poll the probe until `done(state)` and the page has stayed idle and drawn for QUIET_S."""
    deadline = time.monotonic() + VISIT_LIMIT_S
    while time.monotonic() < deadline:
        state = driver.execute_script(STATE)
        if (
            state
            and state["since"] is not None
            and done(state)
            and state["now"] - state["since"] >= QUIET_S * 1e3
        ):
            return state
        time.sleep(POLL_S)
    raise TimeoutError(f"the page was not idle and drawn within {VISIT_LIMIT_S:.0f} s: {state}")


def cold(driver: object, meter: CpuMeter, url: str) -> Visit:
    """Open `url` as a new document; seconds from the navigation's start to idle and drawn."""
    before = meter.read()
    driver.get(url)
    state = _wait(driver, lambda s: True)  # a title shows only once a run has begun
    server, browser, main = CpuMeter.spent(before, meter.read())
    return Visit(state["since"] / 1000, server, browser, state["charts"], state["errors"], main)


def warm(driver: object, meter: CpuMeter, path: str) -> Visit:
    """Click the sidebar's link to `path`; seconds from the click to idle and drawn."""
    before = meter.read()
    if not driver.execute_script(CLICK, path):
        raise RuntimeError(f"no sidebar link to /{path}")
    state = _wait(driver, lambda s: s["path"] == path and s["since"] >= s["clicked"] and _rerun(s))
    server, browser, main = CpuMeter.spent(before, meter.read())
    return Visit(
        (state["since"] - state["clicked"]) / 1000, server, browser, state["charts"], state["errors"], main
    )


def _rerun(state: dict) -> bool:
    """Whether the page ran since the click: a run seen starting, or the title changed (a run of an
    almost empty page can start and end within one frame, which the DOM never shows)."""
    return state["runs"] > state["runsAtClick"] or state["title"] != state["titleAtClick"]


def measure(
    driver: object, served: Callable, path: str, home: str, repeat: int, servers: int = 1
) -> tuple[Visit, Visit, Visit]:
    """`servers` fresh servers from `served(port)`; on each `path` cold, then `repeat` times from `home` by
    the sidebar; then `path` loaded once more and the server restarted on the same port and `path` cold
    again (a browser that has been there before: Streamlit's scripts in its cache, compiled). Returns the
    cold, the warm and the returning browser's cold visit, each the median of every figure."""
    colds, visits, returns = [], [], []
    for _ in range(servers):
        with served(None) as (base, process):
            meter = CpuMeter(process.pid, driver)
            colds.append(cold(driver, meter, f"{base}/{path}"))
            for _ in range(repeat):
                warm(driver, meter, home if home != path else _other(driver, path))
                visits.append(warm(driver, meter, path))
            # The page's second load: Chromium compiles its scripts again and only now keeps the compiled
            # code (V8's code cache, used from the third load on; v8.dev/blog/code-caching-for-devs).
            cold(driver, meter, f"{base}/{path}")
        with served(int(base.rsplit(":", 1)[1])) as (base, process):
            returns.append(cold(driver, CpuMeter(process.pid, driver), f"{base}/{path}"))
    return median(colds), median(visits), median(returns)


def median(visits: list[Visit]) -> Visit:
    """Each figure's median over `visits` (errors: the most any visit showed)."""
    return Visit(*(statistics.median(getattr(v, f) for v in visits) for f in ("wall", "server_cpu",
                 "browser_cpu", "plots")), max(v.errors for v in visits),
                 statistics.median(v.renderer_main for v in visits))  # fmt: skip


def estimated(visit: Visit, base: Visit) -> float:
    """The wall time `visit` would take on a machine as quiet as the baseline's CPU says: the baseline's
    wall time plus what the page spent above the baseline on its critical path, the server's CPU and the
    renderer's main thread (they work one after the other: the server runs the page, then the browser
    draws it), and never less than all the CPU of server and browser above the baseline's spread over the
    machine's cores (the browser's other threads and processes, compiling scripts, rasterising and
    compositing, run beside the main thread)."""
    serial = visit.server_cpu + visit.renderer_main - base.server_cpu - base.renderer_main
    total = visit.server_cpu + visit.browser_cpu - base.server_cpu - base.browser_cpu
    return base.wall + max(0.0, serial, total / CORES)


def _other(driver: object, path: str) -> str:
    """Another page of the sidebar than `path` (to come back to `path` from)."""
    return next(p for p, _ in driver.execute_script(LINKS) if p != path)


def misses(first: Visit, again: Visit, back: Visit, base: tuple) -> tuple[list[str], list[str]]:
    """Which visits of a page miss their goal, by wall time and by the estimate: 'warm' (the sidebar,
    1 s), 'back' (the first visit after a server start of a browser that has used the dashboard, 2 s) and
    'fresh' (the first visit ever of a new browser profile, 2 s; Streamlit's own empty app takes over
    half of it)."""
    checks = (("fresh", first, base[0], GOAL_COLD), ("warm", again, base[1], GOAL_WARM),
              ("back", back, base[2], GOAL_COLD))  # fmt: skip
    return (
        [name for name, visit, _, goal in checks if visit.wall >= goal],
        [name for name, visit, b, goal in checks if estimated(visit, b) >= goal],
    )


def goals(rows: dict[str, tuple[Visit, Visit, Visit]], base: tuple) -> list[str]:
    """The summary under the table: for each kind of visit, the pages over its goal, by wall time and by
    the estimate, or that every page is under it."""
    lines = []
    for kind, label, goal in (
        ("warm", "sidebar navigation", GOAL_WARM),
        ("back", "first visit after a server start, a browser that has used the dashboard", GOAL_COLD),
        ("fresh", "first visit of a new browser profile", GOAL_COLD),
    ):
        walls = [name for name, visits in rows.items() if kind in misses(*visits, base)[0]]
        ests = [name for name, visits in rows.items() if kind in misses(*visits, base)[1]]
        verdict = "every page under it" if not walls and not ests else (
            f"over by wall time: {', '.join(walls) or 'none'}; estimated over: {', '.join(ests) or 'none'}"
        )  # fmt: skip
        lines.append(f"   {label} (goal {goal:.0f} s, {len(rows)} pages): {verdict}")
    return lines


def _row(name: str, first: Visit, again: Visit, back: Visit, base: tuple | None) -> str:
    ratios, mark = "", ""
    if base:
        est = estimated(first, base[0]), estimated(again, base[1])
        # The empty app's warm visit can take under 5 ms (printed 0.00); a floor of the browser clock's
        # 1 ms keeps the ratio finite.
        ratios = (
            f" {first.wall / max(base[0].wall, 1e-3):>5.1f}x {again.wall / max(base[1].wall, 1e-3):>5.1f}x"
            f"  {est[0]:>5.2f} {est[1]:>5.2f}"
        )
        over, over_est = misses(first, again, back, base)
        mark = f"  over: {', '.join(over)}" if over else ""
        mark += f"  estimated over: {', '.join(over_est)}" if over_est else ""
        back_est = estimated(back, base[2])
        mark += f"  | back {back.wall:.2f} {back.server_cpu:.2f} {back.browser_cpu:.2f} est {back_est:.2f}"
    else:
        mark = f"  | back {back.wall:.2f} {back.server_cpu:.2f} {back.browser_cpu:.2f}"
    if first.errors or again.errors or back.errors:
        mark += "  THE PAGE SHOWS AN ERROR"
    return (
        f"   {name:<28} {first.wall:>5.2f} {first.server_cpu:>5.2f} {first.browser_cpu:>5.2f}  "
        f"{again.wall:>5.2f} {again.server_cpu:>5.2f} {again.browser_cpu:>5.2f} {again.plots:>5.0f}"
        f"{ratios}{mark}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", nargs="?", type=Path, default=SAMPLE, help="Project folder to import.")
    parser.add_argument("--store", type=Path, help="Build (or reuse) the store in this folder.")
    parser.add_argument("--specs", type=int, default=5000)
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--judgments", type=int, default=100_000)
    parser.add_argument("--warm", type=int, default=3, help="Sidebar visits per page (median printed).")
    parser.add_argument("--cold", type=int, default=1, help="Fresh servers per page (median printed).")
    parser.add_argument("--pages", nargs="*", help="Only these URL paths ('' is Home); default every page.")
    args = parser.parse_args()
    if chromium_path() is None:
        sys.exit("error: Debian's chromium and chromium-driver are needed: run scripts/setup.sh --test")
    with tempfile.TemporaryDirectory() as tmp:
        scale = {"specs": args.specs, "conversations": args.conversations, "judgments": args.judgments}
        url, _ = store_in(args.store or Path(tmp), args.project, **scale)
        empty = Path(tmp) / "empty_app.py"
        empty.write_text(EMPTY_APP, encoding="utf-8")
        with chromium() as driver:
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
            broken = run(driver, url, empty, args.warm, args.pages, args.cold)
    if broken:
        sys.exit(f"error: {', '.join(broken)} showed an error")


def run(
    driver: object, url: str, empty: Path, repeat: int, only: list[str] | None, servers: int = 1
) -> list[str]:
    """Print the baseline's and every page's row (see the module docstring); returns the pages that showed
    an error."""
    print(f"2. in headless Chromium; cold = median of {servers} fresh server(s), warm = median of {repeat}"
          f" sidebar visits on each; CPU: s of the server, s of the browser; load average "
          f"{os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"   {'page':<28} {'cold':>5} {'srv':>5} {'brw':>5}  {'warm':>5} {'srv':>5} {'brw':>5} {'plots':>5}"
          f" {'cold':>6} {'warm':>6}  {'est':>5} {'est':>5}  (ratios to the baseline's wall; wall estimated"
          f" from CPU, cold and warm; back: a returning browser's cold visit, wall srv brw est)")  # fmt: skip
    # Without a file watcher, as dashboard.py serves.
    app = ("-m", "streamlit", "run", str(empty), "--server.fileWatcherType", "none")
    baseline = measure(
        driver, lambda port: server_process(url, app, worker=False, port=port), "", "second", repeat, servers
    )
    print(_row("baseline (empty app)", *baseline, None), flush=True)
    with server_process(url) as (base, _):
        driver.get(base + "/_stcore/health")
        driver.add_cookie({"name": USER_COOKIE, "value": "dana", "path": "/"})  # Annotate shows a queue
        driver.get(base)
        _wait(driver, lambda s: True)  # a title shows only once a run has begun
        pages = driver.execute_script(LINKS)
    home, broken, rows = pages[0][0], [], {}
    for path, title in pages:
        if only is not None and path not in only:
            continue
        first, again, back = measure(
            driver, lambda port: server_process(url, port=port), path, home, repeat, servers
        )
        print(_row(title, first, again, back, baseline) + f"  (load {os.getloadavg()[0]:.1f})", flush=True)
        rows[title] = first, again, back
        if first.errors or again.errors or back.errors:
            broken.append(title)
    print("3. goals (issue 28)", *goals(rows, baseline), sep="\n")
    return broken


if __name__ == "__main__":
    main()
