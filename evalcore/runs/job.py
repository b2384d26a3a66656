"""A run: play conversations (turn by turn) or tests against a target, judge every turn, store judgments.

It is a job of evalcore.jobs: `create_run` records the parameters, the target's configuration (never a
secret: keys are environment variable names), the items to play, the judge, prompt versions and the code
version; `execute_run` plays what is not done yet. Each item (conversation or test) is a unit, claimed
before it is played, so processes resuming one run at once never play one turn twice; each played turn
is committed with its judgment, so a killed run resumes at the next unplayed turn, its history rebuilt
from the stored replies.

Items are played in parallel (at most `concurrency` at once), the turns of one item in order: the target
sees the conversation so far (the user turns, and its own earlier replies or, with history 'expected',
the expected answers), then the next user turn.
A target that errors, times out or answers garbage gets a crash recorded for that turn (scored 0, error
type `crash`) and the run goes on. A spent budget (kept in the store, shared by every process), or a
stop requested from the page or another process (`evalcore.jobs.request_stop`), stops the run after the
turns in flight; `execute_run` again resumes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evalcore import jobs
from evalcore.errors import EvalcoreError, NotFoundError
from evalcore.items.store_ops import KIND
from evalcore.llm.client import ModelClient
from evalcore.llm.retry import RetryPolicy
from evalcore.models import Run, RunStatus, Target
from evalcore.runs.items import load_items, select_keys
from evalcore.runs.judges import judge_task, make_judge
from evalcore.runs.player import HISTORY_MODES, Player
from evalcore.runs.records import RUN_KIND
from evalcore.store import Store
from evalcore.targets import build_adapter, describe, get_target, run_naming

DEFAULT_CONCURRENCY = 4


@dataclass(frozen=True)
class RunOutcome:
    """What one `execute_run` call did, and where the run stands."""

    run: Run
    played: int
    crashed: int
    unscored: int
    done: int
    total: int


def create_run(
    store: Store,
    project_id: str,
    target: str,
    *,
    judge: str | None = None,
    judge_template: str = "ours",
    budget: dict[str, float] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    source: str = "conversations",
    spec_id: str | None = None,
    generator: str | None = None,
    limit: int | None = None,
    keys: list[str] | None = None,
    history: str = "own",
    single_turn_pairs: bool = False,
    include_rejected: bool = False,
    name: str | None = None,
    notes: str = "",
) -> Run:
    """Record a new run (status pending) with everything needed to play, resume and report it.

    `history` is what the target sees as its earlier turns: 'own' (its own replies) or 'expected' (the
    expected answers). `single_turn_pairs` also plays each later turn of a conversation alone (its
    resolved question, no history), for the report's pair table. Both are kept in the run's params.
    Items annotators rejected are not played unless `include_rejected` (kept in the params' filters).
    A run is a named experiment: `name` (default: target, model and date) and `notes` live in its params.
    `judge_template` is the judge's prompt: 'ours' or 'prometheus' (seed 000's; the same outputs).
    """
    judge_task(judge_template)
    if history not in HISTORY_MODES:
        raise EvalcoreError(f"history must be one of {', '.join(HISTORY_MODES)}, not {history!r}")
    chosen: Target = get_target(store, project_id, target)
    if keys is None:
        keys = select_keys(
            store, project_id, source=source, spec_id=spec_id, generator=generator, limit=limit,
            include_rejected=include_rejected,
        )  # fmt: skip
    items, missing = load_items(store, keys)
    if missing:
        raise NotFoundError(f"not in the store: {', '.join(missing)}")
    total = sum(len(item.exchanges) for item in items)
    if single_turn_pairs:
        total += sum(e.multi_turn for item in items if item.kind == KIND for e in item.exchanges)
    if not total:
        raise EvalcoreError(
            f"nothing to play: no {source} with user and assistant turns in project '{project_id}'"
            + (f" for spec '{spec_id}'" if spec_id else "")
        )
    params: dict[str, Any] = {
        "project_id": project_id,
        **run_naming(chosen, name, notes),
        "target": chosen.model_dump(mode="json"),
        "target_description": describe(chosen),
        "judge_requested": judge,
        "judge_template": judge_template,
        "items": keys,
        "total_turns": total,
        "concurrency": max(1, int(concurrency)),
        "source": source,
        "filters": {
            "spec_id": spec_id,
            "generator": generator,
            "limit": limit,
            "include_rejected": include_rejected,
        },
        "history": history,
        "single_turn_pairs": bool(single_turn_pairs),
    }
    return jobs.create(
        store, project_id, RUN_KIND, params, entry=execute_run, total=total, target=chosen.name, judge=judge,
        budget=budget,
    )  # fmt: skip


def execute_run(
    store: Store,
    run_id: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    budget: dict[str, float] | None = None,
    concurrency: int | None = None,
    retry: RetryPolicy | None = None,
    retry_failed: bool = False,
) -> RunOutcome:
    """Play the run's unfinished turns (a first start or a resume); see the module docstring.

    `on_progress(done, total)` is called in the caller's thread as turns finish. `budget` replaces the
    run's budget (to resume a run stopped by it). Configuration errors (an unreachable target, a bad
    judge) mark the run failed and raise. Another process may play the same run at once: each plays the
    items the other has not claimed, and the last to finish records the run's end. `retry_failed` gives
    items whose unit failed back to be played again.
    """
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is a {run.kind} job, not a run against a target")
    pid = run.params["project_id"]
    updates: dict[str, Any] = {}
    if budget is not None:
        updates["budget"] = budget
    if concurrency:
        updates["params"] = {**run.params, "concurrency": int(concurrency)}
    run = store.start_run(pid, run.model_copy(update=updates))
    if retry_failed:
        jobs.retry_failed(store, run.id)
    client = ModelClient(store, pid, run_id=run.id, retry=retry)
    target = Target.model_validate(run.params["target"])
    try:
        adapter = build_adapter(store, pid, target, client)
        judge = make_judge(
            client, run.params.get("judge_requested"), target.model, run.params.get("judge_template", "ours")
        )
    except EvalcoreError as e:
        store.finish_run(run.id, RunStatus.failed, str(e))
        raise
    versions = {**run.params.get("prompt_versions", {}), **judge.prompt_versions}
    store.update_run_params(run.id, {"prompt_versions": versions})
    items, missing = load_items(store, run.params.get("items", []))
    if missing:
        client.warn(f"{len(missing)} item(s) no longer in the store were skipped: {', '.join(missing[:5])}")
    by_key = {item.key: item for item in items}
    player = Player(store, run, adapter, judge)
    total = sum(len(item.exchanges) + sum(player.alone(item, e) for e in item.exchanges) for item in items)
    report = jobs.run_units(
        store,
        run.id,
        list(by_key),
        lambda claim: player.play(by_key[claim.key], claim),
        concurrency=int(run.params.get("concurrency") or DEFAULT_CONCURRENCY),
        on_progress=on_progress,
        progress_total=total,
    )
    done = jobs.progress(store, report.run)[0]
    return RunOutcome(report.run, player.played, player.crashed, player.unscored, done, total)


def run_target(
    store: Store,
    project_id: str,
    target: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    retry: RetryPolicy | None = None,
    **options: Any,
) -> RunOutcome:
    """Create a run (options as for `create_run`) and play it."""
    run = create_run(store, project_id, target, **options)
    return execute_run(store, run.id, on_progress=on_progress, retry=retry)
