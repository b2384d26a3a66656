"""Tool-case generation as a job (seed 004, Section 2.2; issue 20, item 2): situations x tool groups ->
labelled tool-use conversations. A job of evalcore.jobs.

`plan_toolcases` decides the units: for each situation, `per_situation` conversations (the POS situations
more, so that POS is `pos_share` of them, as in TRACE's data), each on a tool group drawn (seeded) among
the groups whose schemas can produce it, as the seed samples one group at a time. A group that cannot
produce a situation is recorded with the reason; a situation no group can
produce has no unit and is listed as skipped, never faked. `create_toolcases` records the run (kind
`tool_case`) with its units; `execute_toolcases` works the units not done yet, each committed with its
Conversation (generator `tool_case`, the intended labels in its metadata). `generate_toolcases` does both.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evalcore import jobs
from evalcore.errors import EvalcoreError, UsageError
from evalcore.generators.tool_case.catalog import Situation, catalog, project_situations
from evalcore.generators.tool_case.groups import ToolGroup, prerequisite_names, requirement, tool_groups
from evalcore.generators.tool_case.records import GENERATOR, CaseConversation, to_conversation
from evalcore.generators.tool_case.synthesis import GENERATE_TOOL_CASE, case_inputs, check_case
from evalcore.inputs.tool_values import with_table_returns
from evalcore.items.store_ops import add_conversation
from evalcore.llm.client import ModelClient
from evalcore.llm.types import TaskResult
from evalcore.models import DocumentKind, Provenance, Run, Tool
from evalcore.store import Store
from evalcore.store.store import new_id

RUN_KIND = GENERATOR
POS_SHARE = 0.35  # seed 004, Table 2: 182 POS of the 516 conversations of TRACE


@dataclass(frozen=True)
class Plan:
    """The units of a tool-case job, and what was skipped with why."""

    units: list[dict[str, Any]]
    skipped: list[dict[str, str]]  # {situation, group, reason}: a group that cannot produce a situation
    unproduced: list[str]  # situations no group can produce


@dataclass(frozen=True)
class ToolCaseOutcome:
    """What one `execute_toolcases` call did, and where the run stands."""

    run: Run
    done: int
    total: int
    failed: list[str]


def project_catalog(store: Store, project_id: str) -> dict[str, Situation]:
    """The seed's situations and the project's own."""
    return catalog(project_situations(store.project(project_id).settings))


def project_tools(store: Store, project_id: str) -> list[Tool]:
    """The project's tools, one without a return schema given the one its tables imply (issue 26: the
    result shape inferred from the tables), so its results are records and the situations that misread a
    result can be produced."""
    tables = [(d.id, d.rows) for d in store.documents(project_id) if d.kind == DocumentKind.table]
    return with_table_returns(store.tools(project_id), tables)


def project_groups(store: Store, project_id: str) -> list[ToolGroup]:
    """The project's tool groups (the setting `tool_groups`, else derived from the tools)."""
    tools = project_tools(store, project_id)
    if not tools:
        raise UsageError(f"project '{project_id}' has no tools: import a project with tools/*.json")
    return tool_groups(tools, store.project(project_id).settings)


def pos_counts(situations: list[Situation], per_situation: int, pos_share: float | None) -> dict[str, int]:
    """Conversations per producible situation: `per_situation` each, except that the POS situations share
    as many as make POS `pos_share` of all (at least `per_situation` each). The catalogue has one POS
    situation in 26, so equal counts give 4% POS, where TRACE's data is 35% POS (Table 2: 182 of 516),
    and precision and F1 of the rubric methods would rest on a handful of POS conversations."""
    counts = {s.id: per_situation for s in situations}
    pos = [s.id for s in situations if s.overall == "POS"]
    neg = len(situations) - len(pos)
    if pos and neg and pos_share is not None and 0 < pos_share < 1:
        wanted = round(neg * per_situation * pos_share / (1 - pos_share))
        for i, sid in enumerate(pos):
            counts[sid] = max(per_situation, wanted // len(pos) + (i < wanted % len(pos)))
    return counts


def plan_toolcases(
    situations: list[Situation],
    groups: list[ToolGroup],
    per_situation: int,
    seed: int,
    offline: bool,
    pos_share: float | None = POS_SHARE,
) -> Plan:
    """Units (see the module docstring); offline, a situation without a template cannot be produced;
    POS situations get more units so that POS is `pos_share` of them (None: `per_situation` for all)."""
    skipped: list[dict[str, str]] = []
    unproduced: list[str] = []
    able: dict[str, list[ToolGroup]] = {}
    for situation in situations:
        for group in groups:
            why = requirement(situation.recipe, group) if (situation.recipe or offline) else None
            if why is None:
                able.setdefault(situation.id, []).append(group)
            else:
                skipped.append({"situation": situation.id, "group": group.name, "reason": why})
        if situation.id not in able:
            unproduced.append(situation.id)
    counts = pos_counts([s for s in situations if s.id in able], per_situation, pos_share)
    rng = random.Random(seed)
    units: list[dict[str, Any]] = []
    for situation in situations:
        for n in range(1, counts.get(situation.id, 0) + 1):
            group = rng.choice(able[situation.id])
            units.append({"key": f"{situation.id}#{n}", "situation": situation.id, "group": group.name})
    return Plan(units, skipped, unproduced)


def create_toolcases(
    store: Store,
    project_id: str,
    *,
    situations: list[str] | None = None,
    groups: list[str] | None = None,
    per_situation: int = 1,
    seed: int = 0,
    model: str | None = None,
    concurrency: int = 1,
    pos_share: float | None = POS_SHARE,
) -> Run:
    """Record a new tool-case run (status pending) with its plan; unknown situations or groups are refused.
    `pos_share` is the share of POS conversations the plan aims at (None: as many per situation)."""
    if pos_share is not None and not 0 <= pos_share < 1:
        raise UsageError(f"pos_share must be in [0, 1), not {pos_share}")
    known = project_catalog(store, project_id)
    chosen_groups = project_groups(store, project_id)
    if unknown := [s for s in situations or [] if s not in known]:
        raise UsageError(f"unknown situation(s) {', '.join(unknown)}; known: {', '.join(known)}")
    if groups:
        names = {g.name for g in chosen_groups}
        if unknown := [g for g in groups if g not in names]:
            raise UsageError(
                f"unknown tool group(s) {', '.join(unknown)}; groups: {', '.join(sorted(names))}"
            )
        chosen_groups = [g for g in chosen_groups if g.name in groups]
    provider, _, _ = ModelClient(store, project_id).registry.resolve("generator", model)
    offline = provider.name == "offline"
    wanted = [known[s] for s in situations] if situations else list(known.values())
    plan = plan_toolcases(wanted, chosen_groups, max(1, per_situation), seed, offline, pos_share)
    params = {
        "project_id": project_id,
        "situations": [s.id for s in wanted],
        "groups": {g.name: [t.name for t in g.tools] for g in chosen_groups},
        "per_situation": max(1, per_situation),
        "pos_share": pos_share,
        "seed": seed,
        "model": model,
        "units": plan.units,
        "skipped": plan.skipped,
        "unproduced": plan.unproduced,
        "concurrency": max(1, int(concurrency)),
    }
    return jobs.create(store, project_id, RUN_KIND, params, entry=execute_toolcases, total=len(plan.units))


def execute_toolcases(
    store: Store,
    run_id: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    retry_failed: bool = False,
) -> ToolCaseOutcome:
    """Generate the run's conversations not done yet (a first start or a resume)."""
    run = store.run(run_id)
    if run.kind != RUN_KIND or "units" not in run.params:
        raise EvalcoreError(f"'{run_id}' is not a tool-case run (kind {run.kind})")
    params = run.params
    pid = params["project_id"]
    run = store.start_run(pid, run)
    if retry_failed:
        jobs.retry_failed(store, run.id)
    known = project_catalog(store, pid)
    by_tool = {t.name: t for t in project_tools(store, pid)}
    groups = {
        name: ToolGroup(name, tuple(by_tool[t] for t in tools)) for name, tools in params["groups"].items()
    }
    llm = ModelClient(store, pid, run_id=run.id)
    llm.registry.resolve("generator", params.get("model"))  # a configuration error fails before any call
    units = {u["key"]: u for u in params["units"]}
    tables = tuple((d.id, d.rows) for d in store.documents(pid) if d.kind == DocumentKind.table)

    def work(claim: jobs.Claim) -> None:
        unit = units[claim.key]
        seed = int(params.get("seed") or 0) * 1000 + params["units"].index(unit)  # one seed per conversation
        try:
            situation, group = known[unit["situation"]], groups[unit["group"]]
            result = llm.run_task(
                GENERATE_TOOL_CASE,
                case_inputs(situation, group, tables=tables),
                role="generator",
                model=params.get("model"),
                seed=seed,
            )
        except jobs.UnitStopped:
            raise
        except (EvalcoreError, LookupError, TypeError, ValueError) as exc:
            # One situation that cannot be made (removed since planning, a broken template) fails its own
            # unit with the reason; the other units go on.
            with claim.commit() as writer:
                writer.fail(f"situation '{unit['situation']}' on group '{unit['group']}': {exc!r}")
            return
        if result.status == "stopped":
            raise jobs.UnitStopped(result.error or "budget")
        _commit_case(store, pid, claim, result, situation, group, seed)

    report = jobs.run_units(
        store,
        run.id,
        list(units),
        work,
        concurrency=int(params.get("concurrency") or 1),
        on_progress=on_progress,
    )
    done = jobs.progress(store, report.run)[0]
    return ToolCaseOutcome(report.run, done, len(units), report.failed)


def _commit_case(
    store: Store,
    project_id: str,
    claim: jobs.Claim,
    result: TaskResult[CaseConversation],
    situation: Situation,
    group: ToolGroup,
    seed: int,
) -> None:
    """Commit one unit's conversation, or fail the unit when the model gave none or it breaks the case's
    checks (`check_case`), keeping the raw reply."""
    with claim.commit() as writer:
        if result.status != "ok" or result.output is None:
            writer.fail(result.error or "no output", {"raw": result.raw})
            return
        if problems := check_case(result.output, group):
            writer.fail("; ".join(problems), {"raw": result.raw})
            return
        provenance = Provenance(
            producer=result.model or "offline",
            provider=result.provider or "offline",
            task=GENERATE_TOOL_CASE.name,
            prompt_version=result.prompt_version,
            inputs=[situation.id, group.name],
            seed=seed,
            run_id=claim.run_id,
        )
        conversation = to_conversation(
            result.output,
            new_id("tc"),
            situation,
            group.name,
            provenance,
            prerequisite_names(group.tools),
        )
        cid = add_conversation(store, project_id, conversation, conn=writer.conn)
        writer.result = {"conversation": cid, "situation": situation.id, "group": group.name}


def generate_toolcases(
    store: Store, project_id: str, *, on_progress: Callable[[int, int], None] | None = None, **options: Any
) -> ToolCaseOutcome:
    """Create a tool-case run (options as for `create_toolcases`) and work it to the end."""
    run = create_toolcases(store, project_id, **options)
    return execute_toolcases(store, run.id, on_progress=on_progress)
