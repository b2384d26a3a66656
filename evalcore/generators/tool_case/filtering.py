"""Gold and silver tool-case conversations (seed 004, Section 2.3, Appendix B.4; issue 20, item 3).

`filter_toolcases` is a job (kind `tool_case_filter`, one unit per conversation not judged yet;
`create_filter` records it, `execute_filter` works it, also in a queue worker): the TRACE
judge reads each conversation against its case and its verdict is saved as a new version of the
conversation (`judge_passed`, `judge_score` and the labels it read, in the metadata), which is where the
project's tier policy reads a judge verdict (evalcore.items.state): accepted by the judge and not decided
by people = silver. Annotators confirm or reject conversations in the annotation workbench: gold.
`calibrate_toolcases` compares the judge's scores with those human decisions on the tool-case
conversations that have both and finds the threshold reaching the target precision (the seed's 0.91),
with the curve of evalcore.stats.calibration; `apply` makes it the project's judge threshold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evalcore import jobs
from evalcore.errors import EvalcoreError
from evalcore.generators.tool_case.job import project_catalog
from evalcore.generators.tool_case.judge import JUDGE_TOOL_CASE, judge_inputs
from evalcore.generators.tool_case.records import GENERATOR
from evalcore.items.current import read_tiers
from evalcore.items.state import judge_fields, set_policy
from evalcore.items.store_ops import list_conversations
from evalcore.llm.client import ModelClient
from evalcore.models import Conversation, Run, Tier
from evalcore.stats.calibration import (
    CurvePoint,
    ThresholdChoice,
    precision_recall_curve,
    threshold_for_precision,
)
from evalcore.store import Store

RUN_KIND = "tool_case_filter"
TARGET_PRECISION = 0.91  # Section 2.3: the judge's precision on the gold set


@dataclass(frozen=True)
class FilterOutcome:
    """What one filtering call did."""

    run: Run
    judged: int
    total: int
    failed: list[str]


@dataclass(frozen=True)
class ToolCaseCalibration:
    """The judge against people's decisions on tool-case conversations, and the tiers now."""

    points: list[CurvePoint]
    choice: ThresholdChoice | None
    target_precision: float
    n: int  # conversations with both a human decision and a judge score
    tiers: dict[str, int]  # tool-case conversations per tier


def _conversations(store: Store, project_id: str) -> list[Conversation]:
    return [v.conversation for v in list_conversations(store, project_id, generator=GENERATOR)]


def create_filter(store: Store, project_id: str, *, model: str | None = None) -> Run:
    """Record a filtering run (status pending) over the tool-case conversations with no judge verdict yet."""
    todo = [c.id for c in _conversations(store, project_id) if judge_fields(c.metadata)[1] is None]
    _, _, judge = ModelClient(store, project_id).registry.resolve("judge", model)
    params = {
        "project_id": project_id,
        "model": model,
        "units": todo,
    }
    return jobs.create(
        store, project_id, RUN_KIND, params, entry=execute_filter, total=len(todo), judge=judge
    )


def execute_filter(
    store: Store, run_id: str, *, on_progress: Callable[[int, int], None] | None = None
) -> FilterOutcome:
    """Judge the run's conversations not judged yet (a first start, a resume or a queue worker's call)."""
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is not a tool-case filtering run (kind {run.kind})")
    project_id, model, todo = run.params["project_id"], run.params.get("model"), run.params["units"]
    run = store.start_run(project_id, run)
    known = project_catalog(store, project_id)
    llm = ModelClient(store, project_id, run_id=run.id)
    llm.registry.resolve("judge", model)  # a configuration error fails before any call

    def work(claim: jobs.Claim) -> None:
        revision = store.current(claim.key)
        conversation = Conversation.model_validate(revision.body)
        situation = known[conversation.metadata["situation"]]
        result = llm.run_task(
            JUDGE_TOOL_CASE, judge_inputs(conversation, situation), role="judge", model=model
        )
        if result.status == "stopped":
            raise jobs.UnitStopped(result.error or "budget")
        with claim.commit() as writer:
            if not result.ok or result.output is None:  # unscored, never a rejection
                writer.fail(result.error or "no output", {"raw": result.raw})
                return
            verdict = result.output
            metadata = {
                **conversation.metadata,
                "judge_passed": verdict.matches,
                "judge_score": verdict.score,
                "judge_labels": verdict.labels.model_dump(),
                "judge_reason": verdict.reason,
                "judge_model": result.model,
            }
            body = conversation.model_copy(update={"metadata": metadata}).model_dump(mode="json")
            store.save_revision(
                claim.key, body, result.model, revision.version, note="judged", conn=writer.conn
            )
            writer.result = {"passed": verdict.matches, "score": verdict.score}

    report = jobs.run_units(store, run.id, todo, work, on_progress=on_progress)
    return FilterOutcome(report.run, jobs.progress(store, report.run)[0], len(todo), report.failed)


def filter_toolcases(
    store: Store,
    project_id: str,
    *,
    model: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> FilterOutcome:
    """Judge the project's tool-case conversations that have no judge verdict yet (a job, worked here)."""
    run = create_filter(store, project_id, model=model)
    return execute_filter(store, run.id, on_progress=on_progress)


def calibrate_toolcases(
    store: Store, project_id: str, target_precision: float = TARGET_PRECISION, *, apply: bool = False
) -> ToolCaseCalibration:
    """Threshold of the judge's score reaching `target_precision` on gold (people's accepts) against
    people's rejections; with `apply`, the project's judge threshold becomes it."""
    conversations = {c.id: c for c in _conversations(store, project_id)}
    tiers = read_tiers(store, project_id, list(conversations))
    scores, labels = [], []
    for item_id, tier in tiers.items():
        score = judge_fields(conversations[item_id].metadata)[1]
        if tier in (Tier.gold, Tier.rejected) and score is not None:
            scores.append(score)
            labels.append(tier == Tier.gold)
    choice = threshold_for_precision(scores, labels, target_precision) if scores else None
    if apply and choice is not None:
        set_policy(store, project_id, judge_threshold=choice.threshold)
        tiers = read_tiers(store, project_id, list(conversations))
    counts = {tier.value: sum(t == tier for t in tiers.values()) for tier in Tier}
    return ToolCaseCalibration(
        precision_recall_curve(scores, labels), choice, target_precision, len(scores), counts
    )
