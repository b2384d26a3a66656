"""Failure-rate tables over judged turns: by spec, error type, number of documents, query type, turns, tier.

Pure functions over a pandas DataFrame with one row per judged turn and the columns

    run_id, target, conversation_id, turn_index, spec_id, spec_label, error_type, score,
    n_documents, query_type, multi_turn, tier

where `score` is 1 (pass), 0 (fail) or missing (unscored: the judge's output could not be parsed).
Unscored turns are never counted as failures or passes; every table reports them in their own column,
so a judge that broke down shows up instead of silently shrinking the denominator.

Rates are fractions in [0, 1]; `evalcore.reports.table_export` renders them as percentages.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from evalcore.models.common import Tier
from evalcore.runs.records import ERROR_CLASSES, error_class

Z95 = 1.96
"""Normal quantile of a two-sided 95% interval, rounded as papers (and the seed's tables) use it."""

TOTAL_LABEL = "All"
"""Key shown in the total row of a table."""

UNSPECIFIED_ERROR = "unspecified"
"""Error type of a failure whose judge gave none."""

COLUMNS = (
    "run_id",
    "target",
    "conversation_id",
    "turn_index",
    "spec_id",
    "spec_label",
    "error_type",
    "score",
    "n_documents",
    "query_type",
    "multi_turn",
    "tier",
)
"""Columns of the judged-turn frame that `all_tables` reads."""

STATS = ("n", "failures", "failure_rate", "ci_low", "ci_high", "unscored")
"""Statistic columns of a failure table, after its key columns."""

ERROR_STATS = ("failures", "share", "ci_low", "ci_high")
"""Statistic columns of an error-type table, after its key columns."""

SINGLE_TURN = "single-turn"
MULTI_TURN = "multi-turn"
ALONE = "single-turn (asked alone)"
IN_CONTEXT = "multi-turn (in context)"

# Keys whose values have a natural order that is not alphabetical: tables by these keys are listed in
# this order (like the seed's Table 11) instead of by failure rate.
KEY_ORDER: dict[str, tuple[str, ...]] = {
    "tier": tuple(t.value for t in Tier),
    "turns": (SINGLE_TURN, MULTI_TURN),
    "played": (ALONE, IN_CONTEXT),
}

SortMode = Literal["auto", "key", "rate"]

# Headers a reader sees for the columns of these tables (exports keep the code names). A compared
# table's `_a`/`_b` columns read "failure rate (a) %"; `ci` is the page's one-column Wilson interval.
COLUMN_LABELS: dict[str, tuple[str, str]] = {
    "spec_label": ("spec", ""),
    "target": ("target", ""),
    "run_id": ("run", ""),
    "error_type": ("error type", ""),
    "error_class": ("error class", ""),
    "n_documents": ("documents", ""),
    "query_type": ("query type", ""),
    "turns": ("turns", ""),
    "played": ("asked", ""),
    "tier": ("tier", ""),
    "n": ("scored", ""),
    "failures": ("failed", ""),
    "failure_rate": ("failure rate", "%"),
    "ci": ("95% CI", "%"),
    "unscored": ("unscored", ""),
    "share": ("share", "%"),
    "diff": ("diff", "pp"),
    "ci_overlap": ("CIs overlap", ""),
    "fails_only_here": ("fail only this way", ""),
}
"""Header and unit of each table column, by its code name without the `_a`/`_b` side."""

COUNT_COLUMNS = frozenset({"n", "failures", "unscored", "fails_only_here"})
"""Columns holding counts: shown with thousands separators."""

RATE_COLUMNS = frozenset({"failure_rate", "share", "diff"})
"""Columns holding fractions: shown as percentages (a difference of rates as percentage points)."""

ColumnKind = Literal["count", "percent", "points", "text"]


def _side(column: str) -> tuple[str, str]:
    """('failure_rate', 'a') for 'failure_rate_a'; ('n', '') for 'n'."""
    for side in ("a", "b"):
        if column.endswith(f"_{side}") and column[:-2] in COLUMN_LABELS:
            return column[:-2], side
    return column, ""


def column_label(column: str) -> str:
    """The header shown for a table column: 'failure_rate_a' -> 'failure rate (a) %', 'n' -> 'scored'.

    Columns not in `COLUMN_LABELS` show their name with spaces for underscores."""
    base, side = _side(column)
    name, unit = COLUMN_LABELS.get(base, (base.replace("_", " "), ""))
    return " ".join(part for part in (name, f"({side})" if side else "", unit) if part)


def column_kind(column: str) -> ColumnKind:
    """How a column's values are shown: counts with separators, rates in % or pp, the rest as text."""
    base, _ = _side(column)
    if base in COUNT_COLUMNS:
        return "count"
    if base in RATE_COLUMNS:
        return "points" if base == "diff" else "percent"
    return "text"


def display_order(columns: Sequence[str]) -> list[str]:
    """Columns in the order a page shows them: a comparison's `diff` and `ci_overlap` right after the
    keys, so the verdict is on screen before the two sides' statistics on a narrow window."""
    verdict = [c for c in ("diff", "ci_overlap") if c in columns]
    first = next((i for i, c in enumerate(columns) if _side(c)[1] or c in verdict), len(columns))
    rest = [c for c in columns[first:] if c not in verdict]
    return [*columns[:first], *verdict, *rest]


def points_change(rate: float, base: float) -> tuple[str, bool]:
    """A change of rate as text in percentage points ('+1.2 pp') and whether it rounds to none.

    A gap that rounds to 0.0 reads '+0.0 pp' (never '-0.0'), so a page can show it without an arrow."""
    points = round((rate - base) * 100, 1) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{points:+.1f} pp", points == 0


# --------------------------------------------------------------------------------------------- intervals


def _wilson(k: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised Wilson score interval; NaN where n == 0."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        z2 = z * z
        denom = 1.0 + z2 / n
        centre = (p + z2 / (2.0 * n)) / denom
        half = z * np.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
        low = centre - half
        high = centre + half
    # Rounding leaves e.g. -1e-17 at k == 0; the exact bounds there are 0 and 1.
    low = np.where(k == 0, 0.0, np.clip(low, 0.0, 1.0))
    high = np.where(k == n, 1.0, np.clip(high, 0.0, 1.0))
    empty = n == 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def wilson_interval(failures: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion `failures / n`; `(nan, nan)` when `n == 0`.

    Wilson rather than the normal approximation because per-spec counts are small and rates near 0 or 1
    are common, where the normal interval collapses to a point or leaves [0, 1].
    """
    if n < 0 or failures < 0 or failures > n:
        raise ValueError(f"need 0 <= failures <= n, got failures={failures}, n={n}")
    low, high = _wilson(np.array([failures]), np.array([n]), z)
    return float(low[0]), float(high[0])


# ------------------------------------------------------------------------------------------------ helpers


def _keys(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    return list(by)


def _require(df: pd.DataFrame, columns: Iterable[str]) -> None:
    # A missing column would otherwise surface as a KeyError deep in a groupby; name them all at once.
    missing = [c for c in dict.fromkeys(columns) if c not in df.columns]
    if missing:
        raise ValueError(f"judged-turn frame lacks column(s): {', '.join(missing)}")


def _scores(df: pd.DataFrame) -> np.ndarray:
    """The score column as floats (NaN = unscored), refusing anything but 0, 1 and missing."""
    # Store rows give object columns with None for unscored; bools and numeric strings are accepted too.
    column = df["score"]
    if not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)):
        column = pd.to_numeric(column.astype("object"))
    values = column.to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isnan(values) & (values != 0.0) & (values != 1.0)
    if bad.any():
        # A 1-5 rating fed in here would otherwise be read as "not 0, so passed" without a word.
        examples = sorted(set(values[bad].tolist()))[:5]
        raise ValueError(f"score must be 1 (pass), 0 (fail) or missing (unscored); found {examples}")
    return values


def _flags(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Key columns plus per-row 0/1 counters n (scored), failures and unscored, ready to be summed."""
    values = _scores(df)
    scored = ~np.isnan(values)
    frame = df[keys].copy() if keys else pd.DataFrame(index=df.index)
    frame["n"] = scored.astype(np.int64)
    frame["failures"] = (values == 0.0).astype(np.int64)
    frame["unscored"] = (~scored).astype(np.int64)
    return frame


def _sum(frame: pd.DataFrame, keys: list[str], columns: list[str]) -> pd.DataFrame:
    if not keys:
        return frame[columns].sum().to_frame().T.astype(np.int64)
    return frame.groupby(keys, dropna=False, sort=False, observed=True)[columns].sum().reset_index()


def _with_rates(table: pd.DataFrame, z: float, suffix: str = "") -> pd.DataFrame:
    n = table[f"n{suffix}"].to_numpy(dtype=float)
    k = table[f"failures{suffix}"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        table[f"failure_rate{suffix}"] = np.where(n > 0, k / n, np.nan)
    table[f"ci_low{suffix}"], table[f"ci_high{suffix}"] = _wilson(k, n, z)
    return table


def _is_ordered(table: pd.DataFrame, key: str) -> bool:
    """Whether a key's values have a natural order (numbers, booleans, known ladders like tiers)."""
    if key in KEY_ORDER:
        return True
    column = table[key]
    if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return True
    values = column.dropna()
    return len(values) > 0 and all(isinstance(v, (bool, int, float, np.number, np.bool_)) for v in values)


def _order_key(column: pd.Series) -> pd.Series:
    order = KEY_ORDER.get(str(column.name))
    if order is None:
        return column
    rank = {value: i for i, value in enumerate(order)}
    # Unknown values go after the known ones; missing ones stay missing so na_position puts them last.
    return column.map(lambda v: np.nan if pd.isna(v) else rank.get(v, len(order)))


def _sort(
    table: pd.DataFrame, keys: list[str], within: list[str], mode: SortMode, rate: str = "failure_rate"
) -> pd.DataFrame:
    if mode not in ("auto", "key", "rate"):
        raise ValueError(f"sort must be 'auto', 'key' or 'rate', got {mode!r}")
    if table.empty or not (keys or within):
        return table.reset_index(drop=True)
    if mode == "auto":
        mode = "key" if all(_is_ordered(table, k) for k in keys) else "rate"
    if mode == "key":
        columns, ascending = [*within, *keys], [True] * (len(within) + len(keys))
    else:
        # Worst first, then the better-evidenced of equal rates, then by key for a stable listing.
        columns = [*within, rate, "n", *keys] if "n" in table.columns else [*within, rate, *keys]
        ascending = (
            [True] * len(within) + [False] * (len(columns) - len(within) - len(keys)) + [True] * len(keys)
        )
    return table.sort_values(
        columns, ascending=ascending, key=_order_key, na_position="last", kind="stable"
    ).reset_index(drop=True)


def _append_totals(
    table: pd.DataFrame, totals: pd.DataFrame, keys: list[str], within: list[str]
) -> pd.DataFrame:
    """Total rows (first key = 'All') placed after the rows of their `within` group."""
    if not keys:
        return table
    totals = totals.copy()
    totals[keys[0]] = TOTAL_LABEL
    for key in keys[1:]:
        totals[key] = None
    # object dtype: the total label is a string even in a numeric key column like n_documents.
    body = table.astype({k: object for k in keys})
    totals = totals.astype({k: object for k in keys})[list(table.columns)]
    body["_total"] = 0
    totals["_total"] = 1
    merged = pd.concat([body, totals], ignore_index=True)
    if within:
        merged = merged.sort_values([*within, "_total"], key=_order_key, na_position="last", kind="stable")
    return merged.drop(columns="_total").reset_index(drop=True)


_NUMERIC_KINDS = ("integer", "floating", "mixed-integer-float", "integer-na")


def _normalise_keys(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Integer-valued numeric keys (n_documents from store rows arrive as object) as nullable ints."""
    out = df
    for key in keys:
        column = df[key]
        if column.dtype == object and pd.api.types.infer_dtype(column, skipna=True) in _NUMERIC_KINDS:
            numeric = pd.to_numeric(column)
            whole = numeric.dropna()
            if out is df:
                out = df.copy()
            out[key] = numeric.astype("Int64") if (whole == whole.round()).all() else numeric
    return out


# ------------------------------------------------------------------------------------------------- tables


def failure_table(
    df: pd.DataFrame,
    by: str | Sequence[str] | None,
    *,
    within: str | Sequence[str] | None = None,
    total: bool = False,
    sort: SortMode = "auto",
    z: float = Z95,
) -> pd.DataFrame:
    """Failure rate per group: columns `[*within, *by, n, failures, failure_rate, ci_low, ci_high, unscored]`.

    `n` counts scored turns and `failures` those scored 0; `failure_rate = failures / n` with a Wilson
    interval; `unscored` counts turns with no score, which are left out of `n`. `within` (e.g. "target")
    splits the table into blocks, each sorted on its own. `sort="auto"` lists ordered keys (numbers,
    booleans, tiers, single/multi-turn) in key order and other keys (specs, query types) worst first;
    "key" and "rate" force one or the other. `total=True` appends an 'All' row (one per `within` block).
    `by=None` gives a single overall row.
    """
    keys, inner = _keys(by), _keys(within)
    _require(df, [*inner, *keys, "score"])
    df = _normalise_keys(df, [*inner, *keys])
    flags = _flags(df, [*inner, *keys])
    counts = ["n", "failures", "unscored"]
    table = _with_rates(_sum(flags, [*inner, *keys], counts), z)
    table = _sort(table[[*inner, *keys, *STATS]], keys, inner, sort)
    if total:
        table = _append_totals(table, _with_rates(_sum(flags, inner, counts), z), keys, inner)
    return table


def error_type_table(
    df: pd.DataFrame,
    *,
    within: str | Sequence[str] | None = None,
    total: bool = False,
    z: float = Z95,
) -> pd.DataFrame:
    """Failures per error type and their share of all failures (the seed's Table 10), most frequent first.

    Columns `[*within, error_type, failures, share, ci_low, ci_high]`; the interval is Wilson's for the
    share. Only turns scored 0 count; a failure without an error type is counted as 'unspecified'.
    With `within` (e.g. "target") shares are taken within each group, so two systems compare side by side.
    `total=True` appends an 'All' row per group with the number of failures (share 1, no interval).
    """
    inner = _keys(within)
    _require(df, [*inner, "score", "error_type"])
    df = _normalise_keys(df, inner)
    failed = df.loc[_scores(df) == 0.0, inner]
    kinds = df.loc[failed.index, "error_type"].astype("object")
    failed = failed.assign(
        error_type=kinds.where(kinds.notna() & (kinds.astype(str).str.strip() != ""), UNSPECIFIED_ERROR),
        failures=1,
    )
    table = _sum(failed, [*inner, "error_type"], ["failures"])
    if failed.empty:
        table = pd.DataFrame({c: pd.Series(dtype=object) for c in [*inner, "error_type"]}).assign(
            failures=pd.Series(dtype=np.int64)
        )
    group_total = (
        table.groupby(inner, dropna=False, sort=False)["failures"].transform("sum")
        if inner
        else pd.Series(table["failures"].sum(), index=table.index)
    ).to_numpy(dtype=float)
    k = table["failures"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        table["share"] = np.where(group_total > 0, k / group_total, np.nan)
    table["ci_low"], table["ci_high"] = _wilson(k, group_total, z)
    table = table[[*inner, "error_type", *ERROR_STATS]]
    table = table.sort_values(
        [*inner, "failures", "error_type"],
        ascending=[True] * len(inner) + [False, True],
        key=_order_key,
        na_position="last",
        kind="stable",
    ).reset_index(drop=True)
    if total:
        totals = _sum(failed, inner, ["failures"])
        share = np.where(totals["failures"].to_numpy() > 0, 1.0, np.nan)
        totals = totals.assign(share=share, ci_low=np.nan, ci_high=np.nan)
        table = _append_totals(table, totals, ["error_type"], inner)
    return table


def tier_filter(df: pd.DataFrame, tiers: str | Tier | Iterable[str | Tier]) -> pd.DataFrame:
    """Rows whose tier is one of `tiers`: "gold", ["silver", "gold"] or "silver+gold".

    Tiers are exclusive (a gold item is not also silver), so "silver and better" is `["silver", "gold"]`.
    Unknown tier names raise, since a typo would otherwise yield an empty table that looks like no failures.
    """
    _require(df, ["tier"])
    # Tier is a StrEnum, so a single Tier is a str here too.
    items = str(tiers).split("+") if isinstance(tiers, str) else [str(t) for t in tiers]
    wanted = [t.strip() for t in items]
    known = {t.value for t in Tier}
    unknown = [t for t in wanted if t not in known]
    if unknown or not wanted:
        raise ValueError(f"unknown tier(s) {unknown}; tiers are {', '.join(t.value for t in Tier)}")
    return df[df["tier"].astype("object").isin(wanted)]


def compare(
    df: pd.DataFrame,
    by: str | Sequence[str] | None,
    run_a: str,
    run_b: str,
    *,
    on: str = "run_id",
    total: bool = False,
    sort: SortMode = "auto",
    z: float = Z95,
) -> pd.DataFrame:
    """Two runs (or targets, with `on="target"`) side by side per group of `by`.

    Columns `[*by, n_a, failures_a, failure_rate_a, ci_low_a, ci_high_a, unscored_a, <same>_b, diff,
    ci_overlap]` where `diff = failure_rate_b - failure_rate_a` (positive: b fails more) and
    `ci_overlap` says whether the two Wilson intervals overlap (missing when a side has no scored turn).
    Non-overlapping intervals are a conservative sign of a real difference; overlap does not prove
    there is none. A group present in one run only gets n = 0 on the other side. `sort="auto"` lists
    ordered keys in key order and others by `diff`, largest regression first.
    """
    keys = _keys(by)
    _require(df, [on, *keys, "score"])
    present = set(df[on].dropna().astype(str))
    missing = [r for r in (run_a, run_b) if str(r) not in present]
    if missing:
        # A typo would otherwise give a table of n = 0 that reads as "no data" rather than "wrong name".
        raise ValueError(f"no rows with {on} = {', '.join(map(repr, missing))}")
    df = _normalise_keys(df, keys)
    side = df[on].astype(str)
    counts = ["n", "failures", "unscored"]

    def both(group_keys: list[str]) -> pd.DataFrame:
        a = _sum(_flags(df[side == str(run_a)], group_keys), group_keys, counts)
        b = _sum(_flags(df[side == str(run_b)], group_keys), group_keys, counts)
        if group_keys:
            merged = a.merge(b, on=group_keys, how="outer", suffixes=("_a", "_b"), sort=False)
        else:
            merged = pd.concat([a.add_suffix("_a"), b.add_suffix("_b")], axis=1)
        for suffix in ("_a", "_b"):
            for column in counts:
                merged[column + suffix] = merged[column + suffix].fillna(0).astype(np.int64)
            _with_rates(merged, z, suffix)
        merged["diff"] = merged["failure_rate_b"] - merged["failure_rate_a"]
        overlap = (merged["ci_low_a"] <= merged["ci_high_b"]) & (merged["ci_low_b"] <= merged["ci_high_a"])
        unknown = merged["ci_low_a"].isna() | merged["ci_low_b"].isna()
        merged["ci_overlap"] = overlap.astype("boolean").mask(unknown)
        stats = [c + s for s in ("_a", "_b") for c in STATS]
        return merged[[*group_keys, *stats, "diff", "ci_overlap"]]

    table = _sort(both(keys), keys, [], sort, rate="diff")
    if total:
        table = _append_totals(table, both([]), keys, [])
    table.attrs.update({"on": on, "run_a": run_a, "run_b": run_b})
    return table


def error_class_table(
    df: pd.DataFrame,
    *,
    within: str | Sequence[str] | None = None,
    total: bool = False,
    z: float = Z95,
) -> pd.DataFrame:
    """Failures per class of seed 000's Table 10 (multi-document retrieval, coreference, LLM fact
    retrieval; what the seed does not classify is 'other'), with their share: `error_type_table` over
    the classes, key column `error_class`."""
    classes = df["error_type"].astype("object").map(error_class)
    table = error_type_table(df.assign(error_type=classes), within=within, total=total, z=z)
    table = table.rename(columns={"error_type": "error_class"})
    named = table["error_class"].map(ERROR_CLASSES)
    return table.assign(error_class=named.where(named.notna(), table["error_class"]))


PAIR_KEYS = ("run_id", "conversation_id", "turn_index")


def pair_table(
    in_context: pd.DataFrame, alone: pd.DataFrame, *, within: str | Sequence[str] | None = None,
    z: float = Z95,
) -> pd.DataFrame:  # fmt: skip
    """The same questions asked alone and in context (seed 000, Table 11 right: "multi-turn QA converted
    to single turn for fair comparison"): failure rates of the paired turns only, one row per way of
    asking, and `fails_only_here`, the pairs that fail this way and pass the other (the discordant
    pairs a McNemar test would read).

    `in_context` holds judged turns played in their conversation, `alone` the same turns played alone
    (rows matched on run, conversation and turn index); unmatched rows are left out.
    """
    inner = _keys(within)
    both = in_context.merge(alone, on=list(PAIR_KEYS), suffixes=("", "_alone"))
    scored = both["score"].notna() & both["score_alone"].notna()
    context_fails, alone_fails = both["score"] == 0, both["score_alone"] == 0
    parts = [
        both[[*inner, "score"]].assign(
            played=IN_CONTEXT, only=(context_fails & ~alone_fails & scored).astype(int)
        ),
        both[[*inner, "score_alone"]]
        .rename(columns={"score_alone": "score"})
        .assign(played=ALONE, only=(alone_fails & ~context_fails & scored).astype(int)),
    ]
    long = pd.concat(parts, ignore_index=True)
    table = failure_table(long, "played", within=inner, sort="key", z=z)
    only = long.groupby([*inner, "played"], sort=False)["only"].sum().rename("fails_only_here").reset_index()
    return table.merge(only, on=[*inner, "played"], how="left")


STANDARD_TABLES = (
    "by_spec", "by_error_type", "by_error_class", "by_n_documents", "by_query_type", "by_turns", "by_tier",
)  # fmt: skip


def all_tables(
    df: pd.DataFrame,
    *,
    within: str | Sequence[str] | None = None,
    tiers: str | Iterable[str] | None = None,
    total: bool = False,
    z: float = Z95,
    only: Collection[str] | None = None,
) -> dict[str, pd.DataFrame]:
    """Every standard table of a report (`STANDARD_TABLES`), by name; with `only`, those of them only (a
    page drawing one tab needs three tables, not seven).

    by_spec, by_error_type, by_error_class (the seed's Table 10), by_n_documents, by_query_type, by_turns
    (first turns vs later turns: two populations; `pair_table` is the seed's Table 11 comparison) and
    by_tier. `tiers` first keeps only those tiers (see `tier_filter`); no tier is dropped
    by default, the by_tier table shows what the others mix. `within` (e.g. "target") splits every table
    per target, which is what a frame holding several runs needs.
    """
    inner = _keys(within)
    _require(df, [*inner, *COLUMNS])
    if tiers is not None:
        df = tier_filter(df, tiers)
    common = {"within": inner, "total": total, "z": z}
    made = {
        "by_spec": lambda: failure_table(df, ["spec_id", "spec_label"], **common),
        "by_error_type": lambda: error_type_table(df, **common),
        "by_error_class": lambda: error_class_table(df, **common),
        "by_n_documents": lambda: failure_table(df, "n_documents", **common),
        "by_query_type": lambda: failure_table(df, "query_type", **common),
        "by_turns": lambda: failure_table(
            df.assign(turns=df["multi_turn"].astype("object").map({True: MULTI_TURN, False: SINGLE_TURN})),
            "turns",
            **common,
        ),
        "by_tier": lambda: failure_table(df, "tier", **common),
    }
    return {name: make() for name, make in made.items() if only is None or name in only}
