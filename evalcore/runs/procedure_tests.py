"""Playing procedure tests against a target that acts (seed 001, Section 4.3; issue 17, items 8 and 9).

Each test (a context cut from a procedure conversation, and the expected next action) is given to the
target with the project's tool schemas; the action it takes (a reply, or a tool call with arguments) is
stored as the test's unit result. It is a job of evalcore.jobs: `create_procedure_run` records the run
(kind `procedure_tests`: the target's configuration, never a secret; the tests; the embedding model the
report compares replies with), `execute_procedure_run` plays the tests not done yet (a first start, a
resume, or a queue worker's call), each claimed before it is played and committed with its action. A
target that errors, times out or answers garbage gets a crash recorded for that test (no action) and the
run goes on; a spent budget or a stop releases the test for a resume. The Table 2 report of one or more
runs is in evalcore.reports.procedure_tables.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evalcore import jobs
from evalcore.errors import EvalcoreError
from evalcore.generators.procedure import agents as _registers_the_built_in_agents  # noqa: F401
from evalcore.generators.procedure.apis import known_tools
from evalcore.generators.procedure.conversations import GENERATOR
from evalcore.generators.procedure.job import known_procedures, list_graphs
from evalcore.items.current import item_ids, read_items, read_tiers
from evalcore.items.store_ops import TEST_KIND
from evalcore.llm.client import ModelClient
from evalcore.llm.types import BudgetExceeded
from evalcore.models import Procedure, Run, RunStatus, Target, Test, Tier
from evalcore.store import Store
from evalcore.targets import TargetCrash, describe, get_target, run_naming
from evalcore.targets.acting import ACTING_KINDS, build_acting_adapter
from evalcore.targets.config import TargetConfigError

RUN_KIND = "procedure_tests"
DEFAULT_CONCURRENCY = 4


@dataclass(frozen=True)
class ProcedureRunOutcome:
    """What one `execute_procedure_run` call did, and where the run stands."""

    run: Run
    played: int
    crashed: int
    done: int
    total: int


def select_tests(
    store: Store,
    project_id: str,
    *,
    generation: str | None = None,
    spec_id: str | None = None,
    limit: int | None = None,
    rejected: list[str] | None = None,
) -> list[str]:
    """Ids of the project's procedure tests, oldest first: those cut from the conversations of one
    generation run when given; at most `limit`. A test whose conversation (or itself) a reviewer rejected
    is left out, its id appended to `rejected` when given."""
    ids = item_ids(store, project_id, TEST_KIND, spec_id=spec_id)
    tests = [item.test() for item in read_items(store, ids).values()]
    tests = [t for t in tests if t.generator == GENERATOR]
    if generation is not None:
        made = {c for g in list_graphs(store, project_id, generation) for c in g.conversations}
        tests = [t for t in tests if t.conversation_id in made]
    tiers = read_tiers(store, project_id, [t.id for t in tests] + [t.conversation_id or "" for t in tests])
    out = [t for t in tests if Tier.rejected in (tiers.get(t.id), tiers.get(t.conversation_id or ""))]
    if rejected is not None:
        rejected += [t.id for t in out]
    tests = [t for t in tests if t not in out]
    chosen = [t.id for t in tests]
    return chosen if limit is None else chosen[: max(limit, 0)]


def create_procedure_run(
    store: Store,
    project_id: str,
    target: str,
    *,
    generation: str | None = None,
    spec_id: str | None = None,
    limit: int | None = None,
    budget: dict[str, float] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    embedding: str | None = None,
    name: str | None = None,
    notes: str = "",
) -> Run:
    """Record a new run (status pending) of the project's procedure tests against `target`, named `name`
    (default: target, model and date) with `notes`."""
    chosen: Target = get_target(store, project_id, target)
    if chosen.kind not in ACTING_KINDS:
        raise TargetConfigError(
            f"target '{chosen.name}' ({chosen.kind.value}) only chats: procedure tests need a target that "
            f"can call tools ({', '.join(k.value for k in ACTING_KINDS)})"
        )
    rejected: list[str] = []
    tests = select_tests(
        store, project_id, generation=generation, spec_id=spec_id, limit=limit, rejected=rejected
    )
    if not tests:
        raise EvalcoreError(
            f"no procedure tests in project '{project_id}'"
            + (f" from generation run '{generation}'" if generation else "")
            + (f" ({len(rejected)} rejected in review)" if rejected else "")
            + ": run `evalcore procedures generate` first"
        )
    similarity = ModelClient(store, project_id).registry.resolve("embedding", embedding)[2]
    params: dict[str, Any] = {
        "project_id": project_id,
        **run_naming(chosen, name, notes),
        "target": chosen.model_dump(mode="json"),
        "target_description": describe(chosen),
        "generation": generation,
        "filters": {"spec_id": spec_id, "limit": limit},
        "embedding": similarity,
        "units": tests,
        "concurrency": max(1, int(concurrency)),
    }
    skipped = [f"{len(rejected)} test(s) of rejected conversations were skipped"] if rejected else []
    return jobs.create(
        store, project_id, RUN_KIND, params, entry=execute_procedure_run, total=len(tests),
        target=chosen.name, judge=f"reply similarity on {similarity}", budget=budget, warnings=skipped,
    )  # fmt: skip


def execute_procedure_run(
    store: Store,
    run_id: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    retry_failed: bool = False,
) -> ProcedureRunOutcome:
    """Play the run's tests not done yet (see the module docstring); an unreachable target fails the run
    and raises."""
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is not a procedure test run (kind {run.kind})")
    pid = run.params["project_id"]
    run = store.start_run(pid, run)
    if retry_failed:
        jobs.retry_failed(store, run.id)
    client = ModelClient(store, pid, run_id=run.id)
    target = Target.model_validate(run.params["target"])
    try:
        adapter = build_acting_adapter(store, pid, target, client)
    except EvalcoreError as e:
        store.finish_run(run.id, RunStatus.failed, str(e))
        raise
    tools = known_tools(store, pid)  # the project's, and the APIs generated for generated procedures
    units: list[str] = run.params["units"]
    found = read_items(store, units)
    tests: dict[str, tuple[Test, int]] = {i: (found[i].test(), found[i].version) for i in units if i in found}
    missing = [i for i in units if i not in tests]
    if missing:
        client.warn(f"{len(missing)} test(s) no longer in the store were skipped: {', '.join(missing[:5])}")
    counts = {"played": 0, "crashed": 0}
    lock = threading.Lock()
    procedure_of = _procedures_of(store, pid, [t for t, _ in tests.values()])

    def work(claim: jobs.Claim) -> None:
        test, version = tests[claim.key]
        result: dict[str, Any] = {"version": version, "crash": None}
        try:
            done = adapter.act(test.context, tools, procedure_of.get(test.id))
        except TargetCrash as e:
            result["crash"] = str(e)
        except BudgetExceeded as e:
            raise jobs.UnitStopped(f"budget: {e}") from None
        else:
            result |= {
                "action": done.action.model_dump(mode="json"),
                "latency_ms": round(done.latency_ms, 1),
                "cache_hit": done.cache_hit,
                "details": done.details,
            }
        with claim.commit() as writer:
            writer.result = result
        with lock:
            counts["played"] += 1
            counts["crashed"] += result["crash"] is not None

    report = jobs.run_units(
        store,
        run.id,
        list(tests),
        work,
        concurrency=int(run.params.get("concurrency") or DEFAULT_CONCURRENCY),
        on_progress=on_progress,
    )
    done = jobs.progress(store, report.run)[0]
    return ProcedureRunOutcome(report.run, counts["played"], counts["crashed"], done, len(units))


def _procedures_of(store: Store, project_id: str, tests: list[Test]) -> dict[str, Procedure]:
    """Test id -> the procedure its conversation was written from (a prompt-based target shows it to the
    model, seed 001's A.8); a test whose procedure is gone has none."""
    known = {p.name: p for p in known_procedures(store, project_id)}
    found = read_items(store, [t.conversation_id for t in tests if t.conversation_id])
    written = {i: item.conversation().metadata.get("procedure") for i, item in found.items()}
    return {
        t.id: known[written[t.conversation_id]]
        for t in tests
        if t.conversation_id in written and written[t.conversation_id] in known
    }


def procedure_runs(store: Store, project_id: str) -> list[Run]:
    """The project's procedure test runs, newest first."""
    return store.runs(project_id, kind=RUN_KIND)
