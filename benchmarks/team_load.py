"""A team's load (issue 16): 20 annotators saving reviews while two workers run a generation job and a run.

Run: .venv/bin/python benchmarks/team_load.py [--direct] [--annotators 20] [--conversations N]
     [--unassigned N] [--overlap 2] [--per-spec 30] [--think S] [--postgres | --db URL]

One store (a SQLite file with its queue beside it, or with --postgres a throwaway PostgreSQL database from
tests/pg.py holding both, or --db an empty store of yours), the sample project, `conversations`
conversations of 3 question/answer pairs, each assigned to `overlap` of the annotators (`assign_items`, as
the Annotate page's lead does), and `unassigned` more that only the run plays (so the run lasts as long
in both modes). Two `evalcore worker` processes are started; a doc-QA generation job (offline generator,
10 specs of the sample, `per_spec` conversations each) and a run of every conversation against the local
fake API server (tests/llm_server.py, 200 ms per reply, judge offline) are queued, a task each and then
one more each: the workers start on one job each, and one whose job ended joins the other, sharing its
units by their claims. Once both jobs have committed a unit, the annotators start.

By default (browser mode) the dashboard runs as people use it (`dashboard.py`, i.e. `streamlit run
app.py`, alone on the store: the two workers above are the team's workers) and each annotator is a
separate headless Chromium (its own cookies and Streamlit session) driven by selenium from a thread of
this process: its name in the `evalcore_user` cookie, the Annotate page open (its "Only my assigned, not
yet reviewed" queue; the browsers open it two at a time, before the workers start), then "Review next",
and for each conversation every turn and the whole conversation accepted and "Save & next" pressed; the
save's latency is the click to the page's answer (the toast "Saved <id>" or the next conversation opened,
or the notice that the save was refused), polled every 0.1 s. A save refused because someone else saved
in between is reloaded with the page's "Reload" and saved again, as a person would, and counted. The page
then opens the next conversation of the queue, until it says nothing is left.

With --direct (the library-level baseline) each annotator is a thread of this process calling what the
page calls: `next_item` of "needs my review", `open_item`, `save_review` of every turn and the
conversation on the version opened, a pause of `think` seconds; a refused save is reopened and saved.

Printed, in the same format for both modes: saves expected (assignments) and in the store (each assigned
annotator's verdict on each assigned conversation), refused-then-retried saves, p50/p95/max save latency,
whether the jobs were still working during the load; for each job its units and how many were done twice
(every doc-QA unit made one conversation, every turn of the run judged once, no model call on the fake
server repeated); wall time and CPU time of this process and of the workers, and in browser mode of the
dashboard server and of the browsers. The script exits 1, saying why, when a save is lost, an annotator
failed, a unit was done twice, a model call was repeated or a job did not finish: it is a check.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from browser import IDLE_SCRIPT, chromium, chromium_path, free_port  # noqa: E402
from llm_server import LLMServer  # noqa: E402
from runs_support import conversation  # noqa: E402

from evalcore.errors import StaleVersionError  # noqa: E402
from evalcore.generators.doc_qa.job import RUN_KIND as DOC_QA  # noqa: E402
from evalcore.generators.doc_qa.job import start_run  # noqa: E402
from evalcore.inputs import import_project  # noqa: E402
from evalcore.items.store_ops import add_conversation, list_conversations  # noqa: E402
from evalcore.jobs import progress  # noqa: E402
from evalcore.jobs.queue import enqueue, open_queue  # noqa: E402
from evalcore.models import RunStatus, Target  # noqa: E402
from evalcore.review import save_log  # noqa: E402
from evalcore.review.assignments import assign_items, assignees_of  # noqa: E402
from evalcore.review.queue import QueueFilter, next_item  # noqa: E402
from evalcore.review.verdicts import ItemVerdict, TurnVerdict, save_review  # noqa: E402
from evalcore.review.workitem import open_item  # noqa: E402
from evalcore.runs import create_run  # noqa: E402
from evalcore.runs.store_ops import judgment_rows  # noqa: E402
from evalcore.specs.generation import generate_specs  # noqa: E402
from evalcore.store import Store  # noqa: E402
from evalcore.targets import save_target  # noqa: E402

LATENCY, PAIRS = 0.2, 3
ENDED = (RunStatus.finished, RunStatus.failed, RunStatus.stopped)
USER_COOKIE = "evalcore_user"  # pages/_common.py: the name a browser keeps (importing it starts Streamlit)
WAIT = 60.0  # seconds a browser waits for the page: 20 Chromiums and the server share 2 cores
SHOTS: Path | None = None  # --shots: where a browser that gives up leaves what it showed
SETUP_WAIT = 180.0  # for a browser's first page, while the others start
MAX_RESTARTS = 3  # browsers one annotator may lose to a crash before the benchmark gives up on them
PRESS_AGAIN = 20.0  # seconds without an answer, and without the server seeing the save, before pressing again


def prepare(store: Store, server: LLMServer, args: argparse.Namespace, annotators: list[str]) -> tuple:
    """The project, the conversations to review (assigned) and those only the run plays, the run and the
    generation job; (project, run, generation, assigned conversation ids)."""
    pid = import_project(store, ROOT / "data" / "sample").project_id
    generate_specs(store, pid, m=10, batch=5, from_card=False)

    def add(i: int) -> str:
        qa = [(f"question {j} of conversation {i}?", "an answer", "SINGLE-DOC", []) for j in range(PAIRS)]
        return add_conversation(store, pid, conversation(f"load-{i:04d}", None, [], qa))

    assigned = [add(i) for i in range(args.conversations)]
    assign_items(store, pid, annotators, args.overlap, "lead")
    for i in range(args.conversations, args.conversations + args.unassigned):
        add(i)
    config = {"base_url": server.openai_base_url, "model": "gpt-4o-mini", "cache": False, "max_tokens": 20}
    save_target(store, pid, Target(name="bot", kind="openai", config=config))
    run_id = create_run(store, pid, "bot", judge="offline", concurrency=4).id
    generation = start_run(store, pid, specs="all", d=2, turns=3, per_spec=args.per_spec, dense=False).id
    return pid, run_id, generation, assigned


class Annotator(threading.Thread):
    """One person on the Annotate page, through its functions: next conversation, open it, accept it,
    save, think, next (the --direct baseline)."""

    def __init__(self, store: Store, project_id: str, name: str, think: float) -> None:
        super().__init__(name=f"annotator-{name}")
        self.store, self.project_id, self.who, self.think = store, project_id, name, think
        self.latencies: list[float] = []
        self.saved: list[str] = []
        self.refused = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            queue = QueueFilter(needs_review_by=self.who)
            while (item_id := next_item(self.store, self.project_id, queue)) is not None:
                view = open_item(self.store, item_id, self.who)
                turns = [TurnVerdict(turn_index=t.index, label="accept") for t in view.conversation.turns
                         if t.role.value == "assistant"]  # fmt: skip
                started = time.perf_counter()
                try:
                    save_review(
                        self.store, item_id, self.who, view.version, turns, ItemVerdict(label="accept")
                    )
                except StaleVersionError:  # someone saved in between: reload and save again
                    self.refused += 1
                    continue
                finally:
                    self.latencies.append(time.perf_counter() - started)
                self.saved.append(item_id)
                time.sleep(self.think)
        except BaseException as e:  # reported by the main thread: a lost annotator is a failed benchmark
            self.error = e


def tree_cpu(pid: int) -> float:
    """User + system CPU seconds of a live process and all its descendants, each with its reaped children
    (from /proc: Chromium's renderers and chromedriver's browser are not this process's children, so
    RUSAGE_CHILDREN would miss whatever they do not reap before they are killed)."""
    parents, times = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended while we looked
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    tree, grown = {pid}, True
    while grown:
        more = {p for p, parent in parents.items() if parent in tree} - tree
        tree |= more
        grown = bool(more)
    return sum(times.get(p, 0) for p in tree) / os.sysconf("SC_CLK_TCK")


def settle(driver, condition: Callable, what: str, seconds: float | None = None, final: bool = True):
    """Wait for `condition(driver)` to be truthy and return it; a rerun redraws the page under the
    condition, so an element gone stale means "not yet". A wait that is not `final` (the browser will try
    again) leaves no screenshot."""
    from selenium.common.exceptions import (
        NoSuchElementException,
        StaleElementReferenceException,
        TimeoutException,
    )
    from selenium.webdriver.support.ui import WebDriverWait

    ignored = (NoSuchElementException, StaleElementReferenceException)
    seconds = WAIT if seconds is None else seconds  # read when called: --wait sets it
    try:
        return WebDriverWait(driver, seconds, poll_frequency=0.1, ignored_exceptions=ignored).until(condition)
    except TimeoutException:
        if SHOTS is not None and final:  # what the person would have seen when they gave up
            stem = f"stuck-{time.time():.3f}"
            driver.save_screenshot(str(SHOTS / f"{stem}.png"))
            page = driver.current_url + "\n" + driver.page_source
            (SHOTS / f"{stem}.html.txt").write_text(page, encoding="utf-8")
            console = "\n".join(str(entry) for entry in driver.get_log("browser"))  # e.g. a dropped socket
            (SHOTS / f"{stem}.console.txt").write_text(console, encoding="utf-8")
        raise TimeoutError(
            f"gave up after {seconds:.0f} s waiting for {what} at {driver.current_url}"
        ) from None


def button(scope, label: str):
    """The button whose text starts with `label` (an icon's name before it is not part of its text; a
    label's key shown after its words, "Accept 1", is not either)."""
    from selenium.webdriver.common.by import By

    return scope.find_element(By.XPATH, f".//button[.//p[starts-with(normalize-space(.), '{label}')]]")


def press(driver, element) -> None:
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    element.click()


class BrowserAnnotator(threading.Thread):
    """One person in their own headless Chromium on the dashboard's Annotate page: their name in the
    browser's cookie, their queue open, then Review next; each conversation accepted turn by turn and as a
    whole and saved with "Save & next", until the page says nothing is left."""

    def __init__(
        self,
        base: str,
        name: str,
        go: threading.Event,
        starting: threading.Semaphore,
        think: float,
        saves: Path | None = None,
    ) -> None:
        super().__init__(name=f"browser-{name}")
        self.base, self.who, self.go, self.starting, self.think = base, name, go, starting, think
        self.saves = saves  # the server's log of saves: did a press reach it?
        self.ready = threading.Event()
        self.latencies: list[float] = []
        self.saved: list[str] = []
        self.refused = 0
        self.restarts = 0  # browsers that crashed and were replaced
        self.again = 0  # saves pressed again because the first press never reached the server
        self.reclicked = 0  # labels clicked again because the page did not show the first click
        self.busy = 0  # saves pressed again because the page said the store was too busy to take them
        self.cpu = 0.0
        self.error: BaseException | None = None

    def run(self) -> None:
        from selenium.common.exceptions import WebDriverException

        try:
            while True:
                try:
                    self.session()
                    return
                except WebDriverException:
                    # the browser (or its driver) crashed: a person opens a new one and goes on; the
                    # saves it made are in the store, so the queue shows only what is left
                    self.restarts += 1
                    if self.restarts > MAX_RESTARTS:
                        raise
        except BaseException as e:  # reported by the main thread: a lost annotator is a failed benchmark
            self.error = e
        finally:
            self.ready.set()  # a browser that failed must not keep the others waiting

    def session(self) -> None:
        with chromium() as driver:
            try:
                if not self.ready.is_set():
                    with self.starting:  # a few at a time: 20 browsers opening at once on 2 cores time out
                        self.open_queue(driver)
                    self.ready.set()
                else:
                    self.open_queue(driver)
                self.go.wait()
                self.review_all(driver)
            finally:
                self.cpu += tree_cpu(driver.service.process.pid)

    def open_queue(self, driver) -> None:
        """The name given once (a cookie of the host, as the page keeps it), the Annotate page loaded."""
        driver.get(self.base + "/_stcore/health")  # a page of the host, to set its cookie on
        driver.add_cookie({"name": USER_COOKIE, "value": self.who, "path": "/"})
        driver.set_page_load_timeout(SETUP_WAIT)
        driver.get(self.base + "/annotate")
        settle(driver, lambda d: button(d, "Review next").is_enabled(), "the Annotate page", SETUP_WAIT)

    def review_all(self, driver) -> None:
        while True:
            where, item = settle(driver, self.where, "a conversation or the queue")
            if where == "done":
                return
            if where == "queue":
                press(driver, button(driver, "Review next"))
                settle(driver, lambda d: "item=" in d.current_url, "Review next to open a conversation")
                continue
            self.review(driver, item)
            time.sleep(self.think)

    def where(self, driver) -> tuple[str, str | None] | bool:
        """What the page shows once drawn: ("item", id) a conversation not yet reviewed here with its
        form, ("queue", None) conversations to review, ("done", None) none; False while it is drawing."""
        from selenium.webdriver.common.by import By

        item = (parse_qs(urlparse(driver.current_url).query).get("item") or [None])[0]
        if item is None:
            found = driver.find_elements(
                By.XPATH, "//*[starts-with(normalize-space(.), 'Nothing to review')]"
            )
            if found:
                return "done", None
            return ("queue", None) if button(driver, "Review next").is_enabled() else False
        if item in self.saved:
            return False
        groups = driver.find_elements(By.CSS_SELECTOR, "[data-testid='stForm'] [data-testid='stButtonGroup']")
        # The last conversation's form stays on screen until the new one replaces it: its marks say so.
        marked = driver.find_elements(By.CSS_SELECTOR, "[data-testid='stForm'] button[aria-checked='true']")
        return ("item", item) if len(groups) == PAIRS + 1 and not marked else False  # turns, whole

    def review(self, driver, item: str) -> None:
        """Accept every turn and the whole conversation, then save until the page confirms it."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By

        # A label clicked while the page reruns is lost: click once the page is idle.
        settle(driver, lambda d: d.execute_script(IDLE_SCRIPT), "the page to be idle")
        started = time.perf_counter()
        while True:
            groups = driver.find_elements(
                By.CSS_SELECTOR, "[data-testid='stForm'] [data-testid='stButtonGroup']"
            )
            try:
                for group in groups[: PAIRS + 1]:  # the turns, then the whole conversation's verdict
                    if not group.find_elements(By.CSS_SELECTOR, "button[aria-checked='true']"):
                        press(driver, button(group, "Accept"))
            except StaleElementReferenceException:
                pass  # redrawn under the click: the marks tell what is left to click
            left = WAIT - (time.perf_counter() - started)
            try:
                settle(
                    driver,
                    lambda d: len(self.marks(d)) == PAIRS + 1,
                    "the marks to show",
                    max(1.0, min(left, PRESS_AGAIN)),
                    final=left <= PRESS_AGAIN,
                )
                break
            except TimeoutError:
                if left <= PRESS_AGAIN:
                    raise
                self.reclicked += 1  # as a person would: a label that did not show is clicked again
        while True:
            press(driver, button(driver, "Save & next"))
            started, pressed = time.perf_counter(), time.time()
            answer = self.await_answer(driver, item, started, pressed)
            self.latencies.append(time.perf_counter() - started)
            if answer == "saved":
                self.saved.append(item)
                return
            if answer == "busy":  # the page said the store was too busy and nothing was saved: again
                self.busy += 1
                settle(driver, lambda d: d.execute_script(IDLE_SCRIPT), "the page to be idle")
                continue
            self.refused += 1  # someone saved in between: Reload, then save the same choices again
            press(driver, button(driver, "Reload"))
            settle(
                driver,
                lambda d: not self.refusal(d) and len(self.marks(d)) == PAIRS + 1,
                "the reload to keep the choices",
            )

    def await_answer(self, driver, item: str, started: float, pressed: float) -> str:
        """The page's answer to a save; a press the server never saw (its log has no arrival of this
        person's save of `item` since the press) is pressed again after PRESS_AGAIN seconds."""
        while True:
            left = WAIT - (time.perf_counter() - started)
            try:
                return settle(
                    driver, lambda d: self.answer(d, item, pressed), f"the page's answer to saving {item}",
                    max(1.0, min(left, PRESS_AGAIN)), final=left <= PRESS_AGAIN,
                )  # fmt: skip
            except TimeoutError:
                if left <= PRESS_AGAIN:
                    raise
                if self.saves is None or self.arrived(item, pressed):
                    continue  # the server has it: wait for its answer
                self.again += 1
                press(driver, button(driver, "Save & next"))

    def arrived(self, item: str, since: float) -> bool:
        """Whether the server logged this person's save of `item` after `since`."""
        return any(
            s.get("item") == item and s.get("author") == self.who and s.get("arrive", 0) >= since
            for s in save_log.read(self.saves).values()
        )

    @staticmethod
    def marks(driver) -> list:
        from selenium.webdriver.common.by import By

        return driver.find_elements(By.CSS_SELECTOR, "[data-testid='stForm'] button[aria-checked='true']")

    @staticmethod
    def refusal(driver) -> list:
        from selenium.webdriver.common.by import By

        return driver.find_elements(By.XPATH, "//*[contains(text(), 'your save was refused')]")

    def answer(self, driver, item: str, pressed: float) -> str | None:
        """'saved' once the page confirms the save (its toast, or the next conversation or the queue
        opened: the toast lasts 4 s, less than a loaded machine may take to poll), 'refused' once it says
        the save was refused, 'busy' once it says the store was too busy to take it (the server's log
        tells that notice from one left by an earlier press)."""
        from selenium.webdriver.common.by import By

        if (parse_qs(urlparse(driver.current_url).query).get("item") or [None])[0] != item:
            return "saved"
        for toast in driver.find_elements(By.CSS_SELECTOR, "[data-testid='stToast']"):
            if f"Saved {item}:" in toast.text:
                return "saved"
        if self.refusal(driver):
            return "refused"
        if self.saves is not None and driver.find_elements(By.XPATH, "//*[contains(text(), 'too busy')]"):
            mine = [s for s in save_log.read(self.saves).values() if s.get("author") == self.who]
            if any(s.get("item") == item and s.get("arrive", 0) >= pressed and "error" in s for s in mine):
                return "busy"
        return None


def dashboard(url: str, log: Path, saves: Path) -> tuple[subprocess.Popen, str]:
    """`dashboard.py` (streamlit run app.py) alone on the store on a free port, once it answers; with
    its base URL. It records each save's arrival, commit and answer in `saves` (server time)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("EVALCORE_OFFLINE", "EVALCORE_QUEUE_URL")}
    env["EVALCORE_DATABASE_URL"] = url
    env[save_log.ENV] = str(saves)
    # No file watcher: when a source file changes, Streamlit drops its modules from sys.modules, and the
    # sessions importing them at that moment fail (KeyError: 'evalcore.items'); a deployed server does
    # not watch either. Its log goes to a file: a pipe nobody reads would block the server once full.
    command = [
        sys.executable, "dashboard.py", "--server.address", "127.0.0.1", "--server.port", str(port),
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        try:
            with urllib.request.urlopen(base + "/_stcore/health", timeout=2) as response:
                return response.status == 200
        except OSError:
            if process.poll() is not None:
                raise SystemExit("the dashboard ended: " + log.read_text(errors="replace")[-2000:]) from None
            return False

    wait(answers, 120, "the dashboard to start")
    return process, base


def workers(url: str, n: int) -> list[subprocess.Popen]:
    env = {k: v for k, v in os.environ.items() if k not in ("EVALCORE_OFFLINE", "EVALCORE_QUEUE_URL")}
    env["PYTHONPATH"] = str(ROOT)
    command = [sys.executable, "-m", "evalcore", "worker", "--db", url, "--workers", "1"]
    return [subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True, stderr=subprocess.DEVNULL)
            for _ in range(n)]  # fmt: skip


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        process.wait(timeout=60)


def wait(until: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def children_cpu() -> float:
    """CPU seconds of this process's reaped children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def yes(flag: bool) -> str:
    return "yes" if flag else "no"


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def server_side(saves: dict[str, dict], people: list) -> list[str]:
    """The server's record of the saves, printed beside the browsers' wait; a save that arrived and was
    never answered, or a save the browser saw answered that never arrived, is a problem."""
    arrived = [s for s in saves.values() if "arrive" in s]
    answered = [s for s in arrived if {"reply", "refused", "error"} & s.keys()]
    unanswered = [s for s in arrived if s not in answered]
    commit = [1000 * (s["commit"] - s["arrive"]) for s in arrived if "commit" in s]
    reply = [1000 * (s["reply"] - s["arrive"]) for s in arrived if "reply" in s]
    clicks = sum(len(p.latencies) for p in people)
    print(f"server: {len(arrived)} saves arrived ({clicks} clicks answered in the browsers), "
          f"{sum('commit' in s for s in arrived)} committed, {sum('refused' in s for s in arrived)} refused "
          f"as stale, {sum('duplicate' in s for s in arrived)} second presses of a saved form, "
          f"{sum('error' in s for s in arrived)} errors, {len(unanswered)} unanswered")  # fmt: skip
    for name, values in (("arrival to commit", commit), ("arrival to answer", reply)):
        if values:
            print(f"server-side save latency, {name}: p50 {percentile(values, 50):.0f} ms, "
                  f"p95 {percentile(values, 95):.0f} ms, max {max(values):.0f} ms")  # fmt: skip
    restarts = sum(p.restarts for p in people)
    print(f"browsers restarted after a crash: {restarts}; saves pressed again after no answer: "
          f"{sum(p.again for p in people)}; labels clicked again that did not show: "
          f"{sum(p.reclicked for p in people)}; saves pressed again after the page said the store was too "
          f"busy: {sum(p.busy for p in people)}")  # fmt: skip
    return [f"{len(unanswered)} save(s) arrived at the server and were never answered"] if unanswered else []


def stuck(saves: dict[str, dict], failed: list) -> None:
    """For each annotator who gave up: their last save as the server recorded it (arrived, committed or
    refused, answered), and whether their browser had seen it answered: a save answered on the server
    that the browser never saw answered points at the page or the browser, one never answered at the
    server."""
    for person in failed:
        mine = sorted((s for s in saves.values() if s.get("author") == person.who), key=lambda s: s["arrive"])
        if not mine:
            print(f"{person.who}: no save of theirs reached the server; saved in the browser: {person.saved}")
            continue
        last = mine[-1]
        phases = ", ".join(
            f"{phase} +{1000 * (last[phase] - last['arrive']):.0f} ms"
            for phase in ("commit", "refused", "error", "reply")
            if phase in last
        )
        seen = "answered in the browser" if last.get("item") in person.saved else "not seen answered"
        print(f"{person.who}: {len(mine)} save(s) at the server; the last, of {last.get('item')}: "
              f"arrived{', ' + phases if phases else ' and nothing after'}; {seen}")  # fmt: skip


def measure(url: str, args: argparse.Namespace) -> list[str]:
    """Run the load on the empty store at `url`, print its figures; the problems found (none expected)."""
    server = LLMServer(latency=LATENCY).start()
    names = [f"annotator{i:02d}" for i in range(args.annotators)]
    store = Store(url)
    pid, run_id, generation, assigned = prepare(store, server, args, names)
    expected = args.conversations * args.overlap
    mode = "browser mode: a headless Chromium each on the dashboard" if not args.direct else "direct mode"
    print(f"{store.display_url}: {args.conversations} conversations x {args.overlap} annotators = "
          f"{expected} saves expected from {args.annotators} annotators ({mode}); 2 workers on a doc-QA job "
          f"and a run of {args.conversations + args.unassigned} conversations")  # fmt: skip
    go = threading.Event()
    site, people, processes, cpu = None, [], [], {}
    saves_log = None
    with tempfile.TemporaryDirectory() as folder:
        try:
            if not args.direct:
                saves_log = Path(folder) / "saves.jsonl"
                site, base = dashboard(url, Path(folder) / "dashboard.log", saves_log)
                starting = threading.BoundedSemaphore(2)
                people = [BrowserAnnotator(base, name, go, starting, args.think, saves_log) for name in names]
                for person in people:
                    person.start()
                for person in people:
                    person.ready.wait()
            started = time.monotonic()
            processes = workers(url, 2)
            enqueue(store, generation)  # a task each first, so the two workers start on one job each
            enqueue(store, run_id)
            queue = open_queue(url)
            queue.enqueue(generation)  # then one more each: a worker whose job ended helps with the other
            queue.enqueue(run_id)
            wait(lambda: all(progress(store, store.run(r))[0] > 0 for r in (generation, run_id)), 300,
                 "both jobs to commit a unit")  # fmt: skip
            load_cpu, load_start = time.process_time(), time.monotonic()
            busy_at_start = [store.run(r).status not in ENDED for r in (generation, run_id)]
            if args.direct:
                people = [Annotator(store, pid, name, args.think) for name in names]
                for person in people:
                    person.start()
            go.set()
            for person in people:
                person.join()
            load_wall, load_cpu = time.monotonic() - load_start, time.process_time() - load_cpu
            busy = [store.run(r).status not in ENDED for r in (generation, run_id)]
            wait(
                lambda: all(store.run(r).status in ENDED for r in (generation, run_id)),
                600,
                "the jobs to end",
            )
            wall = time.monotonic() - started
            ended = {r: store.run(r) for r in (generation, run_id)}
            server_saves = save_log.read(saves_log) if not args.direct else {}
        finally:
            go.set()  # browsers still waiting to start give up with the rest
            if site is not None:
                cpu["the dashboard server"] = tree_cpu(site.pid)
                site.terminate()
                site.wait(timeout=60)
            before = children_cpu()  # the workers alone: the server and the chromedrivers are reaped
            stop(processes)
            cpu = {"the workers": children_cpu() - before, **cpu}
            server.stop()
            if SHOTS is not None and not args.direct:  # the server's side of what the browsers showed
                for kept in ("dashboard.log", "saves.jsonl"):
                    if (Path(folder) / kept).exists():
                        shutil.copy(Path(folder) / kept, SHOTS / kept)
    errors = [f"{p.who}: {type(p.error).__name__} {p.error}".strip() for p in people if p.error is not None]
    if errors:
        if not args.direct:  # the server's record says whether a save hung or the page did
            server_side(server_saves, people)
            stuck(server_saves, [p for p in people if p.error is not None])
        return [f"{len(errors)} annotator(s) failed, e.g. {errors[0]}"]
    problems = []

    verdicts = {
        item: {a.author for a in store.annotations(item) if a.turn_index is None} for item in assigned
    }
    lost = [
        (item, who) for item in assigned for who in assignees_of(store, item) if who not in verdicts[item]
    ]
    saved = expected - len(lost)
    if lost or saved != sum(len(p.saved) for p in people):
        problems.append(f"{len(lost)} save(s) lost, e.g. {lost[:3]}; the annotators confirmed "
                        f"{sum(len(p.saved) for p in people)}")  # fmt: skip
    latencies = [s * 1000 for p in people for s in p.latencies]
    print(f"saves: {saved} of {expected} in the store ({len(lost)} lost), "
          f"{sum(p.refused for p in people)} refused as stale and saved again after a reload")  # fmt: skip
    print(f"save latency: p50 {percentile(latencies, 50):.0f} ms, p95 {percentile(latencies, 95):.0f} ms, "
          f"max {max(latencies):.0f} ms over {len(latencies)} saves; load {load_wall:.1f} s wall, "
          f"{load_cpu:.1f} s CPU (this process); jobs working at its start and end: generation "
          f"{yes(busy_at_start[0])}/{yes(busy[0])}, run {yes(busy_at_start[1])}/{yes(busy[1])}")  # fmt: skip

    if not args.direct:
        problems += server_side(server_saves, people)
    run = ended[run_id]
    turns = Counter((row[1], row[3]) for row in judgment_rows(store, run_id))
    asked = Counter(c.body["messages"][-1]["content"] for c in server.completed("openai"))
    twice, repeated = sum(n - 1 for n in turns.values()), sum(n - 1 for n in asked.values())
    print(f"run {run.status.value}: {len(turns)} turns judged, {twice} twice; "
          f"{sum(asked.values())} model calls, {repeated} repeated")  # fmt: skip
    job = ended[generation]
    done = [u for u in store.finished_units(generation).values() if u["status"] == "done"]
    # A unit whose conversation could only repeat the run's questions is done and makes none (issue 33).
    units = [u for u in done if "left_out" not in (u["result"] or {})]
    made = [
        c
        for c in list_conversations(store, pid, generator="doc_qa")
        if c.conversation.provenance.run_id == generation
    ]
    print(f"generation {job.status.value} ({DOC_QA}): {len(done)} units done ({len(done) - len(units)} left "
          f"out: they could only repeat), {len(made)} conversations made, {len(made) - len(units)} made "
          "twice")  # fmt: skip
    if not args.direct:
        cpu[f"the {len(people)} browsers"] = sum(p.cpu for p in people)
    print(
        f"wall {wall:.1f} s from the workers' start; CPU {time.process_time():.1f} s this process, "
        + ", ".join(f"{seconds:.1f} s {who}" for who, seconds in cpu.items())
    )
    if twice or len(made) != len(units):
        problems.append(f"units done twice: {twice} turns judged twice, {len(made) - len(units)} doc-QA "
                        "conversations made twice")  # fmt: skip
    if repeated:
        problems.append(f"{repeated} model call(s) repeated on the fake server")
    if run.status != RunStatus.finished or job.status != RunStatus.finished:
        problems.append(f"a job did not finish: run {run.status.value}, generation {job.status.value}")
    store.close()
    return problems


def main() -> None:
    global WAIT, SHOTS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--direct", action="store_true", help="threads calling the page's functions")
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--conversations", type=int, help="assigned (default 40, --direct 200)")
    parser.add_argument("--unassigned", type=int, help="played by the run only (default 160, --direct 0)")
    parser.add_argument("--overlap", type=int, default=2, help="annotators per conversation")
    parser.add_argument("--per-spec", type=int, default=30, help="doc-QA conversations per spec (10 specs)")
    parser.add_argument("--think", type=float, default=0.1, help="seconds between two saves of one person")
    parser.add_argument("--wait", type=float, default=WAIT, help="seconds a browser waits for the page")
    parser.add_argument(
        "--shots", type=Path, help="keep what a browser that gave up showed, and the server log, here"
    )
    backend = parser.add_mutually_exclusive_group()
    backend.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL (tests/pg.py)")
    backend.add_argument("--db", help="the URL of an empty store to use")
    args = parser.parse_args()
    WAIT = args.wait
    if args.shots is not None:
        args.shots.mkdir(parents=True, exist_ok=True)
        SHOTS = args.shots
    # A browser's save costs the server a page run: ~4 saves per person in the browser; the run has 200
    # conversations in both modes.
    if args.conversations is None:
        args.conversations = 200 if args.direct else 40
    if args.unassigned is None:
        args.unassigned = max(0, 200 - args.conversations)
    if not args.direct and chromium_path() is None:
        raise SystemExit("browser mode needs Debian's chromium and chromium-driver (scripts/setup.sh --test)")
    problems = run(args)
    for problem in problems:
        print("FAILED:", problem)
    sys.exit(1 if problems else 0)


def run(args: argparse.Namespace) -> list[str]:
    """The load on the store the arguments choose (a temporary SQLite file by default)."""
    if args.db:
        return measure(args.db, args)
    if not args.postgres:
        with tempfile.TemporaryDirectory() as folder:
            return measure(f"sqlite:///{Path(folder) / 'team.db'}", args)
    from pg import Databases, LocalServer, find_bin_dir

    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise SystemExit("no PostgreSQL binaries found (apt-get install postgresql)")
    server = LocalServer.start(bin_dir)
    databases = Databases(server.url)
    url = databases.create()
    try:
        return measure(url, args)
    finally:
        databases.drop(url)
        server.stop()


if __name__ == "__main__":
    main()
