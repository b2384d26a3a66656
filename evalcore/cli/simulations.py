"""`evalcore simulations ...`: ChatChecker runs in and out, and their statistics (seed 002; issue 18).

The commands a CI job calls, kept exactly: `simulations import PATH [--project ID]` prints the new run's
id on the last line of standard output; `simulations stats RUN --json` prints one JSON object with
ChatChecker's names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from evalcore.cli.common import DbOption, friendly, open_store

app = typer.Typer(
    help="Simulation runs: import and export ChatChecker runs, statistics.", no_args_is_help=True
)

RunArgument = Annotated[str, typer.Argument(help="Simulation run id (printed by `simulations import`).")]


@app.command("import")
@friendly
def import_(
    path: Annotated[Path, typer.Argument(help="ChatChecker run folder: one subfolder per simulated user.")],
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            "-p",
            help="Project to import into, created if missing (default: the run's chatbot_id, "
            "as `evalcore import` names a project after its card's id).",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Import a ChatChecker run folder (dialogues, annotations, ratings, personas) as a simulation run.

    The whole folder is validated first; a folder with problems changes nothing. The new run's id is the
    last line printed.
    """
    from evalcore.generators.simulation import import_chatchecker_run

    store = open_store(db)
    result = import_chatchecker_run(store, path, project)
    created = " (new project)" if result.project_created else ""
    typer.echo(
        f"project {result.project_id}{created}: {result.dialogues} dialogue(s), {result.personas} persona(s)"
    )
    typer.echo(result.run_id)


@app.command()
@friendly
def stats(
    run: RunArgument,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, ChatChecker's names.")] = False,
    db: DbOption = None,
) -> None:
    """ChatChecker's run statistics: turns, MTLD, breakdowns, crashes and ratings."""
    from evalcore.generators.simulation import simulation_statistics

    figures = simulation_statistics(open_store(db, existing=True), run)
    if as_json:
        typer.echo(json.dumps(figures))
        return
    ratings = figures.pop("rating_stats")
    for key, value in figures.items():
        typer.echo(f"{key:<38}{value}")
    for dimension, values in ratings.items():
        typer.echo(f"rating {dimension:<31}{values['average']:.3f} (std {values['std']:.3f})")


@app.command()
@friendly
def export(
    run: RunArgument,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to create (it must not hold files).")],
    db: DbOption = None,
) -> None:
    """Export a simulation run as a ChatChecker run folder (dialogues, user files, run statistics)."""
    from evalcore.generators.simulation import export_chatchecker_run

    written = export_chatchecker_run(open_store(db, existing=True), run, out)
    typer.echo(f"wrote {len(written)} file(s) to {out}")
