"""End to end in headless Chromium (SQLite and PostgreSQL): annotate a conversation through the page and
find the verdict after a browser reload; Enter in a note saves nothing; the name survives reloads, tabs
and links; the same conversation saved from two browsers, the second refused with the name of who saved
in between, then saved after Reload, both versions in the history. Every click waits for the page to be
idle (tests/browser.py): a click that lands while the page reruns is lost."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalcore.inputs import import_project
from evalcore.review import assign_items
from evalcore.store import Store
from tests.annotation_data import add_conversations
from tests.browser import chromium, streamlit_server, wait_idle
from tests.browser import click as idle_click

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def seeded(db_url: str) -> list[str]:
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    ids = add_conversations(store, pid, 5)
    assign_items(store, pid, ["ann", "bea"], 2, "lee")
    store.close()
    return ids


@pytest.fixture
def browsers(browser):
    with chromium() as second:
        yield browser, second


def _wait(driver, condition, seconds: float = 60):
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # A rerun redraws the page under the condition: an element gone stale is "not yet", not a failure.
    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(driver, seconds, poll_frequency=0.2, ignored_exceptions=ignored).until(condition)


def _text(driver) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.TAG_NAME, "body").text


def name_field(driver):
    from selenium.webdriver.common.by import By

    return _wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, "input[aria-label='Your name']"))


def open_as(driver, url: str, name: str) -> None:
    """Load `url` and give a name; wait until the browser keeps it (a cookie, so reloads know it)."""
    from selenium.webdriver.common.keys import Keys

    driver.get(url)
    name_field(driver).send_keys(name, Keys.ENTER)
    _wait(driver, lambda d: (d.get_cookie("evalcore_user") or {}).get("value") == name)


def review_form(driver, turns: int = 5) -> list:
    """The verdict controls of the open conversation, once it has rendered."""
    from selenium.webdriver.common.by import By

    def ready(d):
        groups = d.find_elements(By.CSS_SELECTOR, "[data-testid='stForm'] [data-testid='stButtonGroup']")
        return groups if len(groups) >= turns + 1 else False  # each turn's labels, then the whole's

    return _wait(driver, ready)


def click(driver, label: str, group: int | None = None) -> None:
    """Click the button `label` (in the `group`-th verdict control of the form, if given) once the page is
    idle; the control is found again at each try, as a rerun redraws it."""
    from selenium.webdriver.common.by import By

    def find(d):
        scope = review_form(d)[group] if group is not None else d
        # A label's button shows its key after its words ("Not grounded 3"): match the words.
        return scope.find_element(By.XPATH, f".//button[.//p[starts-with(normalize-space(.), '{label}')]]")

    idle_click(driver, find)


def chosen_in(group) -> list[str]:
    """The texts of the chosen buttons of one verdict control."""
    from selenium.webdriver.common.by import By

    return [words(b.text) for b in group.find_elements(By.CSS_SELECTOR, "button[aria-checked='true']")]


def words(text: str) -> str:
    """A label button's words without the key it shows ("Not grounded 3" -> "Not grounded")."""
    return re.sub(r"\s*\d$", "", text.strip())


def test_annotate_through_the_page_then_see_the_verdict_after_a_reload(db_url, seeded, browsers):
    from selenium.webdriver.common.by import By

    driver, _ = browsers
    with streamlit_server(db_url) as base:
        open_as(driver, base + "/annotate", "ann")
        click(driver, "Review next")
        _wait(driver, lambda d: f"item={seeded[0]}" in d.current_url)
        review_form(driver)
        click(driver, "Not grounded", group=1)  # turn 3
        note = driver.find_elements(By.CSS_SELECTOR, "[data-testid='stForm'] input[placeholder^='Note']")[1]
        note.send_keys("the return policy says 14 days")
        click(driver, "Save & next")
        _wait(driver, lambda d: f"item={seeded[1]}" in d.current_url)

        driver.get(base + f"/annotate?item={seeded[0]}")
        driver.refresh()  # a real reload: a new browser session; this browser remembers the name
        assert name_field(driver).get_attribute("value") == "ann"
        groups = review_form(driver)
        chosen = groups[1].find_element(By.CSS_SELECTOR, "button[aria-checked='true']")
        assert words(chosen.text) == "Not grounded"
        notes = driver.find_elements(By.CSS_SELECTOR, "[data-testid='stForm'] input[placeholder^='Note']")
        assert notes[1].get_attribute("value") == "the return policy says 14 days"
        _wait(driver, lambda d: "rejected" in _text(d) and "Reopen my verdict" in _text(d))

    store = Store(db_url)
    saved = {a.turn_index: a for a in store.annotations(seeded[0])}
    assert (saved[3].reason, saved[None].label.value, saved[None].author) == ("not grounded", "reject", "ann")
    store.close()


def test_the_same_conversation_saved_in_two_browsers_the_second_is_refused(db_url, seeded, browsers):
    first, second = browsers
    item = seeded[2]
    with streamlit_server(db_url) as base:
        open_as(first, base + f"/annotate?item={item}", "ann")
        open_as(second, base + f"/annotate?item={item}", "bea")
        review_form(first)
        review_form(second)

        click(first, "Accept", group=-1)  # the verdict on the whole conversation
        click(first, "Save & next")
        _wait(first, lambda d: f"item={item}" not in d.current_url)

        click(second, "Unsafe", group=0)
        # The choice is shown as made before the save: a click lost in a rerun (the intermittent "restore"
        # failure before clicks waited for an idle page) would fail here, not after Reload.
        _wait(second, lambda d: chosen_in(review_form(d)[0]) == ["Unsafe"])
        click(second, "Save & next")
        _wait(second, lambda d: "was changed by ann" in _text(d))
        assert "your save was refused and nothing was lost" in _text(second)
        from selenium.webdriver.common.by import By

        click(second, "Reload")
        _wait(second, lambda d: "was changed by ann" not in _text(d))

        # The form is drawn before its choices are restored: wait for a chosen button, not only the form.
        [chosen] = _wait(
            second,
            lambda d: (
                "was changed by ann" not in _text(d)
                and review_form(d)
                and review_form(d)[0].find_elements(By.CSS_SELECTOR, "button[aria-checked='true']")
            ),
        )
        assert words(chosen.text) == "Unsafe", "the unsaved choice survives the reload"
        click(second, "Save & next")
        _wait(second, lambda d: f"item={item}" not in d.current_url)

    store = Store(db_url)
    assert [(r.version, r.author) for r in store.history(item)] == [(1, "offline"), (2, "ann"), (3, "bea")]
    bea = [a for a in store.annotations(item) if a.author == "bea"]
    assert {(a.turn_index, a.reason) for a in bea if a.label.value == "reject"} == {
        (1, "unsafe"),
        (None, "unsafe"),
    }
    store.close()


def test_a_second_press_of_a_saved_form_is_not_a_second_save(db_url, seeded, browser, tmp_path, monkeypatch):
    """Save pressed twice before the page answers (a double click, or a press again on a loaded server):
    one save, the second press answered as the first's duplicate, never refused, every press answered."""
    from selenium.webdriver.common.by import By

    from evalcore.review import save_log

    log = tmp_path / "saves.jsonl"
    monkeypatch.setenv(save_log.ENV, str(log))
    item = seeded[0]
    with streamlit_server(db_url) as base:
        open_as(browser, base + f"/annotate?item={item}", "ann")
        review_form(browser)
        click(browser, "Accept", group=-1)
        save = browser.find_element(By.XPATH, "//button[.//p[starts-with(normalize-space(.), 'Save &')]]")
        # The second press a moment later, while the first one's run is under way (one tick apart they
        # are one press).
        browser.execute_script("arguments[0].click(); setTimeout(() => arguments[0].click(), 150);", save)
        _wait(browser, lambda d: f"item={item}" not in d.current_url)
        wait_idle(browser)
        assert "refused" not in _text(browser)

    saves = [s for s in save_log.read(log).values() if s["item"] == item]
    # On a loaded machine the browser may send both presses as one request, or the second may land on the
    # next conversation's page: one save then; when two arrive, the second is the first's duplicate.
    outcomes = sorted(p for s in saves for p in ("commit", "duplicate", "refused") if p in s)
    assert outcomes == ["commit", "duplicate"][: len(saves)] and len(saves) in (1, 2), saves
    assert all("reply" in s for s in saves), "every press is answered"
    store = Store(db_url)
    assert [(r.version, r.author) for r in store.history(item)] == [(1, "offline"), (2, "ann")]
    store.close()


def test_enter_in_a_note_saves_nothing_and_unmarked_turns_are_not_accepted(db_url, seeded, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    item, other = seeded[3], seeded[4]
    with streamlit_server(db_url) as base:
        open_as(browser, base + f"/annotate?item={item}", "ann")
        groups = review_form(browser)
        for group in range(
            len(groups) - 1
        ):  # every turn marked: the form is complete, a submit would save it
            click(browser, "Accept", group=group)
        note = browser.find_elements(By.CSS_SELECTOR, "[data-testid='stForm'] input[placeholder^='Note']")[0]
        note.send_keys("checked against the manual", Keys.ENTER)
        wait_idle(browser)  # a submitted form would have saved and opened the next conversation by now
        store = Store(db_url)
        assert f"item={item}" in browser.current_url and store.annotations(item) == [], "Enter saved nothing"
        click(browser, "Save & next")  # the explicit action saves the same form
        _wait(browser, lambda d: f"item={item}" not in d.current_url)
        saved = {a.turn_index for a in store.annotations(item)}
        assert None in saved and len(saved) == len(groups), "every turn accepted, and the whole"

        browser.get(base + f"/annotate?item={other}")
        review_form(browser)
        click(browser, "Accept", group=0)
        click(browser, "Save & next")  # turns 3 and 5 unmarked, no verdict on the whole: refused, named
        _wait(browser, lambda d: "have no verdict yet" in _text(d))
        assert store.annotations(other) == [] and f"item={other}" in browser.current_url
        store.close()


def test_the_name_survives_a_reload_a_new_tab_and_a_link_and_agreement_needs_none(db_url, seeded, browsers):
    first, second = browsers
    with streamlit_server(db_url) as base:
        open_as(first, base + "/annotate", "dana")
        first.refresh()
        assert name_field(first).get_attribute("value") == "dana", "after a reload"
        first.switch_to.new_window("tab")
        first.get(base + f"/annotate?item={seeded[1]}")  # a link someone shared, in a new tab
        assert name_field(first).get_attribute("value") == "dana", "in a new tab, from a link"
        review_form(first)

        second.get(base + "/agreement")  # another browser: no name, and reading is not blocked
        _wait(second, lambda d: "Cohen's kappa" in _text(d) and "Type your name" not in _text(d))
        assert name_field(second).get_attribute("value") == ""


def test_keys_label_the_outlined_turn_and_move_on_and_never_type_into_a_label(db_url, seeded, browser):
    """Keys as Label Studio and Argilla annotators know them (issue 28): each label's key is shown on its
    button; 1-7 pick a label for the outlined turn and move the outline to the next one, the last being
    the whole conversation; J and K move; a digit typed in a note is text, not a label."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    item = seeded[0]

    def outlined(d) -> str:
        [current] = d.find_elements(By.CSS_SELECTOR, "[data-ec-current]")
        return " ".join(c for c in current.get_attribute("class").split() if c.startswith("st-key-"))

    def press(keys: str) -> None:
        ActionChains(browser).send_keys(keys).perform()

    with streamlit_server(db_url) as base:
        open_as(browser, base + f"/annotate?item={item}", "ann")
        groups = review_form(browser)
        wait_idle(browser)
        shown = [b.text.split() for b in groups[0].find_elements(By.TAG_NAME, "button")]
        assert [x[-1] for x in shown] == [str(n) for n in range(1, 8)], "each label shows its key"
        assert [x[0] for x in shown[:3]] == ["Accept", "Wrong", "Not"]
        browser.execute_script("document.activeElement.blur();")  # the name field had the focus
        _wait(browser, lambda d: outlined(d).endswith(f"-{1}"))  # the first turn nobody marked: turn 1

        press("3")  # turn 1: not grounded; the outline moves to turn 3
        _wait(browser, lambda d: chosen_in(review_form(d)[0]) == ["Not grounded"])
        _wait(browser, lambda d: outlined(d).endswith("-3"))
        press("k")
        _wait(browser, lambda d: outlined(d).endswith("-1"))
        press("j")
        press("1111")  # turns 3, 5, 7 and 9 accepted; the outline is on the whole conversation
        _wait(browser, lambda d: [chosen_in(g) for g in review_form(d)[1:5]] == [["Accept"]] * 4)
        _wait(browser, lambda d: "st-key-cv-" in outlined(d))
        press("3")
        _wait(browser, lambda d: chosen_in(review_form(d)[-1]) == ["Not grounded"])

        note = browser.find_elements(By.CSS_SELECTOR, "[data-testid='stForm'] input[placeholder^='Note']")[0]
        note.click()
        note.send_keys("page 2")  # digits into a note are text: no label changes
        assert chosen_in(review_form(browser)[0]) == ["Not grounded"]
        assert chosen_in(review_form(browser)[-1]) == ["Not grounded"]
        click(browser, "Save & next")
        _wait(browser, lambda d: f"item={item}" not in d.current_url)

    store = Store(db_url)
    saved = {a.turn_index: (a.label.value, a.reason, a.note) for a in store.annotations(item)}
    assert saved == {
        1: ("reject", "not grounded", "page 2"),
        **{i: ("accept", None, "") for i in (3, 5, 7, 9)},
        None: ("reject", "not grounded", ""),
    }
    store.close()
