"""A run: play conversations (turn by turn) or tests against a target, judge every turn, store judgments.

It is a job (DESIGN.md, "Layers"; `evalcore/specs/generation.py` is the pattern): `create_run` records
the parameters, the target's configuration (never a secret: keys are environment variable names), the
items to play, the judge, prompt versions and the code version; `execute_run` plays what is not done yet.
Each played turn is one job unit, committed together with its judgment, so a killed run resumes at the
next unplayed turn, its history rebuilt from the stored replies, and never replays a finished turn.

Items are played in parallel (at most `concurrency` at once), the turns of one item in order: the target
sees the conversation so far (the user turns, and its own earlier replies), then the next user turn.
A target that errors, times out or answers garbage gets a crash recorded for that turn (scored 0, error
type `crash`) and the run goes on. A spent budget, or a stop requested from the page or another process
(`evalcore.runs.control.request_stop`), stops the run after the turns in flight; `execute_run` again
resumes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from evalcore.errors import EvalcoreError, NotFoundError
from evalcore.llm.client import ModelClient
from evalcore.llm.retry import RetryPolicy
from evalcore.models import Run, RunStatus, Target
from evalcore.models.common import now_utc
from evalcore.runs.control import code_version
from evalcore.runs.items import load_items, select_keys
from evalcore.runs.judges import make_judge
from evalcore.runs.player import Player
from evalcore.runs.records import RUN_KIND
from evalcore.runs.targets import build_adapter, describe, get_target
from evalcore.store import Store
from evalcore.store.store import new_id

DEFAULT_CONCURRENCY = 4
POLL_SECONDS = 1.0


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
    budget: dict[str, float] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    source: str = "conversations",
    spec_id: str | None = None,
    generator: str | None = None,
    limit: int | None = None,
    keys: list[str] | None = None,
) -> Run:
    """Record a new run (status pending) with everything needed to play, resume and report it."""
    chosen: Target = get_target(store, project_id, target)
    keys = (
        keys
        if keys is not None
        else select_keys(store, project_id, source=source, spec_id=spec_id, generator=generator, limit=limit)
    )
    items, missing = load_items(store, keys)
    if missing:
        raise NotFoundError(f"not in the store: {', '.join(missing)}")
    total = sum(len(item.exchanges) for item in items)
    if not total:
        raise EvalcoreError(
            f"nothing to play: no {source} with user and assistant turns in project '{project_id}'"
            + (f" for spec '{spec_id}'" if spec_id else "")
        )
    params: dict[str, Any] = {
        "project_id": project_id,
        "target": chosen.model_dump(mode="json"),
        "target_description": describe(chosen),
        "judge_requested": judge,
        "items": keys,
        "total_turns": total,
        "concurrency": max(1, int(concurrency)),
        "source": source,
        "filters": {"spec_id": spec_id, "generator": generator, "limit": limit},
    }
    run = Run(
        id=new_id("run"),
        kind=RUN_KIND,
        params=params,
        target=chosen.name,
        judge=judge,
        budget=budget or {},
        code_version=code_version(),
    )
    run = store.start_run(project_id, run)
    run = run.model_copy(update={"status": RunStatus.pending})
    store.update_run(run)
    return run


def execute_run(
    store: Store,
    run_id: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    budget: dict[str, float] | None = None,
    concurrency: int | None = None,
    retry: RetryPolicy | None = None,
) -> RunOutcome:
    """Play the run's unfinished turns (a first start or a resume); see the module docstring.

    `on_progress(done, total)` is called in the caller's thread as turns finish. `budget` replaces the
    run's budget (to resume a run stopped by it). Configuration errors (an unreachable target, a bad
    judge) mark the run failed and raise.
    """
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is a {run.kind} job, not a run against a target")
    pid = run.params["project_id"]
    updates: dict[str, Any] = {"status": RunStatus.running, "stopped_reason": None, "finished_at": None}
    if budget is not None:
        updates["budget"] = budget
    if concurrency:
        updates["params"] = {**run.params, "concurrency": int(concurrency)}
    run = store.start_run(pid, run.model_copy(update=updates))
    client = ModelClient(store, pid, run_id=run.id, retry=retry)
    target = Target.model_validate(run.params["target"])
    try:
        adapter = build_adapter(store, pid, target, client)
        judge = make_judge(client, run.params.get("judge_requested"), target.model)
    except EvalcoreError as e:
        _finish(store, run.id, RunStatus.failed, str(e))
        raise
    fresh = store.run(run.id)
    versions = {**fresh.params.get("prompt_versions", {}), **judge.prompt_versions}
    store.update_run(fresh.model_copy(update={"params": {**fresh.params, "prompt_versions": versions}}))
    items, missing = load_items(store, run.params.get("items", []))
    if missing:
        client.warn(f"{len(missing)} item(s) no longer in the store were skipped: {', '.join(missing[:5])}")
    done = store.finished_units(run.id)
    total = sum(len(item.exchanges) for item in items)
    finished = sum(1 for item in items for ex in item.exchanges if item.unit_key(ex) in done)
    player = Player(store, run, adapter, judge)
    todo = [i for i in items if any(i.unit_key(ex) not in done for ex in i.exchanges)]
    played = crashed = unscored = 0
    if on_progress:
        on_progress(finished, total)
    workers = max(1, min(int(run.params.get("concurrency") or DEFAULT_CONCURRENCY), len(todo) or 1))
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evalcore-run") as pool:
            pending = {pool.submit(player.play, item, done) for item in todo}
            polled = time.monotonic()
            while pending:
                finished_now, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                for future in finished_now:
                    future.result()  # a bug in a worker surfaces here
                while not player.events.empty():
                    was_crash, score = player.events.get()
                    played, finished = played + 1, finished + 1
                    crashed += was_crash
                    unscored += score is None
                    if on_progress:
                        on_progress(finished, total)
                if time.monotonic() - polled > POLL_SECONDS:
                    polled = time.monotonic()
                    current = store.run(run.id)
                    if current.status != RunStatus.running:
                        player.halt(current.stopped_reason or "stopped")
    except BaseException as e:
        player.halt("interrupted")
        if isinstance(e, KeyboardInterrupt):
            _finish(store, run.id, RunStatus.stopped, "interrupted")
        else:
            _finish(store, run.id, RunStatus.failed, f"{type(e).__name__}: {e}")
        raise
    complete = finished >= total
    reason = None if complete else (player.stop_reason or store.run(run.id).stopped_reason or "stopped")
    final = _finish(store, run.id, RunStatus.finished if complete else RunStatus.stopped, reason)
    return RunOutcome(final, played, crashed, unscored, finished, total)


def _finish(store: Store, run_id: str, status: RunStatus, reason: str | None) -> Run:
    """Record the final state on the run as stored now (keeping warnings others added meanwhile)."""
    current = store.run(run_id)
    if status == RunStatus.stopped and current.status == RunStatus.stopped and current.stopped_reason:
        reason = current.stopped_reason  # a stop requested by a person or the budget keeps its reason
    run = current.model_copy(update={"status": status, "stopped_reason": reason, "finished_at": now_utc()})
    store.update_run(run)
    return run


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
