"""The dashboard at a team's scale (issue 15): every page's cold and warm render time, and the CLI's start.

Run: .venv/bin/python benchmarks/dashboard.py   (~4 min; --store DIR keeps the store, e.g. to serve it)

1. Builds a SQLite store holding the sample project at 5,000 specs, 2,000 doc-QA conversations and 100,000
   judgments (benchmarks/team_store.py, shared with benchmarks/browser.py).
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
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from cli_start import GOALS as CLI_GOALS  # noqa: E402
from cli_start import measure as measure_cli  # noqa: E402
from team_store import Clock, store_in  # noqa: E402

from evalcore.store import DATABASE_URL_ENV, Store  # noqa: E402

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


def _quiet() -> None:
    """Silence AppTest's "missing ScriptRunContext" noise: Streamlit gives each of its loggers its own
    level as its module is imported, so the parent's level does not reach them."""
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("streamlit"):
            logging.getLogger(name).setLevel(logging.CRITICAL)


def render_times(url: str, project: str, warm_runs: int = 3) -> None:
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
            _after_an_annotation(url, project, at)


def _after_an_annotation(url: str, project: str, at) -> None:
    """Conversations rendered again after someone annotates one conversation elsewhere: the cached table
    is stale, and only that conversation should be read again."""
    from evalcore.items.store_ops import list_conversations
    from evalcore.models import Annotation

    store = Store(url)
    times = []
    for view in list_conversations(store, project, limit=3):
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
        table = conversation_table(store, project)
    view = list_conversations(store, project, limit=1)[0]
    store.annotate(view.conversation.id, [verdict.model_copy(update={"item_id": view.conversation.id})],
                   "benchmark", view.version)  # fmt: skip
    with Clock() as changed:
        conversation_table(store, project, previous=table)
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
        scale = {"specs": args.specs, "conversations": args.conversations, "judgments": args.judgments}
        url, project = store_in(args.store or Path(tmp), **scale)
        render_times(url, project, args.warm)
        print("3. CLI start (benchmarks/cli_start.py), median of 3 fresh processes")
        for command, (wall, cpu) in measure_cli(ROOT, {DATABASE_URL_ENV: url}, repeat=3).items():
            print(f"   {command:<10} {wall:>6.2f} s wall {cpu:>6.2f} s cpu   goal {CLI_GOALS[command]:.1f} s")


if __name__ == "__main__":
    main()
