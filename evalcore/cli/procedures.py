"""`evalcore procedures ...`: procedure-grounded tests for tool-using agents (seed 001; issue 17, item 11).

`procedures generate` runs (or resumes) the generation job and prints the run's id on its last line
(`--walk coverage` samples paths by the coverage-directed walk instead of the seed's Algorithm 1);
`procedures intents` lists the intents the project has (from its procedures and its card's task);
`procedures graphs` shows each procedure's flowgraph and conversation graph with their broken rules;
`procedures paths` the sampled paths and their edge coverage; `procedures tests` the tests cut from the
run's conversations (a line each, or JSONL with `--out`); `procedures score` plays the tests against the
offline agents (demo, oracle, null) and prints Table 2 side by side with 95% Wilson intervals, and the
failing tests of one agent with `--failing`. Without `--run` they read the newest run.
`procedures report` prints Table 2 of procedure test runs against targets (`evalcore run --tests`, whose
work `play_tests` does), several side by side, exported as md, csv, jsonl or latex.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from evalcore.cli.common import (
    DbOption,
    ProjectOption,
    QueueOption,
    RetryFailedOption,
    emit,
    friendly,
    open_store,
    progress_printer,
    project_id_of,
    queue_run,
    require_resume,
)
from evalcore.errors import EvalcoreError, UsageError

app = typer.Typer(
    help="Procedure-grounded tests (ALMITA): graphs, paths, conversations and tests from the procedures.",
    no_args_is_help=True,
)
RunOption = Annotated[str | None, typer.Option("--run", help="Generation run id (default: the newest).")]


def _run_id(store, project_id: str, run: str | None) -> str:
    from evalcore.generators.procedure.job import latest_run

    if run:
        return run
    newest = latest_run(store, project_id)
    if newest is None:
        raise EvalcoreError("no procedure generation run yet: run `evalcore procedures generate` first")
    return newest.id


@app.command()
@friendly
def generate(
    procedures: Annotated[
        str | None, typer.Option(help="Comma-separated procedure names (default: all).")
    ] = None,
    paths: Annotated[int, typer.Option(help="Paths (conversations) per conversation graph (n).")] = 5,
    walk: Annotated[
        str,
        typer.Option(
            help="Path sampling: weighted (seed 001, Algorithm 1) or coverage (coverage-directed walk)."
        ),
    ] = "weighted",
    p: Annotated[float, typer.Option("--p", help="Noise probability per agent node (seed: ~0.2).")] = 0.2,
    seed: Annotated[int, typer.Option(help="Seed of noise, walks and generation.")] = 0,
    model: Annotated[str | None, typer.Option(help="Generator model 'provider/model'.")] = None,
    intents: Annotated[
        int, typer.Option(help="Also generate this many new intents and a procedure for each (A.1, A.2).")
    ] = 0,
    budget_usd: Annotated[float | None, typer.Option(help="Stop before spending more than this.")] = None,
    resume: Annotated[str | None, typer.Option(help="Resume this run id with its own parameters.")] = None,
    retry_failed: RetryFailedOption = False,
    queue: QueueOption = False,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Generate flowgraphs, conversation graphs, paths, conversations and tests from the procedures."""
    from evalcore.generators.procedure.job import create_generation, execute_generation, list_graphs

    require_resume(retry_failed, resume)
    store = open_store(db)
    project_id = project_id_of(store, project)
    if resume is None:
        names = [n.strip() for n in procedures.split(",")] if procedures else None
        budget = {"usd": budget_usd} if budget_usd is not None else None
        options = {
            "paths": paths,
            "walk": walk,
            "p": p,
            "seed": seed,
            "model": model,
            "intents": intents,
            "budget": budget,
        }
        run_id = create_generation(store, project_id, procedures=names, **options).id
    else:
        run_id = resume
    if queue:
        queue_run(store, run_id, retry_failed=retry_failed)
        return
    outcome = execute_generation(
        store, run_id, on_progress=progress_printer("procedures"), retry_failed=retry_failed
    )
    for g in list_graphs(store, project_id, run_id):
        conv = g.conversation_graph
        state = "valid" if g.flowgraph.valid and conv and conv.valid else "kept, not used"
        typer.echo(f"{g.procedure}: {state}; {len(g.conversations)} conversation(s)")
    if outcome.failed:
        typer.echo(f"failed: {', '.join(outcome.failed)} (resume with --resume {run_id} --retry-failed)")
    for warning in store.run(run_id).warnings:
        typer.secho(f"warning: {warning}", err=True, fg="yellow")
    typer.echo(f"{outcome.done}/{outcome.total} procedure(s) done, run {outcome.run.status.value}")
    typer.echo(run_id)


def _graph_lines(name: str, graph) -> list[str]:
    if graph is None:
        return [f"  {name}: not made (the graph before it is not valid)"]
    head = f"  {name}: {len(graph.nodes)} nodes, {len(graph.edges)} edges, " + (
        "valid" if graph.valid else f"{len(graph.broken)} broken rule(s)"
    )
    return [head, *(f"    - {rule}" for rule in graph.broken)]


@app.command()
@friendly
def graphs(
    run: RunOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per procedure.")] = False,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Each procedure's flowgraph and conversation graph, with the rules they break."""
    from evalcore.generators.procedure.job import list_graphs

    store = open_store(db, existing=True)
    project_id = project_id_of(store, project)
    for g in list_graphs(store, project_id, _run_id(store, project_id, run)):
        if as_json:
            typer.echo(g.model_dump_json())
            continue
        typer.echo(g.procedure)
        for line in _graph_lines("flowgraph", g.flowgraph) + _graph_lines(
            "conversation graph", g.conversation_graph
        ):
            typer.echo(line)
        if g.generated_apis:
            typer.echo(f"  generated APIs (not the project's): {', '.join(g.generated_apis)}")
        if g.noisy_graph is not None:
            noise = sum(n.noise for n in g.noisy_graph.nodes)
            typer.echo(f"  noise: {noise} node(s) added")


@app.command("paths")
@friendly
def paths_(run: RunOption = None, project: ProjectOption = None, db: DbOption = None) -> None:
    """The sampled paths of each conversation graph and the share of its edges they cover."""
    from evalcore.generators.procedure.job import list_graphs

    store = open_store(db, existing=True)
    project_id = project_id_of(store, project)
    for g in list_graphs(store, project_id, _run_id(store, project_id, run)):
        if g.coverage is None:
            typer.echo(f"{g.procedure}: no paths (no valid conversation graph)")
            continue
        typer.echo(f"{g.procedure}: {len(g.paths)} path(s), edge coverage {g.coverage:.0%}")
        for path in g.paths:
            typer.echo("  " + " -> ".join(path))


def _expected(test) -> str:
    turn = test.expected
    if turn.role.value == "tool_call":
        return f"call {turn.tool_name}({json.dumps(turn.arguments or {}, ensure_ascii=False)})"
    return f"reply: {turn.content[:100]}"


@app.command()
@friendly
def tests(
    run: RunOption = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the tests as JSONL to this file.")] = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """The tests cut from the run's conversations: context length and expected action."""
    store = open_store(db, existing=True)
    found = _run_tests(store, project_id_of(store, project), run)
    if out is not None:
        written = emit((t.model_dump_json() for t in found), out)
        typer.echo(f"{written} test(s) written to {out}")
        return
    for t in found:
        typer.echo(f"{t.id}: {len(t.context)} turn(s) of context -> {_expected(t)}")
    typer.echo(f"{len(found)} test(s)")


def _run_tests(store, project_id: str, run: str | None) -> list:
    from evalcore.generators.procedure.job import list_graphs
    from evalcore.items.store_ops import list_tests

    run_id = _run_id(store, project_id, run)
    conversations = {c for g in list_graphs(store, project_id, run_id) for c in g.conversations}
    return [t for t in list_tests(store, project_id) if t.conversation_id in conversations]


@app.command()
@friendly
def score(
    agents: Annotated[
        str, typer.Option(help="Comma-separated offline agents: demo, oracle, null.")
    ] = "demo,oracle,null",
    threshold: Annotated[
        float | None, typer.Option(help="Correct-reply similarity threshold (default: the calibrated one).")
    ] = None,
    embedding: Annotated[str | None, typer.Option(help="Embedding model for reply similarity.")] = None,
    failing: Annotated[str | None, typer.Option(help="List this agent's failing tests.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the demo agent's mistakes.")] = 0,
    run: RunOption = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Table 2 (seed 001): the seven metrics per agent on the run's tests, with 95% Wilson intervals."""
    from evalcore.generators.procedure.metrics import METRICS
    from evalcore.reports.procedure_tables import score_offline_agents

    store = open_store(db, existing=True)
    project_id = project_id_of(store, project)
    found = _run_tests(store, project_id, run)
    if not found:
        raise EvalcoreError("the run has no tests to score")
    names = [a.strip() for a in agents.split(",") if a.strip()]
    result = score_offline_agents(
        store, project_id, found, names + ([failing] if failing else []), threshold=threshold,
        embedding=embedding, seed=seed,
    )  # fmt: skip
    if not result.calibrated:
        typer.secho(
            f"warning: {result.model} has no calibrated reply threshold; using {result.threshold:g}",
            err=True,
            fg="yellow",
        )
    typer.echo(f"{len(found)} tests; correct reply at similarity >= {result.note}")
    typer.echo(f"{'agent':<8}" + "".join(f"{m:>22}" for m in METRICS))
    scored = result.scores
    for name in dict.fromkeys(names):
        cells = [
            f"{100 * hits / n:.1f} [{100 * low:.0f},{100 * high:.0f}]" if n else "n/a"
            for hits, n, low, high in result.cells(name)
        ]
        typer.echo(f"{name:<8}" + "".join(f"{c:>22}" for c in cells))
    if failing:
        wrong = [s for s in scored[failing] if not s.correct]
        typer.echo(f"\n{failing}: {len(wrong)} failing test(s)")
        for s in wrong:
            got = s.predicted
            said = (
                f"call {got.tool_name}({json.dumps(got.arguments)})"
                if got.kind == "api"
                else f"reply: {got.text[:80]}"
            )
            typer.echo(f"  {s.test_id}: got {said}")


@app.command("intents")
@friendly
def intents_(project: ProjectOption = None, db: DbOption = None) -> None:
    """The project's intents: from its procedures, then from its system card's task."""
    from evalcore.generators.procedure.intents import known_intents

    store = open_store(db, existing=True)
    project_id = project_id_of(store, project)
    for intent in known_intents(store.procedures(project_id), store.system_card(project_id)):
        where = f"procedure {intent.procedure}" if intent.procedure else intent.source
        typer.echo(f"{intent.text}  ({where})")


def is_procedure_run(store, run_id: str) -> bool:
    """Whether `run_id` is a procedure test run (what `run --resume` resumes with `play_tests`)."""
    from evalcore.runs.procedure_tests import RUN_KIND

    return store.run(run_id).kind == RUN_KIND


def _warn_uncalibrated(scored: list) -> None:
    """A warning per run scored at the default threshold because its embedding model has none calibrated."""
    for s in scored:
        if not s.calibrated:
            typer.secho(f"warning: run {s.run.id}: reply threshold {s.threshold_note}", err=True, fg="yellow")


def _generations_of(store, run_id: str) -> str:
    """Which generation runs the procedure test run's tests come from, with their counts."""
    from collections import Counter

    from evalcore.items.current import read_items

    found = read_items(store, store.run(run_id).params["units"])
    runs = Counter(item.test().provenance.run_id or "no recorded run" for item in found.values())
    return "generation(s) " + ", ".join(f"{r} ({n} tests)" for r, n in runs.most_common())


def play_tests(
    *,
    target: str,
    resume: str | None,
    retry_failed: bool,
    queue: bool,
    generation: str | None,
    spec: str | None,
    limit: int | None,
    concurrency: int | None,
    limits: dict[str, float],
    project: str | None,
    db: str | None,
    name: str | None = None,
    notes: str = "",
) -> None:
    """`evalcore run --tests`: play the procedure tests against an acting target, then print Table 2."""
    from evalcore.reports.procedure_tables import export_procedure_tables, score_run
    from evalcore.runs.procedure_tests import DEFAULT_CONCURRENCY, create_procedure_run, execute_procedure_run

    store = open_store(db)
    require_resume(retry_failed, resume)
    if resume:
        run_id = resume
    else:
        if not target:
            raise EvalcoreError("give --target NAME (see `evalcore targets list`), or --resume RUN_ID")
        run_id = create_procedure_run(
            store,
            project_id_of(store, project),
            target,
            generation=generation,
            spec_id=spec,
            limit=limit,
            budget=limits,
            concurrency=concurrency or DEFAULT_CONCURRENCY,
            name=name,
            notes=notes,
        ).id
        if generation is None:
            typer.echo(f"playing the tests of {_generations_of(store, run_id)}")
    if queue:
        queue_run(store, run_id, retry_failed=retry_failed, budget=limits, concurrency=concurrency)
        return
    outcome = execute_procedure_run(
        store, run_id, on_progress=progress_printer("tests"), retry_failed=retry_failed
    )
    run = outcome.run
    typer.echo(
        f"run {run.id}: {run.status.value}; target {run.target}; {outcome.done}/{outcome.total} tests done "
        f"({outcome.played} now, {outcome.crashed} crashed)"
    )
    for warning in run.warnings:
        typer.secho(f"warning: {warning}", err=True, fg="yellow")
    if outcome.done:
        scored = [score_run(store, run.id)]
        _warn_uncalibrated(scored)
        typer.echo(export_procedure_tables(scored, "md")["table2"], nl=False)
    if run.status.value not in ("finished", "running"):
        typer.echo(f"{run.status.value} ({run.stopped_reason}); resume with: evalcore run --resume {run.id}")


@app.command()
@friendly
def report(
    runs: Annotated[
        list[str] | None,
        typer.Option(
            "--run", help="Procedure test run id(s), side by side (default: the newest per target)."
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="md, csv, jsonl or latex.")] = "md",
    failing: Annotated[bool, typer.Option("--failing", help="Also each run's failing tests.")] = False,
    threshold: Annotated[
        float | None, typer.Option(help="Correct-reply similarity threshold (default: the calibrated one).")
    ] = None,
    embedding: Annotated[str | None, typer.Option(help="Embedding model for reply similarity.")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of printing.")] = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Table 1 (seed 001: what survived each stage of the newest generation run) and Table 2 of
    procedure test runs against targets, with 95% Wilson intervals."""
    from evalcore.generators.procedure.funnel import funnel, funnel_line
    from evalcore.generators.procedure.job import latest_run
    from evalcore.reports.procedure_tables import export_procedure_tables, score_run
    from evalcore.runs.procedure_tests import procedure_runs

    store = open_store(db, existing=True)
    pid = project_id_of(store, project)
    generation = latest_run(store, pid)
    if generation is not None and fmt == "md" and not out:
        line = funnel_line(funnel(store, pid, generation.id))
        typer.echo(f"Table 1, generation run {generation.id}: {line}\n")
    if not runs:
        newest: dict[str | None, str] = {}
        for r in procedure_runs(store, project_id_of(store, project)):
            newest.setdefault(r.target, r.id)
        runs = list(reversed(newest.values()))
    if not runs:
        raise EvalcoreError("no procedure test run yet: start one with `evalcore run --tests --target NAME`")
    scored = [score_run(store, r, threshold=threshold, embedding=embedding) for r in runs]
    _warn_uncalibrated(scored)
    try:
        texts = export_procedure_tables(scored, fmt, failing=failing)
    except ValueError as e:
        raise UsageError(str(e)) from None
    body = ("\n" if fmt in ("md", "latex") else "").join(texts.values())
    if out:
        out.write_text(body, encoding="utf-8")
        typer.echo(f"wrote {len(texts)} table(s) to {out}", err=True)
    else:
        typer.echo(body, nl=False)
