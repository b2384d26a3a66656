"""A target agent's own conversations judged by SCOPE (or SPUR) rubrics (seed 004, Section 3.2, step 4;
issue 20, item 7): the rubric set's last step run as the judge of a run, DESIGN.md's "runs -> judgments
(..., SCOPE rubrics)".

The conversations are the target's: those of one source run (a simulation run against the target, or an
imported ChatChecker run), of one generator, or all of the project's. `create_rubric_scoring` records the
run (kind `rubric_scoring`; the rubric set's version pinned, so an edit after the start does not mix two
sets in one run; the source run's target named; the judge never the target's own model when another is
configured, as for every run's judge) with one unit per conversation;
`execute_rubric_scoring` scores the units not committed yet (a first start, a resume, or a queue worker's
call), each committed with every rubric's score, the label the set estimates and the two sides compared.
A model step that gives no usable output fails its unit (given back by `retry_failed`); the budget or a
stop releases it. The tables per rubric and per area are in evalcore.reports.rubric_tables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evalcore import jobs
from evalcore.errors import EvalcoreError, UsageError
from evalcore.generators.tool_case.rubrics import estimate_label, load_rubric_set
from evalcore.generators.tool_case.scope import RubricStepFailed, score_conversation
from evalcore.items.store_ops import list_conversations
from evalcore.llm.client import ModelClient
from evalcore.llm.guard import choose_judge, guard_judge
from evalcore.models import Conversation, Run
from evalcore.store import Store

RUN_KIND = "rubric_scoring"


@dataclass(frozen=True)
class ScoringOutcome:
    """What one `execute_rubric_scoring` call did, and where the run stands."""

    run: Run
    done: int
    total: int
    failed: list[str]


def select_conversations(
    store: Store, project_id: str, *, generator: str | None = None, source_run: str | None = None
) -> list[str]:
    """Ids of the project's conversations to score: of `generator`, and made by `source_run` when given."""
    found = [v.conversation for v in list_conversations(store, project_id, generator=generator)]
    if source_run:
        found = [c for c in found if c.provenance.run_id == source_run]
    return [c.id for c in found]


def create_rubric_scoring(
    store: Store,
    project_id: str,
    rubric_set: str,
    *,
    generator: str | None = None,
    source_run: str | None = None,
    model: str | None = None,
) -> Run:
    """Record a new scoring run (status pending); no conversation to score, or an unknown set, is refused."""
    _, version = load_rubric_set(store, rubric_set)
    target = target_model = None
    if source_run:
        source = store.run(source_run)
        if store.run_project(source_run) != project_id:
            raise UsageError(f"run '{source_run}' belongs to another project")
        target, target_model = source.target, (source.params.get("target") or {}).get("model")
    ids = select_conversations(store, project_id, generator=generator, source_run=source_run)
    if not ids:
        of = f" of generator '{generator}'" if generator else ""
        of += f" made by run '{source_run}'" if source_run else ""
        raise UsageError(f"no conversations{of} to score in project '{project_id}'")
    judge = choose_judge(ModelClient(store, project_id).registry, target_model, model).model
    params = {
        "project_id": project_id,
        "rubric_set": rubric_set,
        "version": version,
        "generator": generator,
        "source_run": source_run,
        "model": model,
        "target_model": target_model,
        "units": ids,
    }
    return jobs.create(
        store, project_id, RUN_KIND, params, entry=execute_rubric_scoring, total=len(ids), target=target,
        judge=judge,
    )  # fmt: skip


def execute_rubric_scoring(
    store: Store,
    run_id: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    retry_failed: bool = False,
) -> ScoringOutcome:
    """Score the run's conversations not committed yet (see the module docstring)."""
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is not a rubric scoring run (kind {run.kind})")
    pid = run.params["project_id"]
    run = store.start_run(pid, run)
    if retry_failed:
        jobs.retry_failed(store, run.id)
    rubrics, _ = load_rubric_set(store, run.params["rubric_set"], run.params["version"])
    llm = ModelClient(store, pid, run_id=run.id)
    # Never the target's own model when another is configured (a warning on the run otherwise); a
    # configuration error fails here, before any call.
    model = guard_judge(llm, run.params.get("target_model"), run.params.get("model")).model

    def work(claim: jobs.Claim) -> None:
        conversation = Conversation.model_validate(store.current(claim.key).body)
        try:
            scores = score_conversation(llm, rubrics, conversation, model=model)
        except RubricStepFailed as exc:
            with claim.commit() as writer:
                writer.fail(str(exc))
            return
        label, sides = estimate_label(rubrics, scores)
        with claim.commit() as writer:
            writer.result = {"scores": scores, "label": label, "sides": sides}

    units = run.params["units"]
    report = jobs.run_units(store, run.id, units, work, on_progress=on_progress)
    return ScoringOutcome(report.run, jobs.progress(store, report.run)[0], len(units), report.failed)


def score_with_rubrics(
    store: Store,
    project_id: str,
    rubric_set: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    **options: str | None,
) -> ScoringOutcome:
    """Create a scoring run (options as for `create_rubric_scoring`) and work it to the end."""
    run = create_rubric_scoring(store, project_id, rubric_set, **options)
    return execute_rubric_scoring(store, run.id, on_progress=on_progress)


def scoring_runs(store: Store, project_id: str) -> list[Run]:
    """The project's rubric scoring runs, newest first."""
    return store.runs(project_id, kind=RUN_KIND)
