"""`evalcore scenarios run`: play scenarios against a target that reports events (issue 19, items 5-6).

`scenarios run FILES... --target demo-flows [--run-count N]` validates the files (a problem anywhere and
nothing runs), plays each scenario N times with a simulated user following its simulation_context,
checks its assertions and criteria, and prints the pass share per scenario; `--all` runs the project's
imported scenarios instead. The run id is the last line, for `--resume` and the reports. `--queue`
hands the run to the workers instead of playing it here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalcore.cli.common import (
    DbOption,
    ProjectOption,
    RunNameOption,
    RunNotesOption,
    open_store,
    project_id_of,
)
from evalcore.errors import EvalcoreError, ValidationFailed


def run(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Scenario files, or folders of them (or give --all).")
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Run every scenario imported in the project.")] = False,
    target: Annotated[
        str | None,
        typer.Option(
            "--target", "-t", help="A target that reports events: demo-flows, or a rasa/http_events one."
        ),
    ] = None,
    run_count: Annotated[int, typer.Option(min=1, max=10, help="Repetitions of each scenario (1-10).")] = 1,
    seed: Annotated[int, typer.Option(help="Seed of the simulated user.")] = 0,
    simulator: Annotated[
        str | None, typer.Option(help="Model of the simulated user (simulator role).")
    ] = None,
    judge: Annotated[str | None, typer.Option(help="Model that judges the criteria (judge role).")] = None,
    max_user_turns: Annotated[
        int | None, typer.Option(min=1, help="Most user turns per conversation (default: the card's).")
    ] = None,
    strict: Annotated[
        bool, typer.Option(help="Refuse scenarios naming slots or flows the target's domain lacks.")
    ] = False,
    concurrency: Annotated[int, typer.Option(min=1, help="Conversations played at once.")] = 2,
    resume: Annotated[str | None, typer.Option(help="Resume this run id instead of starting one.")] = None,
    retry_failed: Annotated[bool, typer.Option(help="With --resume: play its failed units again.")] = False,
    queue: Annotated[
        bool, typer.Option(help="Queue the run for the workers instead of playing it here.")
    ] = False,
    name: RunNameOption = None,
    notes: RunNotesOption = "",
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Play scenarios against a target, check their assertions and criteria, print the pass share of each
    scenario; the run id is the last line."""
    from evalcore import jobs
    from evalcore.generators.scenario import list_scenarios, read_scenarios
    from evalcore.generators.scenario.run import (
        create_scenario_run,
        execute_scenario_run,
        load_scenario_results,
    )
    from evalcore.reports.scenarios import pass_rates
    from evalcore.reports.tables import TOTAL_LABEL

    store = open_store(db, existing=True)
    pid = project_id_of(store, project)
    if resume:
        if paths or all_:
            raise EvalcoreError("--resume plays the run's own scenarios: give no files and no --all")
        run_id = resume
    else:
        if not target:
            raise EvalcoreError("give --target NAME (demo-flows is built in; see `evalcore targets list`)")
        if bool(paths) == all_:
            raise EvalcoreError("give scenario files or folders, or --all for the project's scenarios")
        if all_:
            scenarios = list_scenarios(store, pid)
            if not scenarios:
                raise EvalcoreError(f"project {pid} has no scenario: `evalcore scenarios import FILES` first")
        else:
            found, problems = read_scenarios(paths or [], None)
            if problems:
                raise ValidationFailed(problems, "scenario files")
            scenarios = found  # with their files, so the target's domain problems say file:line
        run_id = create_scenario_run(
            store, pid, target, scenarios, run_count=run_count, seed=seed, simulator_model=simulator,
            judge_model=judge, max_user_turns=max_user_turns, strict=strict, concurrency=concurrency,
            name=name, notes=notes,
        ).id  # fmt: skip
    if queue:
        from evalcore.jobs.queue import display_url, enqueue, queue_url_for

        if retry_failed:
            jobs.retry_failed(store, run_id)
        enqueue(store, run_id)
        typer.echo(f"run {run_id} queued on {display_url(queue_url_for(store.url))}")
        typer.echo(run_id)
        return

    def progress(done: int, total: int) -> None:
        if done == total or done % 10 == 0:
            typer.echo(f"  {done}/{total} conversations")

    outcome = execute_scenario_run(store, run_id, on_progress=progress, retry_failed=retry_failed)
    for message in outcome.run.warnings:
        typer.secho(f"note: {message}", fg=typer.colors.YELLOW)
    results = load_scenario_results(store, run_id)
    names = [entry["name"] for entry in outcome.run.params.get("scenarios") or []]
    for row in pass_rates(results, names).itertuples():
        if row.scenario != TOTAL_LABEL:
            share = f"{row.share_passed:.0%}" if row.repetitions else "-"
            typer.echo(f"{share:>5}  {row.passed}/{row.repetitions} passed  {row.scenario}")
    _echo_user_faults(store, run_id)
    if outcome.failed:
        typer.secho(f"{len(outcome.failed)} conversation(s) failed to play: --resume {run_id} --retry-failed",
                    fg=typer.colors.RED)  # fmt: skip
    done = f"{outcome.done}/{outcome.total} conversations"
    typer.echo(f"run {run_id} {outcome.run.status.value}: {done}, target {outcome.run.target}")
    typer.echo(run_id)


def _echo_user_faults(store, run_id: str) -> None:
    """The pass count over all conversations and over those whose simulated user did its part."""
    from evalcore.generators.scenario.user_faults import scenario_fault_report

    found = scenario_fault_report(store, run_id)
    typer.echo(
        f"{found.passed}/{found.played} passed; {len(found.faults)} conversation(s) whose simulated user was "
        f"at fault; without them {found.passed_without}/{found.played_without} passed"
    )
