"""A team's load (issue 16): 20 annotators saving reviews while two workers run a generation job and a run.

Run: .venv/bin/python benchmarks/team_load.py [--annotators 20] [--conversations 200] [--overlap 2]
     [--per-spec 30] [--think 0.1] [--postgres]

One store (a SQLite file with its queue beside it, or with --postgres a throwaway PostgreSQL database from
tests/pg.py holding both), the sample project, `conversations` conversations of 3 question/answer pairs,
each assigned to `overlap` of the annotators (`assign_items`, as the Annotate page's lead does). Two
`evalcore worker` processes are started; a doc-QA generation job (offline generator, 10 specs of the
sample, `per_spec` conversations each) and a run of the conversations against the local fake API server
(tests/llm_server.py, 200 ms per reply, judge offline) are queued, a task each and then one more each:
the workers start on one job each, and one whose job ended joins the other, sharing its units by their
claims. Once both jobs have committed a unit, the annotators start: each is a thread of this process (like
the sessions of one dashboard) that does what the Annotate page does, through the same functions: the next
conversation of its "needs my review" queue (`next_item`), opened (`open_item`), every turn and the whole
conversation accepted (`save_review` on the version opened), a pause of `think` seconds; a save refused
because someone else saved in between is reopened and saved again, as the page's "Reload" does.

Printed: saves expected (assignments) and saved (an annotator's verdict on a conversation in the store),
refused-then-retried saves, p50/p95/max save latency, whether the jobs were still working during the load;
for each job its units and how many were done twice (0 expected: every doc-QA unit made one conversation,
every turn of the run judged once, no model call on the fake server repeated); wall time and the CPU time
of the annotators (this process) and of the workers (their processes, reaped).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from llm_server import LLMServer  # noqa: E402
from test_runs_support import conversation  # noqa: E402

from evalcore.errors import StaleVersionError  # noqa: E402
from evalcore.generators.doc_qa.job import RUN_KIND as DOC_QA  # noqa: E402
from evalcore.generators.doc_qa.job import start_run  # noqa: E402
from evalcore.inputs import import_project  # noqa: E402
from evalcore.items.store_ops import add_conversation, list_conversations  # noqa: E402
from evalcore.jobs import progress  # noqa: E402
from evalcore.jobs.queue import enqueue, open_queue  # noqa: E402
from evalcore.models import RunStatus, Target  # noqa: E402
from evalcore.review.assignments import assign_items  # noqa: E402
from evalcore.review.queue import QueueFilter, next_item  # noqa: E402
from evalcore.review.verdicts import ItemVerdict, TurnVerdict, save_review  # noqa: E402
from evalcore.review.workitem import open_item  # noqa: E402
from evalcore.runs import create_run  # noqa: E402
from evalcore.runs.store_ops import judgment_rows  # noqa: E402
from evalcore.runs.targets import save_target  # noqa: E402
from evalcore.specs.generation import generate_specs  # noqa: E402
from evalcore.store import Store  # noqa: E402

LATENCY, PAIRS = 0.2, 3
ENDED = (RunStatus.finished, RunStatus.failed, RunStatus.stopped)


def prepare(store: Store, server: LLMServer, args: argparse.Namespace, annotators: list[str]) -> tuple:
    """The project, the conversations to review (assigned), the run and the generation job; (project, ids)."""
    pid = import_project(store, ROOT / "data" / "sample").project_id
    generate_specs(store, pid, m=10, batch=5, from_card=False)
    for i in range(args.conversations):
        qa = [(f"question {j} of conversation {i}?", "an answer", "SINGLE-DOC", []) for j in range(PAIRS)]
        add_conversation(store, pid, conversation(f"load-{i:04d}", None, [], qa))
    assign_items(store, pid, annotators, args.overlap, "lead")
    config = {"base_url": server.openai_base_url, "model": "gpt-4o-mini", "cache": False, "max_tokens": 20}
    save_target(store, pid, Target(name="bot", kind="openai", config=config))
    run_id = create_run(store, pid, "bot", judge="offline", concurrency=4).id
    generation = start_run(store, pid, specs="all", d=2, turns=3, per_spec=args.per_spec, dense=False).id
    return pid, run_id, generation


class Annotator(threading.Thread):
    """One person on the Annotate page: next conversation, open it, accept it, save, think, next."""

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


def wait(until, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def yes(flag: bool) -> str:
    return "yes" if flag else "no"


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def measure(url: str, args: argparse.Namespace) -> None:
    server = LLMServer(latency=LATENCY).start()
    names = [f"annotator{i:02d}" for i in range(args.annotators)]
    store = Store(url)
    pid, run_id, generation = prepare(store, server, args, names)
    expected = args.conversations * args.overlap
    print(f"{store.display_url}: {args.conversations} conversations x {args.overlap} annotators = "
          f"{expected} saves expected from {args.annotators} annotators; 2 workers on a doc-QA job and "
          "a run")  # fmt: skip
    started = time.monotonic()
    processes = workers(url, 2)
    try:
        enqueue(store, generation)  # a task each first, so the two workers start on one job each
        enqueue(store, run_id)
        queue = open_queue(url)
        queue.enqueue(generation)  # then one more each: a worker whose job ended helps with the other
        queue.enqueue(run_id)
        wait(lambda: all(progress(store, store.run(r))[0] > 0 for r in (generation, run_id)), 300,
             "both jobs to commit a unit")  # fmt: skip
        cpu = time.process_time()
        load_start = time.monotonic()
        busy_at_start = [store.run(r).status not in ENDED for r in (generation, run_id)]
        people = [Annotator(store, pid, name, args.think) for name in names]
        for person in people:
            person.start()
        for person in people:
            person.join()
        load_wall, load_cpu = time.monotonic() - load_start, time.process_time() - cpu
        busy = [store.run(r).status not in ENDED for r in (generation, run_id)]
        wait(lambda: all(store.run(r).status in ENDED for r in (generation, run_id)), 600, "the jobs to end")
        wall = time.monotonic() - started
        ended = {r: store.run(r) for r in (generation, run_id)}
    finally:
        stop(processes)
        server.stop()
    errors = [p.error for p in people if p.error is not None]
    if errors:
        raise SystemExit(f"{len(errors)} annotator(s) failed: {errors[0]!r}")

    verdicts = Counter(
        a.author
        for item_id in {i for p in people for i in p.saved}
        for a in store.annotations(item_id)
        if a.turn_index is None and a.author in names
    )
    saved = sum(verdicts.values())
    latencies = [s * 1000 for p in people for s in p.latencies]
    print(f"saves: {saved} of {expected} in the store ({expected - saved} lost), "
          f"{sum(p.refused for p in people)} refused as stale and saved again after a reload")  # fmt: skip
    print(f"save latency: p50 {percentile(latencies, 50):.0f} ms, p95 {percentile(latencies, 95):.0f} ms, "
          f"max {max(latencies):.0f} ms over {len(latencies)} saves; load {load_wall:.1f} s wall, "
          f"{load_cpu:.1f} s CPU (annotators' process); jobs working at its start and end: generation "
          f"{yes(busy_at_start[0])}/{yes(busy[0])}, run {yes(busy_at_start[1])}/{yes(busy[1])}")  # fmt: skip

    run = ended[run_id]
    turns = Counter((row[1], row[3]) for row in judgment_rows(store, run_id))
    asked = Counter(c.body["messages"][-1]["content"] for c in server.completed("openai"))
    print(f"run {run.status.value}: {len(turns)} turns judged, {sum(n - 1 for n in turns.values())} twice; "
          f"{sum(asked.values())} model calls, {sum(n - 1 for n in asked.values())} repeated")  # fmt: skip
    job = ended[generation]
    units = [u for u in store.finished_units(generation).values() if u["status"] == "done"]
    made = [
        c
        for c in list_conversations(store, pid, generator="doc_qa")
        if c.conversation.provenance.run_id == generation
    ]
    print(f"generation {job.status.value} ({DOC_QA}): {len(units)} units done, {len(made)} conversations "
          f"made, {len(made) - len(units)} made twice")  # fmt: skip
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"wall {wall:.1f} s from the workers' start; CPU {time.process_time():.1f} s this process, "
          f"{children.ru_utime + children.ru_stime:.1f} s the workers")  # fmt: skip
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--overlap", type=int, default=2, help="annotators per conversation")
    parser.add_argument("--per-spec", type=int, default=30, help="doc-QA conversations per spec (10 specs)")
    parser.add_argument("--think", type=float, default=0.1, help="seconds between two saves of one person")
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL (tests/pg.py)")
    args = parser.parse_args()
    if not args.postgres:
        with tempfile.TemporaryDirectory() as folder:
            measure(f"sqlite:///{Path(folder) / 'team.db'}", args)
        return
    from pg import Databases, LocalServer, find_bin_dir

    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise SystemExit("no PostgreSQL binaries found (apt-get install postgresql)")
    server = LocalServer.start(bin_dir)
    databases = Databases(server.url)
    url = databases.create()
    try:
        measure(url, args)
    finally:
        databases.drop(url)
        server.stop()


if __name__ == "__main__":
    main()
