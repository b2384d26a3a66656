"""`evalcore annotate ...`: assignments, progress, agreement, silver calibration and gold/silver exports."""

from __future__ import annotations

import getpass
import math
from pathlib import Path
from typing import Annotated

import typer

from evalcore.cli.common import DbOption, ProjectOption, emit, friendly, open_store, project_id_of

app = typer.Typer(help="Annotation: assign conversations, follow progress, agreement, calibration, exports.")


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


@app.command()
@friendly
def assign(
    annotators: Annotated[str, typer.Option(help="Comma-separated names, e.g. ann,bea,cy.")],
    overlap: Annotated[int, typer.Option(help="How many annotators review each conversation.")] = 1,
    limit: Annotated[int | None, typer.Option(help="At most this many conversations (oldest first).")] = None,
    include_assigned: Annotated[
        bool, typer.Option("--include-assigned", help="Also conversations someone already has.")
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed of the tie-breaking draw.")] = 0,
    by: Annotated[str | None, typer.Option(help="Who assigns (default: the login name).")] = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Assign conversations to annotators, each to `overlap` of them, with balanced loads."""
    from evalcore.review import assign_items

    store = open_store(db)
    names = [n.strip() for n in annotators.split(",") if n.strip()]
    result = assign_items(
        store,
        project_id_of(store, project),
        names,
        overlap,
        by or getpass.getuser(),
        only_unassigned=not include_assigned,
        limit=limit,
        seed=seed,
    )
    shares = ", ".join(f"{k} {v}" for k, v in result.per_annotator.items())
    typer.echo(f"assigned {result.items} conversation(s): {shares}")


@app.command()
@friendly
def progress(project: ProjectOption = None, db: DbOption = None) -> None:
    """Per annotator: assigned, done (assigned with a verdict), reviewed in all; and counts per tier."""
    from evalcore.reports.status import tier_counts
    from evalcore.review import progress as progress_of

    store = open_store(db)
    pid = project_id_of(store, project)
    typer.echo(f"{'annotator':<20}{'assigned':>10}{'done':>8}{'reviewed':>10}")
    for p in progress_of(store, pid):
        typer.echo(f"{p.annotator:<20}{p.assigned:>10}{p.done:>8}{p.reviewed:>10}")
    typer.echo("tiers: " + ", ".join(f"{k} {v}" for k, v in tier_counts(store, pid).items()))


@app.command()
@friendly
def agreement(project: ProjectOption = None, db: DbOption = None) -> None:
    """Agreement on conversation and turn verdicts: overall, then per pair; then the judge against the
    people (seed 000, Table 6: Pearson's r of the judge's score and the people's decision)."""
    from evalcore.review import agreement_report, judge_human_correlation

    store = open_store(db)
    pid = project_id_of(store, project)
    for level, result in agreement_report(store, pid).items():
        typer.echo(
            f"{level}: {result.overall_name} {_fmt(result.overall)} "
            f"({len(result.annotators)} annotators, {result.pairable} of {result.units} labelled by 2+)"
        )
        for row in result.pairs.itertuples(index=False):
            typer.echo(
                f"  {row.a} / {row.b}: n={row.n} observed={_fmt(row.observed)} kappa={_fmt(row.kappa)}"
            )
    table6 = judge_human_correlation(store, pid)
    if table6.defined:
        typer.echo(
            f"judge vs people (Table 6): Pearson r {table6.r:.3f} [{table6.low:.3f}, {table6.high:.3f}], "
            f"p {table6.p_value:.2g}, on {table6.n} conversations people decided and the judge scored"
        )
    else:
        typer.echo(
            f"judge vs people (Table 6): n/a ({table6.n} conversations people decided and the judge scored; "
            "needs 5, with both verdicts present)"
        )


@app.command()
@friendly
def calibrate(
    target: Annotated[float, typer.Option(help="Target precision of the judge on gold.")] = 0.9,
    apply: Annotated[bool, typer.Option("--apply", help="Use the threshold found to define silver.")] = False,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """The LLM judge against gold: precision/recall per threshold and the threshold reaching `target`."""
    from evalcore.review import set_policy, silver_calibration

    store = open_store(db)
    pid = project_id_of(store, project)
    cal = silver_calibration(store, pid, target)
    typer.echo(f"{cal.n} decided conversation(s) with a judge score, {cal.positives} accepted by people")
    typer.echo(f"judge's own verdict: precision {_fmt(cal.judge_precision)}, recall {_fmt(cal.judge_recall)}")
    if cal.choice is None:
        typer.echo(f"no threshold reaches precision {target}")
        return
    c = cal.choice
    typer.echo(f"threshold {c.threshold:.3f}: precision {c.precision:.3f}, recall {_fmt(c.recall)} on {c.n}")
    if apply:
        set_policy(store, pid, judge_threshold=c.threshold)
        typer.echo("silver now means: judge score >= the threshold")


@app.command()
@friendly
def export(
    tier: Annotated[str, typer.Option(help="gold or silver (or rejected, unreviewed).")] = "gold",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="File (default: standard output).")] = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Export a tier as JSONL: conversations with corrections, who accepted what, the judge's scores."""
    from evalcore.items.jsonl import export_jsonl

    store = open_store(db)
    lines = export_jsonl(store, project_id_of(store, project), tier=tier, review=True)
    count = emit(lines, out)
    if out is not None:
        typer.echo(f"wrote {count} {tier} conversation(s) to {out}")
