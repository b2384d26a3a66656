"""What the sign-in browser tests share: a dashboard started from a chosen folder (where its
`.streamlit/secrets.toml` is read), a real OIDC provider on 127.0.0.1, and waiting for Streamlit to be
idle."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.browser import free_port

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def dashboard(database_url: str, folder: Path, port: int | None = None) -> Iterator[str]:
    """`dashboard.py` on 127.0.0.1 started from `folder` (its secrets are that folder's), with one queue
    worker; yields the base URL."""
    port = port or free_port()
    env = {**os.environ, "EVALCORE_DATABASE_URL": database_url}
    command = [
        sys.executable, str(ROOT / "dashboard.py"),
        "--server.address", "127.0.0.1", "--server.port", str(port), "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    log = folder / "dashboard.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT)
    worker = subprocess.Popen(
        [sys.executable, "-m", "evalcore", "worker", "--workers", "1"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.3)
        else:
            raise RuntimeError("the dashboard did not start: " + log.read_text(errors="replace"))
        if proc.poll() is not None:
            raise RuntimeError("the dashboard exited: " + log.read_text(errors="replace"))
        yield url
    finally:
        for child in (proc, worker):
            child.terminate()
        for child in (proc, worker):
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()


@contextmanager
def oidc_provider() -> Iterator[str]:
    """A real OpenID Connect provider (the `oidc-provider-mock` package: discovery, authorization form,
    token and userinfo endpoints, signed ID tokens) on 127.0.0.1; yields its issuer URL. Any client id
    and secret are accepted; the person signing in types their subject, which is also their e-mail."""
    import oidc_provider_mock
    import werkzeug.serving

    server = werkzeug.serving.make_server("127.0.0.1", 0, oidc_provider_mock.app(), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


def write_oidc_secrets(folder: Path, issuer: str, port: int) -> None:
    """Streamlit's `[auth]` secrets for st.login against `issuer`, for a dashboard on `port`."""
    streamlit_dir = folder / ".streamlit"
    streamlit_dir.mkdir(parents=True, exist_ok=True)
    (streamlit_dir / "secrets.toml").write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        'cookie_secret = "a-test-cookie-secret-of-enough-length"\n'
        'client_id = "evalcore-test"\n'
        'client_secret = "evalcore-test-secret"\n'
        f'server_metadata_url = "{issuer}/.well-known/openid-configuration"\n',
        encoding="utf-8",
    )


def wait(driver, condition, seconds: float = 60):
    """Wait for `condition`; an element a rerun replaced is "not yet", not a failure."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(driver, seconds, poll_frequency=0.2, ignored_exceptions=ignored).until(condition)


def wait_idle(driver, seconds: float = 60) -> None:
    """Wait until Streamlit is connected and its script is not running (nor about to rerun)."""
    from selenium.webdriver.common.by import By

    def idle(d) -> bool:
        app = d.find_element(By.CSS_SELECTOR, "[data-testid='stApp']")
        return (
            app.get_attribute("data-test-script-state") == "notRunning"
            and app.get_attribute("data-test-connection-state") == "CONNECTED"
        )

    wait(driver, idle, seconds)


def body_text(driver) -> str:
    """The page's text, without the invisible word joiners that keep an address in it from linking."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    try:
        return driver.find_element(By.TAG_NAME, "body").text.replace("\u2060", "")
    except WebDriverException as error:
        # Mid-navigation (a sign-out redirect) the body found belongs to the document being replaced:
        # that is "no text yet" for a wait, not a failure.
        if "does not belong to the document" in str(error) or "context was destroyed" in str(error):
            return ""
        raise


def click(driver, label: str) -> None:
    """Click the button labelled `label`, once the app is idle (a rerun would swallow the click)."""
    from selenium.webdriver.common.by import By

    wait_idle(driver)
    button = wait(driver, lambda d: d.find_element(By.XPATH, f"//button[.//p[text()={_xpath(label)}]]"))
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", button)
    button.click()


def fill(driver, label: str, value: str) -> None:
    """Type `value` into the text input labelled `label`, replacing what it held."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    wait_idle(driver)
    field = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, f"input[aria-label={_css(label)}]"))
    # clear() bypasses React's change events: select what is there and type over it, as a person would.
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(Keys.DELETE, value)


def _xpath(text: str) -> str:
    return f'"{text}"' if '"' not in text else f"'{text}'"


def _css(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'
