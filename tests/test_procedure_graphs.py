"""Flowgraphs, conversation graphs, noise, weighted walks, conversations and tests (seed 001, Sections
3.4-3.9, Algorithm 1; issue 17, items 2-7), on the sample project and hand-made graphs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from evalcore.generators.procedure.conversations import conversation_problems, render_path, to_conversation
from evalcore.generators.procedure.convgraph import build_conversation_graph, convert_flowgraph
from evalcore.generators.procedure.cut import cut_tests
from evalcore.generators.procedure.flowgraph import build_flowgraph, compile_flowgraph
from evalcore.generators.procedure.graphs import Edge, GraphBody, Node, check_conversation_graph, checked
from evalcore.generators.procedure.noise import STEER_BACK, add_noise
from evalcore.generators.procedure.paths import edge_coverage, uniform_walks, weighted_walks
from evalcore.inputs.project import load_project
from evalcore.inputs.tool_values import check_arguments
from evalcore.models import Procedure, Provenance

SAMPLE = load_project(Path(__file__).resolve().parents[1] / "data" / "sample")
TOOLS = [t.name for t in SAMPLE.tools]
APIS = {t.name: t.parameters for t in SAMPLE.tools}


def _body(nodes: list[tuple[str, str]], edges: list[tuple[str, str, str]]) -> GraphBody:
    return GraphBody(
        nodes=[
            Node(node_id=i, node_type=k, node_description=i if k != "api" else "lookup_order")
            for i, k in nodes
        ],
        edges=[Edge(edge_id=f"E{n}", edge=(a, b), edge_description=d) for n, (a, b, d) in enumerate(edges)],
    )


def _procedure(name: str) -> Procedure:
    return next(p for p in SAMPLE.procedures if p.name == name)


def _graphs(name: str):
    procedure = _procedure(name)
    flow = build_flowgraph(procedure, SAMPLE.tools, compile_flowgraph(procedure, SAMPLE.tools))
    conv = build_conversation_graph(name, convert_flowgraph(flow, procedure.intent), TOOLS)
    return procedure, flow, conv


@pytest.mark.parametrize("name", [p.name for p in SAMPLE.procedures])
def test_every_sample_procedure_compiles_to_valid_graphs(name: str) -> None:
    _, flow, conv = _graphs(name)
    assert flow.valid, flow.broken
    assert conv.valid, conv.broken
    starts = [n for n in flow.nodes if n.node_type == "start_message"]
    assert len(starts) == 1 and flow.root() == starts[0].node_id


def test_track_order_branches_as_its_steps_say() -> None:
    _, flow, _ = _graphs("track_order")
    g = flow.digraph()
    api = {n.node_description: n.node_id for n in flow.nodes if n.node_type == "api"}
    outcomes = sorted(
        g.edges[api["lookup_order"], c]["description"] for c in g.successors(api["lookup_order"])
    )
    assert outcomes == ["email_mismatch", "found", "not_found"]
    # "For lost parcels ..." is a branch: reached from the found message and from the late-parcel check
    assert g.in_degree(api["transfer_to_human"]) == 2
    assert len(flow.nodes) == 10 and len(flow.edges) == 11


def test_flowgraph_rules_all_listed() -> None:
    bad = _body(
        [
            ("A", "start_message"),
            ("B", "start_message"),
            ("C", "api"),
            ("D", "message"),
            ("X", "end_message"),
        ],
        [("A", "C", "gives id"), ("C", "D", ""), ("D", "C", "again"), ("B", "X", "")],
    )
    broken = checked("flowgraph", "p", bad, TOOLS).broken
    text = "\n".join(broken)
    assert "exactly one start_message node, found 2" in text
    assert "exactly one root, found 2" in text
    assert "cycle through" in text
    assert "out of api node C carries no API outcome" in text
    unreachable = _body([("A", "start_message"), ("B", "end_message"), ("C", "message")], [("A", "B", "")])
    assert any("exactly one root" in b for b in checked("flowgraph", "p", unreachable).broken)
    leaf = _body([("A", "start_message"), ("B", "message")], [("A", "B", "ok")])
    assert checked("flowgraph", "p", leaf).broken == ["leaf B is of type message, not end_message"]


def test_unknown_tool_is_kept_with_the_reason() -> None:
    steps = [
        {"kind": "message", "text": "Ask for the id."},
        {"kind": "api", "api": "teleport", "text": "Go."},
    ]
    procedure = Procedure(name="p", intent="travel", steps=steps)
    flow = build_flowgraph(procedure, SAMPLE.tools, compile_flowgraph(procedure, SAMPLE.tools))
    assert not flow.valid
    assert any("unknown tool 'teleport'" in b for b in flow.broken)
    assert flow.nodes  # kept, to be shown with its reason


def test_conversation_graph_rules() -> None:
    bad = _body(
        [("A", "customer"), ("B", "customer"), ("C", "agent"), ("D", "customer")],
        [("A", "B", ""), ("B", "C", ""), ("C", "D", "")],
    )
    assert check_conversation_graph(bad) == [
        "customer node A is followed by customer node B",
        "leaf D is of type customer, not agent",
    ]


def test_noise_adds_a_detour_that_steers_back() -> None:
    _, _, conv = _graphs("return_item")
    assert add_noise(conv, p=0.0).nodes == conv.nodes
    noisy = add_noise(conv, p=1.0, seed=3)
    agents = [n for n in conv.nodes if n.node_type == "agent"]
    assert len(noisy.nodes) == len(conv.nodes) + 2 * len(agents)
    assert noisy.valid, noisy.broken
    g, base = noisy.digraph(), conv.digraph()
    for agent in agents:
        detour = [c for c in g.successors(agent.node_id) if noisy.node(c).noise]
        (reply,) = list(g.successors(detour[0]))
        assert noisy.node(reply).node_description == STEER_BACK
        assert set(g.successors(reply)) == set(base.successors(agent.node_id))
    assert add_noise(conv, seed=5).nodes == add_noise(conv, seed=5).nodes  # seeded
    share = sum(len(add_noise(conv, seed=s).nodes) - len(conv.nodes) for s in range(400)) / (
        800 * len(agents)
    )
    assert share == pytest.approx(0.2, abs=0.02)  # default p


def test_weighted_walk_prefers_unvisited_children_as_algorithm_1() -> None:
    # root with two leaves: the second walk takes the unvisited leaf with probability 1/1 / (1/1 + 1/2) = 2/3
    graph = checked(
        "conversation",
        "p",
        _body([("R", "customer"), ("A", "agent"), ("B", "agent")], [("R", "A", ""), ("R", "B", "")]),
    )
    runs = 3000
    weighted = sum(len({p[-1] for p in weighted_walks(graph, 2, s)}) == 2 for s in range(runs)) / runs
    uniform = sum(len({p[-1] for p in uniform_walks(graph, 2, s)}) == 2 for s in range(runs)) / runs
    assert weighted == pytest.approx(2 / 3, abs=0.03)
    assert uniform == pytest.approx(1 / 2, abs=0.03)
    assert edge_coverage(graph, [["R", "A"]]) == 0.5


def test_conversations_keep_a6_rules_and_cut_into_tests() -> None:
    procedure, _, conv = _graphs("return_item")
    noisy = add_noise(conv, seed=1)
    for path in weighted_walks(noisy, 8, seed=2):
        generated = render_path(noisy, path, APIS, procedure.intent, random.Random(0))
        assert conversation_problems(generated.turns, APIS) == []
        conversation = to_conversation(
            "c", generated, graph=noisy, path=path, problems=[], provenance=Provenance(producer="offline")
        )
        turns = conversation.turns
        for i, turn in enumerate(turns):
            if turn.role == "tool_call":
                assert turns[i + 1].role == "tool_result" and not check_arguments(
                    APIS[turn.tool_name], turn.arguments
                )
        tests = cut_tests(conversation)
        cuts = [i for i, t in enumerate(turns[:-1]) if t.role in ("user", "tool_result")]
        assert [len(t.context) for t in tests] == [i + 1 for i in cuts]
        assert all(t.expected.role in ("assistant", "tool_call") for t in tests)
        assert tests[0].expected.content.startswith("Ask for the order number")


def test_a6_problems_are_found() -> None:
    from evalcore.generators.procedure.conversations import GeneratedTurn

    turns = [
        GeneratedTurn(role="user", content="hi"),
        GeneratedTurn(role="user", content="hello?"),
        GeneratedTurn(role="tool_call", tool_name="lookup_order", arguments={"order_id": 5}),
        GeneratedTurn(role="assistant", content="done"),
    ]
    problems = conversation_problems(turns, APIS)
    assert "turn 1: two customer messages in a row" in problems
    assert "turn 2: the call to lookup_order has no API output after it" in problems
    assert any("order_id: 5 is not of type 'string'" in p for p in problems)
