"""Failure-rate tables: Wilson intervals, counts on a hand-computed case, error types, tiers, comparisons."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalcore.reports.tables import (
    COLUMNS,
    STATS,
    TOTAL_LABEL,
    all_tables,
    column_kind,
    column_label,
    compare,
    display_order,
    error_type_table,
    failure_table,
    points_change,
    tier_filter,
    wilson_interval,
)

NAN = float("nan")

# Ten judged turns. Expected numbers in the tests below are counted by hand from this listing.
#  run  spec score docs error        multi  tier        query_type
HAND = [
    ("r1", "A", 0, 2, "coreference", True, "gold", "MULTI-DOC"),
    ("r1", "A", 0, 2, "multi_doc_retrieval", True, "gold", "MULTI-DOC"),
    ("r1", "A", 1, 3, None, True, "silver", "SINGLE-DOC"),
    ("r1", "A", None, 3, None, True, "silver", "SINGLE-DOC"),
    ("r1", "B", 1, 3, None, False, "gold", "SINGLE-DOC"),
    ("r2", "B", 1, 3, None, False, "gold", "SINGLE-DOC"),
    ("r2", "B", 0, 4, "coreference", False, "silver", "MULTI-DOC"),
    ("r2", "B", 1, 4, None, False, "unreviewed", "SINGLE-DOC"),
    ("r2", "C", 0, 2, None, True, "rejected", "FILLER"),
    ("r2", "C", None, 4, None, True, "rejected", "FILLER"),
]


@pytest.fixture
def hand() -> pd.DataFrame:
    rows = []
    for i, (run, spec, score, docs, error, multi, tier, qtype) in enumerate(HAND):
        rows.append(
            {
                "run_id": run,
                "target": "dense" if run == "r1" else "react",
                "conversation_id": f"conv-{i // 2}",
                "turn_index": i % 2,
                "spec_id": spec,
                "spec_label": f"Scenario {spec}",
                "error_type": error,
                "score": score,
                "n_documents": docs,
                "query_type": qtype,
                "multi_turn": multi,
                "tier": tier,
            }
        )
    # Built from dicts like store rows: None stays None in object columns.
    return pd.DataFrame(rows)


def _row(table: pd.DataFrame, column: str, value: object) -> pd.Series:
    matches = table[table[column] == value]
    assert len(matches) == 1, f"{column}={value!r}: {len(matches)} rows"
    return matches.iloc[0]


# ----------------------------------------------------------------------------------------------- wilson


@pytest.mark.parametrize(
    ("failures", "n", "low", "high"),
    [
        (0, 10, 0.0000, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0000),
        (1, 10, 0.0179, 0.4042),
        (2, 3, 0.2077, 0.9385),
        (0, 1, 0.0000, 0.7935),
    ],
)
def test_wilson_interval_known_values(failures: int, n: int, low: float, high: float) -> None:
    got = wilson_interval(failures, n)
    assert got == pytest.approx((low, high), abs=5e-5)


def test_wilson_interval_bounds_are_exact_at_the_edges() -> None:
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == 1.0


def test_wilson_interval_narrows_with_a_smaller_z() -> None:
    wide, narrow = wilson_interval(5, 10), wilson_interval(5, 10, z=1.0)
    assert narrow[0] > wide[0] and narrow[1] < wide[1]


def test_wilson_interval_of_nothing_is_nan() -> None:
    low, high = wilson_interval(0, 0)
    assert math.isnan(low) and math.isnan(high)


def test_wilson_interval_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    with pytest.raises(ValueError):
        wilson_interval(-1, 2)


# ------------------------------------------------------------------------------------------ failure table


def test_failure_table_by_spec_counts_and_excludes_unscored(hand: pd.DataFrame) -> None:
    table = failure_table(hand, "spec_id")
    assert list(table.columns) == ["spec_id", *STATS]
    # Specs have no natural order: worst first.
    assert table["spec_id"].tolist() == ["C", "A", "B"]
    assert table["n"].tolist() == [1, 3, 4]
    assert table["failures"].tolist() == [1, 2, 1]
    assert table["unscored"].tolist() == [1, 1, 0]
    assert table["failure_rate"].tolist() == pytest.approx([1.0, 2 / 3, 0.25])
    a = _row(table, "spec_id", "A")
    assert (a["ci_low"], a["ci_high"]) == pytest.approx((0.2077, 0.9385), abs=5e-5)
    b = _row(table, "spec_id", "B")
    assert (b["ci_low"], b["ci_high"]) == pytest.approx((0.0456, 0.6994), abs=5e-5)


def test_failure_table_total_row(hand: pd.DataFrame) -> None:
    table = failure_table(hand, ["spec_id", "spec_label"], total=True)
    total = table.iloc[-1]
    assert total["spec_id"] == TOTAL_LABEL and total["spec_label"] is None
    assert (total["n"], total["failures"], total["unscored"]) == (8, 4, 2)
    assert total["failure_rate"] == pytest.approx(0.5)
    assert (total["ci_low"], total["ci_high"]) == pytest.approx((0.2152, 0.7848), abs=5e-5)
    assert len(table) == 4


def test_failure_table_by_documents_is_in_key_order(hand: pd.DataFrame) -> None:
    table = failure_table(hand, "n_documents")
    assert table["n_documents"].tolist() == [2, 3, 4]
    assert table["n"].tolist() == [3, 3, 2]
    assert table["failures"].tolist() == [3, 0, 1]
    assert table["unscored"].tolist() == [0, 1, 1]
    assert table["failure_rate"].tolist() == pytest.approx([1.0, 0.0, 0.5])


def test_failure_table_sort_can_be_forced(hand: pd.DataFrame) -> None:
    assert failure_table(hand, "spec_id", sort="key")["spec_id"].tolist() == ["A", "B", "C"]
    assert failure_table(hand, "n_documents", sort="rate")["n_documents"].tolist() == [2, 4, 3]


def test_failure_table_within_splits_blocks_with_their_own_totals(hand: pd.DataFrame) -> None:
    table = failure_table(hand, "n_documents", within="run_id", total=True)
    assert table[["run_id", "n_documents"]].values.tolist() == [
        ["r1", 2],
        ["r1", 3],
        ["r1", TOTAL_LABEL],
        ["r2", 2],
        ["r2", 3],
        ["r2", 4],
        ["r2", TOTAL_LABEL],
    ]
    r1_total = table.iloc[2]
    assert (r1_total["n"], r1_total["failures"], r1_total["unscored"]) == (4, 2, 1)


def test_failure_table_overall_row(hand: pd.DataFrame) -> None:
    table = failure_table(hand, None)
    assert list(table.columns) == list(STATS)
    assert table[["n", "failures", "unscored"]].values.tolist() == [[8, 4, 2]]


def test_failure_table_missing_keys_form_their_own_group(hand: pd.DataFrame) -> None:
    hand.loc[[0, 1], "n_documents"] = None
    table = failure_table(hand, "n_documents")
    # The missing group comes last in an ordered listing, and nothing is lost.
    assert table["n_documents"].iloc[:-1].tolist() == [2, 3, 4]
    assert pd.isna(table["n_documents"].iloc[-1])
    assert table["n"].sum() + table["unscored"].sum() == len(hand)


def test_failure_table_refuses_ratings_as_scores(hand: pd.DataFrame) -> None:
    hand.loc[0, "score"] = 4
    with pytest.raises(ValueError, match="score must be"):
        failure_table(hand, "spec_id")


def test_failure_table_names_missing_columns(hand: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="lacks column"):
        failure_table(hand.drop(columns="spec_id"), "spec_id")


def test_failure_table_of_no_rows() -> None:
    table = failure_table(pd.DataFrame({"spec_id": [], "score": []}), "spec_id", total=True)
    assert table["spec_id"].tolist() == [TOTAL_LABEL]
    assert table["n"].tolist() == [0] and math.isnan(table["failure_rate"].iloc[0])


# ------------------------------------------------------------------------------------------- error types


def test_error_type_table_shares(hand: pd.DataFrame) -> None:
    table = error_type_table(hand, total=True)
    assert list(table.columns) == ["error_type", "failures", "share", "ci_low", "ci_high"]
    assert table["error_type"].tolist() == ["coreference", "multi_doc_retrieval", "unspecified", TOTAL_LABEL]
    assert table["failures"].tolist() == [2, 1, 1, 4]
    assert table["share"].tolist() == pytest.approx([0.5, 0.25, 0.25, 1.0])
    coref = table.iloc[0]
    assert (coref["ci_low"], coref["ci_high"]) == pytest.approx((0.1500, 0.8500), abs=5e-5)
    single = table.iloc[1]
    assert (single["ci_low"], single["ci_high"]) == pytest.approx((0.0456, 0.6994), abs=5e-5)
    assert math.isnan(table.iloc[-1]["ci_low"])


def test_error_type_table_within_runs_takes_shares_per_run(hand: pd.DataFrame) -> None:
    table = error_type_table(hand, within="run_id")
    r1 = table[table["run_id"] == "r1"]
    r2 = table[table["run_id"] == "r2"]
    assert dict(zip(r1["error_type"], r1["share"], strict=True)) == {
        "coreference": 0.5,
        "multi_doc_retrieval": 0.5,
    }
    assert dict(zip(r2["error_type"], r2["share"], strict=True)) == {"coreference": 0.5, "unspecified": 0.5}


# ------------------------------------------------------------------------------------------------ tiers


def test_tier_filter(hand: pd.DataFrame) -> None:
    assert len(tier_filter(hand, "gold")) == 4
    assert len(tier_filter(hand, "silver+gold")) == 7
    assert len(tier_filter(hand, ["silver", "gold"])) == 7
    assert set(tier_filter(hand, ["rejected"])["spec_id"]) == {"C"}
    with pytest.raises(ValueError, match="unknown tier"):
        tier_filter(hand, "golden")


def test_failure_table_by_tier_follows_the_tier_ladder(hand: pd.DataFrame) -> None:
    table = failure_table(hand, "tier")
    assert table["tier"].tolist() == ["unreviewed", "silver", "gold", "rejected"]
    assert table["n"].tolist() == [1, 2, 4, 1]
    assert table["failures"].tolist() == [0, 1, 2, 1]
    assert table["unscored"].tolist() == [0, 1, 0, 1]


def test_gold_only_table(hand: pd.DataFrame) -> None:
    table = failure_table(tier_filter(hand, "gold"), "spec_id")
    assert table[["spec_id", "n", "failures"]].values.tolist() == [["A", 2, 2], ["B", 2, 0]]


# ---------------------------------------------------------------------------------------------- compare


def test_compare_runs_by_spec(hand: pd.DataFrame) -> None:
    table = compare(hand, "spec_id", "r1", "r2")
    # B is the only spec both runs scored, so the only one with a difference; it comes first.
    assert table["spec_id"].tolist() == ["B", "A", "C"]
    b = table.iloc[0]
    assert (b["n_a"], b["failures_a"], b["n_b"], b["failures_b"]) == (1, 0, 3, 1)
    assert b["failure_rate_a"] == 0.0
    assert b["failure_rate_b"] == pytest.approx(1 / 3)
    assert b["diff"] == pytest.approx(1 / 3)
    assert (b["ci_high_a"], b["ci_low_b"]) == pytest.approx((0.7935, 0.0615), abs=5e-5)
    assert bool(b["ci_overlap"]) is True
    a = table.iloc[1]
    assert (a["n_a"], a["failures_a"], a["unscored_a"], a["n_b"]) == (3, 2, 1, 0)
    assert math.isnan(a["failure_rate_b"]) and math.isnan(a["diff"])
    assert a["ci_overlap"] is pd.NA
    assert table.attrs["run_a"] == "r1" and table.attrs["run_b"] == "r2"


def test_compare_targets_overall_with_total(hand: pd.DataFrame) -> None:
    overall = compare(hand, None, "dense", "react", on="target")
    assert overall[
        ["n_a", "failures_a", "unscored_a", "n_b", "failures_b", "unscored_b"]
    ].values.tolist() == [[4, 2, 1, 4, 2, 1]]
    assert overall["diff"].iloc[0] == 0.0
    by_docs = compare(hand, "n_documents", "dense", "react", on="target", total=True)
    assert by_docs["n_documents"].tolist() == [2, 3, 4, TOTAL_LABEL]
    assert by_docs.iloc[-1][["n_a", "n_b"]].tolist() == [4, 4]


def test_compare_flags_intervals_that_do_not_overlap() -> None:
    df = pd.DataFrame({"run_id": ["a"] * 20 + ["b"] * 20, "spec_id": "S", "score": [1] * 20 + [0] * 20})
    row = compare(df, "spec_id", "a", "b").iloc[0]
    assert (row["ci_high_a"], row["ci_low_b"]) == pytest.approx((0.1611, 0.8389), abs=5e-5)
    assert row["diff"] == 1.0
    assert bool(row["ci_overlap"]) is False


def test_compare_refuses_an_unknown_run(hand: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="r3"):
        compare(hand, "spec_id", "r1", "r3")


# ------------------------------------------------------------------------------------------- all tables


def test_all_tables_on_the_hand_case(hand: pd.DataFrame) -> None:
    tables = all_tables(hand)
    assert set(tables) == {
        "by_spec",
        "by_error_type",
        "by_error_class",
        "by_n_documents",
        "by_query_type",
        "by_turns",
        "by_tier",
    }
    turns = tables["by_turns"]
    assert turns["turns"].tolist() == ["single-turn", "multi-turn"]
    assert turns["n"].tolist() == [4, 4]
    assert turns["failures"].tolist() == [1, 3]
    assert turns["unscored"].tolist() == [0, 2]
    query = tables["by_query_type"]
    assert _row(query, "query_type", "MULTI-DOC")[["n", "failures"]].tolist() == [3, 3]
    assert tables["by_spec"][["spec_id", "spec_label"]].values.tolist()[0] == ["C", "Scenario C"]
    gold = all_tables(hand, tiers="gold")
    assert gold["by_tier"]["tier"].tolist() == ["gold"]


def test_all_tables_on_100k_random_rows() -> None:
    rng = np.random.default_rng(7)
    n = 100_000
    score = rng.choice([1.0, 0.0, NAN], size=n, p=[0.55, 0.40, 0.05])
    errors = np.array(["coreference", "multi_doc_retrieval", "fact_retrieval"], dtype=object)
    df = pd.DataFrame(
        {
            "run_id": rng.choice(["r1", "r2"], n),
            "target": rng.choice(["dense", "react"], n),
            "conversation_id": rng.integers(0, 20_000, n).astype(str),
            "turn_index": rng.integers(0, 6, n),
            "spec_id": rng.choice([f"spec_{i}" for i in range(25)], n),
            "spec_label": "label",
            "error_type": np.where(score == 0, rng.choice(errors, n), None),
            "score": score,
            "n_documents": rng.integers(1, 6, n),
            "query_type": rng.choice(["SINGLE-DOC", "MULTI-DOC", "FILLER"], n),
            "multi_turn": rng.choice([True, False], n),
            "tier": rng.choice(["unreviewed", "silver", "gold", "rejected"], n),
        }
    )
    assert set(COLUMNS) <= set(df.columns)
    tables = all_tables(df)
    shapes = {name: table.shape for name, table in tables.items()}
    assert shapes == {
        "by_spec": (25, 8),
        "by_error_type": (3, 5),
        "by_error_class": (3, 5),  # "fact_retrieval" is a class, not an error type: "other"
        "by_n_documents": (5, 7),
        "by_query_type": (3, 7),
        "by_turns": (2, 7),
        "by_tier": (4, 7),
    }
    scored, unscored = int(np.sum(~np.isnan(score))), int(np.sum(np.isnan(score)))
    for name, table in tables.items():
        if name not in ("by_error_type", "by_error_class"):
            assert table["n"].sum() == scored and table["unscored"].sum() == unscored, name
    assert tables["by_error_type"]["failures"].sum() == int(np.sum(score == 0))
    assert tables["by_error_class"]["failures"].sum() == int(np.sum(score == 0))
    split = all_tables(df, within="target", total=True)
    assert split["by_turns"].shape == (6, 8)


def test_every_table_column_has_a_plain_header_and_a_number_format():
    frame = pd.DataFrame(HAND, columns=["run_id", "spec_label", "score", "n_documents", "error_type",
                                        "multi_turn", "tier", "query_type"])  # fmt: skip
    frame = frame.assign(target="t", conversation_id="c", turn_index=0, spec_id=frame["spec_label"])
    tables = {**all_tables(frame, total=True), "compare": compare(frame, "spec_label", "r1", "r2")}
    for name, table in tables.items():
        for column in table.columns:
            assert "_" not in column_label(column) or column == "spec_id", (name, column)
    assert (
        column_label("n_documents") == "documents" and column_label("failure_rate_a") == "failure rate (a) %"
    )
    assert column_label("diff") == "diff pp" and column_label("ci_b") == "95% CI (b) %"
    assert [column_kind(c) for c in ("n", "failures_b", "failure_rate", "diff", "tier")] == [
        "count", "count", "percent", "points", "text",
    ]  # fmt: skip
    order = display_order(list(tables["compare"].columns))
    assert order[:3] == ["spec_label", "diff", "ci_overlap"] and sorted(order) == sorted(tables["compare"])


def test_a_change_that_rounds_to_nothing_reads_plus_zero():
    assert points_change(0.574, 0.57403) == ("+0.0 pp", True)
    assert points_change(0.57403, 0.574) == ("+0.0 pp", True), "never '-0.0'"
    assert points_change(0.6, 0.5) == ("+10.0 pp", False) and points_change(0.5, 0.6) == ("-10.0 pp", False)
