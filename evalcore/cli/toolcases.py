"""`evalcore toolcases ...` and `evalcore rubrics ...` (seed 004, TRACE/SCOPE; issue 20, items 1, 2, 4-6, 8).

toolcases: `situations` lists the catalog (the seed's 26 and the project's own; `--add FILE` validates a
team's YAML and keeps it in the project), `groups` shows the tool groups and what each cannot produce,
`generate` synthesizes labelled conversations as a job and prints the run's id last, `filter` has the
TRACE judge check them (silver), `calibrate` tunes its threshold on gold for a target precision.
rubrics: `discover` learns a SCOPE or SPUR rubric set from the project's gold and silver tool-case
conversations (every one with `--all-conversations`) and stores it (its id printed last), `validate FILE`
checks an edited set, `evaluate ID` scores the conversations it was not trained on, `compare` prints the
number of conversations used and their POS share, Table 3 (and Table 4 with the ablations), `score`
scores a target's conversations as a job and `report RUN [--rubric ID]` shows them per rubric and area.
"""

from __future__ import annotations

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

app = typer.Typer(
    help="Labelled tool-use conversations (TRACE): situations, tool groups, generation.", no_args_is_help=True
)
rubrics_app = typer.Typer(
    help="SCOPE and SPUR rubrics: discover, validate, evaluate, compare.", no_args_is_help=True
)
ModelOption = Annotated[
    str | None, typer.Option("--model", help="Model as provider/name (default: the role's).")
]
AllConversationsOption = Annotated[
    bool,
    typer.Option(
        "--all-conversations",
        help="Use every tool-case conversation, rejected and unreviewed ones too, not only gold and silver.",
    ),
]


@app.command()
@friendly
def situations(
    add: Annotated[
        Path | None, typer.Option("--add", help="A team's situations (YAML) to keep in the project.")
    ] = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """The situation catalog: id, the four labels (tool, agent, user, overall) and the name."""
    from evalcore.generators.tool_case.catalog import add_project_situations
    from evalcore.generators.tool_case.job import project_catalog

    store = open_store(db)
    pid = project_id_of(store, project)
    if add is not None:
        added = add_project_situations(store, pid, add)
        typer.echo(f"project {pid}: {len(added)} situation(s) of the team kept")
    for s in project_catalog(store, pid).values():
        agent = "appropriate" if s.agent_appropriate else "inappropriate"
        user = "satisfied" if s.user_satisfied else "dissatisfied"
        origin = "" if s.builtin else "  (team)"
        typer.echo(
            f"{s.id:<30}{s.tool_execution.value:<17}{agent:<15}{user:<14}{s.overall}  {s.name}{origin}"
        )


@app.command()
@friendly
def groups(project: ProjectOption = None, db: DbOption = None) -> None:
    """The tool groups and, per group, the situations it cannot produce and why."""
    from evalcore.generators.tool_case.groups import requirement
    from evalcore.generators.tool_case.job import project_catalog, project_groups

    store = open_store(db)
    pid = project_id_of(store, project)
    known = project_catalog(store, pid)
    for group in project_groups(store, pid):
        typer.echo(f"{group.name}: {', '.join(t.name for t in group.tools)}")
        for s in known.values():
            if why := requirement(s.recipe, group):
                typer.echo(f"  skips {s.id}: {why}")


@app.command()
@friendly
def generate(
    situation: Annotated[
        list[str] | None, typer.Option(help="A situation id (repeatable; default all).")
    ] = None,
    group: Annotated[list[str] | None, typer.Option(help="A tool group (repeatable; default all).")] = None,
    per_situation: Annotated[int, typer.Option(help="Conversations per situation.")] = 1,
    pos_share: Annotated[
        float,
        typer.Option(help="Share of POS conversations (the POS situations get more; 0: as many as others)."),
    ] = 0.35,
    seed: Annotated[int, typer.Option(help="Seed of the group draws and of the generation.")] = 0,
    model: ModelOption = None,
    resume: Annotated[
        str | None, typer.Option(help="Resume this tool-case run instead of starting one.")
    ] = None,
    retry_failed: RetryFailedOption = False,
    queue: QueueOption = False,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Synthesize labelled tool-use conversations; situations no tool group can produce are listed, not
    faked. The run's id is the last line printed."""
    from evalcore.generators.tool_case.job import create_toolcases, execute_toolcases

    require_resume(retry_failed, resume)
    store = open_store(db)
    if resume:
        run_id = resume
    else:
        pid = project_id_of(store, project)
        run_id = create_toolcases(
            store, pid, situations=situation or None, groups=group or None, per_situation=per_situation,
            seed=seed, model=model, pos_share=pos_share or None,
        ).id  # fmt: skip
    if queue:
        queue_run(store, run_id, retry_failed=retry_failed)
        return
    outcome = execute_toolcases(
        store, run_id, on_progress=progress_printer("conversations"), retry_failed=retry_failed
    )
    run = outcome.run
    counts = f"{outcome.done}/{outcome.total} conversations, {len(outcome.failed)} failed"
    typer.echo(f"run {run.id}: {run.status.value}; {counts}")
    for name in run.params.get("unproduced", []):
        reasons = sorted({s["reason"] for s in run.params["skipped"] if s["situation"] == name})
        typer.echo(f"skipped {name}: no tool group can produce it ({'; '.join(reasons)})")
    if run.status.value != "finished":
        typer.echo(
            f"stopped ({run.stopped_reason}); resume with: evalcore toolcases generate --resume {run.id}"
        )
    typer.echo(run.id)


@app.command("filter")
@friendly
def filter_(
    model: ModelOption = None,
    resume: Annotated[str | None, typer.Option(help="Resume this filtering run.")] = None,
    queue: QueueOption = False,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Judge the tool-case conversations not judged yet (TRACE's LLM judge); accepted ones are silver
    unless people decided them. The run's id is the last line printed."""
    from evalcore.generators.tool_case.filtering import create_filter, execute_filter

    store = open_store(db)
    run_id = resume or create_filter(store, project_id_of(store, project), model=model).id
    if queue:
        queue_run(store, run_id)
        return
    outcome = execute_filter(store, run_id, on_progress=progress_printer("judged"))
    typer.echo(f"run {outcome.run.id}: {outcome.run.status.value}; {outcome.judged}/{outcome.total} judged, "
               f"{len(outcome.failed)} unscored")  # fmt: skip
    typer.echo(outcome.run.id)


@app.command()
@friendly
def calibrate(
    target: Annotated[
        float, typer.Option(help="Precision the judge must reach on gold (seed: 0.91).")
    ] = 0.91,
    apply: Annotated[
        bool, typer.Option("--apply", help="Make the threshold the project's judge threshold.")
    ] = False,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """The judge's threshold for the target precision on gold (people's accepts against their rejects),
    its precision-recall curve, and the tool-case conversations per tier."""
    from evalcore.generators.tool_case.filtering import calibrate_toolcases

    store = open_store(db)
    found = calibrate_toolcases(store, project_id_of(store, project), target, apply=apply)
    typer.echo(f"{found.n} tool-case conversation(s) with a human decision and a judge score")
    for point in found.points:
        figures = f"precision {point.precision:.3f}, recall {point.recall:.3f}, {point.selected} selected"
        typer.echo(f"  score >= {point.threshold:.2f}: {figures}")
    if found.choice is None:
        typer.echo(f"no threshold reaches precision {target} on gold")
    else:
        c = found.choice
        applied = " (applied)" if apply else ""
        on_gold = f"precision on gold {c.precision:.3f}, recall {c.recall:.3f}"
        typer.echo(f"threshold {c.threshold:.2f}{applied}: {on_gold}")
    typer.echo("tiers: " + ", ".join(f"{k} {v}" for k, v in found.tiers.items()))


@rubrics_app.command()
@friendly
def discover(
    method: Annotated[str, typer.Option(help="scope or spur.")] = "scope",
    without: Annotated[
        list[str] | None, typer.Option("--without", help="Ablate a SCOPE step: AD, RW or MB.")
    ] = None,
    train_share: Annotated[
        float,
        typer.Option(help="Share of each label to train on (Section 4.1: 0.4); the rest is for evaluate."),
    ] = 0.4,
    seed: Annotated[int, typer.Option(help="Seed of the split and of the area-discovery sample.")] = 0,
    all_conversations: AllConversationsOption = False,
    model: ModelOption = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Learn a rubric set from the project's gold and silver tool-case conversations and store it (id
    last). It is a job of one unit, as the Tool cases page's button starts it."""
    from evalcore.errors import UsageError
    from evalcore.generators.tool_case.discovery import create_discovery, discovered, execute_discovery
    from evalcore.jobs import failed_units

    store = open_store(db)
    pid = project_id_of(store, project)
    run = create_discovery(
        store, pid, method=method, without=without or [], train_share=train_share, seed=seed, model=model,
        all_conversations=all_conversations,
    )  # fmt: skip
    for warning in run.warnings:
        typer.echo(f"note: {warning}", err=True)
    execute_discovery(store, run.id)
    found = discovered(store, run.id)
    if found is None:
        why = "; ".join(failed_units(store, run.id).values()) or "stopped"
        raise UsageError(f"no rubric set discovered (run {run.id}): {why}")
    item, made = found
    typer.echo(
        f"{method} rubrics by {made.producer}: {len(made.areas)} area(s), {len(made.rubrics)} rubric(s)"
    )
    for r in made.rubrics:
        mark = " make-or-break" if r.make_or_break else ""
        typer.echo(f"  {r.id:<7}{r.polarity} w={r.weight:<4}{r.area}: {r.text}{mark}")
    typer.echo(item)


@rubrics_app.command()
@friendly
def validate(path: Annotated[Path, typer.Argument(help="A rubric set as YAML.")]) -> None:
    """Check an edited rubric set: every problem as file:line [field]: why (exit 1)."""
    from evalcore.generators.tool_case.rubrics import parse_rubric_set

    found = parse_rubric_set(path.read_text(encoding="utf-8"), str(path))
    typer.echo(f"{path}: valid {found.method} rubric set, {len(found.rubrics)} rubric(s)")


@rubrics_app.command()
@friendly
def evaluate(
    rubric_set: Annotated[
        str, typer.Argument(help="Id of a stored rubric set (printed by `rubrics discover`).")
    ],
    all_conversations: AllConversationsOption = False,
    model: ModelOption = None,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Score the gold and silver conversations the set was not trained on; accuracy, F1, precision,
    recall."""
    from evalcore.generators.tool_case.evaluation import (
        SUBSETS,
        labelled_conversations,
        labels_of,
        metrics,
        subset_of,
    )
    from evalcore.generators.tool_case.rubrics import estimate_label, load_rubric_set
    from evalcore.generators.tool_case.scope import score_conversation
    from evalcore.llm.client import ModelClient

    store = open_store(db)
    pid = project_id_of(store, project)
    rubrics, version = load_rubric_set(store, rubric_set)
    llm = ModelClient(store, pid)
    labelled = labelled_conversations(store, pid, all_conversations=all_conversations)
    test = [c for c in labelled if c.id not in set(rubrics.trained_on)]
    pairs: dict[str, list[tuple[str, str]]] = {s: [] for s in SUBSETS}
    for conversation in test:
        predicted, _ = estimate_label(rubrics, score_conversation(llm, rubrics, conversation, model=model))
        truth = labels_of(conversation)[0]
        pairs["Overall"].append((truth, predicted))
        if (subset := subset_of(conversation)) in pairs:
            pairs[subset].append((truth, predicted))
    typer.echo(
        f"{rubrics.method} rubric set {rubric_set} v{version}: {len(test)} conversation(s) not trained on"
    )
    for subset, found in pairs.items():
        figures = metrics(found)
        if subset == "Hard Neg.":  # only NEG conversations: F1, precision and recall do not apply (Table 3)
            figures = {k: (v if k == "accuracy" else None) for k, v in figures.items()}
        cells = "  ".join(f"{k} {'N/A' if v is None else f'{v:.2f}'}" for k, v in figures.items())
        typer.echo(f"{subset:<10} n={len(found):<5}{cells}")


@rubrics_app.command()
@friendly
def compare(
    folds: Annotated[int, typer.Option(help="Folds of cross-validation (each a 40/60 split).")] = 5,
    ablations: Annotated[bool, typer.Option(help="Also the SCOPE ablations of Table 4.")] = True,
    seed: Annotated[int, typer.Option(help="Seed of the splits.")] = 0,
    all_conversations: AllConversationsOption = False,
    model: ModelOption = None,
    resume: Annotated[str | None, typer.Option(help="Resume this comparison run.")] = None,
    queue: QueueOption = False,
    out: Annotated[Path | None, typer.Option("--out", help="Write the Markdown table to this file.")] = None,
    by_tier: Annotated[
        bool, typer.Option(help="Table 11: SPUR and SCOPE on the gold and on the silver subset apart.")
    ] = False,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """SPUR against SCOPE as Table 3 (mean and SD over folds), and Table 4's ablations, on the gold and
    silver conversations: a job, one unit per fold, stored (the Tool cases page shows it); the number of
    conversations and their POS share come first, the run's id is the last line printed. With --by-tier,
    Table 11 instead (each subset apart, computed here, not stored)."""
    from evalcore.generators.tool_case.evaluation import (
        compare_by_tier,
        create_comparison,
        execute_comparison,
        stored_comparison,
        tier_subsets,
        tier_table,
        variant_names,
    )

    store = open_store(db)
    if by_tier:
        from evalcore.llm.client import ModelClient

        pid = project_id_of(store, project)
        found = compare_by_tier(ModelClient(store, pid), tier_subsets(store, pid), folds=folds, seed=seed,
                                model=model)  # fmt: skip
        emit([f"Table 11: SPUR vs SCOPE on gold and silver apart, {folds}-fold 40/60, Overall", "",
              *tier_table(found)], out)  # fmt: skip
        return
    run_id = (
        resume
        or create_comparison(
            store,
            project_id_of(store, project),
            folds=folds,
            seed=seed,
            ablations=ablations,
            model=model,
            all_conversations=all_conversations,
        ).id
    )
    if queue:
        queue_run(store, run_id)
        return
    run = execute_comparison(store, run_id, on_progress=progress_printer("folds"))
    result = stored_comparison(store, run_id)
    main, ablated = variant_names(run)
    sizes = ", ".join(f"{k} {v}" for k, v in result.sizes.items())
    head = [result.data_line(), f"Test conversations over {result.folds} fold(s): {sizes}", ""]
    emit([*head, *result.table(main + ablated)], out)
    typer.echo(f"run {run.id}: {run.status.value}")
    typer.echo(run.id)


@rubrics_app.command()
@friendly
def score(
    rubric_set: Annotated[str, typer.Argument(help="Id of a stored rubric set.")],
    generator: Annotated[
        str | None, typer.Option(help="Only conversations of this generator, e.g. simulation.")
    ] = None,
    source_run: Annotated[
        str | None,
        typer.Option(
            "--source-run", help="Only the conversations this run made (a simulation or an import)."
        ),
    ] = None,
    model: ModelOption = None,
    resume: Annotated[str | None, typer.Option(help="Resume this scoring run.")] = None,
    retry_failed: RetryFailedOption = False,
    queue: QueueOption = False,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Score a target's conversations (simulated or imported) with a rubric set, as a job; the run's id
    is the last line printed (`rubrics report RUN`)."""
    from evalcore.runs.rubric_scoring import create_rubric_scoring, execute_rubric_scoring

    require_resume(retry_failed, resume)
    store = open_store(db)
    run_id = resume or create_rubric_scoring(
        store, project_id_of(store, project), rubric_set, generator=generator, source_run=source_run,
        model=model,
    ).id  # fmt: skip
    if queue:
        queue_run(store, run_id, retry_failed=retry_failed)
        return
    outcome = execute_rubric_scoring(
        store, run_id, on_progress=progress_printer("scored"), retry_failed=retry_failed
    )
    run = outcome.run
    typer.echo(f"run {run.id}: {run.status.value}; {outcome.done}/{outcome.total} conversations, "
               f"{len(outcome.failed)} failed")  # fmt: skip
    if run.status.value != "finished":
        typer.echo(f"resume with: evalcore rubrics score {rubric_set} --resume {run.id}")
    typer.echo(run.id)


@rubrics_app.command()
@friendly
def report(
    run: Annotated[str, typer.Argument(help="A rubric scoring run (printed by `rubrics score`).")],
    rubric: Annotated[
        str | None, typer.Option(help="Drill down: the conversations this rubric applies to.")
    ] = None,
    area: Annotated[
        str | None, typer.Option(help="Drill down: the conversations a rubric of this area applies to.")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="md, csv, jsonl or latex.")] = "md",
    out: Annotated[Path | None, typer.Option("--out", help="Write the tables to this file.")] = None,
    db: DbOption = None,
) -> None:
    """Per rubric and per area: how many scored conversations each applies to, and the estimated labels,
    headed by what produced them (run, target, judge, rubric set, offline or not)."""
    from evalcore.errors import UsageError
    from evalcore.reports.rubric_tables import drill_down, export_rubric_tables, rubric_report

    found = rubric_report(open_store(db, existing=True), run)
    tables = None
    if rubric is not None or area is not None:
        tables = {"conversations": drill_down(found, rubric=rubric, area=area)}
    try:
        texts = export_rubric_tables(found, fmt, tables)
    except ValueError as exc:  # an unknown format: an option the user gave
        raise UsageError(str(exc)) from None
    emit([("\n" if fmt in ("md", "latex") else "").join(texts.values()).rstrip("\n")], out)
