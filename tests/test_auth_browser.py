"""Sign-in end to end, in headless Chromium against the real dashboard: a signed-out browser sees only the
sign-in page on every URL; a built-in account signs in, stays signed in across a reload and signs out; an
annotator cannot start a paid run, change settings or save under another name through the pages; a person
signs in through a real OIDC provider started on 127.0.0.1 (oidc-provider-mock), with the role a lead gave
their identity. Every click waits for Streamlit to be idle first."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.auth import accounts, audit
from evalcore.auth.roles import Role
from evalcore.inputs import import_project
from evalcore.store import Store
from tests.auth_support import (
    body_text,
    click,
    dashboard,
    fill,
    oidc_provider,
    wait,
    wait_idle,
    write_oidc_secrets,
)
from tests.browser import free_port

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "correct horse battery"
PAGES = ["", "settings", "specs", "diversity", "conversations", "annotate", "agreement", "tool_cases",
         "procedures", "runs", "reports", "simulations", "scenarios", "no_such_page"]  # fmt: skip
SIGN_IN = "Sign in to evalcore"


@pytest.fixture
def team_store(db_url: str) -> str:
    """The sample project, an admin and an annotator."""
    store = Store(db_url)
    import_project(store, ROOT / "data" / "sample")
    accounts.add_user(store, "dana", Role.admin, PASSWORD)
    accounts.add_user(store, "alice", Role.annotator, PASSWORD)
    store.close()
    return db_url


def sign_in(driver, base: str, name: str, password: str = PASSWORD) -> None:
    driver.get(base)
    wait(driver, lambda d: SIGN_IN in body_text(d))
    fill(driver, "Name", name)
    fill(driver, "Password", password)
    click(driver, "Sign in")
    wait_idle(driver)


def open_section(driver, title: str) -> None:
    """Open the expander titled `title`, once the app is idle."""
    from selenium.webdriver.common.by import By

    wait_idle(driver)
    summary = wait(driver, lambda d: d.find_element(By.XPATH, f"//details[.//p[text()='{title}']]/summary"))
    summary.click()


def signed_in_as(driver, name: str, role: str) -> None:
    """Wait until the page is drawn for the signed-in person (and the sign-in form is gone)."""
    wait(driver, lambda d: f"Signed in as {name} ({role})" in body_text(d))
    wait_idle(driver)
    wait(driver, lambda d: SIGN_IN not in body_text(d))


def signed_in(driver, base: str, name: str, role: str) -> None:
    """Sign in and wait until the browser keeps the session (its cookie), so another URL knows it."""
    sign_in(driver, base, name)
    signed_in_as(driver, name, role)
    wait(driver, lambda d: d.get_cookie("evalcore_session") is not None)


def test_a_signed_out_browser_sees_only_the_sign_in_page_on_every_url(team_store, browser, tmp_path):
    with dashboard(team_store, tmp_path) as base:
        for page in PAGES:
            browser.get(f"{base}/{page}")
            wait(browser, lambda d: SIGN_IN in body_text(d))
            wait_idle(browser)
            text = body_text(browser)
            assert SIGN_IN in text, page
            # No navigation, no project, no data of the sample project, no name to type.
            for shown in ("Spec review", "Current project", "Ridgeline", "Your name", "Settings"):
                assert shown not in text, (page, shown)


def test_a_built_in_account_signs_in_stays_signed_in_on_reload_and_signs_out(team_store, browser, tmp_path):
    from selenium.webdriver.common.by import By

    with dashboard(team_store, tmp_path) as base:
        sign_in(browser, base, "alice", "not the password")
        wait(browser, lambda d: "Wrong name or password" in body_text(d))

        fill(browser, "Password", PASSWORD)
        click(browser, "Sign in")
        signed_in_as(browser, "alice", "annotator")
        assert "Ridgeline" in body_text(browser)
        wait(browser, lambda d: d.get_cookie("evalcore_session") is not None)
        token = browser.get_cookie("evalcore_session")["value"]

        browser.get(f"{base}/specs")  # a reload of another URL: the cookie signs the browser in again
        signed_in_as(browser, "alice", "annotator")
        assert not browser.find_elements(By.CSS_SELECTOR, "input[aria-label='Your name']")

        click(browser, "Sign out")
        wait(browser, lambda d: SIGN_IN in body_text(d))
        browser.get(f"{base}/specs")
        wait(browser, lambda d: SIGN_IN in body_text(d))

        # The token the browser held signs nobody in once signed out, even sent again by hand.
        browser.add_cookie({"name": "evalcore_session", "value": token, "path": "/"})
        browser.get(f"{base}/annotate")
        wait(browser, lambda d: SIGN_IN in body_text(d))
        wait_idle(browser)
        assert "Signed in as" not in body_text(browser)

    store = Store(team_store)
    try:
        actions = [(e.actor, e.action, e.outcome) for e in audit.trail(store)]
    finally:
        store.close()
    assert ("alice", "sign_in", "refused") in actions
    assert ("alice", "sign_in", "done") in actions
    assert ("alice", "sign_out", "done") in actions


def test_an_annotator_can_neither_start_a_paid_run_nor_change_settings_through_the_pages(
    team_store, browser, tmp_path
):
    with dashboard(team_store, tmp_path) as base:
        signed_in(browser, base, "alice", "annotator")

        browser.get(f"{base}/runs")
        signed_in_as(browser, "alice", "annotator")
        click(browser, "Start run")
        wait(browser, lambda d: "starting a run against a target needs the lead role" in body_text(d))
        assert "alice is an annotator" in body_text(browser)

        browser.get(f"{base}/settings")
        signed_in_as(browser, "alice", "annotator")
        click(browser, "Save budget")
        wait(browser, lambda d: "changing models, budgets or prices needs the lead role" in body_text(d))
        assert "Who did what and when is for leads" in body_text(browser)

    store = Store(team_store)
    try:
        project = store.projects()[0]
        assert store.runs(project.id) == [], "no run was recorded"
        assert "budget" not in project.settings
        refused = {(e.actor, e.action) for e in audit.trail(store) if e.outcome == "refused"}
    finally:
        store.close()
    assert refused == {("alice", "job.start"), ("alice", "settings.budget")}


def test_a_lead_sees_the_audit_trail_on_settings(team_store, browser, tmp_path):
    with dashboard(team_store, tmp_path) as base:
        signed_in(browser, base, "dana", "admin")
        browser.get(f"{base}/settings")
        signed_in_as(browser, "dana", "admin")
        open_section(browser, "The latest 500 actions")  # the trail is drawn only once opened
        wait(browser, lambda d: "Download the trail (CSV)" in body_text(d))
        # The table is drawn on a canvas: its rows are the library's, tested in test_auth_roles.
        assert "Audit trail" in body_text(browser)
        assert "is for leads" not in body_text(browser)


def test_sign_in_through_a_real_oidc_provider(db_url, browser, tmp_path):
    from selenium.webdriver.common.by import By

    store = Store(db_url)
    import_project(store, ROOT / "data" / "sample")
    accounts.add_user(store, "zoe@example.com", Role.analyst)  # a role for an OIDC identity
    store.close()
    port = free_port()
    with oidc_provider() as issuer:
        write_oidc_secrets(tmp_path, issuer, port)
        with dashboard(db_url, tmp_path, port) as base:
            browser.get(f"{base}/specs")
            wait(browser, lambda d: SIGN_IN in body_text(d))
            assert "Ridgeline" not in body_text(browser)
            click(browser, "Sign in with your organisation's account")

            # The provider's own authorization form: the person types who they are.
            field = wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "input[name='sub']"))
            assert browser.current_url.startswith(issuer)
            field.send_keys("zoe@example.com")
            browser.find_element(By.XPATH, "//button[text()='Authorize']").click()

            wait(browser, lambda d: d.current_url.startswith(base))
            signed_in_as(browser, "zoe@example.com", "analyst")
            assert "Ridgeline" in body_text(browser)

            click(browser, "Sign out")
            wait(browser, lambda d: SIGN_IN in body_text(d) or d.current_url.startswith(issuer))

    store = Store(db_url)
    try:
        actions = [(e.actor, e.action) for e in audit.trail(store)]
    finally:
        store.close()
    assert ("zoe@example.com", "sign_in") in actions


def test_a_review_saved_through_the_page_is_the_signed_in_annotators(team_store, browser, tmp_path):
    from selenium.webdriver.common.by import By

    from tests.annotation_data import add_conversations

    store = Store(team_store)
    item = add_conversations(store, store.projects()[0].id, 1)[0]
    store.close()
    with dashboard(team_store, tmp_path) as base:
        signed_in(browser, base, "alice", "annotator")
        browser.get(f"{base}/annotate?item={item}")
        signed_in_as(browser, "alice", "annotator")
        groups = wait(
            browser,
            lambda d: (
                d.find_elements(By.CSS_SELECTOR, "[data-testid='stForm'] [data-testid='stButtonGroup']")
                or False
            ),
        )
        wait_idle(browser)
        assert groups
        assert not browser.find_elements(By.CSS_SELECTOR, "input[aria-label='Your name']")
        # Turn 3 rejected as not grounded (as test_e2e_annotate does), then saved.
        button = groups[1].find_element(
            By.XPATH, ".//button[.//p[starts-with(normalize-space(.), 'Not grounded')]]"
        )
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", button)
        button.click()
        click(browser, "Save & next")
        wait_idle(browser)

        def saved(_driver) -> bool:
            check = Store(team_store)
            try:
                return bool(check.annotations(item))
            finally:
                check.close()

        wait(browser, saved)
    store = Store(team_store)
    try:
        assert {a.author for a in store.annotations(item)} == {"alice"}
    finally:
        store.close()
