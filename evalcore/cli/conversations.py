"""`evalcore conversations ...`: generate (resumable), list runs, export and import JSONL."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from evalcore.cli.common import (
    DbOption,
    ProjectOption,
    QueueOption,
    RetryFailedOption,
    friendly,
    queue_run,
    require_resume,
)
from evalcore.cli.common import open_store as _store
from evalcore.cli.common import project_id_of as _project_id
from evalcore.errors import EvalcoreError, UsageError

app = typer.Typer(help="Generate, export and import conversations.", no_args_is_help=True)
GENERATORS = ("doc_qa",)


def parse_lengths(text: str) -> list[int]:
    """'5' -> [5]; '2,3,4' -> [2, 3, 4]; anything else is a clear error."""
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise EvalcoreError(f"--d must be a number or numbers separated by commas (got '{text}')") from None


@app.command()
@friendly
def generate(
    generator: Annotated[str, typer.Option(help="Which generator: doc_qa.")] = "doc_qa",
    specs: Annotated[
        str, typer.Option(help="'selected' (latest selection), 'all', or comma-separated spec ids.")
    ] = "selected",
    d: Annotated[
        str, typer.Option("--d", help="Documents per chain (the seed's d), or several: '2,3,4' cycles them.")
    ] = "5",
    turns: Annotated[int, typer.Option("--turns", help="Question/answer pairs per conversation (L).")] = 7,
    per_spec: Annotated[int, typer.Option("--per-spec", help="Conversations per spec (n).")] = 10,
    seed: Annotated[int, typer.Option(help="Seed of chain sampling and generation.")] = 0,
    model: Annotated[str | None, typer.Option(help="Generator model 'provider/model'.")] = None,
    judge: Annotated[str | None, typer.Option(help="Judge model of the adherence check.")] = None,
    leave_spec: Annotated[
        bool,
        typer.Option(
            "--leave-spec", help="Let chains go on to retrieved documents when a spec is about fewer than d."
        ),
    ] = False,
    chains: Annotated[
        str,
        typer.Option(
            "--chains",
            help="'graph': chains of d documents through the document graph from the spec's own documents "
            "(seed 000); 'spec': chains only within the spec's documents (shorter, our earlier default).",
        ),
    ] = "graph",
    budget_usd: Annotated[float | None, typer.Option(help="Stop before spending more than this.")] = None,
    resume: Annotated[str | None, typer.Option(help="Resume this run id with its own parameters.")] = None,
    retry_failed: RetryFailedOption = False,
    queue: QueueOption = False,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Generate document-grounded conversations from specs (seed 000, Algorithm 2), verified."""
    from evalcore.generators.doc_qa.job import generate_conversations
    from evalcore.jobs import failed_units

    if generator not in GENERATORS:
        raise EvalcoreError(f"unknown generator '{generator}' (available: {', '.join(GENERATORS)})")
    require_resume(retry_failed, resume)
    store = _store(db)
    project_id = _project_id(store, project)
    which: str | list[str] = specs if specs in ("selected", "all") else [s.strip() for s in specs.split(",")]
    params = {} if resume else {
        "specs": which, "d": parse_lengths(d), "turns": turns, "per_spec": per_spec, "seed": seed,
        "model": model, "judge": judge, "budget": {"usd": budget_usd} if budget_usd is not None else None,
        "leave_spec": leave_spec, "chains": chains,
    }  # fmt: skip

    if queue:
        from evalcore.generators.doc_qa.job import start_run

        queue_run(store, resume or start_run(store, project_id, **params).id, retry_failed=retry_failed)
        return

    def progress(done: int, total: int) -> None:
        if done == total or done % 10 == 0:
            typer.echo(f"  {done}/{total} conversations")

    outcome = generate_conversations(
        store, project_id, resume, on_progress=progress, retry_failed=retry_failed, **params
    )
    run = outcome.run
    for message in run.warnings:
        typer.secho(f"note: {message}", fg=typer.colors.YELLOW)
    tiers = Counter(
        u["result"]["tier"] for u in store.finished_units(run.id).values() if (u["result"] or {}).get("tier")
    )  # a unit left out (it could only repeat the run's questions) has no conversation, so no tier
    typer.echo(
        f"run {run.id}: {outcome.added} conversation(s) added, {outcome.skipped} already done, "
        f"{len(outcome.failed)} failed, {outcome.left_out} left out (they could only repeat the run's "
        f"questions), {outcome.total} planned; tiers: "
        + (", ".join(f"{n} {t}" for t, n in sorted(tiers.items()) if t) or "none")
    )
    failed = failed_units(store, run.id)
    for key in outcome.failed:
        typer.echo(f"  failed {key}: {failed.get(key, '')}")
    if outcome.stopped:
        typer.secho(f"stopped: {outcome.stopped}; resume with --resume {run.id}", fg=typer.colors.YELLOW)
    if failed:
        typer.echo(f"{len(failed)} failed unit(s); generate them again with --resume {run.id} --retry-failed")


@app.command()
@friendly
def runs(project: ProjectOption = None, db: DbOption = None) -> None:
    """Generation runs with their progress (newest first)."""
    from evalcore.generators.doc_qa.job import RUN_KIND
    from evalcore.jobs import progress

    store = _store(db)
    for run in store.runs(_project_id(store, project), kind=RUN_KIND):
        done, total = progress(store, run)
        reason = f"  ({run.stopped_reason})" if run.stopped_reason else ""
        typer.echo(f"{run.id}  {run.status.value:<9} {done}/{total} units{reason}")


@app.command("export")
@friendly
def export(
    file: Annotated[
        Path | None,
        typer.Argument(help="File to write (or --out; default: standard output).", show_default=False),
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="File (default: standard output).")] = None,
    kind: Annotated[str, typer.Option(help="'conversation' or 'test'.")] = "conversation",
    generator: Annotated[str | None, typer.Option(help="Only this generator's conversations.")] = None,
    spec: Annotated[str | None, typer.Option(help="Only items of this spec id.")] = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Export conversations (or tests) as JSONL: one per line, with turns, grounding and tier."""
    from evalcore.items.exports import write_lines
    from evalcore.items.jsonl import KINDS, export_jsonl

    if kind not in KINDS:
        raise UsageError(f"--kind must be one of {', '.join(sorted(KINDS))} (got '{kind}')")
    if file is not None and out is not None and file != out:
        raise UsageError(f"two files to write: {file} and --out {out}; give one")
    out = out or file
    store = _store(db)
    lines = export_jsonl(store, _project_id(store, project), kind, generator=generator, spec_id=spec)
    if out is None:
        for line in lines:
            typer.echo(line)
        return
    typer.echo(f"wrote {write_lines(lines, out)} line(s) to {out}")


@app.command("import")
@friendly
def import_(
    path: Annotated[Path, typer.Argument(help="JSONL file of conversations and/or tests.")],
    kind: Annotated[str | None, typer.Option(help="Require every line to be this kind.")] = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Validate a JSONL file whole and import it; a file with any bad line changes nothing."""
    from evalcore.items.jsonl import import_jsonl

    store = _store(db)
    result = import_jsonl(store, _project_id(store, project), path, kind)
    typer.echo(f"imported {len(result.conversations)} conversation(s) and {len(result.tests)} test(s)")
