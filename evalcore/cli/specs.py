"""`evalcore specs ...`: generate, select, export and import specs, with the same options as the page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalcore.cli.common import (
    DbOption,
    ProjectOption,
    QueueOption,
    RetryFailedOption,
    friendly,
    open_store,
    progress_printer,
    project_id_of,
    queue_run,
    require_resume,
)

app = typer.Typer(help="Generate, select, export and import test specs.", no_args_is_help=True)


@app.command()
@friendly
def generate(
    m: Annotated[int, typer.Option("--m", "-m", help="How many candidate specs to generate.")] = 60,
    batch: Annotated[
        int,
        typer.Option(
            help="Specs per model call. 1 (the default) asks with seed 000's prompt, one spec per call; "
            "N > 1 asks for N per call with our prompt: m/N calls, and the business's facts (prices, codes, "
            "periods) kept exact where the seed's prompt makes them placeholders."
        ),
    ] = 1,
    seed: Annotated[int, typer.Option(help="Seed of the document sampling and the offline generator.")] = 0,
    semantic_fallback: Annotated[
        bool,
        typer.Option(
            "--semantic-fallback",
            help="A spec citing no document also gets the documents its embedding singles out, beside "
            "BM25's (off by default: fewer distinct questions, see evalcore/specs/fallback.py).",
        ),
    ] = False,
    model: Annotated[str | None, typer.Option(help="Generator model, e.g. openai/gpt-4o-mini.")] = None,
    budget_usd: Annotated[
        float | None, typer.Option("--budget-usd", help="Stop before spending more.")
    ] = None,
    resume: Annotated[str | None, typer.Option(help="Resume this generation run id.")] = None,
    retry_failed: RetryFailedOption = False,
    queue: QueueOption = False,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Generate candidate specs from the system card, documents and tools."""
    from evalcore.jobs import failed_units
    from evalcore.specs.generation import create_generation, generate_specs

    require_resume(retry_failed, resume)
    store = open_store(db)
    pid = project_id_of(store, project)
    budget = {"usd": budget_usd} if budget_usd is not None else None
    if queue:
        run_id = (
            resume
            or create_generation(
                store,
                pid,
                m,
                batch=batch,
                seed=seed,
                budget=budget,
                model=model,
                semantic_fallback=semantic_fallback,
            ).id
        )
        queue_run(store, run_id, retry_failed=retry_failed)
        return
    outcome = generate_specs(
        store, pid, m, batch=batch, seed=seed, run_id=resume, budget=budget, model=model,
        retry_failed=retry_failed, on_progress=progress_printer("generating"),
        semantic_fallback=semantic_fallback,
    )  # fmt: skip
    run = outcome.run
    typer.echo(f"run {run.id}: {outcome.added} spec(s) added, status {run.status.value}")
    if outcome.duplicates:
        typer.echo(f"{outcome.duplicates} draft(s) repeated an earlier spec's scenario and were not added")
    if outcome.failed:
        typer.echo(
            f"{len(outcome.failed)} unit(s) failed (kept with their raw output): {', '.join(outcome.failed)}"
        )
    if outcome.short:
        typer.echo(outcome.short)
    if outcome.exhausted:
        typer.echo(f"stopped: {run.stopped_reason}")
    elif run.status.value == "stopped":
        typer.echo(f"stopped: {run.stopped_reason}; resume with --resume {run.id}")
    if failed_units(store, run.id):
        typer.echo(f"generate the failed units again with --resume {run.id} --retry-failed")


@app.command()
@friendly
def select(
    k: Annotated[int, typer.Option("--k", "-k", help="How many specs to select.")] = 30,
    alpha: Annotated[
        float | None,
        typer.Option(
            help="Weight of document coverage against diversity (default: ln 2 / 2 ~= 0.35; see "
            "evalcore/specs/selection.py for why).",
            show_default=False,
        ),
    ] = None,
    gamma: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            help="Width of the RBF kernel of diversity (default: 1 / the median squared distance between "
            "the candidates' embeddings; see evalcore/specs/selection.py).",
            show_default=False,
        ),
    ] = None,
    method: Annotated[str, typer.Option(help="greedy, random or maxmin.")] = "greedy",
    seed: Annotated[int, typer.Option(help="Seed of the random baseline.")] = 0,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Select k specs for diversity and document coverage (locked and human specs always stay)."""
    from evalcore.specs.selecting import as_method, select_specs
    from evalcore.specs.selection import DEFAULT_ALPHA  # numpy: imported here, not for --help

    store = open_store(db)
    alpha = DEFAULT_ALPHA if alpha is None else alpha
    pid = project_id_of(store, project)
    outcome = select_specs(
        store, pid, k, alpha=alpha, gamma=gamma or None, method=as_method(method), seed=seed
    )
    m, used = outcome.metrics, outcome.run.params["gamma"]
    typer.echo(f"selected {len(outcome.selected)} spec(s) with {method}: SPWD {m.spwd:.2f}, "
               f"Var Div {m.var_div:.3f}, Coverage {m.coverage} document(s); alpha {alpha:.3f}, "
               f"gamma {used:.4g}")  # fmt: skip


@app.command("export")
@friendly
def export_(
    fmt: Annotated[str, typer.Option("--format", "-f", help="yaml or gherkin.")] = "yaml",
    selected: Annotated[bool, typer.Option("--selected", help="Only the selected specs.")] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="File to write (default: stdout).")] = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Export specs as YAML or as a Gherkin .feature file."""
    from evalcore.specs.transfer import export_specs

    store = open_store(db)
    text = export_specs(store, project_id_of(store, project), fmt, selected_only=selected)
    if out is None:
        typer.echo(text)
    else:
        out.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {out}")


@app.command("import")
@friendly
def import_(
    path: Annotated[Path, typer.Argument(help="A .yaml/.yml or .feature file of specs.")],
    author: Annotated[str, typer.Option(help="Who is importing (recorded on every spec).")],
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Import human-written specs; a file with any problem changes nothing."""
    from evalcore.specs.transfer import import_specs_file

    store = open_store(db)
    result = import_specs_file(store, project_id_of(store, project), path, author)
    typer.echo(f"{len(result.added)} spec(s) added, {len(result.updated)} updated")
