"""Exports of result tables: CSV round trip, JSONL lines, Markdown shape and numbers, LaTeX booktabs."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from evalcore.reports.table_export import export_table, latex_escape
from evalcore.reports.tables import compare, failure_table


@pytest.fixture
def judged() -> pd.DataFrame:
    # spec_1: 2 failures of 3 scored, 1 unscored; spec_2: 1 of 4; spec_3: 1 of 1 and 1 unscored.
    return pd.DataFrame(
        {
            "run_id": ["r1"] * 5 + ["r2"] * 5,
            "spec_id": ["spec_1"] * 4 + ["spec_2"] * 4 + ["spec_3"] * 2,
            "n_documents": [2, 2, 3, 3, 3, 3, 4, 4, 2, 4],
            "score": [0, 0, 1, None, 1, 1, 0, 1, 0, None],
        }
    )


@pytest.fixture
def table(judged: pd.DataFrame) -> pd.DataFrame:
    return failure_table(judged, "spec_id", total=True)


def test_csv_round_trip(table: pd.DataFrame) -> None:
    text = export_table(table, "csv")
    assert text.splitlines()[0] == "spec_id,n,failures,failure_rate,ci_low,ci_high,unscored"
    back = pd.read_csv(io.StringIO(text))
    pd.testing.assert_frame_equal(back, table, check_dtype=False)


def test_jsonl_has_one_object_per_line(table: pd.DataFrame) -> None:
    text = export_table(table, "jsonl")
    lines = text.splitlines()
    assert len(lines) == len(table) == 4
    records = [json.loads(line) for line in lines]
    assert all(list(r) == list(table.columns) for r in records)
    assert records[0] == {
        "spec_id": "spec_3",
        "n": 1,
        "failures": 1,
        "failure_rate": 1.0,
        "ci_low": pytest.approx(0.2065, abs=5e-5),
        "ci_high": 1.0,
        "unscored": 1,
    }
    assert records[-1]["spec_id"] == "All" and records[-1]["n"] == 8


def test_jsonl_writes_missing_values_as_null(judged: pd.DataFrame) -> None:
    text = export_table(compare(judged, "spec_id", "r1", "r2"), "jsonl")
    spec_1 = next(r for r in map(json.loads, text.splitlines()) if r["spec_id"] == "spec_1")
    assert spec_1["failure_rate_b"] is None and spec_1["ci_overlap"] is None and spec_1["n_b"] == 0


def test_markdown_table_shape_and_numbers(table: pd.DataFrame) -> None:
    text = export_table(table, "md")
    lines = text.strip().splitlines()
    # Header, alignment row, one line per row; the two interval columns become one.
    assert len(lines) == 2 + len(table)
    assert lines[0] == "| spec_id | n | failures | failure_rate | ci | unscored |"
    assert lines[1] == "|---|---:|---:|---:|---:|---:|"
    assert all(line.count("|") == 7 for line in lines)
    assert lines[2] == "| spec_3 | 1 | 1 | 100.0% | [20.7%, 100.0%] | 1 |"
    assert lines[3] == "| spec_1 | 3 | 2 | 66.7% | [20.8%, 93.9%] | 1 |"
    assert lines[4] == "| spec_2 | 4 | 1 | 25.0% | [4.6%, 69.9%] | 0 |"
    assert lines[5] == "| All | 8 | 4 | 50.0% | [21.5%, 78.5%] | 2 |"


def test_markdown_comparison_shows_differences_and_gaps(judged: pd.DataFrame) -> None:
    text = export_table(compare(judged, "spec_id", "r1", "r2"), "md", caption="r1 vs r2")
    lines = text.strip().splitlines()
    assert lines[0] == "**r1 vs r2**"
    header = [cell.strip() for cell in lines[2].strip("|").split("|")]
    assert header[-2:] == ["diff", "ci_overlap"] and "ci_a" in header and "ci_low_a" not in header
    spec_2 = next(line for line in lines if line.startswith("| spec_2 "))
    cells = [cell.strip() for cell in spec_2.strip("|").split("|")]
    # r1 scored spec_2 once (pass), r2 three times with one failure: +33.3 points.
    assert cells[header.index("failure_rate_a")] == "0.0%"
    assert cells[header.index("failure_rate_b")] == "33.3%"
    assert cells[header.index("diff")] == "+33.3 pp"
    assert cells[header.index("ci_overlap")] == "yes"
    spec_1 = next(line for line in lines if line.startswith("| spec_1 "))
    assert [c.strip() for c in spec_1.strip("|").split("|")][header.index("failure_rate_b")] == "—"


def test_markdown_cells_stay_text_in_a_viewer() -> None:
    md = export_table(pd.DataFrame({"reply": ["<img src=x onerror=alert(1)> & more"]}), "md")
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt; &amp; more" in md


def test_markdown_escapes_pipes() -> None:
    text = export_table(pd.DataFrame({"scenario": ["a | b"], "n": [1]}), "md")
    assert r"a \| b" in text


def test_latex_booktabs_and_escaping(table: pd.DataFrame) -> None:
    df = table.assign(note="50%")
    text = export_table(df, "latex", caption="Failure rate by spec_id", label="tab:by_spec")
    assert r"\toprule" in text and r"\midrule" in text and r"\bottomrule" in text
    assert text.index(r"\toprule") < text.index(r"\midrule") < text.index(r"\bottomrule")
    assert r"\begin{table}" in text and r"\end{table}" in text
    assert r"\caption{Failure rate by spec\_id}" in text
    assert r"\label{tab:by_spec}" in text
    # Keys and text columns left, numbers (including formatted rates) right.
    assert r"\begin{tabular}{lrrrrrl}" in text
    assert r"spec\_1 & 3 & 2 & 66.7\% & [20.8\%, 93.9\%] & 1 & 50\% \\" in text
    body = text.split(r"\midrule")[1]
    assert "spec_1" not in body and " 50%" not in body
    assert r"n & failures & failure\_rate & ci & unscored & note \\" in text


def test_latex_without_caption_is_a_bare_tabular(table: pd.DataFrame) -> None:
    text = export_table(table, "latex")
    assert text.startswith(r"\begin{tabular}") and r"\begin{table}" not in text


def test_latex_escape_every_special_character() -> None:
    assert latex_escape(r"a&b%c_d#e$f{g}h~i^j\k") == (
        r"a\&b\%c\_d\#e\$f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k"
    )


def test_unknown_format_and_bad_label_are_refused(table: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="unknown format"):
        export_table(table, "xlsx")
    with pytest.raises(ValueError, match="label"):
        export_table(table, "latex", label="tab:a b")


def test_empty_table_exports(table: pd.DataFrame) -> None:
    empty = table.iloc[:0]
    assert export_table(empty, "jsonl") == ""
    assert export_table(empty, "md").strip().splitlines()[1] == "|---|---:|---:|---:|---:|---:|"
    assert r"\bottomrule" in export_table(empty, "latex")
