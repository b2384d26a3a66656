"""Run against run, item by item (issue 27): what changed between a baseline run and a run, and is it real.

Over the judged turns both runs hold (the same item and turn, scored in both), each turn is fixed (failed in
the baseline, passes now), broken (the reverse), still failing or still passing. Per spec and overall the
change in failure rate comes with McNemar's exact test on the discordant counts (`evalcore.stats.paired`),
the counts themselves and 95% Wilson intervals of both rates; regressions are listed first. Rejected items
are left out unless asked for, as in every headline (`scope_label` says which tiers a headline counts).

Runs of the other kinds the results view lists (procedure tests, scenarios, simulations, rubric scoring)
are compared the same way over their rows (`evalcore.reports.results.item_rows`), an item paired by the
name every run of its kind gives it (a test, a scenario's repetition, a persona's dialogue, a scored
conversation); their rows have no judgment id.

A baseline from another project or of another kind, one with no scored turn in common, or a run still
being played is refused with a one-line `UsageError` that says which.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import sqlalchemy as sa

from evalcore.errors import EvalcoreError, UsageError
from evalcore.items.current import content_field
from evalcore.items.state import refresh_states
from evalcore.models import Run, RunStatus
from evalcore.reports.results import item_rows
from evalcore.runs.control import run_name
from evalcore.runs.records import RUN_KIND
from evalcore.specs.store_ops import KIND as SPEC_KIND
from evalcore.stats.paired import mcnemar_exact, wilson_interval
from evalcore.store import Store
from evalcore.store import schema as t

FIXED, BROKEN, STILL_FAILING, STILL_PASSING = "fixed", "broken", "still failing", "still passing"
# Regressions first, then what got better, then what did not move.
CHANGE_ORDER = (BROKEN, FIXED, STILL_FAILING, STILL_PASSING)
RANK = {c: i for i, c in enumerate(CHANGE_ORDER)}
ITEM_COLUMNS = ("change", "item_id", "turn_index", "spec", "baseline_error", "error_type", "judgment_id")
SPEC_COLUMNS = ("spec", "baseline %", "now %", "95% interval now", "fixed", "broken", "McNemar p", "paired")
LIVE = (RunStatus.pending, RunStatus.running)


SCOPE_WORDS = {"all": "all tiers", "gold": "gold only", "silver+gold": "silver and gold"}


def scope_label(tiers: str = "all", include_rejected: bool = False) -> str:
    """The words a headline uses to say which tiers it counts ('all tiers but rejected', 'gold only')."""
    words = SCOPE_WORDS.get(tiers, tiers)
    return f"{words} but rejected" if tiers == "all" and not include_rejected else words


@dataclass(frozen=True)
class Change:
    """The change from the baseline on a set of paired turns, with the paired test."""

    n: int  # turns scored in both runs
    baseline_failures: int
    failures: int
    fixed: int
    broken: int
    p_value: float  # McNemar's exact test, two-sided
    baseline_ci: tuple[float, float]
    ci: tuple[float, float]

    @property
    def baseline_rate(self) -> float:
        """Failure rate of the baseline on the paired turns."""
        return self.baseline_failures / self.n if self.n else 0.0

    @property
    def rate(self) -> float:
        """Failure rate of the run on the paired turns."""
        return self.failures / self.n if self.n else 0.0

    def worse(self, alpha: float) -> bool:
        """More broken than fixed, and more than chance would give at level ``alpha``."""
        return self.broken > self.fixed and self.p_value < alpha


@dataclass(frozen=True)
class RunComparison:
    """A run against its baseline: per turn, per spec, overall."""

    run: Run
    baseline: Run
    items: pd.DataFrame  # ITEM_COLUMNS, regressions first
    by_spec: dict[str, Change]  # spec label -> change, regressions (most broken) first
    overall: Change
    scope: str
    only_in_run: int  # scored turns the baseline does not hold
    only_in_baseline: int

    def flipped(self) -> pd.DataFrame:
        """The turns whose verdict changed (broken, then fixed)."""
        return self.items[self.items["change"].isin((BROKEN, FIXED))]

    def spec_table(self) -> pd.DataFrame:
        """One row per spec, regressions first: both failure rates (in percent), the run's 95% interval in
        words, the fixed and broken counts, McNemar's p and the paired count (SPEC_COLUMNS)."""
        rows = [
            (spec, 100 * ch.baseline_rate, 100 * ch.rate, f"[{_pct(ch.ci[0])}, {_pct(ch.ci[1])}]", ch.fixed,
             ch.broken, ch.p_value, ch.n)
            for spec, ch in self.by_spec.items()
        ]  # fmt: skip
        return pd.DataFrame(rows, columns=list(SPEC_COLUMNS))


def _change(n: int, baseline_failures: int, failures: int, fixed: int, broken: int) -> Change:
    """The paired change of n turns from their counts, with the paired test and both intervals."""
    return Change(
        n=n,
        baseline_failures=baseline_failures,
        failures=failures,
        fixed=fixed,
        broken=broken,
        p_value=mcnemar_exact(broken, fixed),
        baseline_ci=wilson_interval(baseline_failures, n),
        ci=wilson_interval(failures, n),
    )


def _check(run: Run, baseline: Run) -> None:
    """Refuse a baseline that cannot be compared, saying why."""
    for which, r in (("baseline", baseline), ("run", run)):
        if r.status in LIVE:
            raise UsageError(f"{which} {r.id} is still {r.status.value}: compare once it has finished")
    if run.params.get("project_id") != baseline.params.get("project_id"):
        raise UsageError(
            f"baseline {baseline.id} is from project {baseline.params.get('project_id')}, "
            f"run {run.id} from project {run.params.get('project_id')}"
        )
    if run.kind != baseline.kind:
        raise UsageError(
            f"baseline {baseline.id} is a {baseline.kind} run and run {run.id} a {run.kind} run: "
            "compare runs of one kind"
        )


_J = t.judgments
# Only what pairing needs, computed in SQL: (item, turn, played alone) is the key, `failed` the verdict.
_PAIRING = sa.select(
    _J.c.id,
    t.JUDGMENT_ITEM,
    sa.func.coalesce(_J.c.turn_index, -1),
    sa.and_(_J.c.multi_turn.is_(None), _J.c.conversation_id.is_not(None)),
    _J.c.score < 1,
    _J.c.error_type,
    _J.c.spec_id,
)

# A scored turn: its judgment, its key (item, turn or -1, played alone), the verdict, error type and spec.
SCORED_COLUMNS = ["jid", "item", "turn", "alone", "failed", "error", "spec_id"]


def _fetch_all(conn: sa.Connection, query: sa.Select) -> list[tuple]:
    """All rows of a query as plain tuples from the driver's cursor: at 100,000 rows, building SQLAlchemy
    rows costs as much as SQLite's reading them (benchmarks/results.py)."""
    compiled = query.compile(dialect=conn.dialect)
    params = (
        [compiled.params[k] for k in compiled.positiontup or ()] if compiled.positional else compiled.params
    )
    cursor = conn.connection.cursor()
    try:
        cursor.execute(str(compiled), params)
        return cursor.fetchall()
    finally:
        cursor.close()


@dataclass(frozen=True)
class _Side:
    """One run's scored turns, one per key (item, turn or -1, played alone), as columns: numbers as
    numpy numbers, text as numpy objects. Pandas would infer string columns from the text and hash and
    sort them as objects; at 100,000 turns that was most of a compare, so pairing, ordering and counting
    work on integer codes of the text instead (benchmarks/results.py)."""

    jid: np.ndarray  # int64, -1 where the row has no judgment
    item: np.ndarray
    turn: np.ndarray  # int64, -1 for none
    alone: np.ndarray  # bool
    failed: np.ndarray  # bool
    error: np.ndarray
    spec_id: np.ndarray

    def take(self, at: np.ndarray) -> _Side:
        """The rows at these positions (an index array or a mask)."""
        return _Side(*(getattr(self, f.name)[at] for f in fields(self)))


def _side(rows: Sequence[tuple]) -> _Side:
    """A side from rows of SCORED_COLUMNS, keeping a key's last judgment (in judgment order; rows with no
    judgment in the order given)."""
    cols = list(zip(*rows, strict=True)) if rows else [()] * len(SCORED_COLUMNS)
    side = _Side(
        jid=np.array([-1 if j is None else j for j in cols[0]], dtype=np.int64),
        item=np.array(cols[1], dtype=object),
        turn=np.array(cols[2], dtype=np.int64),
        alone=np.array(cols[3], dtype=bool),
        failed=np.array(cols[4], dtype=bool),
        error=np.array(cols[5], dtype=object),
        spec_id=np.array(cols[6], dtype=object),
    )
    order = np.argsort(side.jid, kind="stable")
    keys = _keys(side, pd.factorize(side.item)[0], _top_turn(side))[order]
    last = ~pd.Series(keys).duplicated(keep="last").to_numpy()
    side = side.take(order[last])
    for f in fields(side):
        getattr(side, f.name).flags.writeable = False  # kept and shared between compares (_SIDES)
    return side


def _in_scope(side: _Side, rejected: frozenset[str]) -> _Side:
    """The side without the rejected items."""
    return side.take(~pd.Series(side.item, dtype=object).isin(rejected).to_numpy()) if rejected else side


def _top_turn(*sides: _Side) -> int:
    return max(int(s.turn.max(initial=0)) for s in sides)


def _keys(side: _Side, item_codes: np.ndarray, top_turn: int) -> np.ndarray:
    """One integer per key (item, turn, played alone), from codes of the items."""
    return (item_codes.astype(np.int64) * (top_turn + 2) + side.turn + 1) * 2 + side.alone


# The scored turns of the runs compared last, by store, run and what the run holds (its judgments' count,
# last id and summed score: judgments are only ever inserted, so a run that gains one gets a new entry).
# Reading a run of 100,000 turns out of the store is most of a compare (benchmarks/results.py); a finished
# run does not change, and a lead compares one run with several baselines in turn, or comes back to one.
# An entry is the reading's future: a second reader of the run (a read ahead, another user's compare)
# waits for the first rather than reading it again.
_SIDES: OrderedDict[tuple, Future[_Side]] = OrderedDict()
_SIDES_KEPT = 8
_SIDES_LOCK = threading.Lock()


@contextlib.contextmanager
def _collection_paused() -> Iterator[None]:
    """Python's cycle collector paused while a run's rows are made into tuples and columns: every few
    hundred new tuples it would walk all those made so far, which was half the time of reading a run of
    100,000 turns (benchmarks/results.py). Nothing made here holds a cycle; reference counting still frees
    it all, and collection resumes after (if it was on: another thread may have paused it too)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _scored(store: Store, run: Run, rejected: frozenset[str]) -> _Side:
    """The run's scored turns in scope, one per key; a turn judged twice keeps its last judgment."""
    if run.kind != RUN_KIND:
        return _scored_rows(store, run, rejected)
    return _in_scope(_kept(store, run.id), rejected)


def _kept(store: Store, run_id: str) -> _Side:
    """A run's scored turns, read once per store and content (`_SIDES`)."""
    with store.read() as conn:
        held = conn.execute(
            sa.select(sa.func.count(), sa.func.max(_J.c.id), sa.func.sum(_J.c.score)).where(
                _J.c.run_id == run_id
            )
        ).one()
    key = (store.url, run_id, *held)
    with _SIDES_LOCK:
        reading = _SIDES.get(key)
        mine = reading is None
        if mine:
            reading = _SIDES[key] = Future()
            while len(_SIDES) > _SIDES_KEPT:
                _SIDES.popitem(last=False)
        else:
            _SIDES.move_to_end(key)
    if mine:
        try:
            query = _PAIRING.where(_J.c.run_id == run_id, _J.c.score.is_not(None))
            with store.read() as conn, _collection_paused():
                reading.set_result(_side(_fetch_all(conn, query)))
        except BaseException as exc:
            with _SIDES_LOCK:
                if _SIDES.get(key) is reading:
                    del _SIDES[key]
            reading.set_exception(exc)
            raise
    return reading.result()


def read_ahead(store: Store, run_ids: Sequence[str]) -> None:
    """Start reading runs' scored turns in the background, in order, in one thread of its own (two at
    once would only take turns at the interpreter), so that a compare of them picked next reads none or
    one. Skips a run already read (its compare checks that what was read is still what the run holds) and
    a run not of the kind a compare reads from the store, or unknown."""
    wanted = []
    for run_id in dict.fromkeys(run_ids):
        with _SIDES_LOCK:
            if any(k[:2] == (store.url, run_id) for k in _SIDES):
                continue
        try:
            run = store.run(run_id)
        except EvalcoreError:
            continue
        if run.kind == RUN_KIND and run.status not in LIVE:
            wanted.append(run_id)
    if wanted:
        name = f"read-ahead {' '.join(wanted)}"
        threading.Thread(target=_read_quietly, args=(store, wanted), name=name, daemon=True).start()


def likely_baseline(run: Run, candidates: Sequence[Run]) -> str | None:
    """The baseline a run is most often compared with: the latest candidate started before it, else the
    latest candidate (None for none)."""
    before = [c for c in candidates if c.started_at < run.started_at]
    chosen = max(before or candidates, key=lambda c: c.started_at, default=None)
    return chosen.id if chosen else None


def _read_quietly(store: Store, run_ids: list[str]) -> None:
    # A failure to read ahead is met again, and shown, by the compare that needs the run.
    for run_id in run_ids:
        with contextlib.suppress(Exception):
            _kept(store, run_id)


def _scored_rows(store: Store, run: Run, rejected: frozenset[str]) -> _Side:
    """A run of another kind's scored rows in scope, by the name its kind pairs them on; a row of no spec is
    counted under what its kind names instead (a procedure test under its procedure: `_spec_labels` shows
    a name that is no spec's id as it is)."""
    rows = [
        (None, r.pair, -1, False, r.verdict == "fail", r.error_type, r.spec_id or r.spec or None)
        for r in item_rows(store, run, {})
        if r.verdict != "unscored"
    ]
    return _in_scope(_side(rows), rejected)


def _rejected(store: Store, project_id: str | None) -> frozenset[str]:
    """Items annotators rejected (as the read model has them now; an item it does not hold is not)."""
    if not project_id:
        return frozenset()
    refresh_states(store, project_id)
    s = t.annotation_states
    with store.read() as conn:
        found = conn.scalars(
            sa.select(s.c.item_id).where(s.c.project_id == project_id, s.c.tier == "rejected")
        )
        return frozenset(found)


def _objects(values: np.ndarray) -> pd.Series:
    """A column of text kept as Python objects (no string inference)."""
    return pd.Series(values, dtype=object, copy=False)


def compare_to_baseline(
    store: Store, run_id: str, baseline_id: str, *, include_rejected: bool = False
) -> RunComparison:
    """Compare a run with a baseline run over the turns both scored (see the module docstring)."""
    run, baseline = store.run(run_id), store.run(baseline_id)
    _check(run, baseline)
    project_id = run.params.get("project_id")
    rejected = frozenset() if include_rejected else _rejected(store, project_id)
    now = _scored(store, run, rejected)
    base = _scored(store, baseline, rejected)
    # Pair on integer keys over codes both sides share.
    codes = pd.factorize(np.concatenate([now.item, base.item]))[0]
    top = _top_turn(now, base)
    at = pd.Index(_keys(base, codes[len(now.item) :], top)).get_indexer(
        _keys(now, codes[: len(now.item)], top)
    )
    if not (at >= 0).any():
        raise UsageError(f"baseline {baseline_id} and run {run_id} have no scored item in common")
    was, now_paired = base.take(at[at >= 0]), now.take(at >= 0)
    failed, base_failed = now_paired.failed, was.failed
    rank = np.where(
        failed,
        np.where(base_failed, RANK[STILL_FAILING], RANK[BROKEN]),
        np.where(base_failed, RANK[FIXED], RANK[STILL_PASSING]),
    )
    spec = _spec_labels(store, project_id, now_paired.spec_id)
    spec_code, spec_names = pd.factorize(spec, sort=True)
    item_code = _sorted_codes(now_paired.item)
    turns = now_paired.turn
    # Regressions first, then by spec, item, the turns played in order before the one played alone, and
    # (for turns judged twice in another kind of order) the judgment; lexsort is stable, primary key last.
    order = np.lexsort((now_paired.jid, turns, turns < 0, item_code, spec_code, rank))
    turn_index = turns.astype(object)
    turn_index[turns < 0] = None
    judgment = now_paired.jid.astype(object)
    judgment[now_paired.jid < 0] = None
    items = pd.DataFrame(
        {
            "change": _objects(np.array(CHANGE_ORDER, dtype=object)[rank[order]]),
            "item_id": _objects(now_paired.item[order]),
            "turn_index": _objects(turn_index[order]),
            "spec": _objects(spec[order]),
            "baseline_error": _objects(was.error[order]),
            "error_type": _objects(now_paired.error[order]),
            "judgment_id": _objects(judgment[order]),
        },
        columns=list(ITEM_COLUMNS),
    )
    counted = (np.ones(len(rank)), base_failed, failed, rank == RANK[FIXED], rank == RANK[BROKEN])
    sums = [np.bincount(spec_code, weights=c, minlength=len(spec_names)) for c in counted]
    by_spec = {str(name): _change(*(int(s[i]) for s in sums)) for i, name in enumerate(spec_names)}
    by_spec = dict(
        sorted(by_spec.items(), key=lambda kv: (-(kv[1].broken - kv[1].fixed), kv[1].p_value, kv[0]))
    )
    common = len(rank)
    return RunComparison(
        run=run,
        baseline=baseline,
        items=items,
        by_spec=by_spec,
        overall=_change(*(int(s.sum()) for s in sums)),
        scope=scope_label("all", include_rejected),
        only_in_run=len(now.item) - common,
        only_in_baseline=len(base.item) - common,
    )


def _sorted_codes(text: np.ndarray) -> np.ndarray:
    """One code per distinct text, in the texts' sorted order (code point order, as Python sorts str).
    Arrow sorts 100,000 item names four times faster than pandas sorts them as Python objects."""
    ranks = pc.rank(pa.array(text, type=pa.string()), sort_keys="ascending", tiebreaker="dense")
    return ranks.to_numpy()


def _spec_labels(store: Store, project_id: str | None, spec_ids: np.ndarray) -> np.ndarray:
    """Each turn's spec as its scenario (the id where the spec has none, '(no spec)' for no spec); only the
    specs paired are looked up (tens of a project's thousands)."""
    codes, ids = pd.factorize(_objects(spec_ids))
    found = content_field(store, project_id, SPEC_KIND, "scenario", ids.tolist()) if project_id else {}
    names = np.array([str(found[i]) if i in found else i for i in ids] + ["(no spec)"], dtype=object)
    return names[codes]  # a code of -1 (no spec) takes the last name


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def summary_markdown(cmp: RunComparison, alpha: float, *, limit: int = 50) -> str:
    """A Markdown summary a CI job can post: the verdict, the overall change, specs, what broke."""
    o = cmp.overall
    verdict = "worse" if o.worse(alpha) else "not worse"
    lines = [
        f"## {_named(cmp.run)} vs baseline {_named(cmp.baseline)}: {verdict} (alpha {alpha:g})",
        "",
        f"Counts {cmp.scope}; {o.n:,} turns scored in both runs "
        f"({cmp.only_in_run:,} only in the run, {cmp.only_in_baseline:,} only in the baseline).",
        "",
        "| | baseline | run | fixed | broken | McNemar p |",
        "|---|---|---|---|---|---|",
        _row("**overall**", o),
        *(_row(_cell(spec), ch) for spec, ch in cmp.by_spec.items()),
        "",
    ]
    broken = cmp.items[cmp.items["change"] == BROKEN]
    lines.append(f"### Broken ({len(broken):,})" if len(broken) else "### Nothing broke")
    for row in broken.head(limit).itertuples():
        turn = "" if row.turn_index is None else f" turn {row.turn_index}"
        lines.append(f"- `{row.item_id}`{turn} ({_cell(row.spec)}): {row.error_type or 'failed'}")
    if len(broken) > limit:
        lines.append(f"- ... and {len(broken) - limit:,} more")
    return "\n".join(lines) + "\n"


def _named(run: Run) -> str:
    """A run in a summary's heading: its name, and its id for `evalcore report --run`."""
    return f"{_cell(run_name(run))} (`{run.id}`)"


def _cell(text: str) -> str:
    """Spec text made safe for a Markdown table cell or list item (no pipes, no live HTML)."""
    return str(text).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def _row(label: str, ch: Change) -> str:
    return (
        f"| {label} | {_pct(ch.baseline_rate)} ({ch.baseline_failures}/{ch.n}) "
        f"[{_pct(ch.baseline_ci[0])}, {_pct(ch.baseline_ci[1])}] | {_pct(ch.rate)} ({ch.failures}/{ch.n}) "
        f"[{_pct(ch.ci[0])}, {_pct(ch.ci[1])}] | {ch.fixed} | {ch.broken} | {ch.p_value:.3g} |"
    )


def broken_lines(cmp: RunComparison, limit: int = 20) -> Sequence[str]:
    """What broke, one line per turn, for a terminal."""
    broken = cmp.items[cmp.items["change"] == BROKEN]
    lines = [
        f"broke: {r.item_id}{'' if r.turn_index is None else f' turn {r.turn_index}'} ({r.spec}): "
        f"{r.error_type or 'failed'}"
        for r in broken.head(limit).itertuples()
    ]
    if len(broken) > limit:
        lines.append(f"... and {len(broken) - limit:,} more")
    return lines
