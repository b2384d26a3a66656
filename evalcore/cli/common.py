"""What every `evalcore` command shares: the --db and --project options, one-line errors, progress."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalcore.errors import EvalcoreError, UsageError
from evalcore.store.location import DATABASE_URL_ENV, database_url

if TYPE_CHECKING:  # the store (SQLAlchemy) is imported by the commands that open it, not by --help
    from evalcore.store import Store

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db", help=f"Store URL (default: ${DATABASE_URL_ENV}, else ./data/evalcore.db).", show_default=False
    ),
]
ProjectOption = Annotated[
    str | None, typer.Option("--project", "-p", help="Project id (default: the only or first project).")
]


USAGE_EXIT = 2  # like click's own usage errors; 1 is left to failures and to gates such as --fail-above


def friendly(func: Callable[..., Any]) -> Callable[..., Any]:
    """Print evalcore errors as clear lines instead of a traceback: exit 2 for a usage error, else 1."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except UsageError as exc:
            typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
            raise typer.Exit(USAGE_EXIT) from None
        except EvalcoreError as exc:
            typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
            raise typer.Exit(1) from None
        except OSError as exc:
            typer.secho(
                f"error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), err=True, fg="red"
            )
            raise typer.Exit(1) from None

    return wrapper


def _missing_sqlite_file(db: str | None) -> str | None:
    """The path of the SQLite file `db` names, if it is not there."""
    import sqlalchemy as sa

    try:
        url = sa.make_url(database_url(db))
    except sa.exc.ArgumentError:
        return None  # not a URL at all: opening the store reports it
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return None if Path(url.database).is_file() else url.database


def open_store(db: str | None, *, existing: bool = False) -> Store:
    """The store at `db` (or the default); any failure to open it becomes one clear line.

    With `existing`, a SQLite file that is not there is a usage error instead of a new empty store: a
    command that only reads (status, export) must not create one, nor its folders, at a mistyped path."""
    if existing and (missing := _missing_sqlite_file(db)):
        raise UsageError(f"no store at {missing}: check --db (`evalcore init` creates a store)")
    from evalcore.store import Store

    try:
        return Store(db)
    except EvalcoreError:
        raise
    except Exception as exc:  # a bad URL or an unreachable server: one line, not a driver traceback
        raise EvalcoreError(
            f"cannot open the store: {exc.__class__.__name__}: {str(exc).splitlines()[0]}"
        ) from None


def project_id_of(store: Store, project: str | None) -> str:
    """The named project, or the first one; a clear error when the store has none."""
    if project:
        return store.project(project).id
    projects = store.projects()
    if not projects:
        raise EvalcoreError("the store has no project yet: run `evalcore import PATH` first")
    return projects[0].id


def progress_printer(label: str) -> Callable[[int, int], None]:
    """A progress callback that prints 'label: done/total' to stderr: one line overwritten in a terminal;
    in a log (CI, a pipe), a line per tenth of the way, so the log stays readable."""
    import sys

    if sys.stderr.isatty():

        def show(done: int, total: int) -> None:
            typer.echo(f"\r{label}: {done}/{total}", err=True, nl=False)
            if done >= total:
                typer.echo("", err=True)

        return show
    shown: list[int] = []

    def log(done: int, total: int) -> None:
        step = done * 10 // total if total else 10
        if done >= total or not shown or step > shown[-1]:
            shown.append(step)
            typer.echo(f"{label}: {done}/{total}", err=True)

    return log


QueueOption = Annotated[
    bool,
    typer.Option(
        "--queue", help="Hand the job to the workers (`evalcore worker`), print its run id, return."
    ),
]


RetryFailedOption = Annotated[
    bool, typer.Option("--retry-failed", help="With --resume: work the run's failed units again too.")
]

# Every run against a target is a named experiment (issue 27): the same two options on each command.
RunNameOption = Annotated[
    str | None, typer.Option("--name", help="Name of the run (default: target, model and date).")
]
RunNotesOption = Annotated[
    str, typer.Option("--notes", help="Notes on the run: what changed, why it was run.")
]


def require_resume(retry_failed: bool, resume: str | None) -> None:
    """`--retry-failed` gives back the failed units of a run: refuse it without the run to resume."""
    if retry_failed and not resume:
        raise UsageError("--retry-failed retries the failed units of a run: give --resume RUN_ID too")


def queue_run(
    store: Store,
    run_id: str,
    *,
    retry_failed: bool = False,
    budget: dict[str, float] | None = None,
    concurrency: int | None = None,
) -> None:
    """`--queue`: hand the run to the workers (with what the foreground run would have been given) and
    say where; the run's id is the last line printed."""
    from evalcore.jobs.queue import display_url, enqueue, queue_url_for

    enqueue(store, run_id, budget=budget, concurrency=concurrency, retry_failed=retry_failed)
    typer.echo(f"run {run_id} queued on {display_url(queue_url_for(store.url))}")
    typer.echo(run_id)


def emit(lines: Iterable[str], out: Path | None) -> int:
    """Print lines, or write them to `out` (never half a file, even after a crash); return the count."""
    from evalcore.items.exports import write_lines

    if out is not None:
        return write_lines(lines, out)
    count = 0
    for line in lines:
        typer.echo(line)
        count += 1
    return count
