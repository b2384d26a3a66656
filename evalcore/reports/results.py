"""The one results view (issue 27, item 2): one row per played item (or judged turn) and run, over every
kind of run against a target, filtered and paged.

- Conversation runs (`evalcore run`: doc-QA turns, tool cases and any test or conversation played and
  judged) are read from the judgments table in SQL: filters, count, order and the page itself are one
  indexed query each, and only the page's judgment bodies are read (for the judge's reason), so a page of
  a run of 100,000 judged turns comes back in a fraction of a second.
- Procedure test runs (scored as Table 2 scores them), scenario runs (one row per scenario and
  repetition), simulations (one row per simulated dialogue: failed at its first turn the breakdown
  detector flagged, unscored when no turn was judged) and rubric scoring runs (one row per conversation:
  failed when the rubric set estimates NEG) hold hundreds of rows, read and filtered in Python.

Every row names its item as another run of the kind names it too (`pair`), so two runs can be compared
item by item (evalcore.reports.compare): a simulated dialogue by its persona and dialogue number (each
run writes new conversations), a scenario by its repetition.

Rows of several runs are listed run after run in the order asked for; within a run, failures first, then
unscored, then passes. Rejected items are left out unless asked for, as in every headline. Verdicts are
`fail` (score below 1), `unscored` (the judge could not decide) and `pass`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import sqlalchemy as sa
from pydantic import BaseModel, Field

from evalcore.errors import UsageError
from evalcore.generators.procedure.conversations import GENERATOR as PROCEDURE_GENERATOR
from evalcore.generators.scenario.run import RUN_KIND as SCENARIO_KIND
from evalcore.generators.scenario.run import load_scenario_results
from evalcore.generators.simulation.records import GENERATOR as SIMULATION_GENERATOR
from evalcore.generators.simulation.records import RUN_KIND as SIMULATION_KIND
from evalcore.generators.simulation.store_ops import run_dialogues
from evalcore.items.current import content_field
from evalcore.items.state import refresh_states
from evalcore.models import Run
from evalcore.models.wording import told_apart, without_ids
from evalcore.reports.procedure_failure import test_intents
from evalcore.reports.procedure_tables import score_run, why_failed
from evalcore.reports.rubric_tables import rubric_report
from evalcore.runs.control import run_label, run_name
from evalcore.runs.procedure_tests import RUN_KIND as PROCEDURE_KIND
from evalcore.runs.records import RUN_KIND
from evalcore.runs.rubric_scoring import RUN_KIND as RUBRIC_KIND
from evalcore.runs.store_ops import judgment_bodies
from evalcore.specs.store_ops import KIND as SPEC_KIND
from evalcore.store import Store
from evalcore.store import schema as t

Verdict = Literal["fail", "unscored", "pass"]
VERDICTS: tuple[str, ...] = ("fail", "unscored", "pass")
# The run kinds whose items the view lists.
RESULT_KINDS = (RUN_KIND, PROCEDURE_KIND, SCENARIO_KIND, SIMULATION_KIND, RUBRIC_KIND)
REASON_CHARS = 300  # a row's reason is cut here; the opened item shows it whole


class ResultFilters(BaseModel):
    """What the results view shows: which runs, and which of their rows."""

    run_ids: list[str] = Field(description="Runs to list, in this order.")
    generator: str | None = Field(default=None, description="Only items of this generator.")
    verdict: Verdict | None = Field(default=None, description="Only rows with this verdict.")
    spec_id: str | None = Field(default=None, description="Only items of this spec.")
    text: str = Field(default="", description="Words searched in the item id, spec, error type and texts.")
    include_rejected: bool = Field(default=False, description="Count items annotators rejected.")


class ResultRow(BaseModel):
    """One played item (a judged turn, a procedure test, a scenario repetition) of one run."""

    run_id: str = Field(description="The run.")
    run_name: str = Field(description="The run's name (`run_name`).")
    run_kind: str = Field(description="The run's kind: run, procedure_tests or scenario.")
    item_id: str = Field(description="The conversation, test or scenario played.")
    turn_index: int | None = Field(default=None, description="The judged turn, for a conversation.")
    alone: bool = Field(default=False, description="The turn was played alone (no history).")
    generator: str = Field(description="The generator that wrote the item ('' when unknown).")
    spec_id: str | None = Field(default=None, description="The item's spec.")
    spec: str = Field(description="The spec's title (its Scenario line), '' for none.")
    verdict: Verdict = Field(description="fail, unscored or pass.")
    score: float | None = Field(default=None, description="The score (1 pass, 0 fail), None unscored.")
    error_type: str | None = Field(default=None, description="Why it failed, from the fixed list.")
    reason: str = Field(default="", description="The judge's or checker's reason, cut short.")
    ref: str = Field(description="Where the row comes from: a judgment id, or the run's unit.")
    pair: str = Field(default="", description="The item as every run of its kind names it (for compares).")


class ResultPage(BaseModel):
    """One page of rows and how many rows the filters keep in all."""

    rows: list[ResultRow] = Field(description="The rows of this page.")
    total: int = Field(description="Rows the filters keep, over every page.")
    verdicts: dict[str, int] = Field(default_factory=dict, description="Rows kept of each verdict.")
    offset: int = Field(description="Index of the first row of the page.")
    limit: int = Field(description="Rows per page.")

    @property
    def failure_rate(self) -> float | None:
        """Failed over scored rows kept (None when none is scored)."""
        scored = self.verdicts.get("fail", 0) + self.verdicts.get("pass", 0)
        return self.verdicts.get("fail", 0) / scored if scored else None


def result_runs(store: Store, project_id: str) -> list[Run]:
    """The project's runs whose items the results view lists (runs against a target), newest first."""
    return [r for r in store.runs(project_id) if r.kind in RESULT_KINDS]


def run_labels(runs: Sequence[Run]) -> dict[str, str]:
    """Run id -> how a picker names it: name, target, judge, start and status, as Runs and Reports name
    runs (`runs.control.run_label` without its id), each one distinct."""
    return told_apart({r.id: without_ids(run_label(r)) for r in runs})


def spec_titles(store: Store, project_id: str) -> dict[str, str]:
    """Spec id -> its title (the Scenario line), for filters and rows."""
    return {k: str(v) for k, v in content_field(store, project_id, SPEC_KIND, "scenario").items() if v}


# ------------------------------------------------------------------ conversation runs, in SQL

_J = t.judgments
_ITEM = t.JUDGMENT_ITEM
_VERDICT_RANK = t.VERDICT_RANK  # the order ix_judgments_results keeps


def judgment_query(
    filters: ResultFilters, project_id: str, run_id: str, spec_ids: Sequence[str] | None
) -> sa.Select:
    """The judgments of one run the filters keep. The rejected items and the generator's items are each
    one subquery SQLite reads once, not a join of every judgment to its item and tier (which made the
    first page of a run of 100,000 judged turns twice as slow)."""
    s, i = t.annotation_states, t.items
    query = sa.select(_J.c.id).where(_J.c.run_id == run_id)
    if not filters.include_rejected:
        rejected = sa.select(s.c.item_id).where(s.c.project_id == project_id, s.c.tier == "rejected")
        query = query.where(_ITEM.not_in(rejected))
    if filters.generator:
        made = sa.select(i.c.id).where(i.c.project_id == project_id, i.c.generator == filters.generator)
        query = query.where(_ITEM.in_(made))
    if filters.spec_id:
        query = query.where(_J.c.spec_id == filters.spec_id)
    if filters.verdict == "fail":
        query = query.where(_J.c.score < 1)
    elif filters.verdict == "pass":
        query = query.where(_J.c.score >= 1)
    elif filters.verdict == "unscored":
        query = query.where(_J.c.score.is_(None))
    if filters.text.strip():
        pattern = f"%{filters.text.strip()}%"
        # The body holds the question, the expected answer, the reply and the judge's rationale.
        found = [
            _ITEM.ilike(pattern),
            _J.c.error_type.ilike(pattern),
            sa.cast(_J.c.body, sa.Text).ilike(pattern),
        ]
        if spec_ids:
            found.append(_J.c.spec_id.in_(list(spec_ids)))
        query = query.where(sa.or_(*found))
    return query


def _count_judgments(store: Store, query: sa.Select) -> dict[str, int]:
    """Rows the query keeps, by verdict (one grouped count)."""
    counted = query.with_only_columns(_VERDICT_RANK.label("rank"), sa.func.count()).group_by(_VERDICT_RANK)
    with store.read() as conn:
        return {VERDICTS[rank]: int(n) for rank, n in conn.execute(counted)}


def page_query(query: sa.Select, offset: int, limit: int) -> sa.Select:
    """The columns of one page of a run's judged turns the query keeps, in the order ix_judgments_results
    keeps (so a page is read from the index, not sorted out of the whole run)."""
    return (
        query.with_only_columns(
            _J.c.id,
            _ITEM.label("item_id"),
            _J.c.turn_index,
            _J.c.multi_turn,
            _J.c.conversation_id,
            _J.c.spec_id,
            _J.c.score,
            _J.c.error_type,
        )
        .order_by(_VERDICT_RANK, _ITEM, _J.c.turn_index, _J.c.id)
        .offset(offset)
        .limit(limit)
    )


def _judgment_rows(
    store: Store, run: Run, query: sa.Select, offset: int, limit: int, titles: dict[str, str]
) -> list[ResultRow]:
    """One page of a conversation run's rows: failures first, then by item and turn."""
    page = page_query(query, offset, limit)
    i = t.items
    with store.read() as conn:
        found = conn.execute(page).all()
        # The page's items' generators: a lookup of its few items, not a join of the whole run.
        made = conn.execute(sa.select(i.c.id, i.c.generator).where(i.c.id.in_({r.item_id for r in found})))
        made_by = {item_id: generator for item_id, generator in made}
    bodies = judgment_bodies(store, [r.id for r in found])
    rows = []
    for r in found:
        body = bodies.get(r.id)
        reason = (body.crash or body.rationale) if body else ""
        rows.append(
            ResultRow(
                run_id=run.id,
                run_name=run_name(run),
                run_kind=run.kind,
                item_id=r.item_id,
                turn_index=r.turn_index,
                alone=r.multi_turn is None and r.conversation_id is not None,
                generator=made_by.get(r.item_id) or "",
                spec_id=r.spec_id,
                spec=titles.get(r.spec_id or "", ""),
                verdict=_verdict(r.score),
                score=r.score,
                error_type=r.error_type,
                reason=_short(reason or ""),
                ref=str(r.id),
            )
        )
    return rows


def _verdict(score: float | None) -> Verdict:
    if score is None:
        return "unscored"
    return "fail" if score < 1 else "pass"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


# ------------------------------------------------------- procedure tests and scenarios, in Python


def _procedure_rows(store: Store, run: Run, titles: dict[str, str]) -> list[ResultRow]:
    """Every played test of a procedure test run, as Table 2 scores it: its turn is the expected one's, and
    a test of no spec is of its procedure ('procedure: what it is for'), which the compare groups by."""
    scored = score_run(store, run.id)
    intents = test_intents(store, run.params["project_id"], scored.tests)
    rows = []
    for score in scored.scores:
        test = scored.tests[score.test_id]
        crash = scored.crashes.get(score.test_id)
        procedure = f"procedure: {intents[score.test_id]}" if score.test_id in intents else ""
        rows.append(
            ResultRow(
                run_id=run.id,
                run_name=run_name(run),
                run_kind=run.kind,
                item_id=score.test_id,
                turn_index=len(test.context),
                generator=PROCEDURE_GENERATOR,
                spec_id=test.spec_id,
                spec=titles.get(test.spec_id or "", "") or procedure,
                verdict="pass" if score.correct else "fail",
                score=1.0 if score.correct else 0.0,
                error_type=None if score.correct else ("crash" if crash else "wrong_action"),
                reason="" if score.correct else _short(crash or why_failed(score, scored.threshold)),
                ref=score.test_id,
                pair=score.test_id,
            )
        )
    return rows


def _scenario_rows(store: Store, run: Run, titles: dict[str, str]) -> list[ResultRow]:
    """One row per scenario and repetition of a scenario run; the reason is the first check that broke; the
    spec a scenario was written from (`scenarios from-specs`) is its spec."""
    stored = {e["name"]: e.get("item_id") for e in run.params.get("scenarios", [])}
    with store.read() as conn:
        specs = dict(
            conn.execute(
                sa.select(t.items.c.id, t.items.c.spec_id).where(
                    t.items.c.id.in_([i for i in stored.values() if i])
                )
            ).all()
        )
    rows = []
    for result in load_scenario_results(store, run.id):
        spec_id = specs.get(stored.get(result.scenario) or "")
        verdict = result.verdict
        broke = [o.message for o in verdict.assertions if o.passed is False]
        broke += [c.rationale or c.criterion for c in verdict.criteria if c.passed is False]
        kind = "fail" if verdict.passed is False else ("unscored" if verdict.passed is None else "pass")
        rows.append(
            ResultRow(
                run_id=run.id,
                run_name=run_name(run),
                run_kind=run.kind,
                item_id=result.scenario,
                turn_index=None,
                generator="scenario",
                spec_id=spec_id,
                spec=titles.get(spec_id or "", ""),
                verdict=kind,
                score=None if verdict.passed is None else float(verdict.passed),
                error_type="assertion_failed" if broke else None,
                reason=_short(broke[0] if broke else ""),
                ref=f"{result.scenario}#{result.repetition}",
                pair=f"{result.scenario}#{result.repetition}",
            )
        )
    return rows


def _simulation_rows(store: Store, run: Run) -> list[ResultRow]:
    """One row per simulated dialogue: its first breakdown (turn, type, the detector's reasoning)."""
    rows = []
    for conversation_id, dialogue in run_dialogues(store, run.id)[1]:
        judged = [(i, x.breakdown) for i, x in enumerate(dialogue.turns) if x.breakdown is not None]
        broke = [(i, b) for i, b in judged if b.decision == "breakdown"]
        verdict: Verdict = "fail" if broke else ("pass" if judged else "unscored")
        first = broke[0] if broke else None
        rows.append(
            ResultRow(
                run_id=run.id,
                run_name=run_name(run),
                run_kind=run.kind,
                item_id=conversation_id,
                turn_index=first[0] if first else None,
                generator=SIMULATION_GENERATOR,
                spec="",
                verdict=verdict,
                score=first[1].score if first else (1.0 if judged else None),
                error_type=(first[1].breakdown_types or ["breakdown"])[0] if first else None,
                reason=_short(first[1].reasoning) if first else "",
                ref=conversation_id,
                pair=f"{dialogue.persona_item or dialogue.user_name}#{dialogue.file}",
            )
        )
    return rows


def _rubric_rows(store: Store, run: Run) -> list[ResultRow]:
    """One row per conversation a rubric scoring run scored: failed when the set estimates NEG; the
    reason names the rubrics that applied."""
    report = rubric_report(store, run.id)
    rows = []
    for conversation_id, result in sorted(report.results.items()):
        hits = [f"{r} ({s})" for r, s in result["scores"].items() if s > 0]
        passed = result["label"] == "POS"
        rows.append(
            ResultRow(
                run_id=run.id,
                run_name=run_name(run),
                run_kind=run.kind,
                item_id=conversation_id,
                generator=str(run.params.get("generator") or ""),
                spec="",
                verdict="pass" if passed else "fail",
                score=1.0 if passed else 0.0,
                error_type=None if passed else "negative_label",
                reason=_short("rubrics that apply: " + (", ".join(hits) or "none")),
                ref=conversation_id,
                pair=conversation_id,
            )
        )
    return rows


def item_rows(store: Store, run: Run, titles: dict[str, str]) -> list[ResultRow]:
    """Every row of a procedure test, scenario, simulation or rubric scoring run, unfiltered."""
    if run.kind == PROCEDURE_KIND:
        return _procedure_rows(store, run, titles)
    if run.kind == SIMULATION_KIND:
        return _simulation_rows(store, run)
    if run.kind == RUBRIC_KIND:
        return _rubric_rows(store, run)
    return _scenario_rows(store, run, titles)


def _python_rows(store: Store, run: Run, filters: ResultFilters, titles: dict[str, str]) -> list[ResultRow]:
    """A procedure test, scenario, simulation or rubric scoring run's rows the filters keep, failures
    first."""
    rows = item_rows(store, run, titles)
    needle = filters.text.strip().casefold()
    kept = [
        r
        for r in rows
        if (not filters.generator or r.generator == filters.generator)
        and (not filters.spec_id or r.spec_id == filters.spec_id)
        and (not filters.verdict or r.verdict == filters.verdict)
        and (not needle or needle in " ".join([r.item_id, r.spec, r.error_type or "", r.reason]).casefold())
    ]
    return sorted(kept, key=lambda r: (VERDICTS.index(r.verdict), r.item_id, r.ref))


# ------------------------------------------------------------------------------- the view


def results_page(
    store: Store,
    project_id: str,
    filters: ResultFilters,
    *,
    offset: int = 0,
    limit: int = 50,
    titles: Mapping[str, str] | None = None,
) -> ResultPage:
    """One page of the rows the filters keep (see the module docstring), with their total. `titles` is the
    project's `spec_titles` when the caller has them (reading them is a scan of every spec)."""
    if limit < 1 or offset < 0:
        raise UsageError(f"a page needs a positive size and offset, got size {limit}, offset {offset}")
    runs = [store.run(r) for r in filters.run_ids]
    for run in runs:
        if run.params.get("project_id", project_id) != project_id or run.kind not in RESULT_KINDS:
            raise UsageError(f"run {run.id} is not a run against a target of project {project_id}")
    refresh_states(store, project_id)  # tiers as annotators left them, for the rejected switch
    titles = spec_titles(store, project_id) if titles is None else titles
    needle = filters.text.strip().casefold()
    matching_specs = [sid for sid, title in titles.items() if needle and needle in title.casefold()]
    rows: list[ResultRow] = []
    total = 0
    verdicts = dict.fromkeys(VERDICTS, 0)
    for run in runs:
        if run.kind == RUN_KIND:
            query = judgment_query(filters, project_id, run.id, matching_specs)
            counts = _count_judgments(store, query)
            count = sum(counts.values())
            start = max(0, offset - total)
            if start < count and len(rows) < limit:
                rows += _judgment_rows(store, run, query, start, limit - len(rows), titles)
        else:
            found = _python_rows(store, run, filters, titles)
            count = len(found)
            counts = {v: sum(r.verdict == v for r in found) for v in VERDICTS}
            start = max(0, offset - total)
            if len(rows) < limit:
                rows += found[start : start + limit - len(rows)]
        total += count
        verdicts = {v: verdicts[v] + counts.get(v, 0) for v in VERDICTS}
    return ResultPage(rows=rows, total=total, verdicts=verdicts, offset=offset, limit=limit)


def filter_choices(
    store: Store, project_id: str, run_ids: Sequence[str], titles: Mapping[str, str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """The generators and specs (id -> title) the runs' items have, for the view's pickers; `titles` as
    for `results_page`."""
    i = t.items
    generators: set[str] = set()
    spec_ids: set[str] = set()
    titles = spec_titles(store, project_id) if titles is None else titles
    with store.read() as conn:
        # A project has a few generators: each is looked for in a run (one index probe when it played any
        # of its items), not every judged turn joined to its item (a third of a first visit's time).
        made = sa.select(i.c.generator).where(i.c.project_id == project_id, i.c.generator.is_not(None))
        known = set(conn.scalars(made.distinct()))
        for run_id in run_ids:
            run = store.run(run_id)
            if run.kind == RUN_KIND:
                specs = sa.select(_J.c.spec_id).where(_J.c.run_id == run_id, _J.c.spec_id.is_not(None))
                spec_ids |= set(conn.scalars(specs.distinct()))  # from ix_judgments_run_spec
                for generator in sorted(known - generators):
                    items = sa.select(i.c.id).where(i.c.project_id == project_id, i.c.generator == generator)
                    played = sa.select(_J.c.id).where(_J.c.run_id == run_id, _ITEM.in_(items)).limit(1)
                    if conn.execute(played).first():
                        generators.add(generator)
            elif run.kind == PROCEDURE_KIND:
                generators.add(PROCEDURE_GENERATOR)
            elif run.kind == SIMULATION_KIND:
                generators.add(SIMULATION_GENERATOR)
            elif run.kind == RUBRIC_KIND:
                generators |= {str(run.params["generator"])} if run.params.get("generator") else set()
            else:
                generators.add("scenario")
    specs = {sid: titles.get(sid, sid) for sid in spec_ids}
    return sorted(generators), dict(sorted(specs.items(), key=lambda kv: kv[1]))
