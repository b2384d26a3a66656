"""Starting `streamlit run` on a free port and driving Debian's headless Chromium with selenium."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1400,1000",
]


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def streamlit_server(database_url: str) -> Iterator[str]:
    """`streamlit run app.py` on a free port against `database_url`, with one queue worker beside it as
    `evalcore serve` starts them (pages hand their jobs to the queue); yields the base URL."""
    with server_process(database_url) as (url, _):
        yield url


@contextmanager
def server_process(
    database_url: str, app: tuple[str, ...] = ("dashboard.py",), worker: bool = True, port: int | None = None
) -> Iterator[tuple[str, subprocess.Popen]]:
    """`python APP...` (the dashboard, or `-m streamlit run FILE`) on a free port (or `port`) against
    `database_url`, with a queue worker beside it unless `worker` is False; yields the base URL and the
    server's process (benchmarks/browser.py reads its CPU time), once its health check answers."""
    port = port or free_port()
    env = {**os.environ, "EVALCORE_DATABASE_URL": database_url}
    command = [
        sys.executable, *app,
        "--server.address", "127.0.0.1", "--server.port", str(port), "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    # Output goes to files, never to a pipe nobody reads while the server runs: a full pipe (64 KiB of
    # warnings over a long walk) blocks the server's next write, and the click it was handling with it.
    logs = Path(tempfile.mkdtemp(prefix="evalcore-server-"))
    server_log = (logs / "server.log").open("wb")
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=server_log, stderr=subprocess.STDOUT)
    children = [proc]
    if worker:
        with (logs / "worker.log").open("wb") as worker_log:
            children.append(
                subprocess.Popen(
                    [sys.executable, "-m", "evalcore", "worker", "--workers", "1"],
                    cwd=ROOT,
                    env=env,
                    stdout=worker_log,
                    stderr=subprocess.STDOUT,
                )
            )
    url = f"http://127.0.0.1:{port}"
    try:
        # The dashboard imports every page's libraries before it listens (pages/_warmup.py): seconds of
        # CPU, a minute or more on a loaded machine.
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.3)
        else:
            raise RuntimeError(f"streamlit did not start: {tail(logs / 'server.log')}")
        yield url, proc
    finally:
        for child in children:
            child.terminate()
        for child in children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
        server_log.close()
        shutil.rmtree(logs, ignore_errors=True)


def tail(path: Path, size: int = 4000) -> str:
    """The last `size` characters of a log file (what a server printed before it failed)."""
    return path.read_bytes()[-size:].decode(errors="replace")


def chromium_path() -> str | None:
    """Debian's Chromium and its driver, if installed."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    return browser if browser and shutil.which("chromedriver") else None


@contextmanager
def chromium() -> Iterator[object]:
    """A headless Chromium driven by selenium through Debian's chromedriver (no browser download)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium_path()
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


# Streamlit marks its app root with the script's state ('running', 'notRunning', 'rerunRequested', ...)
# and an element drawn by the run before with data-stale='true' until the current run redraws it: the page
# is idle when the script is not running, the socket is connected and nothing is stale.
IDLE_SCRIPT = """
const app = document.querySelector("[data-testid='stApp']");
return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
    && app.getAttribute('data-test-connection-state') === 'CONNECTED'
    && !document.querySelector("[data-stale='true']");
"""
IDLE_POLL_S = 0.1
IDLE_STREAK = 3  # polls in a row: a rerun that a widget asks for starts within a frame of the last one ending


def wait_idle(driver, seconds: float = 120) -> None:
    """Wait until the Streamlit page is idle (IDLE_SCRIPT) for IDLE_STREAK polls in a row; a page that stays
    busy longer than `seconds` raises TimeoutException. Every click of a browser test waits for this: a
    click that lands while the page reruns is lost, or hits an element the rerun is drawing over."""
    from selenium.common.exceptions import TimeoutException

    deadline, streak = time.monotonic() + seconds, 0
    while streak < IDLE_STREAK:
        if time.monotonic() > deadline:
            state = driver.execute_script(
                "const a = document.querySelector(\"[data-testid='stApp']\");"
                " return a && [a.getAttribute('data-test-script-state'),"
                " a.getAttribute('data-test-connection-state')].join(' ');"
            )
            raise TimeoutException(f"the page was not idle within {seconds:.0f} s (state: {state})")
        streak = streak + 1 if driver.execute_script(IDLE_SCRIPT) else 0
        time.sleep(IDLE_POLL_S)


def click(driver, find, seconds: float = 120):
    """Click what `find(driver)` returns (an element; falsy or an exception while it is not there yet) once
    the page is idle, scrolled to the middle of the view; a click intercepted by something the page is
    still drawing, or an element the page redrew, is retried after the next idle. Returns the element."""
    from selenium.common.exceptions import (
        ElementClickInterceptedException,
        ElementNotInteractableException,
        NoSuchElementException,
        StaleElementReferenceException,
        TimeoutException,
    )

    deadline = time.monotonic() + seconds
    retried = (
        ElementClickInterceptedException,
        ElementNotInteractableException,
        NoSuchElementException,
        StaleElementReferenceException,
    )
    while True:
        wait_idle(driver, max(1.0, deadline - time.monotonic()))
        try:
            element = find(driver)
            if element:
                driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
                element.click()
                return element
        except retried:
            pass
        if time.monotonic() > deadline:
            raise TimeoutException(f"nothing to click within {seconds:.0f} s")
        time.sleep(IDLE_POLL_S)


def button(label: str, within=None):
    """A finder for `click`: the button whose text is `label` (in `within`, an element, if given)."""
    from selenium.webdriver.common.by import By

    def find(driver):
        return (within or driver).find_element(By.XPATH, f".//button[.//p[text()='{label}']]")

    return find


def tab(title: str):
    """A finder for `click`: the tab (st.tabs) whose text is `title`, None while the page does not show it."""
    from selenium.webdriver.common.by import By

    def find(driver):
        return next(
            (t for t in driver.find_elements(By.CSS_SELECTOR, "[role='tab']") if t.text == title), None
        )

    return find
