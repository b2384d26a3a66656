"""Intents and generated procedures (seed 001, Sections 3.1-3.3; issue 17, item 1), offline."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.generators.procedure.flowgraph import build_flowgraph, compile_flowgraph
from evalcore.generators.procedure.intents import (
    GENERATE_INTENTS,
    GENERATE_PROCEDURE,
    as_procedure,
    known_intents,
)
from evalcore.generators.procedure.job import create_generation, generate, list_graphs
from evalcore.inputs import import_project, load_project
from evalcore.store import Store

SAMPLE = Path(__file__).resolve().parents[3] / "data" / "sample"
BUNDLE = load_project(SAMPLE)
TOOLS = [t.model_dump(mode="json") for t in BUNDLE.tools]


def test_known_intents_come_from_procedures_then_the_card() -> None:
    intents = known_intents(BUNDLE.procedures, BUNDLE.card)
    assert [i.procedure for i in intents[:5]] == [p.name for p in BUNDLE.procedures]
    assert intents[0].text == "book a bike repair or service" and intents[0].source == "procedure"
    assert [i.source for i in intents[5:]] == ["card"]


def test_offline_intents_cover_the_tools_no_procedure_uses_and_compile() -> None:
    used = sorted({api for p in BUNDLE.procedures for api in p.apis})
    intents = GENERATE_INTENTS.run_offline({"tools": TOOLS, "used_tools": used, "count": 5}).intents
    assert intents == ["check how many units of a product (by SKU) a store has in stock"]
    draft = GENERATE_PROCEDURE.run_offline({"intent": intents[0], "tools": TOOLS})
    procedure = as_procedure(draft)
    assert procedure.name.startswith("generated_") and procedure.apis == ["check_stock"]
    assert procedure.steps[0].text == "Ask for the sku."
    flow = build_flowgraph(procedure, BUNDLE.tools, compile_flowgraph(procedure, BUNDLE.tools))
    assert flow.valid, flow.broken


def test_a_run_with_generated_intents_works_their_procedures_too(sqlite_store: Store, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, SAMPLE).project_id
    outcome = generate(sqlite_store, pid, procedures=["track_order"], intents=1, paths=2)
    assert (outcome.done, outcome.total) == (2, 2)
    names = sorted(g.procedure for g in list_graphs(sqlite_store, pid, outcome.run.id))
    assert names == ["generated_check_how_many_units", "track_order"]
    result = CliRunner().invoke(app, ["procedures", "intents", "--db", sqlite_store.url])
    assert result.exit_code == 0 and "rent an e-bike  (procedure rent_ebike)" in result.output
    # the offline task finds one unused tool, so asking for 3 intents makes fewer: the run says so
    short = create_generation(sqlite_store, pid, procedures=["track_order"], intents=3)
    assert short.warnings == ["made 1 of the 3 procedures asked for new intents"]
