"""The sample project with something at every stage, made offline through the CLI as a user would: specs
generated and selected, doc-QA conversations, procedure tests, tool-use cases judged, a run of the demo
target, procedure tests played by the built-in agent, a simulation, scenarios written from specs and run,
conversations assigned to two annotators and one of them reviewed. For page tests that look at every
page with data on it (tests/pages/test_plain_words.py)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from evalcore.cli.main import SAMPLE_PROJECT, app
from evalcore.review import ItemVerdict, open_item, save_review
from evalcore.review.queue import QueueFilter, queue_page
from evalcore.store import Store

PROJECT = "ridgeline_support"
STEPS = (
    ["specs", "generate", "-m", "12"],
    ["specs", "select", "-k", "4"],
    ["conversations", "generate", "--per-spec", "1", "--d", "2", "--turns", "2"],
    ["procedures", "generate", "--paths", "1"],
    ["toolcases", "generate", "--per-situation", "1"],
    ["toolcases", "filter"],
    ["run", "-t", "demo", "--limit", "3"],
    ["targets", "add", "agent-demo", "--kind", "agent", "--agent", "demo"],
    ["run", "-t", "agent-demo", "--tests"],
    ["simulations", "run", "-t", "demo", "--standard", "1", "--challenging", "1"],
    ["annotate", "assign", "--annotators", "dana,bea", "--limit", "3", "--by", "lee"],
)


def fill(db_path: Path, scenarios_dir: Path) -> Store:
    """Import the sample into a new SQLite store at `db_path` and fill every stage (EVALCORE_OFFLINE
    must be set): about a minute."""
    runner = CliRunner()
    db = ["--db", f"sqlite:///{db_path}"]

    def cli(*args: str) -> None:
        result = runner.invoke(app, [*args, *db])
        assert result.exit_code == 0, f"evalcore {' '.join(args)}: {result.output}"

    cli("import", str(SAMPLE_PROJECT))
    for step in STEPS:
        cli(*step)
    cli("scenarios", "from-specs", "-o", str(scenarios_dir), "--limit", "2", "--target", "demo-flows",
        "--import", "--author", "dana")  # fmt: skip
    cli("scenarios", "run", "--all", "-t", "demo-flows")
    store = Store(f"sqlite:///{db_path}")
    first = queue_page(store, PROJECT, QueueFilter(assignee="dana"), user="dana").rows[0].item_id
    save_review(store, first, "dana", open_item(store, first).version, [], ItemVerdict(label="accept"))
    return store
