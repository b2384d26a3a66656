"""One turn saved on the Annotate page at a team's scale (issue 28: a turn save took 3.6 s): the library's
save alone, then the whole save as the page does it (the button's rerun: save, pick the next conversation,
and the rerun that opens it), each with wall and CPU time of this process side by side.

    .venv/bin/python benchmarks/dashboard.py --store /tmp/team      # builds the team-scale store once
    .venv/bin/python benchmarks/annotate_save.py --store /tmp/team  # 5,000 specs, 2,000 conversations
    .venv/bin/python benchmarks/annotate_save.py --store /tmp/team --profile  # where the time goes

Goal: the page's save (click to the next conversation drawn, on the server) < 0.5 s. `--profile` prints
the functions that take the most cumulative time in one page save (cProfile).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [
    str(ROOT / "benchmarks"),
    str(ROOT),
    str(ROOT / "tests"),
]  # benchmarks/dashboard.py, not the app's

import sqlalchemy as sa  # noqa: E402

from dashboard import Clock, _quiet  # noqa: E402
from evalcore.review import open_item, save_review  # noqa: E402
from evalcore.review.verdicts import TurnVerdict  # noqa: E402
from evalcore.store import DATABASE_URL_ENV, Store  # noqa: E402
from evalcore.store import schema as t  # noqa: E402

GOAL = 0.5
USER = "bench"


def _unreviewed(store: Store, project: str, n: int) -> list[str]:
    """`n` conversations of the project nobody has a verdict on, oldest first (the queue's order)."""
    i, v = t.items, t.annotation_verdicts
    with store.read() as conn:
        return list(
            conn.scalars(
                sa.select(i.c.id)
                .where(i.c.project_id == project, i.c.kind == "conversation")
                .where(~sa.exists().where(v.c.item_id == i.c.id))
                .order_by(i.c.created_at, i.c.id)
                .limit(n)
            )
        )


def _build(url: str, folder: Path, conversations: int) -> None:
    """A store of another project: the folder imported, `conversations` conversations of ten turns."""
    from annotation_data import add_conversations

    from evalcore.inputs import import_project

    store = Store(url)
    pid = import_project(store, folder).project_id
    for start in range(0, conversations, 500):
        add_conversations(store, pid, min(500, conversations - start), start=start)
    store.close()


def _project(store: Store) -> str:
    with store.read() as conn:
        return conn.scalar(
            sa.select(t.items.c.project_id)
            .where(t.items.c.kind == "conversation")
            .group_by(t.items.c.project_id)
            .order_by(sa.func.count().desc())
            .limit(1)
        )


def library_saves(store: Store, items: list[str]) -> list[tuple[float, float]]:
    """save_review of one turn verdict on each item (the library's part of a save)."""
    times = []
    for item in items:
        view = open_item(store, item, USER)
        turn = view.judged_turns[0]
        with Clock() as clock:
            save_review(store, item, USER, view.version, [TurnVerdict(turn_index=turn, label="accept")])
        times.append((clock.wall, clock.cpu))
    return times


def _profile_script_runs() -> cProfile.Profile:
    """A profiler of the page's script runs: Streamlit runs a page in a thread of its own, which a
    profiler started in this thread does not see, so each run is wrapped where the runner calls it."""
    from streamlit.runtime.scriptrunner import script_runner

    profiler = cProfile.Profile()
    run = script_runner.exec_func_with_error_handling

    def profiled(func, ctx):
        if not getattr(profiler, "on", False):
            return run(func, ctx)
        profiler.enable()
        try:
            return run(func, ctx)
        finally:
            profiler.disable()

    script_runner.exec_func_with_error_handling = profiled
    return profiler


def page_saves(url: str, items: list[str], profile: bool) -> list[tuple[float, float]]:
    """The page's save of one turn (accept on the first judged turn, whole verdict from the turns left
    empty, so the annotator also picks accept for the conversation) of each item: the button's rerun."""
    from streamlit.testing.v1 import AppTest

    os.environ[DATABASE_URL_ENV] = url
    _quiet()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.session_state["user_name"] = USER
    at.run()  # the app opens on Home
    times = []
    profiler = _profile_script_runs() if profile else None
    for n, item in enumerate(items):
        at.query_params["item"] = item
        at.switch_page("pages/annotate.py").run()
        at.segmented_control(key=f"cv:{item}").set_value("accept")
        save = next(b for b in at.button if b.label == "Save & next")
        if profiler is not None:
            profiler.on = n == len(items) - 1  # the last save only: every cache is warm by then
        with Clock() as clock:
            save.click().run()
        if at.exception:
            raise SystemExit(f"the page failed: {at.exception[0].message}")
        if at.query_params.get("item") in (None, [item], item):
            raise SystemExit(f"the save of {item} did not open the next conversation")
        times.append((clock.wall, clock.cpu))
    if profiler is not None:
        print("   the last page save, by cumulative time (cProfile):")
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(40)
    return times


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree_cpu(root: int) -> float:
    """CPU seconds of a process and all its descendants (the browser: chromedriver, Chromium's processes)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):  # a process that ended while listed
                continue
            children.setdefault(parent, []).append(int(entry.name))
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        with contextlib.suppress(OSError):  # a process that ended while counted
            total += _cpu_seconds(pid)
        todo += children.get(pid, [])
    return total


def browser_saves(url: str, items: list[str]) -> list[tuple[float, float]]:
    """The save as an annotator sees it in headless Chromium: keys mark every turn and the conversation,
    then Save & next; timed from the click until the next conversation is drawn and the page is idle.
    CPU is the dashboard server's over the same span; Chromium's own CPU is printed apart."""
    import subprocess

    from browser import IDLE_POLL_S, IDLE_STREAK, chromium, free_port, wait_idle
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    port = free_port()
    env = {**os.environ, DATABASE_URL_ENV: url}
    command = [sys.executable, "dashboard.py", "--server.address", "127.0.0.1", "--server.port", str(port),
               "--server.headless", "true", "--browser.gatherUsageStats", "false"]  # fmt: skip
    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    times: list[tuple[float, float]] = []
    browser_cpu: list[float] = []
    try:
        with chromium() as driver:
            deadline = time.monotonic() + 60
            while True:
                try:
                    driver.get(base + "/annotate")
                    break
                except Exception:  # the server is still starting
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
            wait_idle(driver)
            driver.find_element(By.CSS_SELECTOR, "input[aria-label='Your name']").send_keys(USER + "\n")
            wait_idle(driver)
            for item in items:
                driver.get(f"{base}/annotate?item={item}")
                wait_idle(driver)
                stops = driver.find_elements(By.CSS_SELECTOR, "[class*='st-key-tv-'], [class*='st-key-cv-']")
                ActionChains(driver).send_keys("1" * len(stops)).perform()  # accept every turn and the whole
                save = driver.find_element(By.XPATH, "//button[.//p[text()='Save & next']]")
                cpu, wall = _cpu_seconds(server.pid), time.perf_counter()
                drawn = _tree_cpu(driver.service.process.pid)
                save.click()
                while f"item={item}" in driver.current_url:
                    time.sleep(0.02)
                wait_idle(driver)
                # wait_idle ends after IDLE_STREAK quiet polls: those are not part of the save.
                elapsed = time.perf_counter() - wall - IDLE_STREAK * IDLE_POLL_S
                times.append((elapsed, _cpu_seconds(server.pid) - cpu))
                browser_cpu.append(_tree_cpu(driver.service.process.pid) - drawn)
    finally:
        server.terminate()
        server.wait(timeout=20)
    if browser_cpu:
        print(f"   (Chromium's own CPU per save: median {statistics.median(browser_cpu):.3f} s)")
    return times


def _summary(label: str, times: list[tuple[float, float]], goal: float | None) -> None:
    wall = statistics.median(w for w, _ in times)
    cpu = statistics.median(c for _, c in times)
    worst = max(w for w, _ in times)
    mark = "" if goal is None else ("  under the goal" if wall < goal else "  OVER the goal")
    print(
        f"   {label:<44} median {wall:6.3f} s wall {cpu:6.3f} s cpu   max {worst:6.3f} s wall"
        + (f"   goal {goal:.1f} s{mark}" if goal else ""),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="A folder holding dashboard.db.")
    parser.add_argument("--saves", type=int, default=5, help="Saves measured of each kind.")
    parser.add_argument("--profile", action="store_true", help="Profile the last page save.")
    parser.add_argument("--browser", action="store_true", help="Also time the save in headless Chromium.")
    parser.add_argument(
        "--project", type=Path, help="Instead: a store of this project folder (e.g. data/retail) with "
        "--conversations conversations (tests/annotation_data.py), built in --store once.",
    )  # fmt: skip
    parser.add_argument("--conversations", type=int, default=2000)
    args = parser.parse_args()
    name = f"{args.project.name}.db" if args.project else "dashboard.db"
    url = f"sqlite:///{(args.store / name).resolve()}"
    if args.project and not (args.store / name).exists():
        _build(url, args.project, args.conversations)
    if not (args.store / name).exists():
        raise SystemExit(f"no store in {args.store}: build it with benchmarks/dashboard.py --store DIR")
    store = Store(url)
    project = _project(store)
    with store.read() as conn:
        sizes = {
            kind: conn.scalar(
                sa.select(sa.func.count()).where(t.items.c.project_id == project, t.items.c.kind == kind)
            )
            for kind in ("spec", "conversation")
        }
    print(f"store {url}: project {project}, {sizes['spec']:,} specs, {sizes['conversation']:,} conversations")
    items = _unreviewed(store, project, 2 * args.saves + 1)
    if len(items) < 2 * args.saves + 1:
        raise SystemExit("too few conversations nobody reviewed yet: build a fresh store")
    _summary("library: save_review of one turn", library_saves(store, items[: args.saves]), None)
    store.close()
    # Each page save opens the next conversation of the queue: measure on items the library left alone.
    _summary(
        "page: Save & next, to the next one drawn", page_saves(url, items[args.saves :], args.profile), GOAL
    )
    if args.browser:
        store = Store(url)
        fresh = _unreviewed(store, project, args.saves)
        store.close()
        _summary("browser: Save & next until the next is idle", browser_saves(url, fresh), GOAL)


if __name__ == "__main__":
    main()
