"""Page test (AppTest): Procedures draws each procedure's graphs with the sampled paths, lists the rules a
broken graph breaks (kept, not used), shows path coverage and a conversation's tests, and Table 2 of the
runs against targets side by side with the drill-down to failing tests, marked offline."""

from __future__ import annotations

from pathlib import Path

import pytest
from page_app import open_page
from queue_support import work_the_queue
from streamlit.testing.v1 import AppTest
from vega import charts, from_spec

from evalcore.generators.procedure.graphs import Edge, GraphBody, Node, checked
from evalcore.generators.procedure.job import GRAPHS_KIND, RUN_KIND, ProcedureGraphs, generate
from evalcore.inputs import import_project
from evalcore.jobs.queue import open_queue
from evalcore.models import Provenance, RunStatus, Target
from evalcore.reports.procedure_views import PATH_COLOUR
from evalcore.runs.procedure_tests import create_procedure_run, execute_procedure_run
from evalcore.store import DATABASE_URL_ENV, Store
from evalcore.targets import save_target

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db_url(tmp_path, monkeypatch) -> str:
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    return url


def frame(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_without_runs_the_page_says_how_to_start(db_url):
    import_project(Store(db_url), ROOT / "data" / "sample")
    at = open_page("pages/procedures.py", timeout=90)
    assert any("No procedure generation run" in str(i.value) for i in at.info)
    assert any("No procedure test run" in str(i.value) for i in at.info)


def test_the_form_queues_a_generation_with_the_chosen_walk_and_a_worker_makes_it(db_url):
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    at = open_page("pages/procedures.py", timeout=90)
    next(m for m in at.multiselect if m.label == "Procedures").set_value(["track_order"])
    next(n for n in at.number_input if n.label.startswith("Paths per graph")).set_value(4)
    next(s for s in at.selectbox if s.label == "Path sampling").set_value("coverage")
    next(b for b in at.button if b.label == "Generate").click().run()
    assert not at.exception, at.exception
    [run] = store.runs(pid, kind=RUN_KIND)
    assert run.status == RunStatus.pending, "handed to the workers, not run in the page"
    assert run.params["walk"] == "coverage" and run.params["paths"] == 4
    next(b for b in at.button if b.label == "Stop").click().run()
    assert store.run(run.id).status == RunStatus.stopped
    at = open_page(
        "pages/procedures.py", timeout=90
    )  # a new session finds the stopped generation and offers to resume it
    next(b for b in at.button if b.label == "Resume").click().run()
    assert store.run(run.id).status == RunStatus.pending and not store.stop_requested(run.id)
    assert run.id in open_queue(db_url).pending_runs(), "handed to the workers again"
    work_the_queue(db_url)
    at = open_page("pages/procedures.py", timeout=90)
    assert not [b for b in at.button if b.label == "Resume"], "nothing to resume once it finished"
    assert any("Coverage-directed walk" in str(c.value) for c in at.caption)
    assert frame(at, "edge coverage").set_index("procedure").loc["track_order", "paths"] == 4
    next(m for m in at.multiselect if m.label == "Procedures").set_value([])
    next(n for n in at.number_input if n.label.startswith("Paths per graph")).set_value(1)
    next(s for s in at.slider if s.label.startswith("Noise")).set_value(1.0)
    next(b for b in at.button if b.label == "Generate").click().run()
    assert not at.exception and len(store.runs(pid, kind=RUN_KIND)) == 2, "every procedure, full noise"


def test_graphs_paths_tests_and_table2_with_failing_tests(db_url):
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    generation = generate(store, pid, procedures=["track_order"], paths=3, seed=0).run.id
    # a flowgraph calling a tool the project lacks, kept as the job keeps one: with its reasons, not used
    body = GraphBody(
        nodes=[Node(node_id="N1", node_type="start_message", node_description="Ask what to wrap."),
               Node(node_id="N2", node_type="api", node_description="wrap_gift")],
        edges=[Edge(edge_id="E1", edge=("N1", "N2"), edge_description="Customer says")],
    )  # fmt: skip
    flow = checked("flowgraph", "gift_wrap", body, [t.name for t in store.tools(pid)])
    kept = ProcedureGraphs(
        id="pgraph-gift", procedure="gift_wrap", flowgraph=flow,
        provenance=Provenance(producer="offline", run_id=generation),
    )  # fmt: skip
    store.add_item(pid, GRAPHS_KIND, kept.model_dump(mode="json"), "offline", item_id=kept.id,
                   generator="procedure", run_id=generation)  # fmt: skip
    played = {}
    for name in ("oracle", "null"):
        save_target(store, pid, Target(name=name, kind="agent", config={"agent": name}))
        played[name] = create_procedure_run(store, pid, name, generation=generation).id
        execute_procedure_run(store, played[name])

    at = open_page("pages/procedures.py", timeout=90)
    summary = frame(at, "edge coverage")
    rows = summary.set_index("procedure")
    assert rows.loc["track_order", "flowgraph"] == "valid" and rows.loc["track_order", "paths"] == 3
    assert rows.loc["gift_wrap", "flowgraph"].endswith("not used")
    drawn = charts(at)
    assert len(drawn) == 2  # the flowgraph and the conversation graph of the first procedure
    layers = {layer["data"]["name"]: layer["encoding"] for layer in drawn[1].spec["layer"]
              if layer["mark"]["type"] != "text"}  # fmt: skip
    kinds, edges = layers["nodes"]["fill"]["scale"]["domain"], layers["edges"]["color"]["scale"]
    assert {"agent", "customer", "api"} <= set(kinds) and any(n.startswith("on ") for n in edges["domain"])
    assert set(drawn[1].table("nodes")["type"]) == set(kinds)
    on_paths = drawn[1].table("edges").query("edge != 'not on a path'")
    assert len(on_paths) and (on_paths["width"] > 1).all(), "the sampled paths drawn thick"
    assert edges["range"][edges["domain"].index(on_paths["edge"].iloc[0])] == PATH_COLOUR  # and highlighted

    procedure = next(b for b in at.selectbox if b.label == "Procedure")
    procedure.select("gift_wrap").run()
    assert any("kept, not used" in str(e.value) for e in at.error)
    assert any("unknown tool 'wrap_gift'" in str(t.value) for t in at.text)

    procedure = next(b for b in at.selectbox if b.label == "Procedure")
    procedure.select("track_order").run()
    assert not at.exception, at.exception
    assert len(frame(at, "edge coverage so far")) == 3
    assert not frame(at, "expected action").empty
    next(r for r in at.radio if r.label == "Highlight").set_value("path 2").run()
    assert not at.exception, at.exception

    # A figure per row, a run per column named by its target and start.
    table = frame(at, "figure").set_index("figure")
    oracle, null = (next(c for c in table.columns if c.startswith(f"{n} (")) for n in ["oracle", "null"])
    assert table.loc["Test correct", oracle].startswith("100.0%")
    assert table.loc["API recall", null].startswith("0.0%")
    assert table.loc["tests", null] == table.loc["tests", oracle] != "0"  # both played every test
    assert any("Offline" in str(c.value) for c in at.caption)
    drill = next(b for b in at.selectbox if b.label == "Failing tests of")
    drill.set_value(played["oracle"]).run()
    assert frame(at, "why").empty  # the oracle fails nothing
    next(b for b in at.selectbox if b.label == "Failing tests of").set_value(played["null"]).run()
    failing = frame(at, "why")
    assert len(failing) > 0 and "replied where an API call was due" in set(failing["why"])


def test_generated_apis_are_marked_in_the_drawing_and_the_tests() -> None:
    from evalcore.models import Test, Turn
    from evalcore.reports.procedure_views import graph_figure, tests_frame

    body = GraphBody(
        nodes=[Node(node_id="N1", node_type="start_message", node_description="Ask what to wrap."),
               Node(node_id="N2", node_type="api", node_description="wrap_gift"),
               Node(node_id="N3", node_type="end_message", node_description="Done.")],
        edges=[Edge(edge_id="E1", edge=("N1", "N2"), edge_description="Gives it"),
               Edge(edge_id="E2", edge=("N2", "N3"), edge_description="wrapped")],
    )  # fmt: skip
    flow = checked("flowgraph", "gift_wrap", body, ["wrap_gift"])
    nodes = from_spec(graph_figure(flow, [["N1", "N2", "N3"]], generated={"wrap_gift"})).table("nodes")
    api = nodes[nodes["type"] == "api"]
    assert list(api["shape"]) == ["diamond"] and "(generated API)" in api["node"].iloc[0]
    plain = from_spec(graph_figure(flow)).table("nodes")
    assert list(plain[plain["type"] == "api"]["shape"]) == ["circle"]
    test = Test(
        id="t1",
        context=[Turn(index=0, role="user", content="Wrap it please")],
        expected=Turn(index=1, role="tool_call", tool_name="wrap_gift", arguments={"order": "W-1"}),
        provenance=Provenance(producer="offline"),
    )
    assert tests_frame([test], {"wrap_gift"})["expected action"][0].endswith("[generated API]")


def test_tests_are_played_from_the_page_through_the_queue(db_url):
    from evalcore.jobs.queue import open_queue
    from evalcore.runs.procedure_tests import procedure_runs

    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    generate(store, pid, procedures=["track_order"], paths=2, seed=0)
    save_target(store, pid, Target(name="agent-demo", kind="agent", config={"agent": "demo"}))
    at = open_page("pages/procedures.py", timeout=90)
    targets = next(b for b in at.selectbox if b.label == "Target")
    assert targets.options == ["agent-demo"]  # only targets that call tools (not the retrieval demo)
    next(b for b in at.button if b.label == "Play the tests").click().run()  # no target chosen: refused
    assert any("choose a target" in str(e.value) for e in at.error) and not procedure_runs(store, pid)
    next(b for b in at.selectbox if b.label == "Target").select("agent-demo")
    next(b for b in at.button if b.label == "Play the tests").click().run()  # the form sends both at once
    assert not at.exception, at.exception
    [run] = procedure_runs(store, pid)
    assert run.id in open_queue(store.url).pending_runs(), "handed to the workers"
    assert any("tests · queued" in str(p.proto.text) for p in at.get("progress"))


def test_a_drawn_node_shows_its_id_and_the_start_of_its_text():
    from evalcore.reports.procedure_views import graph_figure

    body = GraphBody(
        nodes=[Node(node_id="N1", node_type="start_message", node_description="Ask <b>what</b> to wrap."),
               Node(node_id="N2", node_type="end_message",
                    node_description="Thank the customer and say the parcel leaves tomorrow morning.")],
        edges=[Edge(edge_id="E1", edge=("N1", "N2"), edge_description="Customer says")],
    )  # fmt: skip
    figure = from_spec(graph_figure(checked("flowgraph", "gift_wrap", body, [])))
    [text] = [layer for layer in figure.spec["layer"] if layer["mark"]["type"] == "text"]
    labels = list(figure.table(text["data"]["name"])[text["encoding"]["text"]["field"]])
    # As written: Vega-Lite draws it as text (tests/test_e2e_chart_text.py shows markup stays text).
    assert "N1 Ask <b>what</b> to wrap." in labels, labels
    assert "N2 Thank the customer and say…" in labels, "long texts are cut, whole words"
