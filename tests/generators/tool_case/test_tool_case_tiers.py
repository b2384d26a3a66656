"""Table 11 (seed 004, Appendix F): SPUR against SCOPE on the gold and on the silver subset apart; a
subset too small to split says why in one line, from the library and from `rubrics compare --by-tier`."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.generators.tool_case.evaluation import compare_by_tier, tier_subsets, tier_table
from evalcore.generators.tool_case.filtering import filter_toolcases
from evalcore.generators.tool_case.job import generate_toolcases
from evalcore.generators.tool_case.records import GENERATOR
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.llm.client import ModelClient
from evalcore.models import Annotation, AnnotationLabel
from evalcore.store import Store

RETAIL = Path(__file__).resolve().parents[3] / "data" / "retail"


def _accept(store: Store, conversation_id: str) -> None:
    note = Annotation(
        item_kind="conversation", item_id=conversation_id, label=AnnotationLabel.accept, author="ann"
    )
    store.annotate(conversation_id, [note], "ann", store.current(conversation_id).version)


def test_gold_and_silver_are_compared_apart(sqlite_store, monkeypatch, tmp_path):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, RETAIL).project_id
    generate_toolcases(sqlite_store, pid, per_situation=1, seed=2)
    filter_toolcases(sqlite_store, pid)
    found = [v.conversation for v in list_conversations(sqlite_store, pid, generator=GENERATOR)]
    # people accept every third conversation of each label: gold; the rest stays silver
    for label in ("POS", "NEG"):
        for c in [c for c in found if c.metadata["labels"]["overall"] == label][::3]:
            _accept(sqlite_store, c.id)
    subsets = tier_subsets(sqlite_store, pid)
    assert set(subsets) == {"gold", "silver"} and len(subsets["gold"]) + len(subsets["silver"]) == len(found)
    results = compare_by_tier(ModelClient(sqlite_store, pid), subsets, folds=2)
    assert results["gold"].conversations == len(subsets["gold"])
    assert results["silver"].conversations == len(subsets["silver"])
    assert results["gold"].pos == sum(c.metadata["labels"]["overall"] == "POS" for c in subsets["gold"])
    table = tier_table(results)
    assert len(table) == 2 + 4 and all("SPUR" in r or "SCOPE" in r for r in table[2:])

    only = {"gold": subsets["gold"][:1], "silver": subsets["silver"]}
    small = compare_by_tier(ModelClient(sqlite_store, pid), only, folds=2)
    assert small["gold"].endswith("too few of a label to split") and "\n" not in small["gold"]

    db = sqlite_store.url
    got = CliRunner().invoke(app, ["rubrics", "compare", "--by-tier", "--folds", "2", "--db", db])
    assert got.exit_code == 0, got.output
    assert "Table 11" in got.output and got.output.count("| gold (n=") == 2
