"""Reports of runs: judged turns as the frame `evalcore.reports.tables` reads, every table, drill-downs.

`judged_turns(store, run_ids)` loads one row per judged turn with the columns of
`report_tables.COLUMNS` (target from the run, spec label from the project's specs, the item's tier now
from the read model of the current item, `evalcore.items.current`), plus `judgment_id` and `item_id` for
drill-downs, and `outdated`: the turn was judged against an expected answer an annotator has corrected
since it was played. `build_report` scopes it to tiers (a verified scope, gold or silver+gold, leaves
outdated turns out: their reference is one people marked wrong) and computes every table (seed 000's
Tables 1/2 by spec, 10 by error type, 11 by number of documents and single vs multi-turn; by query type;
by tier); `compare_runs` puts two runs, or two targets, side by side; `failing_turns` opens a cell.

Error types stored under an older name (`ignored_context`) are read under the seed's (`coreference`);
`error_class` is each failure's class in the seed's Table 10. Turns a run played alone (the single-turn
half of a pair, multi_turn NULL in the store) stay out of every table but `by_pair`: the same questions
alone and in context, the seed's Table 11 comparison.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalcore.items.current import content_field, correction_versions
from evalcore.items.state import project_policy
from evalcore.jobs.control import committed_counts
from evalcore.models import Run, TargetKind
from evalcore.models.common import OFFLINE
from evalcore.reports.table_export import export_table
from evalcore.reports.tables import (
    COLUMNS,
    MULTI_TURN,
    SINGLE_TURN,
    STANDARD_TABLES,
    TOTAL_LABEL,
    UNSPECIFIED_ERROR,
    all_tables,
    compare,
    error_type_table,
    failure_table,
    pair_table,
    tier_filter,
)
from evalcore.review.reports import annotation_stamp
from evalcore.runs.records import ERROR_CLASSES, LEGACY_ERROR_TYPES, RUN_KIND, JudgedTurn, error_class
from evalcore.runs.store_ops import ROW_COLUMNS, item_tiers, judgment_bodies, judgment_rows, played_versions
from evalcore.specs.store_ops import KIND as SPEC_KIND
from evalcore.specs.store_ops import spec_stamp
from evalcore.store import Store

TABLE_TITLES: dict[str, str] = {
    "by_spec": "Failure rate by spec",
    "by_error_type": "Failures by error type",
    "by_error_class": "Failures by error class (seed 000, Table 10)",
    "by_n_documents": "Failure rate by number of documents",
    "by_query_type": "Failure rate by query type",
    "by_turns": "Failure rate, first turns vs later turns (different questions)",
    "by_pair": "Failure rate, the same questions asked alone vs in context (seed 000, Table 11)",
    "by_tier": "Failure rate by tier",
}
# The key columns a table groups by, and the frame column each is matched on in a drill-down.
TABLE_KEYS: dict[str, str] = {
    "by_spec": "spec_id",
    "by_error_type": "error_type",
    "by_error_class": "error_class",
    "by_n_documents": "n_documents",
    "by_query_type": "query_type",
    "by_turns": "turns",
    "by_tier": "tier",
}
BY_ALIASES: dict[str, str] = {
    **{name.removeprefix("by_"): name for name in TABLE_TITLES},
    "spec_id": "by_spec",
    "errors": "by_error_type",
    "documents": "by_n_documents",
    "docs": "by_n_documents",
    "multi_turn": "by_turns",
    "pair": "by_pair",
    "pairs": "by_pair",
    "classes": "by_error_class",
}
TIER_SCOPES: dict[str, list[str] | None] = {"all": None, "gold": ["gold"], "silver+gold": ["silver", "gold"]}
EXTRA_COLUMNS = ("judgment_id", "item_id", "outdated", "error_class")


def table_name(by: str) -> str:
    """The table a `--by` value names ('spec', 'error_type', 'n_documents', ...)."""
    name = BY_ALIASES.get(by, by)
    if name not in TABLE_TITLES:
        raise ValueError(
            f"unknown table {by!r}; use one of {', '.join(k.removeprefix('by_') for k in TABLE_TITLES)}"
        )
    return name


def judged_turns(store: Store, run_ids: Sequence[str]) -> pd.DataFrame:
    """One row per judged turn of the runs (see the module docstring for the columns)."""
    runs = {rid: store.run(rid) for rid in run_ids}
    parts = [
        pd.DataFrame.from_records(judgment_rows(store, rid), columns=list(ROW_COLUMNS)).assign(run_id=rid)
        for rid in runs
    ]
    # No runs make the same columns with no rows, so callers need no special case.
    parts = parts or [pd.DataFrame(columns=[*ROW_COLUMNS, "run_id"])]
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    frame["item_id"] = frame["conversation_id"].where(frame["conversation_id"].notna(), frame["test_id"])
    frame["target"] = frame["run_id"].map({rid: run.target for rid, run in runs.items()})
    # Labels of the specs the turns name only: a run plays tens of a project's thousands of specs, and
    # reading every scenario cost a report a third of its time (issue 28).
    spec_ids = frame["spec_id"].dropna().unique().tolist()
    projects = sorted({run.params.get("project_id") for run in runs.values()} - {None})
    labels: dict[str, str] = {}
    for project_id in projects:
        found = content_field(store, project_id, SPEC_KIND, "scenario", spec_ids)
        labels.update({i: str(v) for i, v in found.items()})
    frame["spec_label"] = (
        frame["spec_id"].map(labels).where(frame["spec_id"].map(labels).notna(), frame["spec_id"])
    )
    passed = frame.drop_duplicates("item_id").set_index("item_id")["item_judge_passed"]
    judge_passed = {str(k): (None if pd.isna(v) else bool(v)) for k, v in passed.items()}
    tiers = item_tiers(store, judge_passed, project_ids=projects)
    frame["tier"] = frame["item_id"].map({k: v.value for k, v in tiers.items()})
    frame["score"] = frame["score"].astype(float)
    frame["error_type"] = frame["error_type"].replace(LEGACY_ERROR_TYPES)
    frame["error_class"] = frame["error_type"].astype("object").map(error_class).map(ERROR_CLASSES)
    frame["n_documents"] = frame["n_documents"].astype("Int64")
    frame["multi_turn"] = frame["multi_turn"].astype("boolean")
    frame["outdated"] = _outdated(store, frame)
    return frame[[*COLUMNS, *EXTRA_COLUMNS]]


def _outdated(store: Store, frame: pd.DataFrame) -> pd.Series:
    """Per row: was the turn played from a version of its item older than the turn's latest correction?
    (A test's whole-item correction is of its one expected turn.)"""
    corrected = correction_versions(store, frame["item_id"].dropna().unique().tolist())
    if not corrected:
        return pd.Series(False, index=frame.index, dtype=bool)
    items = sorted({item for item, _ in corrected})
    played = played_versions(store, frame["run_id"].unique().tolist(), items)
    flags = []
    for judgment, item, test, turn in zip(
        frame["judgment_id"], frame["item_id"], frame["test_id"], frame["turn_index"], strict=True
    ):
        since = corrected.get((item, None if pd.isna(turn) else int(turn)))
        if since is None and isinstance(test, str):
            since = corrected.get((item, None))
        version = played.get(int(judgment))
        flags.append(since is not None and (version is None or version < since))
    return pd.Series(flags, index=frame.index, dtype=bool)


def report_stamp(store: Store, run_ids: Sequence[str]) -> tuple[Any, ...]:
    """What a report depends on besides its arguments, for a page that caches it: each run's status and
    records (one query), and the annotations, tier policy and specs of the runs' projects (a growing run,
    a verdict, a correction, a policy change or a renamed spec each make a new stamp)."""
    runs = [store.run(r) for r in run_ids]
    counts = committed_counts(store, list(run_ids))
    projects = sorted({run.params.get("project_id") for run in runs} - {None})
    return (
        tuple((run.status.value, counts.get(run.id, 0)) for run in runs),
        tuple(
            (p, annotation_stamp(store, p), project_policy(store, p).key, spec_stamp(store, p))
            for p in projects
        ),
    )


@dataclass(frozen=True)
class Report:
    """Every table of one or more runs, and the frame they were computed from."""

    runs: list[Run]
    frame: pd.DataFrame  # judged turns in the tier scope
    tables: dict[str, pd.DataFrame]
    overall: dict[str, float]
    crashes: int
    tiers: str
    outdated: int = 0  # turns of the scope's items left out: judged against an answer corrected since
    # The turns played alone (a multi-turn question asked on its own), which only the pair table reads.
    alone: pd.DataFrame | None = None

    @property
    def table_names(self) -> list[str]:
        """The tables this report has, computed or not: the standard ones, and the pair table when some
        question was also played alone."""
        pairs = self.alone is not None and not self.alone.empty
        return [*STANDARD_TABLES, *(["by_pair"] if pairs else [])]

    def table(self, name: str) -> pd.DataFrame:
        """One of `table_names`: as computed by `build_report`, else computed now from the frame."""
        if name in self.tables:
            return self.tables[name]
        if name == "by_pair" and self.alone is not None:
            return pair_table(self.frame, self.alone, within=self.within)
        return all_tables(self.frame, within=self.within, total=True, only=[name])[name]

    @property
    def within(self) -> str | None:
        """'target' when the report holds several targets (each table is then split per target)."""
        return "target" if self.frame["target"].nunique() > 1 else None


def build_report(
    store: Store,
    run_ids: Sequence[str],
    *,
    tiers: str = "all",
    include_rejected: bool = True,
    tables: Collection[str] | None = None,
) -> Report:
    """Tables of the runs, over the turns whose item is in the tier scope ('all', 'gold', 'silver+gold');
    with `include_rejected` False the 'all' scope leaves out items annotators rejected (the CLI and the
    Reports page do so by default and say so in their headline). `tables` names the tables to compute
    now (default: every one); `Report.table` computes any other when it is asked for."""
    if tiers not in TIER_SCOPES:
        raise ValueError(f"tiers must be one of {', '.join(TIER_SCOPES)}, not {tiers!r}")
    frame = judged_turns(store, run_ids)
    if not include_rejected:
        frame = frame[frame["tier"] != "rejected"]
    outdated = 0
    if TIER_SCOPES[tiers] is not None:
        frame = tier_filter(frame, TIER_SCOPES[tiers])
        outdated = int(frame["outdated"].sum())
        frame = frame[~frame["outdated"]]
    alone = frame[frame["multi_turn"].isna()]
    frame = frame[frame["multi_turn"].notna()]
    within = "target" if frame["target"].nunique() > 1 else None
    made = all_tables(frame, within=within, total=True, only=tables)
    if not alone.empty and (tables is None or "by_pair" in tables):
        made["by_pair"] = pair_table(frame, alone, within=within)
    runs = [store.run(r) for r in run_ids]
    crashes = int((frame["error_type"] == "crash").sum())
    return Report(runs, frame, made, overall(frame), crashes, tiers, outdated, alone)


def overall(frame: pd.DataFrame) -> dict[str, float]:
    """The whole frame's n, failures, failure rate with its Wilson interval, unscored and crashes."""
    row = failure_table(frame, None).iloc[0]
    out = {k: float(row[k]) for k in ("n", "failures", "failure_rate", "ci_low", "ci_high", "unscored")}
    out["crashes"] = float((frame["error_type"] == "crash").sum())
    return out


def per_run_table(frame: pd.DataFrame, key: str, labels: Mapping[str, str]) -> pd.DataFrame:
    """Failure rate by `key`, one block per run (column `run`, from `labels`): two runs in one chart."""
    df = frame[frame["run_id"].isin(list(labels))]
    return failure_table(df.assign(run=df["run_id"].map(labels)), key, within="run", sort="key")


def compare_runs(
    frame: pd.DataFrame, run_a: str, run_b: str, *, on: str = "run_id"
) -> dict[str, pd.DataFrame]:
    """Every table for two runs (or two targets, `on='target'`) side by side, `diff` = b - a (the pair
    table is one run's: it is left out)."""
    df = frame.assign(turns=frame["multi_turn"].astype("object").map({True: MULTI_TURN, False: SINGLE_TURN}))
    tables = {
        name: compare(
            df, ["spec_id", "spec_label"] if key == "spec_id" else key, run_a, run_b, on=on, total=True
        )
        for name, key in TABLE_KEYS.items()
        if name not in ("by_error_type", "by_error_class")
    }
    both = df[df[on].astype(str).isin([str(run_a), str(run_b)])]
    for name, key in (("by_error_type", "error_type"), ("by_error_class", "error_class")):
        errors = error_type_table(both.assign(error_type=both[key]), within=on)
        side = {str(run_a): "_a", str(run_b): "_b"}
        wide = errors.assign(side=errors[on].astype(str).map(side)).pivot_table(
            index="error_type", columns="side", values=["failures", "share"], aggfunc="first"
        )
        wide.columns = [f"{value}{suffix}" for value, suffix in wide.columns]
        for column in ("failures_a", "share_a", "failures_b", "share_b"):
            if column not in wide.columns:
                wide[column] = np.nan
        wide = wide.reset_index()[["error_type", "failures_a", "share_a", "failures_b", "share_b"]]
        wide[["failures_a", "failures_b"]] = wide[["failures_a", "failures_b"]].fillna(0).astype(int)
        wide["diff"] = wide["share_b"].fillna(0) - wide["share_a"].fillna(0)
        wide = wide.rename(columns={"error_type": key})
        tables[name] = wide.sort_values("failures_b", ascending=False, kind="stable").reset_index(drop=True)
    return {name: tables[name] for name in TABLE_TITLES if name in tables}


def cell_filter(table: str, row: Mapping[str, Any], within: str | None = None) -> dict[str, Any]:
    """The frame filter behind one row of a table ('All' rows filter nothing on their key)."""
    key = TABLE_KEYS[table]
    filters: dict[str, Any] = {}
    if within and within in row:
        filters[within] = row[within]
    value = row.get(key)
    if not (isinstance(value, str) and value == TOTAL_LABEL):
        filters[key] = value
    return filters


def _matches(column: pd.Series, value: Any) -> pd.Series:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return column.isna()
    return column.astype("object") == value


def select_turns(frame: pd.DataFrame, filters: Mapping[str, Any], outcome: str = "failed") -> pd.DataFrame:
    """Rows of the frame matching the filters and the outcome ('failed', 'unscored', 'passed', 'all')."""
    mask = pd.Series(True, index=frame.index)
    for key, value in filters.items():
        if key == "turns":
            mask &= _matches(frame["multi_turn"].astype("object"), value == MULTI_TURN)
        elif key == "error_type" and value == UNSPECIFIED_ERROR:
            mask &= frame["error_type"].isna() | (frame["error_type"].astype(str).str.strip() == "")
        else:
            mask &= _matches(frame[key], value)
    scores = frame["score"]
    wanted = {
        "failed": scores == 0,
        "unscored": scores.isna(),
        "passed": scores == 1,
        "all": scores.notna() | True,
    }
    if outcome not in wanted:
        raise ValueError(f"outcome must be one of {', '.join(wanted)}, not {outcome!r}")
    return frame[mask & wanted[outcome]]


@dataclass(frozen=True)
class TurnDetail:
    """One turn as a drill-down shows it."""

    turn: JudgedTurn
    target: str | None
    tier: str
    spec_label: str | None
    documents: list[tuple[str, str, str]]  # (id, title, text) of the grounding documents


def failing_turns(
    store: Store, frame: pd.DataFrame, filters: Mapping[str, Any], *, outcome: str = "failed", limit: int = 50
) -> tuple[list[TurnDetail], int]:
    """The turns behind a cell (at most `limit`, in conversation order) and how many there are."""
    rows = select_turns(frame, filters, outcome).sort_values(
        ["run_id", "item_id", "turn_index"], kind="stable"
    )
    bodies = judgment_bodies(store, [int(i) for i in rows["judgment_id"].head(limit)])
    documents: dict[str, Any] = {}
    for run_id in rows["run_id"].unique():
        project_id = store.run(run_id).params.get("project_id")
        if project_id:
            documents.update({d.id: d for d in store.documents(project_id)})
    details = []
    for _, row in rows.head(limit).iterrows():
        turn = bodies[int(row["judgment_id"])]
        docs = [(d, documents[d].title, documents[d].text) for d in turn.grounding if d in documents]
        label = None if pd.isna(row["spec_label"]) else str(row["spec_label"])
        details.append(TurnDetail(turn, row["target"], str(row["tier"]), label, docs))
    return details, len(rows)


def snippet(text: str, limit: int = 400) -> str:
    """A document's text as one plain line for a drill-down: headings, emphasis and tables flattened."""
    flat = re.sub(r"(?m)^\s*#{1,6}\s*", "", text)
    flat = re.sub(r"\*\*|__|`|:?-{3,}:?", "", flat).replace("|", " ")
    flat = re.sub(r"\s+", " ", flat).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + " …"


def history_label(run: Run) -> str:
    """What a run fed the target as its earlier turns ('own replies' or 'expected answers'), and
    '+ single-turn pairs' when it also asked later turns alone."""
    label = "expected answers" if run.params.get("history") == "expected" else "own replies"
    return label + (" + single-turn pairs" if run.params.get("single_turn_pairs") else "")


def provenance(runs: Sequence[Run]) -> dict[str, str]:
    """What produced a report's numbers, for the head of every export: the runs, their targets and judges,
    and whether any of it is offline (the offline judge, or a built-in demo target, which is no model)."""
    offline = [
        r.id
        for r in runs
        if (r.judge or "").startswith(OFFLINE)
        or (r.params.get("target") or {}).get("kind") in (TargetKind.demo.value, TargetKind.demo_flows.value)
    ]
    about = {
        "run": ", ".join(r.id for r in runs),
        "target": ", ".join(r.target or "none" for r in runs),
        "judge": ", ".join(r.judge or "not recorded" for r in runs),
        "offline": ("yes (offline judge or demo target: " + ", ".join(offline) + ")") if offline else "no",
    }
    # What the target saw as its earlier turns, and whether turns were also asked alone (pairs): a choice
    # only conversation runs make, so other reports (procedure tests, scenarios, rubric scores) leave it out.
    if any(r.kind == RUN_KIND for r in runs):
        about["history"] = ", ".join(history_label(r) for r in runs if r.kind == RUN_KIND)
    return about | {"evalcore": ", ".join(sorted({r.code_version or "unknown" for r in runs}))}


def export_tables(
    tables: Mapping[str, pd.DataFrame], fmt: str, about: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Each table as text in `fmt` ('csv', 'jsonl', 'md', 'latex'), captioned and labelled for papers,
    headed by `about` (see `provenance`)."""
    return {
        name: export_table(
            df,
            fmt,
            caption=TABLE_TITLES.get(name, name),
            label=f"tab:{name.replace('_', '-')}",
            provenance=about,
        )
        if fmt in ("md", "markdown", "latex", "tex")
        else export_table(df, fmt, provenance=about)
        for name, df in tables.items()
    }
