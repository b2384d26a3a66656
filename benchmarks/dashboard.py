"""The dashboard at a team's scale (issue 15): every page's cold and warm render time, and the CLI's start.

Run: .venv/bin/python benchmarks/dashboard.py   (~4 min; --store DIR keeps the store, e.g. to serve it)

1. Builds a SQLite store holding the sample project at 5,000 specs, 2,000 doc-QA conversations and 100,000
   judgments. The content is real pipeline output, multiplied: offline spec generation, then copies of
   those specs (each a new spec, its scenario numbered) up to 5,000; the latest selection (k = 30); offline
   doc-QA conversations of the selected specs, then copies spread over other specs up to 2,000, 10% of
   them annotated; one offline run of the demo target, then runs whose judgments copy its turns over the
   2,000 conversations up to 100,000; then the diversity map job as a worker runs it (UMAP of every
   spec, about a minute). Copies go in through the store's tables in batches, not one generator call
   each, so the store builds in about two minutes.
2. Renders each page with Streamlit's AppTest (app.py, then the page switched, as tests/test_page_*.py
   do): cold is the page's first render in this process (its Streamlit caches empty; Home's includes
   importing the pages' libraries), warm the median of the next renders of the same session. Wall and
   CPU time of this process are printed side by side: the machine may be shared, and load inflates wall
   time, hardly CPU time.
   Goals: every page < 1 s warm, Diversity and coverage < 2 s warm.
3. The CLI's start (benchmarks/cli_start.py) on the same store: `--help` < 0.5 s, `status` < 1 s.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import sqlalchemy as sa  # noqa: E402
from cli_start import GOALS as CLI_GOALS  # noqa: E402
from cli_start import measure as measure_cli  # noqa: E402

from evalcore.store import DATABASE_URL_ENV, Store  # noqa: E402
from evalcore.store import schema as t  # noqa: E402

PROJECT = "ridgeline_support"
HOME = "pages/home.py"
CONVERSATIONS = "pages/conversations.py"
PAGES = {
    HOME: 1.0,
    "pages/settings.py": 1.0,
    "pages/specs.py": 1.0,
    "pages/diversity.py": 2.0,
    "pages/conversations.py": 1.0,
    "pages/annotate.py": 1.0,
    "pages/agreement.py": 1.0,
    "pages/tool_cases.py": 1.0,
    "pages/procedures.py": 1.0,
    "pages/runs.py": 1.0,
    "pages/reports.py": 1.0,
    "pages/simulations.py": 1.0,
    "pages/scenarios.py": 1.0,
}
BATCH = 2000


class Clock:
    """Wall and CPU seconds of a block (CPU: this process, every thread)."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *_: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def _step(label: str, action: Callable[[], object]) -> object:
    with Clock() as clock:
        result = action()
    print(f"   {label:<58} {clock.wall:6.1f} s wall {clock.cpu:6.1f} s cpu", flush=True)
    return result


def _copy_specs(store: Store, n: int) -> None:
    """Copies of the generated specs (each a new spec, scenario numbered) until the project has n."""
    from evalcore.specs.drafts import SpecDraft
    from evalcore.specs.store_ops import add_specs, list_specs

    views = list_specs(store, PROJECT)
    drafts = []
    for i in range(n - len(views)):
        spec = views[i % len(views)].spec
        drafts.append(SpecDraft(scenario=f"{spec.scenario} (copy {i // len(views) + 1})", given=spec.given,
                                when=spec.when, then=spec.then, category=spec.category,
                                documents=spec.documents))  # fmt: skip
    provenance = views[0].spec.provenance
    for start in range(0, len(drafts), BATCH):
        with store.write() as conn:
            add_specs(store, PROJECT, drafts[start : start + BATCH], provenance, conn=conn)


def _copy_conversations(store: Store, n: int, seed: int = 0) -> list[str]:
    """Copies of the generated conversations, each given to another spec, until the project has n; 10%
    of all of them annotated (accepted or rejected). Returns every conversation id."""
    from evalcore.items.state import refresh_states
    from evalcore.items.store_ops import list_conversations
    from evalcore.models import Annotation
    from evalcore.specs.store_ops import list_specs

    rng = random.Random(seed)
    originals = [v.conversation for v in list_conversations(store, PROJECT)]
    spec_ids = [v.spec.id for v in list_specs(store, PROJECT)]
    ids = [c.id for c in originals]
    with store.write() as conn:
        for i in range(n - len(originals)):
            body = originals[i % len(originals)].model_dump(mode="json")
            new_id = f"{body['id']}-copy{i}"
            spec_id = spec_ids[(7 * i) % len(spec_ids)]
            store.add_item(PROJECT, "conversation", {**body, "id": new_id, "spec_id": spec_id}, "offline",
                           item_id=new_id, generator=body.get("generator") or "doc_qa", spec_id=spec_id,
                           conn=conn)  # fmt: skip
            ids.append(new_id)
        for cid in ids[::10]:
            label = "accept" if rng.random() < 0.7 else "reject"
            verdict = Annotation(item_kind="conversation", item_id=cid, label=label, author="ann")
            store.annotate(cid, [verdict], "ann", 1, conn=conn)
    refresh_states(store, PROJECT)
    return ids


def _copy_runs(store: Store, template_run: str, conversations: list[str], n: int) -> None:
    """Runs whose judgments copy the template run's turns over every conversation, until the store holds
    n judgments: each run a finished run of the demo target with its units recorded (its progress)."""
    from evalcore.models import Run, RunStatus
    from evalcore.models.common import now_utc

    j, u = t.judgments, t.run_units
    with store.read() as conn:
        turns = [dict(r._mapping) for r in conn.execute(sa.select(j).where(j.c.run_id == template_run))]
        have = conn.scalar(sa.select(sa.func.count()).select_from(j))
    template = store.run(template_run)
    by_conversation: dict[str, list[dict]] = {}
    for turn in turns:
        by_conversation.setdefault(turn["conversation_id"], []).append(turn)
    shapes = list(by_conversation.values())
    per_run = len(conversations) * statistics.mean(len(s) for s in shapes)
    runs = max(1, round((n - have) / per_run))
    stamp = now_utc()
    left = n - have
    for r in range(runs):
        run_id = f"run-bench-{r + 1}"
        keys = []
        rows, units = [], []
        for c, cid in enumerate(conversations):
            for turn in shapes[(c + r) % len(shapes)]:
                if left <= 0:
                    break
                left -= 1
                key = f"{cid}#{turn['turn_index']}"
                keys.append(cid)
                rows.append({**{k: v for k, v in turn.items() if k != "id"}, "run_id": run_id,
                             "conversation_id": cid, "created_at": stamp})  # fmt: skip
                result = {"score": turn["score"]}
                units.append({"run_id": run_id, "unit_key": key, "status": "done", "result": result,
                              "error": None, "finished_at": stamp})  # fmt: skip
        params = {**template.params, "items": list(dict.fromkeys(keys)), "total_turns": len(rows),
                  "progress_total": len(rows)}  # fmt: skip
        run = Run(id=run_id, kind=template.kind, target=template.target, judge=template.judge, params=params,
                  code_version=template.code_version)  # fmt: skip
        store.start_run(PROJECT, run)
        with store.write() as conn:
            for start in range(0, len(rows), BATCH):
                conn.execute(sa.insert(j), rows[start : start + BATCH])
                conn.execute(sa.insert(u), units[start : start + BATCH])
        store.finish_run(run_id, RunStatus.finished)


def build_store(url: str, specs: int = 5000, conversations: int = 2000, judgments: int = 100_000) -> Store:
    """A store at `url` holding the sample project at the given scale (see the module docstring)."""
    from evalcore.generators.doc_qa.job import generate_conversations
    from evalcore.inputs import import_project
    from evalcore.runs import create_run, execute_run
    from evalcore.specs.generation import generate_specs
    from evalcore.specs.selecting import select_specs
    from evalcore.specs.spec_map import compute_map, start_map

    os.environ["EVALCORE_OFFLINE"] = "1"
    store = Store(url)
    print(f"1. building the store: {specs:,} specs, {conversations:,} conversations, {judgments:,} judgments")
    _step("import data/sample", lambda: import_project(store, ROOT / "data" / "sample"))
    _step("generate 200 specs offline", lambda: generate_specs(store, PROJECT, 200))
    _step(f"copy specs up to {specs:,}", lambda: _copy_specs(store, specs))
    _step("select 30 (greedy, embeddings of every spec)", lambda: select_specs(store, PROJECT, 30))
    _step("generate doc-QA conversations offline (2 per selected spec)",
          lambda: generate_conversations(store, PROJECT, specs="selected", per_spec=2, turns=7,
                                         d=[2, 3, 5]))  # fmt: skip
    ids = _step(f"copy conversations up to {conversations:,}, annotate 10%",
                lambda: _copy_conversations(store, conversations))  # fmt: skip
    run = create_run(store, PROJECT, "demo", judge="offline", limit=60)
    _step("one offline run of the demo target (60 conversations)", lambda: execute_run(store, run.id))
    _step(f"copy runs up to {judgments:,} judgments", lambda: _copy_runs(store, run.id, ids, judgments))
    _step("the diversity map job as a worker runs it (UMAP)",
          lambda: compute_map(store, start_map(store, PROJECT).id))  # fmt: skip
    return store


def _quiet() -> None:
    """Silence AppTest's "missing ScriptRunContext" noise: Streamlit gives each of its loggers its own
    level as its module is imported, so the parent's level does not reach them."""
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("streamlit"):
            logging.getLogger(name).setLevel(logging.CRITICAL)


def render_times(url: str, warm_runs: int = 3) -> None:
    """Each page's cold and warm render time with AppTest, against its goal."""
    from streamlit.testing.v1 import AppTest

    os.environ[DATABASE_URL_ENV] = url
    print("2. page renders (AppTest; cold = first render in this process, warm = median of the next)")
    print(f"   {'page':<24} {'cold wall':>9} {'cpu':>6} {'warm wall':>9} {'cpu':>6} {'goal':>5}")
    for page, goal in PAGES.items():
        _quiet()
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        at.session_state["user_name"] = "ana"
        if page != HOME:
            at.run()  # the app opens on Home
        times = []
        for _ in range(warm_runs + 1):
            with Clock() as clock:
                (at if page == HOME else at.switch_page(page)).run()
            times.append((clock.wall, clock.cpu))
            if at.exception:
                print(f"   {page}: {at.exception[0].message}")
                break
        cold, warm = times[0], times[1:] or times
        wall = statistics.median(w for w, _ in warm)
        cpu = statistics.median(c for _, c in warm)
        mark = "" if cpu < goal else "  over the goal"
        print(f"   {Path(page).stem:<24} {cold[0]:>9.2f} {cold[1]:>6.2f} {wall:>9.2f} {cpu:>6.2f} "
              f"{goal:>5.1f}{mark}", flush=True)  # fmt: skip
        if page == CONVERSATIONS:
            _after_an_annotation(url, at)


def _after_an_annotation(url: str, at) -> None:
    """Conversations rendered again after someone annotates one conversation elsewhere: the cached table
    is stale, and only that conversation should be read again."""
    from evalcore.items.store_ops import list_conversations
    from evalcore.models import Annotation

    store = Store(url)
    times = []
    for view in list_conversations(store, PROJECT, limit=3):
        verdict = Annotation(item_kind="conversation", item_id=view.conversation.id, label="accept",
                             author="benchmark")  # fmt: skip
        store.annotate(view.conversation.id, [verdict], "benchmark", view.version)
        with Clock() as clock:
            at.switch_page(CONVERSATIONS).run()
        times.append((clock.wall, clock.cpu))
    wall, cpu = statistics.median(w for w, _ in times), statistics.median(c for _, c in times)
    print(f"   {'  after an annotation':<24} {'':>9} {'':>6} {wall:>9.2f} {cpu:>6.2f} "
          f"{PAGES[CONVERSATIONS]:>5.1f}  (median of 3, each after one new annotation)")  # fmt: skip
    # The same in the library, against the baseline of reading every conversation again.
    from evalcore.generators.doc_qa.browse import conversation_table

    with Clock() as whole:
        table = conversation_table(store, PROJECT)
    view = list_conversations(store, PROJECT, limit=1)[0]
    store.annotate(view.conversation.id, [verdict.model_copy(update={"item_id": view.conversation.id})],
                   "benchmark", view.version)  # fmt: skip
    with Clock() as changed:
        conversation_table(store, PROJECT, previous=table)
    store.close()
    print(f"   conversation table, {len(table):,} rows: read whole {whole.wall:.2f} s wall, {whole.cpu:.2f} s"
          f" cpu; after one annotation {changed.wall:.2f} s wall, {changed.cpu:.2f} s cpu"
          f" ({whole.cpu / max(changed.cpu, 1e-3):.0f}x less cpu)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, help="Build (or reuse) the store here.")
    parser.add_argument("--specs", type=int, default=5000)
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--judgments", type=int, default=100_000)
    parser.add_argument("--warm", type=int, default=3, help="Warm renders per page (median printed).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.store or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{folder.resolve() / 'dashboard.db'}"
        if not (folder / "dashboard.db").exists():
            build_store(url, args.specs, args.conversations, args.judgments).close()
        else:
            print(f"1. reusing the store {url}")
        os.environ.pop("EVALCORE_OFFLINE", None)
        render_times(url, args.warm)
        print("3. CLI start (benchmarks/cli_start.py), median of 3 fresh processes")
        for command, (wall, cpu) in measure_cli(ROOT, {DATABASE_URL_ENV: url}, repeat=3).items():
            print(f"   {command:<10} {wall:>6.2f} s wall {cpu:>6.2f} s cpu   goal {CLI_GOALS[command]:.1f} s")


if __name__ == "__main__":
    main()
