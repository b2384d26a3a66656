"""End to end (issue 28): a new project from an upload to a compared pair of runs, using only the pages,
in a real headless Chromium, for each of the five generators: doc-QA conversations, procedure tests,
persona simulations, scenarios and tool cases. Nothing is made from Python or the CLI: the test
only reads the store to know when a job the page started has finished. Each step is named, so a failure
says which step of which pipeline needs what (`step`), and a control the page does not show (a label
renamed, say) is named within FIND_SECONDS (`looking_for`); the smallest settings keep it quick for CI.

After two runs of a generator the walk ends with `compare_two_runs` on the Results page: the newer run
picked as the run to compare and the older as its baseline in the browser, the compare's counts (broken,
fixed, still failing, still passing) and McNemar's p read off the page must be the library's own compare of
the same two runs (`compare_to_baseline`, read from the store only to check the page)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from evalcore.generators.doc_qa.job import RUN_KIND as DOC_QA_KIND
from evalcore.generators.procedure.job import RUN_KIND as PROCEDURES_KIND
from evalcore.generators.scenario.run import RUN_KIND as SCENARIO_RUN_KIND
from evalcore.generators.simulation.records import RUN_KIND as SIMULATION_KIND
from evalcore.generators.tool_case.discovery import RUN_KIND as DISCOVERY_KIND
from evalcore.generators.tool_case.job import RUN_KIND as TOOL_CASES_KIND
from evalcore.models import RunStatus
from evalcore.runs.procedure_tests import RUN_KIND as TESTS_RUN_KIND
from evalcore.runs.records import RUN_KIND as RUN_KIND
from evalcore.runs.rubric_scoring import RUN_KIND as SCORING_KIND
from evalcore.specs.generation import RUN_KIND as SPECS_KIND
from evalcore.store import Store
from evalcore.targets.config import list_targets
from tests.browser import button, click, streamlit_server, tab, wait_idle

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
JOB_SECONDS = 240  # the longest a job of the walk's smallest settings may take on a loaded CI machine


@contextmanager
def step(name: str, driver, shots: Path) -> Iterator[None]:
    """Name the step a failure is at (in the message and a screenshot named after it)."""
    try:
        yield
    except Exception as exc:
        shot = shots / f"{name.replace(' ', '_').replace(':', '')}.png"
        driver.save_screenshot(str(shot))
        # What the page said (an error, a refusal) is in the message: CI keeps no screenshot.
        said = " | ".join(
            e.text.replace("\n", " ")[:300]
            for e in driver.find_elements(
                _by().CSS_SELECTOR, "[data-testid='stAlert'], [data-testid='stException']"
            )
        )
        raise AssertionError(
            f"step '{name}' failed (screenshot {shot}): {exc}; the page says: {said or 'nothing'}"
        ) from exc


def _by():
    from selenium.webdriver.common.by import By

    return By


def text_of(driver) -> str:
    return driver.find_element(_by().TAG_NAME, "body").text


def open_page(driver, base: str, path: str) -> None:
    driver.get(f"{base}/{path}")
    wait_idle(driver)


def until(check: Callable[[], object], what: str, seconds: float = JOB_SECONDS) -> None:
    """Poll `check` (the page or the store) until it is truthy; fail naming `what`."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"{what}: not within {seconds:.0f} s"
        time.sleep(0.2)


def jobs_finished(store: Store, project_id: str, kind: str, count: int) -> None:
    """Wait until `count` jobs of `kind` exist and all have finished; a failed or stopped one fails."""

    def done() -> bool:
        runs = store.runs(project_id, kind=kind)
        ended = [r for r in runs if r.status in (RunStatus.failed, RunStatus.stopped)]
        assert not ended, f"{kind} job {ended[0].id} {ended[0].status.value}: {ended[0].stopped_reason}"
        return len(runs) >= count and all(r.status == RunStatus.finished for r in runs)

    try:
        until(done, f"{count} finished {kind} job(s)")
    except AssertionError as exc:
        runs = store.runs(project_id, kind=kind)
        held = {r.id: store.stop_requested(r.id) for r in runs}
        states = ", ".join(f"{r.id} {r.status.value}{' (stop asked)' if held[r.id] else ''}" for r in runs)
        raise AssertionError(f"{exc} ({len(runs)} recorded: {states or 'none'})") from None


def start_job(driver, label: str, store: Store, project_id: str, kind: str, count: int) -> None:
    """Press `label` to start the `count`-th job of `kind`, and wait until every one has finished. A press
    that landed while the page was rerunning is lost, as a person's would be: if no new job is recorded
    within RECORD_SECONDS, it is pressed again once the page is idle (a person presses again too)."""

    def recorded() -> bool:
        return len(store.runs(project_id, kind=kind)) >= count

    press(driver, label)
    deadline = time.monotonic() + RECORD_SECONDS
    while not recorded() and time.monotonic() < deadline:
        time.sleep(0.2)
    if not recorded():
        wait_idle(driver)
        if not recorded():
            press(driver, label)
    jobs_finished(store, project_id, kind, count)


RECORD_SECONDS = 30  # a press that records nothing within this (the page handles it in a second) was lost


FIND_SECONDS = 60  # a control the page does not show within this is missing (a renamed label, say)


@contextmanager
def looking_for(what: str) -> Iterator[None]:
    """Say which control was missing when a click or a field times out (a label changed on the page)."""
    from selenium.common.exceptions import TimeoutException

    try:
        yield
    except TimeoutException as exc:
        raise AssertionError(f"{what} not found on the page ({exc.msg})") from None


def press(driver, label: str) -> None:
    """Click the button labelled `label`."""
    with looking_for(f"button '{label}'"):
        click(driver, button(label), FIND_SECONDS)


def press_until(
    driver, label: str, shown: str, stored: Callable[[], object], what: str, seconds: float = 60
) -> None:
    """Press the button labelled `label` until the page shows `shown` or, once the page is idle, the store
    holds what the press makes (`stored`): a message shown once can be gone by the time a loaded browser
    reads it, and a press that landed while the page was rerunning is lost, as a person's would be, so
    it is pressed again (once the page is idle and the store holds nothing of the first)."""
    press(driver, label)
    deadline = time.monotonic() + seconds
    again = time.monotonic() + seconds / 3
    while shown not in text_of(driver):
        assert time.monotonic() < deadline, f"{what}: not within {seconds:.0f} s"
        if time.monotonic() > again:
            wait_idle(driver)
            if stored():
                return
            press(driver, label)
            again = deadline
        time.sleep(0.2)


def set_field(driver, label: str, value: object) -> None:
    """Type `value` into the text or number field labelled `label` (replacing what it holds)."""
    from selenium.webdriver.common.keys import Keys

    with looking_for(f"field '{label}'"):
        field = click(
            driver, lambda d: d.find_element(_by().CSS_SELECTOR, f'input[aria-label="{label}"]'), FIND_SECONDS
        )
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(str(value), Keys.TAB)
    wait_idle(driver)


def choose(driver, label: str, option: str) -> None:
    """Pick `option` (its visible text starts with it) in the select box labelled `label`."""
    box = f"[data-testid='stSelectbox']:has(input[aria-label=\"{label}\"])"
    with looking_for(f"select box '{label}'"):
        click(
            driver,
            lambda d: d.find_element(_by().CSS_SELECTOR, f"{box} button[aria-label='Open']"),
            FIND_SECONDS,
        )
    with looking_for(f"option '{option}' of '{label}'"):
        click(
            driver,
            lambda d: next(
                (
                    o
                    for o in d.find_elements(_by().CSS_SELECTOR, "[role='option']")
                    if o.text.startswith(option)
                ),
                None,
            ),
            FIND_SECONDS,
        )
    wait_idle(driver)


def open_expander(driver, title: str) -> None:
    """Open the expander whose summary starts with `title`, if it is closed."""

    def summary(d):
        return next(
            (s for s in d.find_elements(_by().CSS_SELECTOR, "[data-testid='stExpander'] summary")
             if title in s.text),
            None,
        )  # fmt: skip

    wait_idle(driver)
    found = summary(driver)
    assert found is not None, f"no section '{title}' on the page"
    if found.find_element(_by().XPATH, "..").get_attribute("open") is None:
        with looking_for(f"section '{title}'"):
            click(driver, summary, FIND_SECONDS)


def open_tab(driver, title: str) -> None:
    with looking_for(f"tab '{title}'"):
        click(driver, tab(title), FIND_SECONDS)


def upload_project(driver, base: str, store: Store) -> None:
    """Home's Upload tab: the sample's files sent loose (the policies in their own box), imported."""
    open_page(driver, base, "")
    open_tab(driver, "Upload")
    inputs = driver.find_elements(_by().CSS_SELECTOR, "[data-testid='stFileUploader'] input[type='file']")
    files = [SAMPLE / "system.yaml"] + [
        p for sub in ("documents", "tables", "tools", "procedures") for p in sorted((SAMPLE / sub).iterdir())
    ]
    inputs[0].send_keys("\n".join(str(p) for p in files))
    inputs[1].send_keys("\n".join(str(p) for p in sorted((SAMPLE / "policies").iterdir())))

    def sent() -> bool:  # every file listed, none still uploading
        names = driver.find_elements(_by().CSS_SELECTOR, "[data-testid='stFileChipName']")
        spinning = driver.find_elements(_by().CSS_SELECTOR, "[data-testid='stFileChipIconSpinner']")
        return len(names) == len(files) + 5 and not spinning

    until(sent, "the files sent", 60)
    wait_idle(driver)
    press_until(
        driver,
        "Import upload",
        "Imported project",
        store.projects,
        "the import",
    )


def give_name(driver, base: str, name: str = "lee") -> None:
    from selenium.webdriver.common.keys import Keys

    open_page(driver, base, "")
    field = click(driver, lambda d: d.find_element(_by().CSS_SELECTOR, "input[aria-label='Your name']"))
    field.send_keys(name, Keys.ENTER)
    until(lambda: (driver.get_cookie("evalcore_user") or {}).get("value") == name, "the name kept", 30)


def assign_annotators(driver, base: str, store: Store, project_id: str) -> None:
    """Agreement and calibration: the conversations assigned to two annotators (a lead's), and the gold
    set's download offered (empty here: nobody has reviewed yet)."""
    from selenium.webdriver.common.keys import Keys

    from evalcore.review import progress

    open_page(driver, base, "agreement")
    open_tab(driver, "Assignments")
    field = click(driver, lambda d: d.find_element(_by().CSS_SELECTOR, "input[aria-label='Annotators']"))
    for name in ("ann", "bea"):
        field.send_keys(name, Keys.ENTER)
        wait_idle(driver)
    set_field(driver, "Overlap (annotators per conversation)", 1)
    press(driver, "Assign")
    until(lambda: {p.annotator for p in progress(store, project_id)} == {"ann", "bea"}, "assignments", 60)
    open_tab(driver, "Export")
    until(lambda: "Download the gold set" in text_of(driver), "the gold set's download", 30)


def metric(driver, label: str) -> str:
    """The value of the metric labelled `label` on the page."""
    for box in driver.find_elements(_by().CSS_SELECTOR, "[data-testid='stMetric']"):
        lines = box.text.splitlines()
        if lines and lines[0].strip() == label:
            return lines[1].strip()
    raise AssertionError(f"no metric '{label}' on the page")


def selected(driver, label: str) -> str:
    """The text the select box labelled `label` shows (its picked option)."""
    box = f"[data-testid='stSelectbox']:has(input[aria-label=\"{label}\"])"
    wait_idle(driver)
    found = driver.find_elements(_by().CSS_SELECTOR, box)
    assert found, f"select box '{label}' not found on the page"
    return found[0].text


def compare_two_runs(driver, base: str, store: Store, generator: str, runs: list[str]) -> None:
    """The end of each pipeline's walk, on Results: the newer of `runs` compared with the older as its
    baseline, picked on the page; the counts it shows are the library's compare of the two."""
    from evalcore.reports.compare import CHANGE_ORDER, compare_to_baseline
    from evalcore.reports.results import result_runs, run_labels

    assert len(runs) == 2, f"{generator}: two runs, not {len(runs)}"
    now, baseline = runs  # newest first
    labels = run_labels(result_runs(store, store.run(now).params["project_id"]))  # as the page names them
    open_page(driver, base, "results")
    if labels[now] not in selected(driver, "Run to compare").splitlines():  # the newest is picked first
        choose(driver, "Run to compare", labels[now])
    choose(driver, "Baseline", labels[baseline])
    until(lambda: "McNemar p" in text_of(driver), f"{generator}: the compare's counts", FIND_SECONDS)
    wait_idle(driver)
    expected = compare_to_baseline(store, now, baseline)
    counts = expected.items["change"].value_counts()
    shown = {change: metric(driver, change.capitalize()) for change in CHANGE_ORDER}
    assert shown == {c: f"{int(counts.get(c, 0)):,}" for c in CHANGE_ORDER}, f"{generator}: {shown}"
    assert metric(driver, "McNemar p") == f"{expected.overall.p_value:.3g}"
    assert f"{expected.overall.n:,} " in text_of(driver)


def two_runs(store: Store, project_id: str, kind: str) -> list[str]:
    return [r.id for r in store.runs(project_id, kind=kind)][:2]


def test_every_generator_from_an_upload_to_two_runs_on_the_pages_only(tmp_path, browser):
    url = f"sqlite:///{tmp_path / 'e2e.db'}"
    store = Store(url)
    with streamlit_server(url) as base:
        with step("upload the project on Home", browser, tmp_path):
            give_name(browser, base)
            upload_project(browser, base, store)
            [project] = store.projects()
            pid = project.id
        with step("specs: generate and select on Spec review", browser, tmp_path):
            open_page(browser, base, "specs")
            set_field(browser, "How many candidates (m)", 5)
            start_job(browser, "Generate", store, pid, SPECS_KIND, 1)
            open_page(browser, base, "specs")
            open_expander(browser, "Generate and select")
            press(browser, "Re-select")
            until(lambda: any(v["selected"] for v in _spec_rows(store, pid)), "a selection", 60)

        _doc_qa(browser, base, store, pid, tmp_path)
        _procedures(browser, base, store, pid, tmp_path)
        _simulations(browser, base, store, pid, tmp_path)
        _scenarios(browser, base, store, pid, tmp_path)
        _tool_cases(browser, base, store, pid, tmp_path)


def _spec_rows(store: Store, project_id: str) -> list[dict]:
    from evalcore.specs.store_ops import list_specs

    return [{"selected": v.spec.selected} for v in list_specs(store, project_id)]


def _doc_qa(driver, base, store, pid, shots) -> None:
    with step("doc-QA: generate conversations", driver, shots):
        open_page(driver, base, "conversations")
        open_expander(driver, "Generate")
        set_field(driver, "Turns (L)", 2)
        set_field(driver, "Conversations per spec (n)", 1)
        start_job(driver, "Generate", store, pid, DOC_QA_KIND, 1)
    with step("doc-QA: assign annotators and find the gold download", driver, shots):
        assign_annotators(driver, base, store, pid)
    for n in (1, 2):
        with step(f"doc-QA: run {n} against the demo target on Runs", driver, shots):
            open_page(driver, base, "runs")
            set_field(driver, "At most this many items (0 = all)", 2)
            start_job(driver, "Start run", store, pid, RUN_KIND, n)
    with step("doc-QA: compare the two runs on Results", driver, shots):
        compare_two_runs(driver, base, store, "doc-QA", two_runs(store, pid, RUN_KIND))


def _procedures(driver, base, store, pid, shots) -> None:
    with step("procedures: generate tests", driver, shots):
        open_page(driver, base, "procedures")
        open_expander(driver, "Generate tests from the procedures")
        set_field(driver, "Paths per graph (conversations)", 1)
        start_job(driver, "Generate", store, pid, PROCEDURES_KIND, 1)
    with step("procedures: add the built-in demo agent", driver, shots):
        open_page(driver, base, "procedures")
        open_expander(driver, "Add a target that calls tools")
        press_until(
            driver,
            "Save target",
            "Saved target demo",
            lambda: any(t.name == "demo-agent" for t in list_targets(store, pid)),
            "the saved target",
        )
    for n in (1, 2):
        with step(f"procedures: play the tests, run {n}", driver, shots):
            open_page(driver, base, "procedures")
            choose(driver, "Target", "demo-agent")
            start_job(driver, "Play the tests", store, pid, TESTS_RUN_KIND, n)
    with step("procedures: compare the two runs on Results", driver, shots):
        compare_two_runs(driver, base, store, "procedures", two_runs(store, pid, TESTS_RUN_KIND))


def _simulations(driver, base, store, pid, shots) -> None:
    for n in (1, 2):
        with step(f"simulations: simulate against the demo target, run {n}", driver, shots):
            open_page(driver, base, "simulations")
            open_expander(driver, "Start a simulation")
            set_field(driver, "Standard personas", 1)
            set_field(driver, "Challenging personas", 0)
            set_field(driver, "Max user turns (the card's by default)", 2)
            start_job(driver, "Start simulation", store, pid, SIMULATION_KIND, n)
    with step("simulations: compare the two runs on Results", driver, shots):
        compare_two_runs(driver, base, store, "simulations", two_runs(store, pid, SIMULATION_KIND))


def _scenarios(driver, base, store, pid, shots) -> None:
    from evalcore.generators.scenario import list_scenarios

    with step("scenarios: write them from the specs for demo-flows", driver, shots):
        open_page(driver, base, "scenarios")
        choose(driver, "Check slots and flows against the domain of", "demo-flows")
        open_expander(driver, "Write scenarios from the specs")
        set_field(driver, "At most this many specs (selected ones first)", 2)
        press(driver, "Write scenarios")
        until(lambda: len(list_scenarios(store, pid)) == 2, "two scenarios stored", 60)
    for n in (1, 2):
        with step(f"scenarios: run {n} against demo-flows", driver, shots):
            open_page(driver, base, "scenarios")
            open_expander(driver, "Start a run")
            start_job(driver, "Start run", store, pid, SCENARIO_RUN_KIND, n)
    with step("scenarios: compare the two runs on Results", driver, shots):
        compare_two_runs(driver, base, store, "scenarios", two_runs(store, pid, SCENARIO_RUN_KIND))


def _tool_cases(driver, base, store, pid, shots) -> None:
    with step("tool cases: generate", driver, shots):
        open_page(driver, base, "tool_cases")
        open_tab(driver, "Conversations")
        start_job(driver, "Generate for every situation", store, pid, TOOL_CASES_KIND, 1)
    with step("tool cases: find rubrics with the page's defaults", driver, shots):
        open_page(driver, base, "tool_cases")
        open_tab(driver, "Rubrics")
        start_job(driver, "Find rubrics", store, pid, DISCOVERY_KIND, 1)
    for n in (1, 2):
        with step(f"tool cases: score conversations with the rubrics, run {n}", driver, shots):
            open_page(driver, base, "tool_cases")
            open_tab(driver, "Rubric scores")
            start_job(driver, "Score them", store, pid, SCORING_KIND, n)
    with step("tool cases: compare the two runs on Results", driver, shots):
        compare_two_runs(driver, base, store, "tool cases", two_runs(store, pid, SCORING_KIND))
