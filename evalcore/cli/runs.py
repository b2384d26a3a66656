"""`evalcore run`, `evalcore report`, `evalcore targets ...`: the functions of the Runs and Reports pages.

evalcore targets add bot --kind openai --base-url http://localhost:8000/v1 --model llama3.1
evalcore run --target bot --judge anthropic/claude-sonnet-4-6 --budget 2 --concurrency 8
evalcore run --tests --target agent-bot     # procedure tests: the next action with the tools (Table 2)
evalcore report --by spec --format latex
evalcore report --fail-above 0.25        # exit 1 when the failure rate is above 25% (CI gate)
evalcore report --baseline RUN --fail-on-regression --summary gate.md   # exit 1 when worse than RUN
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

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
from evalcore.errors import EvalcoreError, UsageError

if TYPE_CHECKING:
    from evalcore.reports.compare import RunComparison

app = typer.Typer(help="Runs against targets and their reports.")
targets_app = typer.Typer(help="The targets (systems under test) of a project.", no_args_is_help=True)
app.add_typer(targets_app, name="targets")


def _percent(value: float) -> str:
    return "-" if value != value else f"{value:.1%}"


@app.command("run")
@friendly
def run_(
    target: Annotated[
        str, typer.Option("--target", "-t", help="Target name (see `evalcore targets list`).")
    ] = "",
    judge: Annotated[
        str | None, typer.Option(help="Judge model 'provider/model', or 'offline' (default: the judge role).")
    ] = None,
    judge_template: Annotated[
        str,
        typer.Option(
            help="The judge's prompt: 'ours' (rules and error types in JSON) or 'prometheus' (seed 000's: "
            "Prometheus' absolute grading, 'Feedback: ... [RESULT] 0/1'); the same scores and error types."
        ),
    ] = "ours",
    budget: Annotated[float | None, typer.Option("--budget", help="Stop before spending more USD.")] = None,
    budget_tokens: Annotated[int | None, typer.Option(help="Stop before using more tokens.")] = None,
    concurrency: Annotated[int | None, typer.Option(help="Conversations played at once (default 4).")] = None,
    source: Annotated[str, typer.Option(help="conversations, tests or both.")] = "conversations",
    spec: Annotated[str | None, typer.Option(help="Only the items of this spec id.")] = None,
    limit: Annotated[int | None, typer.Option(help="Play at most this many items.")] = None,
    resume: Annotated[str | None, typer.Option(help="Resume this run id instead of starting one.")] = None,
    retry_failed: RetryFailedOption = False,
    queue: QueueOption = False,
    tests: Annotated[
        bool, typer.Option("--tests", help="Play the procedure tests: the target's next action, with tools.")
    ] = False,
    generation: Annotated[
        str | None, typer.Option(help="With --tests: only the tests of this procedure generation run.")
    ] = None,
    history: Annotated[
        str,
        typer.Option(help="The target's earlier turns: 'own' (its own replies) or 'expected' (the answers)."),
    ] = "own",
    pairs: Annotated[
        bool,
        typer.Option(
            "--pairs", help="Also ask each later turn alone (its resolved question), for the pair table."
        ),
    ] = False,
    include_rejected: Annotated[
        bool, typer.Option(help="Also play the items annotators rejected (left out by default).")
    ] = False,
    name: RunNameOption = None,
    notes: RunNotesOption = "",
    repeat: Annotated[
        int,
        typer.Option(
            help="Play the same items N times, as N linked runs named '#1' to '#N', and print pass^k."
        ),
    ] = 1,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Play conversations (turn by turn) or tests against a target and judge every turn; with --tests, the
    procedure tests (the target's next action, Table 2 of seed 001)."""
    from evalcore.cli.procedures import is_procedure_run, play_tests

    if tests or (resume and is_procedure_run(open_store(db), resume)):
        # Said, not ignored: what only conversation runs have.
        unused = [
            flag
            for flag, given in (
                ("--judge", judge is not None), ("--judge-template", judge_template != "ours"),
                ("--source", source != "conversations"), ("--history", history != "own"), ("--pairs", pairs),
                ("--include-rejected", include_rejected), ("--repeat", repeat != 1),
            )
            if given
        ]  # fmt: skip
        if unused:
            raise UsageError(
                f"{', '.join(unused)}: not for procedure tests (judged by reply similarity, played once, "
                "rejected tests left out)"
            )
        limits = {k: v for k, v in {"usd": budget, "tokens": budget_tokens}.items() if v is not None}
        play_tests(
            target=target,
            resume=resume,
            retry_failed=retry_failed,
            queue=queue,
            generation=generation,
            spec=spec,
            limit=limit,
            concurrency=concurrency,
            limits=limits,
            project=project,
            db=db,
            name=name,
            notes=notes,
        )
        return
    from evalcore.reports.pass_k import pass_k_line, run_pass_k
    from evalcore.runs.job import DEFAULT_CONCURRENCY
    from evalcore.runs.repetitions import create_repetitions

    store = open_store(db)
    limits = {k: v for k, v in {"usd": budget, "tokens": budget_tokens}.items() if v is not None}
    require_resume(retry_failed, resume)
    if resume:
        run_ids = [resume]
    else:
        if not target:
            raise EvalcoreError("give --target NAME (see `evalcore targets list`), or --resume RUN_ID")
        pid = project_id_of(store, project)
        if history not in ("own", "expected"):
            raise UsageError(f"--history is 'own' or 'expected', not {history!r}")
        options = {"judge": judge, "judge_template": judge_template, "budget": limits, "source": source,
                   "spec_id": spec, "limit": limit,
                   "history": history, "single_turn_pairs": pairs,
                   "include_rejected": include_rejected, "name": name, "notes": notes}  # fmt: skip
        chosen = concurrency or DEFAULT_CONCURRENCY
        run_ids = [
            r.id for r in create_repetitions(store, pid, target, repeat, concurrency=chosen, **options)
        ]
    for run_id in run_ids:
        if queue:
            queue_run(store, run_id, retry_failed=retry_failed, budget=limits, concurrency=concurrency)
        else:
            _play(store, run_id, limits, concurrency, retry_failed)
    if len(run_ids) > 1 and not queue:
        typer.echo(
            f"over {len(run_ids)} repetitions: {pass_k_line(run_pass_k(store, store.run(run_ids[0])))}"
        )


def _play(store, run_id: str, limits: dict[str, float], concurrency: int | None, retry_failed: bool) -> None:
    """Play one run in this process and print how it went."""
    from evalcore.reports import build_report
    from evalcore.runs import execute_run

    outcome = execute_run(
        store, run_id, on_progress=progress_printer("turns"), budget=limits or None, concurrency=concurrency,
        retry_failed=retry_failed,
    )  # fmt: skip
    run = outcome.run
    typer.echo(
        f"run {run.id}: {run.status.value}; target {run.target}, judge {run.judge}; "
        f"{outcome.done}/{outcome.total} turns done ({outcome.played} now, {outcome.crashed} crashed, "
        f"{outcome.unscored} unscored)"
    )
    for warning in run.warnings:
        typer.secho(f"warning: {warning}", err=True, fg="yellow")
    if outcome.done:
        overall = build_report(store, [run.id]).overall
        typer.echo(
            f"failure rate {_percent(overall['failure_rate'])} "
            f"[{_percent(overall['ci_low'])}, {_percent(overall['ci_high'])}] "
            f"over {int(overall['n'])} scored turns"
        )
    if run.status.value == "running":
        typer.echo(f"other processes still play {run.id}; this one played what they had not claimed")
    elif run.status.value != "finished":
        typer.echo(f"{run.status.value} ({run.stopped_reason}); resume with: evalcore run --resume {run.id}")


def _json(text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise EvalcoreError(f"--template is not JSON: {e}") from None


def _rate(text: str) -> float:
    """'0.25', '25%' or '25' as 0.25; anything else, or a rate outside 0-100%, is a usage error."""
    raw = text.strip()
    try:
        value = float(raw.removesuffix("%"))
    except ValueError:
        value = math.nan
    rate = value / 100 if raw.endswith("%") or value > 1 else value
    if not 0 <= rate <= 1:  # also refuses nan
        raise UsageError(f"--fail-above takes a rate such as 0.25 or 25% (got '{text}')")
    return rate


@app.command("report")
@friendly
def report(
    run: Annotated[str | None, typer.Option("--run", help="Run id (default: the latest run).")] = None,
    by: Annotated[
        list[str] | None,
        typer.Option(
            help="Table(s): spec, error_type, error_class, n_documents, query_type, turns, pair, tier "
            "(default: all)."
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="md, csv, jsonl or latex.")] = "md",
    tiers: Annotated[str, typer.Option(help="all, gold or silver+gold.")] = "all",
    compare: Annotated[str | None, typer.Option(help="A second run id: the tables side by side.")] = None,
    fail_above: Annotated[
        str | None, typer.Option(help="Exit 1 when the failure rate is above this (0.25 or 25%).")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of printing.")] = None,
    baseline: Annotated[
        str | None, typer.Option(help="A baseline run id: what changed item by item, with McNemar's test.")
    ] = None,
    fail_on_regression: Annotated[
        bool, typer.Option(help="Exit 1 when the paired test says the run is worse than --baseline.")
    ] = False,
    alpha: Annotated[float, typer.Option(help="Level of the paired test for --fail-on-regression.")] = 0.05,
    summary: Annotated[
        Path | None, typer.Option(help="Write the compare with --baseline here as Markdown (for CI).")
    ] = None,
    include_rejected: Annotated[
        bool, typer.Option(help="Count the items annotators rejected (left out of tables and compare).")
    ] = False,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Failure-rate tables of a run (with counts and 95% Wilson intervals), or two runs side by side."""
    from evalcore.reports import build_report, compare_runs, export_tables, provenance, table_name
    from evalcore.reports.compare import compare_to_baseline, scope_label
    from evalcore.reports.pass_k import pass_k_line, run_pass_k
    from evalcore.runs import RUN_KIND

    threshold = _rate(fail_above) if fail_above is not None else None  # a usage error before any work
    if baseline is None and (fail_on_regression or summary is not None):
        raise UsageError("--fail-on-regression and --summary need --baseline RUN")
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha takes a level between 0 and 1 such as 0.05 (got {alpha})")
    store = open_store(db)
    if run is None:
        runs = store.runs(project_id_of(store, project), kind=RUN_KIND)
        if not runs:
            raise EvalcoreError("no run yet: start one with `evalcore run --target NAME`")
        run = runs[0].id
    # Compared first: a baseline that cannot be compared is a usage error before anything is written.
    comparison = (
        compare_to_baseline(store, run, baseline, include_rejected=include_rejected) if baseline else None
    )
    try:
        names = [table_name(b) for b in by] if by else None
        rep = build_report(
            store, [run, compare] if compare else [run], tiers=tiers, include_rejected=include_rejected
        )
        tables = compare_runs(rep.frame, run, compare) if compare else rep.tables
        chosen = {k: v for k, v in tables.items() if names is None or k in names}
        texts = export_tables(chosen, fmt, provenance(rep.runs))
    except ValueError as e:  # an unknown table, tier scope or format: options the user gave
        raise UsageError(str(e)) from None
    body = (
        ("\n" if fmt in ("md", "latex") else "").join(texts.values())
        if len(texts) > 1
        else next(iter(texts.values()))
    )
    if out:
        out.write_text(body, encoding="utf-8")
        typer.echo(f"wrote {len(texts)} table(s) to {out}", err=True)
    else:
        typer.echo(body, nl=False)
    overall = rep.overall
    typer.echo(
        f"run {run}{f' vs {compare}' if compare else ''}: failure rate {_percent(overall['failure_rate'])} "
        f"[{_percent(overall['ci_low'])}, {_percent(overall['ci_high'])}], {int(overall['failures'])} of "
        f"{int(overall['n'])} scored turns failed, {int(overall['unscored'])} unscored, "
        f"{rep.crashes} crashes; counts {scope_label(tiers, include_rejected)}",
        err=True,
    )
    repeated = run_pass_k(store, store.run(run), include_rejected=include_rejected)
    if len(repeated) > 1:  # a run repeated with --repeat N: pass^k beside the failure rate
        typer.echo(f"over {len(repeated)} repetitions of {run}: {pass_k_line(repeated)}", err=True)
    if rep.outdated:
        typer.echo(
            f"{rep.outdated} turn(s) left out of the {tiers} scope: judged against an expected answer "
            "corrected since (run again to judge them against the correction)",
            err=True,
        )
    if comparison is not None:
        _print_comparison(comparison, alpha, summary)
        if fail_on_regression and comparison.overall.worse(alpha):
            raise typer.Exit(1)
    if threshold is not None and overall["failure_rate"] > threshold:
        typer.secho(
            f"failure rate {_percent(overall['failure_rate'])} is above {fail_above}", err=True, fg="red"
        )
        raise typer.Exit(1)


def _print_comparison(comparison: RunComparison, alpha: float, summary: Path | None) -> None:
    """The compare with the baseline on stderr (what broke first), and its Markdown summary if asked."""
    from evalcore.reports.compare import broken_lines, summary_markdown

    o = comparison.overall
    worse = o.worse(alpha)
    for line in broken_lines(comparison):
        typer.echo(line, err=True)
    typer.secho(
        f"vs baseline {comparison.baseline.id} ({comparison.scope}, {o.n:,} turns in both): failure rate "
        f"{_percent(o.baseline_rate)} -> {_percent(o.rate)}, {o.broken} broken, {o.fixed} fixed, "
        f"McNemar p = {o.p_value:.3g}: {'worse' if worse else 'not worse'} at alpha {alpha:g}",
        err=True,
        fg="red" if worse else None,
    )
    if summary is not None:
        summary.write_text(summary_markdown(comparison, alpha), encoding="utf-8")
        typer.echo(f"wrote the compare summary to {summary}", err=True)


@targets_app.command("list")
@friendly
def targets_list(project: ProjectOption = None, db: DbOption = None) -> None:
    """The project's targets (the offline demo target is always there)."""
    from evalcore.targets import describe, list_targets

    store = open_store(db)
    for target in list_targets(store, project_id_of(store, project)):
        typer.echo(f"{target.name:<20} {describe(target)}")


@targets_app.command("add")
@friendly
def targets_add(
    name: Annotated[str, typer.Argument(help="Target name.")],
    kind: Annotated[
        str,
        typer.Option(help="openai, anthropic, http, python, demo, agent, rasa, http_events or demo_flows."),
    ],
    model: Annotated[str | None, typer.Option(help="Model (openai, anthropic).")] = None,
    base_url: Annotated[str | None, typer.Option(help="Base URL of an OpenAI-compatible API.")] = None,
    system_prompt: Annotated[str | None, typer.Option(help="System prompt.")] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="NAME of the environment variable with the key.")
    ] = None,
    url: Annotated[str | None, typer.Option(help="Endpoint URL (http).")] = None,
    header: Annotated[
        list[str] | None, typer.Option(help="'Name: value' (http); ${ENV} for secrets.")
    ] = None,
    template: Annotated[str | None, typer.Option(help="Request body template, JSON (http).")] = None,
    response_path: Annotated[
        str | None, typer.Option(help="Path of the reply in the response (http).")
    ] = None,
    function: Annotated[str | None, typer.Option("--callable", help="module:function (python).")] = None,
    agent: Annotated[
        str | None, typer.Option(help="demo, oracle or null (agent: built-in procedure-test agents).")
    ] = None,
    timeout: Annotated[float | None, typer.Option(help="Seconds per reply.")] = None,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            help="More fields as a JSON object, e.g. an http_events target's event_types and event_fields, "
            "a demo_flows target's defect_rate and inject.",
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Always ask the endpoint (openai, anthropic).")
    ] = False,
    tool_mode: Annotated[
        str | None,
        typer.Option(
            help="How procedure tests offer the tools (openai, anthropic): native (the API's tool calling, "
            "the default) or prompt (seed 001's A.8: the procedure and the tools in the prompt)."
        ),
    ] = None,
    target_model: Annotated[
        str | None, typer.Option(help="The model behind an http/python target, so the judge is another one.")
    ] = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Add (or replace) a target; secrets are given as environment variable names only."""
    from evalcore.targets import describe
    from evalcore.targets.adding import add_target, new_target

    headers = {}
    for line in header or []:
        key, sep, value = line.partition(":")
        if not sep:
            raise EvalcoreError(f"--header {line!r}: write it 'Name: value'")
        headers[key.strip()] = value.strip()
    raw = {
        "model": model, "base_url": base_url, "system_prompt": system_prompt, "api_key_env": api_key_env,
        "url": url, "headers": headers or None, "response_path": response_path, "callable": function,
        "agent": agent, "timeout_s": timeout, "cache": False if no_cache else None, "tool_mode": tool_mode,
        "request_template": _json(template) if template else None,
    }  # fmt: skip
    if config:
        try:
            more = json.loads(config)
        except json.JSONDecodeError as e:
            raise EvalcoreError(f"--config is not JSON: {e}") from None
        if not isinstance(more, dict):
            raise EvalcoreError("--config: give a JSON object of configuration fields")
        raw.update(more)
    store = open_store(db)
    target = new_target(name, kind, raw, model=target_model)
    saved = add_target(store, project_id_of(store, project), target)
    typer.echo(f"target {saved.name}: {describe(saved)}")


@targets_app.command("remove")
@friendly
def targets_remove(name: str, project: ProjectOption = None, db: DbOption = None) -> None:
    """Remove a saved target."""
    from evalcore.targets import remove_target

    store = open_store(db)
    remove_target(store, project_id_of(store, project), name)
    typer.echo(f"removed target {name}")
