"""A screenshot of every dashboard page, in headless Chromium, against a store (issue 15: look at each page at
a team's scale and fix what looks wrong).

    .venv/bin/python benchmarks/dashboard.py --store /tmp/big          # build the 5,000-spec store once
    .venv/bin/python benchmarks/screenshots.py --store /tmp/big/dashboard.db --out /tmp/shots [PAGE ...]

Starts `streamlit run` with a queue worker beside it (tests/browser.py, as the end-to-end tests do), opens
each page with a name in the browser's cookie (so Annotate shows its queue), waits until the page's text
stops changing (cold caches take seconds at this scale), and saves PAGE.png. Prints each page's time to a
settled page, first visits included: a rough figure, not the benchmark (benchmarks/dashboard.py is).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from browser import chromium, streamlit_server  # noqa: E402

from pages._common import USER_COOKIE  # noqa: E402

PAGES = ["", "settings", "specs", "diversity", "conversations", "annotate", "agreement", "tool_cases",
         "procedures", "runs", "reports", "simulations", "scenarios"]  # fmt: skip
# Texts a page shows while it is still reading (spinners of its caches).
BUSY = ("Reading the", "Loading", "Measuring", "Embedding", "Running...")


def settle(browser: object, limit: float = 240.0) -> None:
    """Wait until the page's text is the same on two polls in a row and no spinner text is left."""
    from selenium.webdriver.common.by import By

    deadline, previous, stable = time.monotonic() + limit, None, 0
    while time.monotonic() < deadline and stable < 2:
        text = browser.find_element(By.TAG_NAME, "body").text
        stable = stable + 1 if text == previous and not any(b in text for b in BUSY) else 0
        previous = text
        time.sleep(1.5)
    time.sleep(2)  # plots draw after the script's last message


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="SQLite store file.")
    parser.add_argument("--out", type=Path, required=True, help="Folder for the PNG files.")
    parser.add_argument("--user", default="dana", help="Name the browser gives (cookie).")
    parser.add_argument("pages", nargs="*", help="URL paths ('' is Home); default every page.")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with streamlit_server(f"sqlite:///{args.store.resolve()}") as base, chromium() as browser:
        browser.set_window_size(1400, 2400)
        browser.get(base + "/_stcore/health")
        browser.add_cookie({"name": USER_COOKIE, "value": args.user, "path": "/"})
        for page in args.pages or PAGES:
            started = time.perf_counter()
            browser.get(f"{base}/{page}")
            settle(browser)
            name = page or "home"
            browser.save_screenshot(str(args.out / f"{name}.png"))
            print(f"{name:<14} {time.perf_counter() - started:6.1f} s to a settled page", flush=True)


if __name__ == "__main__":
    main()
