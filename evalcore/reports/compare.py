"""Run against run, item by item (issue 27): what changed between a baseline run and a run, and is it real.

Over the judged turns both runs hold (the same item and turn, scored in both), each turn is fixed (failed in
the baseline, passes now), broken (the reverse), still failing or still passing. Per spec and overall the
change in failure rate comes with McNemar's exact test on the discordant counts (`evalcore.stats.paired`),
the counts themselves and 95% Wilson intervals of both rates; regressions are listed first. Rejected items
are left out unless asked for, as in every headline (`scope_label` says which tiers a headline counts).

A baseline from another project, one with no scored turn in common, or a run still being played is refused
with a one-line `UsageError` that says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from evalcore.errors import UsageError
from evalcore.items.current import content_field
from evalcore.models import Run, RunStatus
from evalcore.runs.store_ops import ROW_COLUMNS, item_tiers, judgment_rows
from evalcore.specs.store_ops import KIND as SPEC_KIND
from evalcore.stats.paired import mcnemar_exact, wilson_interval
from evalcore.store import Store

FIXED, BROKEN, STILL_FAILING, STILL_PASSING = "fixed", "broken", "still failing", "still passing"
# Regressions first, then what got better, then what did not move.
CHANGE_ORDER = (BROKEN, FIXED, STILL_FAILING, STILL_PASSING)
ITEM_COLUMNS = ("change", "item_id", "turn_index", "spec", "baseline_error", "error_type", "judgment_id")
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


def _change(base_failed: pd.Series, failed: pd.Series) -> Change:
    """The paired change of two aligned boolean series (True = the turn failed)."""
    n = len(failed)
    fixed = int((base_failed & ~failed).sum())
    broken = int((~base_failed & failed).sum())
    base_fail, now_fail = int(base_failed.sum()), int(failed.sum())
    return Change(
        n=n,
        baseline_failures=base_fail,
        failures=now_fail,
        fixed=fixed,
        broken=broken,
        p_value=mcnemar_exact(broken, fixed),
        baseline_ci=wilson_interval(base_fail, n),
        ci=wilson_interval(now_fail, n),
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


def _turns(store: Store, run_ids: Sequence[str], project_id: str | None) -> pd.DataFrame:
    """The few columns the compare needs of the runs' judged turns: item, turn, score, error type, spec
    label and the item's tier now (lighter than the report's frame, which also works out corrections)."""
    parts = [
        pd.DataFrame.from_records(judgment_rows(store, rid), columns=list(ROW_COLUMNS)).assign(run_id=rid)
        for rid in run_ids
    ]
    frame = pd.concat(parts, ignore_index=True)
    frame["item_id"] = frame["conversation_id"].where(frame["conversation_id"].notna(), frame["test_id"])
    labels = (
        {i: str(v) for i, v in content_field(store, project_id, SPEC_KIND, "scenario").items()}
        if project_id
        else {}
    )
    frame["spec_label"] = frame["spec_id"].map(labels).fillna(frame["spec_id"])
    passed = frame.drop_duplicates("item_id").set_index("item_id")["item_judge_passed"]
    judge_passed = {str(k): (None if pd.isna(v) else bool(v)) for k, v in passed.items()}
    tiers = item_tiers(store, judge_passed, project_ids=[project_id] if project_id else [])
    frame["tier"] = frame["item_id"].map({k: v.value for k, v in tiers.items()})
    return frame


def _scored(frame: pd.DataFrame, run_id: str, include_rejected: bool) -> pd.DataFrame:
    """The run's scored turns in scope, keyed by item and turn (a turn played alone keyed apart)."""
    part = frame[(frame["run_id"] == run_id) & frame["score"].notna()]
    if not include_rejected:
        part = part[part["tier"] != "rejected"]
    turn = part["turn_index"].fillna(-1).astype(int)
    alone = part["multi_turn"].isna() & part["conversation_id"].notna()
    keyed = part.assign(turn_key=turn, alone=alone, failed=part["score"].astype(float) < 1)
    return keyed.drop_duplicates(["item_id", "turn_key", "alone"], keep="last").set_index(
        ["item_id", "turn_key", "alone"]
    )


def compare_to_baseline(
    store: Store, run_id: str, baseline_id: str, *, include_rejected: bool = False
) -> RunComparison:
    """Compare a run with a baseline run over the turns both scored (see the module docstring)."""
    run, baseline = store.run(run_id), store.run(baseline_id)
    _check(run, baseline)
    frame = _turns(store, [baseline_id, run_id], run.params.get("project_id"))
    now = _scored(frame, run_id, include_rejected)
    base = _scored(frame, baseline_id, include_rejected)
    common = now.index.intersection(base.index, sort=False)
    if common.empty:
        raise UsageError(f"baseline {baseline_id} and run {run_id} have no scored item in common")
    now_c, base_c = now.loc[common], base.loc[common]
    failed, base_failed = now_c["failed"].astype(bool), base_c["failed"].astype(bool)
    change = pd.Series(STILL_PASSING, index=common)
    change[failed & base_failed] = STILL_FAILING
    change[failed & ~base_failed] = BROKEN
    change[~failed & base_failed] = FIXED
    items = pd.DataFrame(
        {
            "change": change.values,
            "item_id": common.get_level_values(0),
            "turn_index": [None if t < 0 else int(t) for t in common.get_level_values(1)],
            "spec": now_c["spec_label"].fillna("(no spec)").astype(str).values,
            "baseline_error": base_c["error_type"].values,
            "error_type": now_c["error_type"].values,
            "judgment_id": now_c["judgment_id"].values,
        }
    )
    rank = {c: i for i, c in enumerate(CHANGE_ORDER)}
    items = items.sort_values(
        ["change", "spec", "item_id", "turn_index"], key=lambda s: s.map(rank) if s.name == "change" else s
    ).reset_index(drop=True)
    by_spec = {}
    for spec, idx in pd.Series(
        range(len(common)), index=now_c["spec_label"].fillna("(no spec)").values
    ).groupby(level=0):
        rows = list(idx.values)
        by_spec[str(spec)] = _change(base_failed.iloc[rows], failed.iloc[rows])
    by_spec = dict(
        sorted(by_spec.items(), key=lambda kv: (-(kv[1].broken - kv[1].fixed), kv[1].p_value, kv[0]))
    )
    return RunComparison(
        run=run,
        baseline=baseline,
        items=items,
        by_spec=by_spec,
        overall=_change(base_failed, failed),
        scope=scope_label("all", include_rejected),
        only_in_run=len(now.index.difference(common)),
        only_in_baseline=len(base.index.difference(common)),
    )


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def summary_markdown(cmp: RunComparison, alpha: float, *, limit: int = 50) -> str:
    """A Markdown summary a CI job can post: the verdict, the overall change, specs, what broke."""
    o = cmp.overall
    verdict = "worse" if o.worse(alpha) else "not worse"
    lines = [
        f"## {cmp.run.id} vs baseline {cmp.baseline.id}: {verdict} (alpha {alpha:g})",
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
