"""Tables of a scenario run (seed 003; issue 19, item 7): pass rate per scenario, accuracy per assertion
kind, the criteria, the failing checks with the events that broke them, one repetition's outcomes and its
transcript, and the transcripts of the repetitions that did not pass; exported like the other reports
(CSV, JSONL, Markdown, LaTeX) with what produced them.

- Pass rate: a scenario is played `run_count` times; its pass share is the repetitions that passed over
  the repetitions played (an unscored repetition, where nothing failed but something could not be
  scored, does not count as passed).
- Accuracy per assertion kind, as Rasa reports it: passed / (passed + failed) over every assertion of
  that kind in every repetition; unscored outcomes are left out of it and counted apart.
- Criteria: the same counts per criterion of each scenario, judged by the LLM judge (or offline).

The table functions are pure: they take results (evalcore.generators.scenario.run.ScenarioResult, or any
objects with its fields) and return DataFrames. `scenario_report` reads a run's results and provenance,
and the turns of its repetitions that did not pass.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import pandas as pd

from evalcore.errors import EvalcoreError
from evalcore.generators.scenario.checks import Outcome
from evalcore.generators.scenario.criteria import CriterionResult
from evalcore.generators.scenario.format import to_data
from evalcore.generators.scenario.records import ASSERTION_MODELS, Scenario
from evalcore.generators.scenario.run import RUN_KIND, ScenarioResult, load_scenario_results
from evalcore.generators.scenario.store_ops import StoredScenario
from evalcore.generators.scenario.verdict import ScenarioVerdict
from evalcore.items.current import read_items
from evalcore.models import Run, Turn
from evalcore.models.wording import words
from evalcore.reports.failures import provenance
from evalcore.reports.table_export import export_table
from evalcore.reports.tables import TOTAL_LABEL
from evalcore.store import Store
from evalcore.targets.events import EVENTS_KEY, Event, events_from_json

TITLES = {
    "pass_rates": "Scenarios: pass share over their repetitions",
    "assertions": "Assertions: accuracy per kind (passed / (passed + failed))",
    "per_assertion": "Each assertion of each scenario over its repetitions",
    "criteria": "Criteria: verdicts of the judge per scenario",
    "failures": "Failing and unscored checks, with the events that broke them",
    "transcripts": "Transcripts of the failing and unscored repetitions, with the events of each turn",
}
CRITERION = "criterion"  # the check column's name for a criterion, beside the assertion kinds
EVENT_TEXT = 80  # characters of a message shown in an event's one-line description


class Result(Protocol):
    """What the tables read of one repetition (ScenarioResult has these fields)."""

    scenario: str
    repetition: int
    conversation_id: str
    verdict: ScenarioVerdict


def _outcome(passed: bool | None) -> str:
    return {True: "passed", False: "failed", None: "unscored"}[passed]


def _counts(values: Iterable[bool | None]) -> dict[str, int]:
    values = list(values)
    return {
        "passed": sum(v is True for v in values),
        "failed": sum(v is False for v in values),
        "unscored": sum(v is None for v in values),
    }


def _accuracy(counts: Mapping[str, int]) -> float | None:
    scored = counts["passed"] + counts["failed"]
    return counts["passed"] / scored if scored else None


def pass_rates(results: Sequence[Result], names: Sequence[str] = ()) -> pd.DataFrame:
    """One row per scenario (those in `names` first, in that order, played or not; then any other, in
    the order of the results), then the 'All' row: repetitions played, how many passed, failed or were
    unscored, and the pass share (passed / repetitions)."""
    by_scenario: dict[str, list[bool | None]] = {name: [] for name in names}
    for r in results:
        by_scenario.setdefault(r.scenario, []).append(r.verdict.passed)
    rows = []
    everything = [p for verdicts in by_scenario.values() for p in verdicts]
    for name, verdicts in [*by_scenario.items(), (TOTAL_LABEL, everything)]:
        counts = _counts(verdicts)
        share = counts["passed"] / len(verdicts) if verdicts else None
        rows.append({"scenario": name, "repetitions": len(verdicts), **counts, "share_passed": share})
    columns = ["scenario", "repetitions", "passed", "failed", "unscored", "share_passed"]
    return pd.DataFrame(rows, columns=columns) if by_scenario else pd.DataFrame(columns=columns)


def assertion_accuracy(results: Sequence[Result]) -> pd.DataFrame:
    """One row per assertion kind present (in the seed's order), then the 'All' row: outcomes passed,
    failed and unscored, and accuracy = passed / (passed + failed) (empty when none was scored)."""
    by_kind: dict[str, list[bool | None]] = {}
    for r in results:
        for outcome in r.verdict.assertions:
            by_kind.setdefault(outcome.kind, []).append(outcome.passed)
    order = list(ASSERTION_MODELS)
    kinds = sorted(by_kind, key=lambda k: (order.index(k) if k in order else len(order), k))
    columns = ["kind", "passed", "failed", "unscored", "accuracy"]
    if not kinds:
        return pd.DataFrame(columns=columns)
    everything = [p for values in by_kind.values() for p in values]
    rows = []
    for kind, values in [*((k, by_kind[k]) for k in kinds), (TOTAL_LABEL, everything)]:
        counts = _counts(values)
        rows.append({"kind": kind, **counts, "accuracy": _accuracy(counts)})
    return pd.DataFrame(rows, columns=columns)


def _written(scenario: Scenario, index: int) -> str:
    """An assertion as its scenario file writes it, on one line: 'flow_started: return_item'."""
    entry = to_data(scenario)["scenario"]["goals"]["assertions"][index]
    kind, value = next(iter(entry.items()))
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return f"{kind}: {shown}"


def per_assertion(
    results: Sequence[Result],
    scenarios: Mapping[str, Scenario] | None = None,
    written: Callable[[Scenario, int], str] | None = None,
) -> pd.DataFrame:
    """One row per assertion of each scenario (in the scenario's order): its number and kind, how it is
    written (when the scenarios are given: as its file has it, or as `written(scenario, index)` says it),
    and its outcomes passed, failed and unscored over the repetitions with their accuracy: which
    assertion of which scenario breaks, and how often."""
    by_assertion: dict[tuple[str, int], list[Outcome]] = {}
    for r in results:
        for i, outcome in enumerate(r.verdict.assertions):
            by_assertion.setdefault((r.scenario, i), []).append(outcome)
    rows = []
    for (name, i), found in by_assertion.items():
        counts = _counts(o.passed for o in found)
        scenario = (scenarios or {}).get(name)
        known = scenario is not None and i < len(scenario.assertions)
        shown = (written or _written)(scenario, i) if known else ""
        rows.append({"scenario": name, "#": i + 1, "kind": found[0].kind, "assertion": shown, **counts,
                     "accuracy": _accuracy(counts)})  # fmt: skip
    columns = ["scenario", "#", "kind", "assertion", "passed", "failed", "unscored", "accuracy"]
    return pd.DataFrame(rows, columns=columns)


def criteria_accuracy(results: Sequence[Result]) -> pd.DataFrame:
    """One row per criterion of each scenario: verdicts passed, failed and unscored over the
    repetitions, the accuracy over the scored ones, and whether the offline heuristic judged any."""
    by_criterion: dict[tuple[str, str], list[CriterionResult]] = {}
    for r in results:
        for c in r.verdict.criteria:
            by_criterion.setdefault((r.scenario, c.criterion), []).append(c)
    columns = ["scenario", "criterion", "passed", "failed", "unscored", "accuracy", "offline"]
    rows = []
    for (scenario, criterion), verdicts in by_criterion.items():
        counts = _counts(c.passed for c in verdicts)
        offline = any(c.offline for c in verdicts)
        rows.append(
            {
                "scenario": scenario,
                "criterion": criterion,
                **counts,
                "accuracy": _accuracy(counts),
                "offline": offline,
            }
        )
    return pd.DataFrame(rows, columns=columns)


def describe_event(event: Event) -> str:
    """One line for an event: its turn, its type and what it names ('turn 3 · slot_set order_id =
    "ORD-1"'); a message's text is cut to EVENT_TEXT characters."""
    where = f"turn {event.turn} · " if event.turn is not None else ""
    match event.type:
        case "flow_started":
            what = event.flow_id
        case "flow_completed" | "flow_cancelled" | "flow_interrupted":
            what = event.flow_id + (f" at {event.step_id}" if event.step_id else "")
        case "action_executed":
            what = event.action_name
        case "slot_set":
            what = f"{event.name} = {json.dumps(event.value, ensure_ascii=False)}"
        case "bot_uttered":
            text = " ".join(event.text.split())
            cut = text[:EVENT_TEXT] + ("…" if len(text) > EVENT_TEXT else "")
            named = " ".join(
                x for x in (event.utter_name, f"[{event.source}]" if event.source else None) if x
            )
            what = (f"{named}: " if named else "") + json.dumps(cut, ensure_ascii=False)
            if event.buttons:
                what += " buttons " + ", ".join(b.title for b in event.buttons)
        case "clarification":
            what = ", ".join(event.flow_ids or event.flow_names)
        case "user_uttered":
            what = json.dumps(" ".join(event.text.split())[:EVENT_TEXT], ensure_ascii=False)
        case _:
            what = ""
    return f"{where}{event.type} {what}".rstrip()


Describe = Callable[[Event], str]  # one event on one line: `describe_event`, or in words for a page


def _events(events: Sequence[Event], describe: Describe = describe_event) -> str:
    return "\n".join(describe(e) for e in events)


def outcomes(result: Result, describe: Describe = describe_event) -> pd.DataFrame:
    """Every check of one repetition, assertions first (in the scenario's order) then criteria: its
    number, kind (or 'criterion'), outcome, why, score (generative assertions) and the events that
    satisfied or broke it, one per line (each as `describe` says it)."""
    rows = [
        {
            "#": i,
            "check": o.kind,
            "outcome": _outcome(o.passed),
            "why": o.message,
            "score": o.score,
            "events": _events(o.events, describe),
        }
        for i, o in enumerate(result.verdict.assertions, start=1)
    ]
    start = len(rows) + 1
    rows += [
        {
            "#": i,
            "check": CRITERION,
            "outcome": _outcome(c.passed),
            "why": f"{c.criterion} — {c.rationale}" if c.rationale else c.criterion,
            "score": None,
            "events": "",
        }
        for i, c in enumerate(result.verdict.criteria, start=start)
    ]
    return pd.DataFrame(rows, columns=["#", "check", "outcome", "why", "score", "events"])


def failures(results: Sequence[Result]) -> pd.DataFrame:
    """Every failed or unscored check of every repetition: scenario, repetition, conversation, and the
    check's row of `outcomes`."""
    frames = []
    for r in results:
        table = outcomes(r)
        table = table[table["outcome"] != "passed"]
        if len(table):
            table.insert(0, "conversation", r.conversation_id)
            table.insert(0, "repetition", r.repetition)
            table.insert(0, "scenario", r.scenario)
            frames.append(table)
    columns = ["scenario", "repetition", "conversation", "#", "check", "outcome", "why", "score", "events"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def transcript(turns: Sequence[Turn], describe: Describe = describe_event) -> pd.DataFrame:
    """A conversation turn by turn, in order: index, role, text and the events the target reported with
    the turn, one per line (each as `describe` says it)."""
    rows = [
        {
            "turn": t.index,
            "role": str(t.role),
            "text": t.content if t.role in ("user", "assistant") else (t.tool_name or t.content),
            "events": _events(events_from_json(t.metadata.get(EVENTS_KEY) or []), describe),
        }
        for t in sorted(turns, key=lambda t: t.index)
    ]
    return pd.DataFrame(rows, columns=["turn", "role", "text", "events"])


def transcripts(results: Sequence[Result], turns: Mapping[str, Sequence[Turn]]) -> pd.DataFrame:
    """The transcript (`transcript`'s rows) of every repetition that did not pass, headed by scenario,
    repetition and conversation; a conversation missing from `turns` (unreadable) is left out."""
    frames = []
    for r in results:
        if r.verdict.passed is True or r.conversation_id not in turns:
            continue
        table = transcript(turns[r.conversation_id])
        table.insert(0, "conversation", r.conversation_id)
        table.insert(0, "repetition", r.repetition)
        table.insert(0, "scenario", r.scenario)
        frames.append(table)
    columns = ["scenario", "repetition", "conversation", "turn", "role", "text", "events"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def scenario_list(stored: Sequence[StoredScenario]) -> pd.DataFrame:
    """The project's scenarios, one row each: name, file it came from, version, the model that wrote it
    (the person who saved it when no model did; 'offline (no model)' marks the offline implementation),
    how many criteria, and the kinds of its assertions in words (a kind given twice counted: 'A value was
    set x2')."""
    rows = []
    for s in stored:
        kinds = Counter(a.kind for a in s.scenario.assertions)
        shown = ", ".join(words(k) if n == 1 else f"{words(k)} x{n}" for k, n in kinds.items())
        rows.append({"scenario": s.scenario.name, "file": s.file or "", "version": s.version,
                     "written by": s.written_by or s.author or "", "criteria": len(s.scenario.criteria),
                     "assertions": shown})  # fmt: skip
    columns = ["scenario", "file", "version", "written by", "criteria", "assertions"]
    return pd.DataFrame(rows, columns=columns)


def repetition_label(result: Result) -> str:
    """How a repetition is named in a picker: scenario, repetition and outcome."""
    return f"{result.scenario} · repetition {result.repetition} · {_outcome(result.verdict.passed)}"


def scenario_tables(
    results: Sequence[Result],
    scenarios: Mapping[str, Scenario] | None = None,
    turns: Mapping[str, Sequence[Turn]] | None = None,
) -> dict[str, pd.DataFrame]:
    """The run's tables by name: pass_rates, assertions (per kind), per_assertion, criteria, failures,
    and, when the conversations' turns are given, transcripts (of the repetitions that did not pass)."""
    tables = {
        "pass_rates": pass_rates(results),
        "assertions": assertion_accuracy(results),
        "per_assertion": per_assertion(results, scenarios),
        "criteria": criteria_accuracy(results),
        "failures": failures(results),
    }
    if turns is not None:
        tables["transcripts"] = transcripts(results, turns)
    return tables


@dataclass(frozen=True)
class ScenarioReport:
    """A scenario run read back: its results so far and what produced them."""

    run: Run
    results: list[ScenarioResult]  # in the run's scenario order, then by repetition
    about: dict[str, str] = field(default_factory=dict)  # provenance heading every export
    scenarios: dict[str, Scenario] = field(default_factory=dict)  # by name, as the run recorded them
    turns: dict[str, list[Turn]] = field(default_factory=dict)  # of the repetitions that did not pass


def scenario_report(store: Store, run_id: str) -> ScenarioReport:
    """The run's committed results, its provenance (run, target, judge, offline or not: offline when
    the run's judge or target is, or when the offline heuristic judged any criterion) and the turns of
    the repetitions that did not pass."""
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is not a scenario run (kind {run.kind})")
    results = load_scenario_results(store, run_id)
    about = provenance([run])
    if about["offline"] == "no" and any(c.offline for r in results for c in r.verdict.criteria):
        about["offline"] = f"yes (criteria judged offline: {run_id})"
    scenarios = {
        entry["name"]: Scenario.model_validate(entry["scenario"])
        for entry in run.params.get("scenarios") or []
    }
    failing = [r.conversation_id for r in results if r.verdict.passed is not True]
    turns = {cid: item.conversation().turns for cid, item in read_items(store, failing).items()}
    return ScenarioReport(run, results, about, scenarios, turns)


def export_scenario_tables(
    tables: Mapping[str, pd.DataFrame], fmt: str, about: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Each table as text in `fmt` ('csv', 'jsonl', 'md', 'latex'), headed by `about` (see
    `ScenarioReport.about`); Markdown and LaTeX captioned and labelled."""
    out = {}
    for name, df in tables.items():
        if fmt in ("md", "markdown", "latex", "tex"):
            label = f"tab:scenario-{name.replace('_', '-')}"
            out[name] = export_table(df, fmt, caption=TITLES.get(name, name), label=label, provenance=about)
        else:
            out[name] = export_table(df, fmt, provenance=about)
    return out
