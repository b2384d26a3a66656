"""Starting `streamlit run` on a free port and driving Debian's headless Chromium with selenium."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
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
    port = free_port()
    env = {**os.environ, "EVALCORE_DATABASE_URL": database_url}
    command = [
        sys.executable, "dashboard.py",
        "--server.address", "127.0.0.1", "--server.port", str(port), "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    worker = subprocess.Popen(
        [sys.executable, "-m", "evalcore", "worker", "--workers", "1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.3)
        else:
            raise RuntimeError("streamlit did not start: " + proc.stdout.read1().decode(errors="replace"))
        yield url
    finally:
        for child in (proc, worker):
            child.terminate()
        for child in (proc, worker):
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()


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
