"""`evalcore import --format FMT FILE` and `evalcore export --format FMT KIND`: other tools' formats, in
and out (evalcore.items.interop, evalcore.reports.formats). `evalcore/cli/main.py` hands over to these
when `--format` is given; without it, `import` and `export` work as before."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalcore.cli.common import emit, open_store, project_id_of

FORMATS_HELP = "deepeval, ragas, promptfoo, tau2, inspect, langfuse, langsmith, openai-evals or hf"
FormatOption = Annotated[
    str | None,
    typer.Option("--format", "-f", help=f"Another tool's format: {FORMATS_HELP}.", show_default=False),
]
RunOption = Annotated[
    str | None, typer.Option("--run", help="With `results`: the run to export (Inspect's eval log).")
]


def import_format(fmt: str, path: Path, project: str | None, db: str | None) -> None:
    """Import a file in another tool's format into a project; print what was written and what was kept."""
    from evalcore.items.interop import check_format, import_file

    check_format(fmt)  # a mistyped format is a usage error before the store is opened
    store = open_store(db, existing=True)
    project_id = project_id_of(store, project)
    done = import_file(store, project_id, fmt, path)
    written = len(done.result.conversations), len(done.result.tests)
    typer.echo(
        f"project {project_id}: {written[0]} conversation(s), {written[1]} test(s) imported from {path.name}"
    )
    for note in done.notes:
        typer.echo(f"  {note}")


def export_format(fmt: str, what: str, out: Path | None, run: str | None, project: str | None,
                  db: str | None) -> None:  # fmt: skip
    """Export a project's items of one kind (or a run's results) in another tool's format."""
    from evalcore.errors import UsageError
    from evalcore.reports.formats import RESULTS, check_export, export_format, export_results

    check_export(fmt, what)
    if (what == RESULTS) != (run is not None):
        raise UsageError("--run RUN_ID goes with `results`, and `results` needs it")
    store = open_store(db, existing=True)
    if run is not None:
        lines = export_results(store, run)
    else:
        lines = export_format(store, project_id_of(store, project), fmt, what)
    count = emit(lines, out)
    if out is not None:
        typer.echo(f"wrote {count} line(s) to {out}")
