"""Table 2 of seed 001 for procedure test runs (Section 4.3; issue 17, item 9): the seven metrics per
target, several targets side by side, each with its 95% Wilson interval; the drill-down to the failing
tests; exports like the other reports (CSV, JSONL, Markdown, LaTeX) headed by what produced them (the
runs, their targets, the reply-similarity model, and whether any of it is offline).

A run's actions are read from its committed units (a run still going reports what it has) and scored
against the tests as they are now in the store (an annotator's correction is what the action is held
to). Replies are compared on the embedding model the run recorded, at the threshold calibrated for that
model (generators/procedure/metrics.py REPLY_THRESHOLDS; a model without one gets the default, and the
header says so), or at the threshold given.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from evalcore.errors import EvalcoreError
from evalcore.generators.procedure.agents import play
from evalcore.generators.procedure.apis import known_tools
from evalcore.generators.procedure.metrics import (
    METRICS,
    REPLY_THRESHOLD,
    TestScore,
    embedding_similarity,
    reply_threshold,
    score_tests,
    table2,
    threshold_note,
)
from evalcore.items.current import read_items
from evalcore.llm.client import ModelClient
from evalcore.models import Run, TargetKind, Test, TurnRole
from evalcore.models.common import OFFLINE
from evalcore.models.items import Action
from evalcore.reports.failures import provenance
from evalcore.reports.table_export import export_table
from evalcore.reports.tables import wilson_interval
from evalcore.runs.procedure_tests import RUN_KIND
from evalcore.store import Store
from evalcore.targets.agents import AgentSetting, agent_names, build_agent

TITLES = {
    "table2": "Table 2: procedure tests per target (share, 95% Wilson interval)",
    "table2_counts": "Table 2 counts: hits / tests counted per metric",
    "failing": "Failing procedure tests",
}
LABELS = {
    "reply_recall": "Reply recall",
    "correct_reply": "Correct reply",
    "api_recall": "API recall",
    "correct_api": "Correct API",
    "correct_params": "Correct params.",
    "test_correct": "Test correct",
    "conversation_correct": "Conversation correct",
}


@dataclass(frozen=True)
class RunScores:
    """One run read back and scored: each played test's score, and what was not scored."""

    run: Run
    scores: list[TestScore]
    tests: dict[str, Test]
    crashes: dict[str, str]  # test id -> why the target gave no action
    pending: int  # tests of the run not played yet
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # Table 2 as (hits, n)
    threshold: float = REPLY_THRESHOLD  # the correct-reply cut the scores used
    threshold_note: str = ""  # which cut, on which model, and whether it was calibrated for it
    calibrated: bool = True  # False: the default cut, for a model with none calibrated


def score_run(
    store: Store, run_id: str, *, threshold: float | None = None, embedding: str | None = None
) -> RunScores:
    """A procedure test run's played tests scored (module docstring); `embedding` replaces the run's
    similarity model, `threshold` the one calibrated for it."""
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is not a procedure test run (kind {run.kind})")
    units: list[str] = run.params["units"]
    finished = store.finished_units(run_id, units)
    found = read_items(store, [u for u in units if u in finished])
    pairs: list[tuple[Test, Action | None]] = []
    crashes: dict[str, str] = {}
    for test_id in units:
        unit = finished.get(test_id)
        if unit is None or unit["status"] != "done" or test_id not in found:
            continue
        result = unit["result"] or {}
        test = found[test_id].test()
        if result.get("crash"):
            crashes[test_id] = result["crash"]
        action = Action.model_validate(result["action"]) if result.get("action") else None
        pairs.append((test, action))
    llm = ModelClient(store, run.params["project_id"])
    model = embedding or run.params.get("embedding")
    similarity = embedding_similarity(llm, model)
    cut = reply_threshold(model)[0] if threshold is None else threshold
    scores = score_tests(pairs, similarity, cut)
    return RunScores(
        run=run,
        scores=scores,
        tests={t.id: t for t, _ in pairs},
        crashes=crashes,
        pending=len(units) - len(pairs),
        counts=table2(scores, cut),
        threshold=cut,
        threshold_note=threshold_note(cut, model, given=threshold is not None),
        calibrated=threshold is not None or reply_threshold(model)[1],
    )


def table2_frame(scored: Sequence[RunScores]) -> pd.DataFrame:
    """One row per run (its target first): each metric's share and 95% Wilson interval."""
    rows = []
    for s in scored:
        row: dict[str, object] = {"target": s.run.target, "run": s.run.id, "tests": len(s.scores)}
        for metric in METRICS:
            hits, n = s.counts[metric]
            low, high = wilson_interval(hits, n)
            row |= {
                f"share_{metric}": hits / n if n else float("nan"),
                f"ci_low_{metric}": low,
                f"ci_high_{metric}": high,
            }
        rows.append(row)
    return pd.DataFrame(rows)


def table2_display(scored: Sequence[RunScores]) -> pd.DataFrame:
    """Table 2 for reading: one row per run, each metric as 'share% [low, high]' (n/a without tests)."""
    rows = []
    for s in scored:
        row: dict[str, object] = {"target": s.run.target, "run": s.run.id, "tests": len(s.scores)}
        for metric in METRICS:
            hits, n = s.counts[metric]
            low, high = wilson_interval(hits, n)
            row[LABELS[metric]] = f"{100 * hits / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]" if n else "n/a"
        rows.append(row)
    return pd.DataFrame(rows)


def counts_frame(scored: Sequence[RunScores]) -> pd.DataFrame:
    """One row per run: each metric as 'hits / n', the crashes and the tests not played yet."""
    rows = []
    for s in scored:
        row: dict[str, object] = {"target": s.run.target, "run": s.run.id}
        row |= {LABELS[m]: f"{s.counts[m][0]} / {s.counts[m][1]}" for m in METRICS}
        row |= {"crashes": len(s.crashes), "not played": s.pending}
        rows.append(row)
    return pd.DataFrame(rows)


def by_metric(table: pd.DataFrame, names: Mapping[str, str]) -> pd.DataFrame:
    """A table of one row per run (`table2_display`, `counts_frame`) turned for a page: one row per figure,
    one column per run headed by its name in `names` (run id -> name), so seven metrics and their
    intervals fit the page's width beside a few runs instead of scrolling sideways."""
    figures = [c for c in table.columns if c not in ("target", "run")]
    turned = {"figure": figures}
    for _, row in table.iterrows():
        turned[names.get(row["run"], row["run"])] = [str(row[c]) for c in figures]
    return pd.DataFrame(turned)


@dataclass(frozen=True)
class AgentScores:
    """Tests played by the built-in offline agents and scored: Table 2 per agent, before any target."""

    threshold: float  # correct-reply similarity threshold used
    note: str  # the threshold as the header states it (calibrated for which model, or given)
    calibrated: bool  # whether the embedding model has a calibrated threshold (or one was given)
    model: str  # embedding model of reply similarity
    scores: dict[str, list[TestScore]]  # agent name -> one score per test

    def cells(self, agent: str) -> list[tuple[int, int, float, float]]:
        """(hits, counted, low, high) per metric of Table 2 for `agent`, with 95% Wilson intervals."""
        out = []
        for hits, n in table2(self.scores[agent], self.threshold).values():
            low, high = wilson_interval(hits, n) if n else (float("nan"), float("nan"))
            out.append((hits, n, low, high))
        return out


def score_offline_agents(
    store: Store,
    project_id: str,
    tests: Sequence[Test],
    agents: Sequence[str],
    *,
    threshold: float | None = None,
    embedding: str | None = None,
    seed: int = 0,
) -> AgentScores:
    """Play `tests` against each built-in agent (demo, oracle, null) and score them (seed 001, Table 2);
    the oracle answers these tests. EvalcoreError naming the agents there are for an unknown one."""
    unknown = [a for a in agents if a not in agent_names()]
    if unknown:
        raise EvalcoreError(f"unknown agent(s) {', '.join(unknown)} (available: {', '.join(agent_names())})")
    llm = ModelClient(store, project_id)
    model = llm.registry.resolve("embedding", embedding)[2]
    calibrated_cut, calibrated = reply_threshold(model)
    cut = calibrated_cut if threshold is None else threshold
    similarity = embedding_similarity(llm, embedding)
    tools = known_tools(store, project_id)
    setting = AgentSetting(store, project_id, seed, tests)
    scores = {
        name: score_tests(play(tests, build_agent(name, setting), tools), similarity, cut)
        for name in dict.fromkeys(agents)
    }
    note = threshold_note(cut, model, given=threshold is not None)
    return AgentScores(cut, note, calibrated or threshold is not None, model, scores)


def describe_action(action: Action | None, generated: Collection[str] = ()) -> str:
    """An action as one line: 'call name({...})' (marked when `name` is a generated API) or 'reply: text'."""
    if action is None:
        return "(no action: crash)"
    if action.kind == "api":
        arguments = ", ".join(f"{k}={v!r}" for k, v in action.arguments.items())
        mark = " [generated API]" if action.tool_name in generated else ""
        return f"call {action.tool_name}({arguments}){mark}"
    return f"reply: {action.text}"


def why_failed(score: TestScore, threshold: float = REPLY_THRESHOLD) -> str:
    """Why a test is not correct, in a lead's words."""
    got, wanted = score.predicted, score.expected
    if got is None:
        return "crash"
    if wanted.kind == "api" and got.kind == "reply":
        return "replied where an API call was due"
    if wanted.kind == "reply" and got.kind == "api":
        return "called an API where a reply was due"
    if wanted.kind == "api" and not score.correct_api:
        return "wrong API"
    if wanted.kind == "api":
        return "wrong parameters"
    return f"reply not similar enough ({score.similarity:.2f} < {threshold:g})"


def failing_frame(s: RunScores, generated: Collection[str] = ()) -> pd.DataFrame:
    """The run's failing tests: the last turn of the context, what was expected, what the target did
    (calls of `generated` APIs marked)."""
    rows = []
    for score in s.scores:
        if score.correct:
            continue
        test = s.tests[score.test_id]
        last = test.context[-1] if test.context else None
        said = "" if last is None else (last.content if last.role != TurnRole.tool_call else last.tool_name)
        rows.append(
            {
                "test": score.test_id,
                "conversation": score.conversation_id,
                "last turn": f"{last.role.value}: {said}" if last else "",
                "expected": describe_action(score.expected, generated),
                "got": describe_action(score.predicted, generated),
                "why": s.crashes.get(score.test_id) or why_failed(score, s.threshold),
                "similarity": score.similarity,
            }
        )
    columns = ["test", "conversation", "last turn", "expected", "got", "why", "similarity"]
    return pd.DataFrame(rows, columns=columns)


def offline_runs(runs: Sequence[Run]) -> list[str]:
    """The ids of the runs whose figures are offline: a built-in offline target played the tests, or the
    replies were compared on the offline embedding."""
    return [
        r.id
        for r in runs
        if (r.params.get("target") or {}).get("kind") in (TargetKind.agent.value, TargetKind.demo.value)
        or str(r.params.get("embedding") or "").startswith(OFFLINE)
    ]


def report_about(scored: Sequence[RunScores]) -> dict[str, str]:
    """What produced the numbers (`reports.failures.provenance`), the correct-reply threshold each run was
    scored at, and offline when a target is a built-in offline one or replies were compared on the offline
    embedding."""
    runs = [s.run for s in scored]
    about = provenance(runs)
    notes = dict.fromkeys(s.threshold_note for s in scored if s.threshold_note)
    if notes:
        about["reply threshold"] = "; ".join(notes)
    offline = offline_runs(runs)
    if offline:
        about["offline"] = "yes (built-in offline target or offline embedding: " + ", ".join(offline) + ")"
    return about


def export_procedure_tables(
    scored: Sequence[RunScores], fmt: str, *, failing: bool = False
) -> dict[str, str]:
    """Table 2 and its counts (and each run's failing tests when `failing`) as text in `fmt`."""
    markup = fmt in ("md", "markdown", "latex", "tex")
    # People read Markdown and LaTeX: each metric as one 'share [interval]' column under its Table 2 name;
    # CSV and JSONL keep the numbers apart for other tools.
    table = table2_display(scored) if markup else table2_frame(scored)
    tables = {"table2": table, "table2_counts": counts_frame(scored)}
    if failing:
        for s in scored:
            tables[f"failing_{s.run.id}"] = failing_frame(s)
    about = report_about(scored)
    return {
        name: export_table(
            df,
            fmt,
            caption=TITLES.get(name, f"{TITLES['failing']} ({name.removeprefix('failing_')})")
            if markup
            else None,
            label=f"tab:{name.replace('_', '-')}" if markup else None,
            provenance=about,
        )
        for name, df in tables.items()
    }
