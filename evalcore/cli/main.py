"""The `evalcore` command line: the same functions the dashboard calls."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from evalcore.cli.annotate import app as annotate_app
from evalcore.cli.common import DbOption, ProjectOption, emit, friendly
from evalcore.cli.common import open_store as _store
from evalcore.cli.common import project_id_of as _project_id
from evalcore.cli.conversations import app as conversations_app
from evalcore.cli.interop import FormatOption, RunOption
from evalcore.cli.models import app as models_app
from evalcore.cli.procedures import app as procedures_app
from evalcore.cli.runs import app as runs_app
from evalcore.cli.scenarios import app as scenarios_app
from evalcore.cli.simulations import app as simulations_app
from evalcore.cli.specs import app as specs_app
from evalcore.cli.toolcases import app as toolcases_app
from evalcore.cli.toolcases import rubrics_app
from evalcore.cli.users import app as users_app
from evalcore.cli.users import audit as audit_command
from evalcore.errors import UsageError
from evalcore.store.location import DATABASE_URL_ENV

app = typer.Typer(
    help="evalcore: behavior-driven evaluation data for conversational and compound AI systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Click's plain help, for every command group below too: rich's help takes 0.4 s to import (twice the
    # rest of `evalcore --help`) and shows `<bool>` beside flags that take no value.
    rich_markup_mode=None,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_PROJECT = REPO_ROOT / "data" / "sample"
STOP_GRACE_SECONDS = 10  # Streamlit closes its sessions on SIGTERM within a second or two; then it is killed
app.add_typer(specs_app, name="specs")
app.add_typer(conversations_app, name="conversations")
app.add_typer(runs_app)  # run, report, targets (evalcore/cli/runs.py)
app.add_typer(annotate_app, name="annotate")
app.add_typer(simulations_app, name="simulations")
app.add_typer(scenarios_app, name="scenarios")
app.add_typer(procedures_app, name="procedures")
app.add_typer(toolcases_app, name="toolcases")
app.add_typer(rubrics_app, name="rubrics")
app.add_typer(users_app, name="users")
app.command("audit")(audit_command)
app.add_typer(models_app, name="models")


@app.command()
@friendly
def init(db: DbOption = None) -> None:
    """Create the store (or bring an older one up to date) and print where it is."""
    store = _store(db)
    applied = ", ".join(store.applied) or "none (already up to date)"
    typer.echo(f"store: {store.display_url}\nmigrations applied: {applied}")


@app.command("import")
@friendly
def import_(
    path: Annotated[
        Path,
        typer.Argument(
            help="Project folder (system.yaml, documents/, tables/, ...) or .zip; with --format, a file."
        ),
    ],
    project: Annotated[
        str | None, typer.Option("--project", "-p", help="Project id (default: the card's id).")
    ] = None,
    fmt: FormatOption = None,
    db: DbOption = None,
) -> None:
    """Validate a project folder whole and import it; a folder with problems changes nothing. With
    --format, a file of another tool's tests into a project (the only or first one, or --project)."""
    if fmt is not None:
        from evalcore.cli.interop import import_format

        import_format(fmt, path, project, db)
        return
    from evalcore.inputs import import_project
    from evalcore.inputs.archive import import_archive

    store = _store(db)
    if path.suffix.lower() == ".zip" and path.is_file():
        result = import_archive(store, path, path.name, project)
    else:
        result = import_project(store, path, project)
    changes = result.changes
    typer.echo(f"project {result.project_id}: {changes.total_written} record(s) written")
    for label in ("system card", "documents", "tools", "procedures"):
        added = len(changes.added.get(label, []))
        updated = len(changes.updated.get(label, []))
        same = len(changes.unchanged.get(label, []))
        typer.echo(f"  {label:<12} {added} added, {updated} updated, {same} unchanged")


@app.command()
@friendly
def status(project: ProjectOption = None, db: DbOption = None) -> None:
    """Counts per stage of the data flow."""
    from evalcore.reports.status import project_status

    store = _store(db, existing=True)
    projects = [store.project(project)] if project else store.projects()
    if not projects:
        typer.echo(f"store {store.display_url} has no project yet: run `evalcore import PATH`")
        return
    for info in projects:
        typer.echo(f"{info.id}  ({info.title})")
        for row in project_status(store, info.id):
            detail = f"  ({row.detail})" if row.detail else ""
            typer.echo(f"  {row.stage:<14}{row.count:>6}{detail}")


@app.command()
@friendly
def export(
    what: Annotated[
        str,
        typer.Argument(
            help="'inputs', or an item kind: spec, conversation, test, persona (with --format: results)."
        ),
    ],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="File to write (default: standard output).")
    ] = None,
    project: ProjectOption = None,
    fmt: FormatOption = None,
    run: RunOption = None,
    db: DbOption = None,
) -> None:
    """Export a project's inputs (JSON) or its items of one kind (JSONL); with --format, its specs,
    conversations or tests (or a run's results) in another tool's format."""
    if fmt is not None:
        from evalcore.cli.interop import export_format

        export_format(fmt, what, out, run, project, db)
        return
    if run is not None:
        raise UsageError("--run exports a run's results in Inspect's eval log: give --format inspect")
    from evalcore.items.exports import export_lines

    store = _store(db, existing=True)
    lines = export_lines(store, _project_id(store, project), what)
    count = emit(lines, out)
    if out is not None:
        typer.echo(f"wrote {count} line(s) to {out}")


@app.command()
@friendly
def serve(
    port: Annotated[int, typer.Option(help="Port.")] = 8501,
    sample: Annotated[
        bool, typer.Option("--sample", help="Import the bundled sample project first.")
    ] = False,
    address: Annotated[
        str, typer.Option(help="Address to listen on; any but 127.0.0.1 needs sign-in configured.")
    ] = "127.0.0.1",
    db: DbOption = None,
) -> None:
    """Start the dashboard on 127.0.0.1 (the sample project imported first with --sample); another
    address only once sign-in is configured (`evalcore users add NAME --role admin`, or OIDC)."""
    from evalcore.auth.serving import check_address

    store = _store(db)
    check_address(store, address)
    if sample:
        from evalcore.inputs import import_project

        result = import_project(store, SAMPLE_PROJECT)
        typer.echo(f"sample project '{result.project_id}' is in {store.display_url}")
    env = {**os.environ, DATABASE_URL_ENV: store.url}
    dashboard = [
        sys.executable, str(REPO_ROOT / "dashboard.py"),
        "--server.address", address, "--server.port", str(port), "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    # One consumer beside the dashboard runs the jobs its pages queue, on the queue beside the store.
    worker = [sys.executable, "-m", "evalcore", "worker", "--workers", "1"]  # the store from env
    typer.echo(f"dashboard: http://{address}:{port}  (Ctrl+C stops it and its worker)")
    raise typer.Exit(_run_until_stopped([dashboard, worker], env))


@app.command()
@friendly
def worker(
    workers: Annotated[int, typer.Option("--workers", "-w", help="Worker processes (one job each).")] = 1,
    db: DbOption = None,
) -> None:
    """Run the jobs queued for the store (EVALCORE_QUEUE_URL, else the queue beside the store)."""
    from evalcore.jobs.queue import display_url, queue_url_for
    from evalcore.jobs.worker import run_worker

    store = _store(db)
    url = store.url
    store.close()
    queue = display_url(queue_url_for(url))
    typer.echo(f"worker: {workers} process(es) on {queue} for {store.display_url}", err=True)
    run_worker(url, workers)


class _Stop(Exception):
    """A termination signal arrived while the dashboard was running."""


def _raise_stop(signum: int, _frame: object) -> None:
    raise _Stop(signum)


def _run_until_stopped(commands: list[list[str]], env: dict[str, str]) -> int:
    """Run the dashboard and its worker until one exits; on SIGTERM, SIGHUP or Ctrl+C stop both first, so
    no server is left holding the port (a plain subprocess.call would die on SIGTERM and orphan its child).
    The worker stops on SIGTERM too: its job releases its units and waits in the queue for the next start."""
    stop_signals = (signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, _raise_stop) for sig in stop_signals}
    processes: list[subprocess.Popen] = []
    code = 0
    try:
        # Own sessions: a Ctrl+C in the terminal reaches this process only, which stops both in order.
        processes = [
            subprocess.Popen(command, env=env, cwd=REPO_ROOT, start_new_session=True) for command in commands
        ]
        while (code := next((p.poll() for p in processes if p.poll() is not None), None)) is None:
            time.sleep(0.5)
        typer.echo("a process of the dashboard exited: stopping the other", err=True)
    except (_Stop, KeyboardInterrupt):
        for sig in stop_signals:  # a second signal must not cut the shutdown short
            signal.signal(sig, signal.SIG_IGN)
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for process in processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    typer.echo("dashboard stopped")
    return code


def main() -> None:
    """Entry point of the `evalcore` console script."""
    app()


if __name__ == "__main__":
    main()
