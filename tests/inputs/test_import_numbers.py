"""Located one-line errors instead of tracebacks (issue 25, finding 4): a CSV cell over the csv module's
131,072 characters, a 5,000-digit integer in a tool JSON file or a JSONL line, and JSON's NaN and Infinity
(which JSON does not have and the YAML importers refuse) in tool schemas and conversation JSONL. Each is
refused through the CLI with file and line, and the store is left byte for byte as it was."""

from __future__ import annotations

import gc
import json
import shutil
from pathlib import Path

import pytest
from import_cases import cli, copy_sample, error_lines, sample_store, store_bytes
from runs_support import conversation

from evalcore.inputs.sources import load_json

HUGE = "9" * 5000


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(sample_store(tmp_path_factory.mktemp("sample")).removeprefix("sqlite:///"))


@pytest.fixture
def db(sample_db: Path, tmp_path: Path) -> str:
    copy = tmp_path / "store.db"
    shutil.copyfile(sample_db, copy)
    return f"sqlite:///{copy}"


def refused(db: str, *args: str) -> list[str]:
    """The problem lines of a command that must be refused, after checking it changed nothing."""
    gc.collect()
    before = store_bytes(db)
    result = cli(*args, "--db", db)
    assert result.exit_code == 1, result.output
    assert store_bytes(db) == before
    return error_lines(result)


def test_a_csv_cell_over_the_field_limit_is_a_located_problem(db, tmp_path):
    project = copy_sample(tmp_path / "p")
    table = project / "tables" / "stores.csv"
    lines = table.read_text(encoding="utf-8").splitlines()
    lines.insert(2, '"' + "x" * 131_073 + '"' + "," * lines[0].count(","))
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (line,) = refused(db, "import", str(project))
    assert line.startswith("p/tables/stores.csv:3:") and "field larger than field limit" in line


def _tool(project: Path, edit) -> None:
    path = project / "tools" / "check_stock.json"
    text = path.read_text(encoding="utf-8")
    path.write_text(edit(text), encoding="utf-8")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (HUGE, "an integer of 5000 digits"),
        ("NaN", "NaN is not a JSON number"),
        ("-Infinity", "-Infinity is not a JSON number"),
        ("1e400", "too large for a number"),
    ],
)
def test_a_tool_schema_with_an_oversized_or_non_finite_number_is_refused_with_its_line(
    db, tmp_path, value, says
):
    project = copy_sample(tmp_path / "p")
    _tool(
        project,
        lambda text: text.replace('"parameters": {', f'"parameters": {{\n    "maxItems": {value},', 1),
    )
    (line,) = refused(db, "import", str(project))
    assert line.startswith("p/tools/check_stock.json:5:") and says in line, line  # the number's line


@pytest.mark.parametrize(
    ("value", "says"),
    [(HUGE, "an integer of 5000 digits"), ("NaN", "NaN is not"), ("Infinity", "Infinity is not")],
)
def test_a_jsonl_line_with_an_oversized_or_non_finite_number_is_refused_with_its_line(
    db, tmp_path, value, says
):
    good = conversation("c-1", "spec-0", [], [("Hi", "Hello", "X", [])]).model_dump(mode="json")
    bad = json.dumps({**good, "id": "c-2", "metadata": {}})[:-1] + f', "extra_score": {value}}}'
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(good) + "\n" + bad + "\n", encoding="utf-8")
    (line,) = refused(db, "conversations", "import", str(path))
    assert line.startswith("items.jsonl:2") and says in line, line


def test_ordinary_numbers_still_read():
    assert load_json('{"a": 1, "b": -2.5e3, "c": "NaN", "d": [' + "9" * 100 + "]}")[0]["c"] == "NaN"


def test_a_procedure_yaml_with_a_5000_digit_integer_is_refused_with_its_line(db, tmp_path):
    project = copy_sample(tmp_path / "p")
    path = project / "procedures" / "track_order.yaml"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines.insert(1, f"priority: {HUGE}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (line,) = refused(db, "import", str(project))
    assert line.startswith("p/procedures/track_order.yaml:2:") and "an integer of 5000 digits" in line, line
