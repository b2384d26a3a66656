"""`evalcore simulations ...`: ChatChecker runs in and out, and their statistics (seed 002; issue 18).

The commands a CI job calls, kept exactly: `simulations import PATH [--project ID]` prints the new run's
id on the last line of standard output; `simulations stats RUN --json` prints one JSON object with
ChatChecker's names. Beside them: `simulations quality RUN` (the detector against human breakdown labels),
`simulations personas generate|import|export` and
`simulations run --target NAME [--standard N --challenging N --adversarial N] [--resume RUN]
[--retry-failed]`, which
prints the run's id on its last line too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalcore.errors import UsageError

if TYPE_CHECKING:
    from evalcore.generators.simulation.fault_report import FaultReport

from evalcore.cli.common import (
    DbOption,
    ProjectOption,
    QueueOption,
    RetryFailedOption,
    RunNameOption,
    RunNotesOption,
    friendly,
    open_store,
    progress_printer,
    project_id_of,
    queue_run,
    require_resume,
)

app = typer.Typer(
    help="Simulation runs: personas, simulated dialogues against a target, ChatChecker runs in and out, "
    "statistics.",
    no_args_is_help=True,
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
    if result.already:
        typer.echo(
            f"project {result.project_id}: this run was imported before as {result.run_id}; nothing added"
        )
    else:
        wrote = f"{result.dialogues} dialogue(s), {result.personas} persona(s)"
        typer.echo(f"project {result.project_id}{created}: {wrote}")
    typer.echo(result.run_id)


@app.command()
@friendly
def stats(
    run: Annotated[
        str | None, typer.Argument(help="Simulation run id (printed by `simulations import`).")
    ] = None,
    runs: Annotated[
        str | None,
        typer.Option("--runs", help="Comma-separated run ids: mean ± std over them per persona type."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, ChatChecker's names.")] = False,
    db: DbOption = None,
) -> None:
    """ChatChecker's run statistics: turns, MTLD, breakdowns, crashes and ratings; with --runs A,B,C the
    paper's run-wise mean and standard deviation (Tables 4 and 5) per persona type."""
    from evalcore.generators.simulation import load_simulation_run, simulation_statistics
    from evalcore.generators.simulation.fault_report import run_fault_report
    from evalcore.generators.simulation.run_tables import by_persona_type, runs_table

    if (run is None) == (runs is None):
        raise UsageError("give one run id, or --runs A,B,C (not both)")
    store = open_store(db, existing=True)
    if runs is not None:
        ids = [r.strip() for r in runs.split(",") if r.strip()]
        table = runs_table(store, ids)
        if as_json:
            typer.echo(
                json.dumps({kind: {k: list(v) for k, v in cells.items()} for kind, cells in table.items()})
            )
            return
        _echo_table(table, f"mean ± std over {len(ids)} run(s)")
        return
    figures = simulation_statistics(store, run)
    if as_json:
        typer.echo(json.dumps(figures))
        return
    ratings = figures.pop("rating_stats")
    for key, value in figures.items():
        typer.echo(f"{key:<38}{value}")
    for dimension, values in ratings.items():
        typer.echo(f"rating {dimension:<31}{values['average']:.3f} (std {values['std']:.3f})")
    for kind, cells in by_persona_type(load_simulation_run(store, run)).items():
        shown = ", ".join(
            f"{name} {'-' if cells[key] is None else round(cells[key], 1)}"
            for key, name in (
                ("chatbot_turns_per_dialogue", "ST/D"),
                ("median_user_turn_length", "median |UT|"),
                ("median_chatbot_turn_length", "median |ST|"),
            )
        )
        typer.echo(f"{'turns, ' + kind + ' personas':<38}{shown}")
    _echo_faults(run_fault_report(store, run))
    _echo_fidelity(store, run)


def _number(value: object) -> str:
    return "-" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def _echo_fidelity(store, run: str) -> None:
    """How far the simulated users were from their personas, per persona and for the run, and the run's
    users beside other users of the project."""
    from evalcore.generators.simulation.fidelity import fidelity_of
    from evalcore.generators.simulation.user_comparison import side_by_side

    rows, summary = fidelity_of(store, run)
    typer.echo("simulated users against their personas (distance 0 = played as given, 1 = nothing kept)")
    for row in rows:
        traits = (
            ", ".join(f"{t} {given}->{shown}" for t, (given, shown) in row.traits.items()) or "none given"
        )
        typer.echo(
            f"  {row.name} ({row.type}): distance {row.distance:.2f}; type "
            f"{'kept' if row.type_kept else 'NOT kept'} ({row.challenging_share:.0%} pushy turns"
            + (f", {row.probe_share:.0%} probing" if row.type == "adversarial" else "")
            + "); traits "
            f"{row.traits_kept}/{len(row.traits)} kept ({traits}); median turn "
            f"{_number(row.median_turn_words)} words (card {_number(row.typical_turn_words)})"
            + (
                f", {row.over_max_turns} over the card's maximum of {row.max_turn_words}"
                if row.over_max_turns is not None
                else ""
            )
            + "; MTLD "
            f"{row.mtld:.1f}; goal words said {row.goal_coverage:.0%}"
        )
    typer.echo("  run: " + ", ".join(f"{k.replace('_', ' ')} {_number(v)}" for k, v in summary.items()))
    columns = side_by_side(store, run)
    typer.echo("users side by side: " + " | ".join(columns))
    for key in next(iter(columns.values())):
        typer.echo(f"  {key:<26}" + " | ".join(f"{_number(c[key]):>10}" for c in columns.values()))


def _echo_table(table: dict, title: str) -> None:
    """Tables 4 and 5 shaped: a row per persona type, mean ± std per column."""
    from evalcore.generators.simulation.run_tables import COLUMNS

    typer.echo(title)
    typer.echo(f"{'personas':<13}" + "".join(f"{name:>16}" for name in COLUMNS.values()))
    for kind, cells in table.items():
        row = "".join(
            f"{f'{cells[key][0]:.2f} ± {cells[key][1]:.2f}' if key in cells else '-':>16}" for key in COLUMNS
        )
        typer.echo(f"{kind:<13}{row}")


def _echo_faults(report: FaultReport) -> None:
    """The simulator-fault lines of `stats`: faulted dialogues, and the figures with and without them."""
    typer.echo(f"{'user faults found by':<38}{report.source}")
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(report.kind_counts().items())) or "none"
    typer.echo(f"{'user_fault dialogues':<38}{len(report.faults)} ({kinds})")
    for key, value in report.with_faulted.items():
        without = report.without_faulted[key]
        shown = [
            ("-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)) for v in (value, without)
        ]
        typer.echo(f"{key:<38}{shown[0]} (without user_fault dialogues: {shown[1]})")


@app.command("check-faults")
@friendly
def check_faults(
    run: RunArgument,
    model: Annotated[
        str | None, typer.Option(help="Model 'provider/model' (default: the judge role; offline: rules).")
    ] = None,
    resume: Annotated[str | None, typer.Option(help="Resume this check instead of starting one.")] = None,
    retry_failed: RetryFailedOption = False,
    queue: QueueOption = False,
    db: DbOption = None,
) -> None:
    """Check every dialogue of a simulation run (simulated or imported) for simulated users at fault, and
    store what is found; `simulations stats RUN` and the Simulations page then read it. The check's id is
    the last line printed."""
    from evalcore.generators.simulation.fault_check import create_fault_check, execute_fault_check

    require_resume(retry_failed, resume)
    store = open_store(db, existing=True)
    check_id = resume or create_fault_check(store, run, model=model).id
    if queue:
        queue_run(store, check_id, retry_failed=retry_failed)
        return
    outcome = execute_fault_check(
        store, check_id, on_progress=progress_printer("dialogues"), retry_failed=retry_failed
    )
    total = len(outcome.run.params["units"])
    typer.echo(
        f"check {check_id}: {outcome.run.status.value}; {outcome.checked}/{total} dialogue(s) checked, "
        f"{len(outcome.failed)} failed"
    )
    typer.echo(check_id)


@app.command()
@friendly
def quality(
    run: RunArgument,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
    db: DbOption = None,
) -> None:
    """The breakdown detector scored against the annotators' breakdown labels of the run's target turns:
    accuracy, precision, recall and F1 for the breakdown decision, and agreement on the types."""
    from evalcore.review.detector_quality import detector_quality

    found = detector_quality(open_store(db, existing=True), run)
    if as_json:
        typer.echo(json.dumps(found.as_dict()))
        return
    figures = found.as_dict()
    per_type = figures.pop("per_type")
    figures.pop("run_id")
    shown = {"labelled target turns": figures.pop("labelled_turns"), **figures}
    for key, value in shown.items():
        text = (
            f"{value:.3f}"
            if isinstance(value, float)
            else ", ".join(value)
            if isinstance(value, list)
            else value
        )
        typer.echo(f"{key.replace('_', ' '):<23}{'-' if value is None else text}")
    for score in per_type:
        f1 = "-" if score["f1"] is None else f"{score['f1']:.3f}"
        typer.echo(
            f"type {score['title']:<43}human {score['human']:>3}  detector {score['detector']:>3}  "
            f"both {score['both']:>3}  F1 {f1}"
        )
    from evalcore.review.rules_quality import rules_quality

    rules = rules_quality(open_store(db, existing=True), run)
    shown_rules = ", ".join(
        f"{name} {'-' if value is None else f'{value:.3f}'}"
        for name, value in (("accuracy", rules.accuracy), ("precision", rules.precision),
                            ("recall", rules.recall), ("F1", rules.f1))
    )  # fmt: skip
    typer.echo(f"offline rules, same turns: {shown_rules}")
    for score in rules.per_type:
        f1 = "-" if score.f1 is None else f"{score.f1:.3f}"
        typer.echo(f"rules type {score.title:<37}human {score.human:>3}  rules {score.detector:>3}  F1 {f1}")


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


personas_app = typer.Typer(
    help="Personas: generate from the system card, import and export ChatChecker YAML.", no_args_is_help=True
)
app.add_typer(personas_app, name="personas")


@personas_app.command("generate")
@friendly
def personas_generate(
    standard: Annotated[int, typer.Option(help="Standard (cooperative) personas to generate.")] = 5,
    challenging: Annotated[int, typer.Option(help="Challenging (non-cooperative) personas to generate.")] = 5,
    adversarial: Annotated[
        int, typer.Option(help="Adversarial (safety and security probing) personas to generate.")
    ] = 0,
    seed: Annotated[int, typer.Option(help="Seed of the generator.")] = 0,
    model: Annotated[
        str | None, typer.Option(help="Model 'provider/model' (default: the generator role).")
    ] = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Generate standard, challenging and adversarial personas from the project's system card; print
    their ids."""
    from evalcore.generators.simulation.personas import generate_personas, list_personas, persona_name

    store = open_store(db)
    pid = project_id_of(store, project)
    ids = generate_personas(
        store,
        pid,
        standard=standard,
        challenging=challenging,
        adversarial=adversarial,
        seed=seed,
        model=model,
    )
    personas = list_personas(store, pid)
    for item_id in ids:
        persona = personas[item_id]
        typer.echo(f"{item_id}  {persona.persona_id}  {persona_name(persona)}: {persona.task}")


@personas_app.command("import")
@friendly
def personas_import(
    path: Annotated[Path, typer.Argument(help="A ChatChecker persona YAML file, or a folder of them.")],
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Import ChatChecker persona files (all or nothing); print the new item ids."""
    from evalcore.generators.simulation.personas import import_personas

    store = open_store(db)
    for item_id in import_personas(store, project_id_of(store, project), path):
        typer.echo(item_id)


@personas_app.command("export")
@friendly
def personas_export(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write <persona_id>.yaml files into.")],
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Export the project's personas as ChatChecker persona files."""
    from evalcore.generators.simulation.personas import export_personas

    store = open_store(db, existing=True)
    written = export_personas(store, project_id_of(store, project), out)
    typer.echo(f"wrote {len(written)} persona file(s) to {out}")


@app.command("run")
@friendly
def run_(
    target: Annotated[
        str, typer.Option("--target", "-t", help="Target name (see `evalcore targets list`).")
    ] = "",
    standard: Annotated[
        int, typer.Option(help="Standard personas (generated if the project has fewer).")
    ] = 0,
    challenging: Annotated[int, typer.Option(help="Challenging personas (generated if fewer).")] = 0,
    adversarial: Annotated[
        int, typer.Option(help="Adversarial (safety-probing) personas (generated if fewer).")
    ] = 0,
    persona: Annotated[list[str] | None, typer.Option(help="A persona item id (repeatable).")] = None,
    runs_per_user: Annotated[int, typer.Option(help="Dialogues per persona.")] = 1,
    seed: Annotated[int, typer.Option(help="Seed of the simulated users.")] = 0,
    simulator: Annotated[
        str | None,
        typer.Option(help="Simulated users' model 'provider/model' (default: the simulator role)."),
    ] = None,
    judge: Annotated[
        str | None, typer.Option(help="Breakdown detector's and rater's model (default: the judge role).")
    ] = None,
    budget: Annotated[float | None, typer.Option("--budget", help="Stop before spending more USD.")] = None,
    resume: Annotated[
        str | None, typer.Option(help="Resume this simulation run instead of starting one.")
    ] = None,
    retry_failed: RetryFailedOption = False,
    queue: QueueOption = False,
    name: RunNameOption = None,
    notes: RunNotesOption = "",
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Simulate personas against a target, detect breakdowns per target turn, rate every dialogue.

    The run's id is the last line printed; `simulations stats RUN` gives its statistics.
    """
    from evalcore.errors import EvalcoreError
    from evalcore.generators.simulation.job import create_simulation, execute_simulation

    require_resume(retry_failed, resume)
    store = open_store(db)
    limits = {"usd": budget} if budget is not None else None
    if resume:
        run_id = resume
    else:
        if not target:
            raise EvalcoreError("give --target NAME (see `evalcore targets list`), or --resume RUN_ID")
        pid = project_id_of(store, project)
        run_id = create_simulation(
            store,
            pid,
            target,
            personas=persona or None,
            standard=standard,
            challenging=challenging,
            adversarial=adversarial,
            runs_per_user=runs_per_user,
            seed=seed,
            simulator_model=simulator,
            judge_model=judge,
            budget=limits,
            name=name,
            notes=notes,
        ).id
    if queue:
        if limits and resume:  # what the foreground resume would have been given
            store.update_run(store.run(run_id).model_copy(update={"budget": limits}))
        queue_run(store, run_id, retry_failed=retry_failed)
        return
    outcome = execute_simulation(
        store, run_id, on_progress=progress_printer("dialogues"), retry_failed=retry_failed, budget=limits
    )
    run = outcome.run
    typer.echo(
        f"run {run.id}: {run.status.value}; target {run.target}; {outcome.done}/{outcome.total} dialogues "
        f"({outcome.simulated} now, {outcome.crashed} ended by a target error, {len(outcome.failed)} failed)"
    )
    for warning in run.warnings:
        typer.secho(f"warning: {warning}", err=True, fg="yellow")
    if run.status.value != "finished":
        typer.echo(f"stopped ({run.stopped_reason}); resume with: evalcore simulations run --resume {run.id}")
    typer.echo(run.id)
