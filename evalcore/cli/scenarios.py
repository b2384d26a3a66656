"""`evalcore scenarios ...`: scenario files in and out (seed 003; issue 19).

`scenarios validate PATH...` exits 0 when every file is valid, else 1 with one `file:line [field]:
message` line per problem on standard error (slots and flows checked against --domain files or the
domain a --target publishes); `scenarios import` validates everything first and stores
nothing on a problem; `scenarios export` writes one YAML file per scenario; `scenarios from-specs`
writes a scenario per spec of the project (and imports them with --import); `scenarios import-e2e`
stores Rasa E2E test cases as scripted tests (and writes scenarios from them with --as-scenarios);
`scenarios report` prints a run's tables.
"""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Annotated

import typer

from evalcore.cli.common import DbOption, ProjectOption, emit, friendly, open_store, project_id_of
from evalcore.cli.scenario_run import run as run_command
from evalcore.errors import UsageError, ValidationFailed

app = typer.Typer(
    help="Scenario tests: validate, import and export scenario YAML files, write them from specs, import "
    "Rasa E2E tests.",
    no_args_is_help=True,
)

PathsArgument = Annotated[
    list[Path], typer.Argument(help="Scenario files, or folders of them (e.g. eval/scenarios).")
]
DomainOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--domain",
        help="The target's Rasa domain and flow files or folders (repeatable): slots and flows are checked.",
    ),
]

TargetOption = Annotated[
    str | None,
    typer.Option(help="Use the domain this target publishes (e.g. demo-flows) instead of --domain files."),
]


def _domain(paths: list[Path] | None):
    """The domain read from the files given, or None; problems in them stop the command."""
    if not paths:
        return None
    from evalcore.generators.scenario import read_domain

    domain, problems = read_domain(paths)
    if problems:
        raise ValidationFailed(problems, "domain files")
    return domain


def _target_domain(store, project_id: str, target: str):
    """The domain the target publishes; a target that publishes none is a usage error."""
    from evalcore.generators.scenario.targets import target_domain

    checked = target_domain(store, project_id, target)
    if checked is None:
        raise UsageError(f"target '{target}' publishes no domain: give --domain files instead")
    return checked


@app.command()
@friendly
def validate(
    paths: PathsArgument,
    domain: DomainOption = None,
    target: TargetOption = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Check scenario files and print every problem with its file, line and field; exit 1 on any."""
    from evalcore.generators.scenario import read_scenarios

    if domain and target:
        raise UsageError("give --domain files or --target, not both")
    checked = _domain(domain)
    if target:
        store = open_store(db, existing=True)
        checked = _target_domain(store, project_id_of(store, project), target)
    found, problems = read_scenarios(paths, checked)
    for problem in problems:
        typer.echo(str(problem), err=True)
    if problems:
        files = len({p.file for p in problems})
        typer.secho(f"{len(problems)} problem(s) in {files} file(s)", err=True, fg=typer.colors.RED)
        raise typer.Exit(1)
    typer.echo(f"{len(found)} scenario(s) valid")


@app.command("import")
@friendly
def import_(
    paths: PathsArgument,
    project: ProjectOption = None,
    domain: DomainOption = None,
    author: Annotated[str | None, typer.Option(help="Who is importing (default: your user name).")] = None,
    db: DbOption = None,
) -> None:
    """Validate scenario files whole and store their scenarios; a problem anywhere stores nothing.

    A scenario is known by its name: importing it again adds nothing, importing it changed appends a
    revision.
    """
    from evalcore.generators.scenario import import_scenarios

    checked = _domain(domain)
    store = open_store(db)
    pid = project_id_of(store, project)
    result = import_scenarios(store, pid, paths, author or getpass.getuser(), checked)
    for line in result.skipped:
        typer.echo(line, err=True)
    typer.echo(
        f"project {pid}: {len(result.added)} added, {len(result.updated)} updated, "
        f"{len(result.unchanged)} unchanged"
    )


@app.command("import-e2e")
@friendly
def import_e2e(
    paths: PathsArgument,
    project: ProjectOption = None,
    as_scenarios: Annotated[
        Path | None,
        typer.Option("--as-scenarios", help="Also write a seed-003 scenario file per test case here."),
    ] = None,
    author: Annotated[str | None, typer.Option(help="Who is importing (default: your user name).")] = None,
    db: DbOption = None,
) -> None:
    """Import Rasa E2E test files (test_cases:) as scripted tests: their user turns are played as written
    against an event-reporting target and checked as Rasa checks them; run them like scenarios."""
    from evalcore.generators.scenario.store_ops import import_e2e as import_cases

    store = open_store(db)
    pid = project_id_of(store, project)
    result = import_cases(store, pid, paths, author or getpass.getuser(), as_scenarios)
    for line in result.skipped:
        typer.echo(line, err=True)
    typer.echo(
        f"project {pid}: {len(result.added)} added, {len(result.updated)} updated, "
        f"{len(result.unchanged)} unchanged scripted test(s)"
    )
    if as_scenarios is not None:
        count = len(result.added + result.updated + result.unchanged)
        typer.echo(f"wrote {count} scenario file(s) to {as_scenarios}")


@app.command()
@friendly
def export(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write (created if missing).")] = Path(
        "eval/scenarios"
    ),
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Write each of the project's scenarios to its own YAML file (named as the file it came from)."""
    from evalcore.generators.scenario import export_scenarios

    store = open_store(db, existing=True)
    written = export_scenarios(store, project_id_of(store, project), out)
    typer.echo(f"wrote {len(written)} file(s) to {out}")


@app.command("from-specs")
@friendly
def from_specs(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write one YAML file per scenario to.")],
    project: ProjectOption = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="At most this many specs (selected first).")
    ] = None,
    domain: DomainOption = None,
    target: TargetOption = None,
    import_: Annotated[
        bool, typer.Option("--import", help="Also import the scenarios written into the project.")
    ] = False,
    model: Annotated[
        str | None, typer.Option(help="Model that writes them (default: the generator role).")
    ] = None,
    author: Annotated[str | None, typer.Option(help="Who is importing (default: your user name).")] = None,
    db: DbOption = None,
) -> None:
    """Write a scenario for each spec of the project (not rejected; selected ones first): the spec's
    Given/When become the user's briefing, its Then criteria, and assertions name only what the
    --domain (or the --target's domain) defines: none without one. Each file says which model wrote it,
    or that it is offline."""
    from evalcore.generators.scenario import write_from_specs
    from evalcore.llm import ModelClient

    if domain and target:
        raise UsageError("give --domain files or --target, not both")
    checked = _domain(domain)
    store = open_store(db, existing=True)
    pid = project_id_of(store, project)
    if target:
        checked = _target_domain(store, pid, target)
    who = (author or getpass.getuser()) if import_ else None
    done = write_from_specs(
        store, pid, out, ModelClient(store, pid), limit=limit, domain=checked, model=model, import_as=who
    )
    offline = " (offline: no model)" if done.offline else ""
    typer.echo(
        f"wrote {len(done.files)} scenario file(s) to {out}, {done.with_assertions} with assertions{offline}"
    )
    if done.imported is not None:
        result = done.imported
        typer.echo(
            f"project {pid}: {len(result.added)} added, {len(result.updated)} updated, "
            f"{len(result.unchanged)} unchanged"
        )


app.command("run")(friendly(run_command))


@app.command()
@friendly
def report(
    run: Annotated[str, typer.Argument(help="A scenario run (its id is the last line of `scenarios run`).")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="md, csv, jsonl or latex.")] = "md",
    failures: Annotated[
        bool,
        typer.Option(
            "--failures",
            help="Also the failing and unscored checks with their events, and their transcripts.",
        ),
    ] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the tables to this file.")] = None,
    db: DbOption = None,
) -> None:
    """Pass share per scenario, accuracy per assertion kind (passed / (passed + failed), unscored apart)
    and the criteria, headed by what produced them (run, target, judge, offline or not)."""
    from evalcore.reports.scenarios import export_scenario_tables, scenario_report, scenario_tables

    found = scenario_report(open_store(db, existing=True), run)
    tables = scenario_tables(found.results, found.scenarios, found.turns)
    if not failures:
        tables.pop("failures")
        tables.pop("transcripts")
    try:
        texts = export_scenario_tables(tables, fmt, found.about)
    except ValueError as exc:  # an unknown format: an option the user gave
        raise UsageError(str(exc)) from None
    emit([("\n" if fmt in ("md", "latex") else "").join(texts.values()).rstrip("\n")], out)
