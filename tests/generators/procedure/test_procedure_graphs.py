"""Flowgraphs, conversation graphs, noise, weighted walks, conversations and tests (seed 001, Sections
3.4-3.9, Algorithm 1; issue 17, items 2-7), on the sample project and hand-made graphs."""

from __future__ import annotations

import json
import random
import re
import statistics
from pathlib import Path

import pytest

from evalcore.generators.procedure.conversations import conversation_problems, render_path, to_conversation
from evalcore.generators.procedure.convgraph import build_conversation_graph, convert_flowgraph
from evalcore.generators.procedure.cut import cut_tests
from evalcore.generators.procedure.flowgraph import build_flowgraph, compile_flowgraph
from evalcore.generators.procedure.graphs import (
    Edge,
    Graph,
    GraphBody,
    Node,
    check_conversation_graph,
    checked,
)
from evalcore.generators.procedure.noise import STEER_BACK, add_noise
from evalcore.generators.procedure.paths import coverage_walks, edge_coverage, uniform_walks, weighted_walks
from evalcore.inputs.project import load_project
from evalcore.inputs.tool_values import check_arguments
from evalcore.models import Procedure, Provenance

SAMPLE = load_project(Path(__file__).resolve().parents[3] / "data" / "sample")
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


def test_an_outcome_that_reruns_an_earlier_api_is_a_second_call_not_a_reply() -> None:
    _, flow, conv = _graphs("rent_ebike")
    g = flow.digraph()
    book = next(n for n in g if g.nodes[n]["description"] == "book_rental")
    rerun = next(t for t in g.successors(book) if g.edges[book, t]["description"] == "no_longer_available")
    assert g.nodes[rerun] == {**g.nodes[rerun], "type": "api", "description": "check_rental_availability"}
    first = next(n for n in g if g.nodes[n]["description"] == "check_rental_availability" and n != rerun)
    assert rerun != first, "unrolled once, so the graph keeps no cycle"
    assert {g.edges[rerun, t]["description"] for t in g.successors(rerun)} == {"available", "none_available"}
    assert flow.valid and conv.valid, (flow.broken, conv.broken)


def test_go_back_to_a_step_retries_its_call_once() -> None:
    steps = [
        {"kind": "message", "text": "Ask for the SKU."},
        {
            "kind": "api",
            "api": "check_stock",
            "text": "Check the stock.",
            "outcomes": {
                "in_stock": "Give the count.",
                "unknown_sku": "Go back to step 1 and call check_stock again.",
                "mistyped": "Ask the customer to re-check the SKU, then repeat step 2.",
            },
        },
    ]
    procedure = Procedure(name="p", intent="check stock", steps=steps)
    flow = build_flowgraph(procedure, SAMPLE.tools, compile_flowgraph(procedure, SAMPLE.tools))
    assert flow.valid, flow.broken
    g = flow.digraph()
    calls = sorted(n for n in g if g.nodes[n]["type"] == "api")
    assert len(calls) == 3, "the first call and one retry per looping outcome"
    direct = next(t for t in g.successors(calls[0]) if g.edges[calls[0], t]["description"] == "unknown_sku")
    assert g.nodes[direct]["type"] == "api"
    asked = next(t for t in g.successors(calls[0]) if g.edges[calls[0], t]["description"] == "mistyped")
    assert g.nodes[asked]["type"] == "message" and [g.nodes[t]["type"] for t in g.successors(asked)] == [
        "api"
    ]


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


def _tree(depth: int, k: int) -> Graph:
    """A full k-ary tree (node types do not matter to the walks)."""
    nodes, edges, frontier = [Node(node_id="N0", node_type="agent", node_description="")], [], ["N0"]
    for _ in range(depth):
        grown = []
        for parent in frontier:
            for _ in range(k):
                grown.append(f"N{len(nodes)}")
                nodes.append(Node(node_id=grown[-1], node_type="agent", node_description=""))
                edges.append(Edge(edge_id=f"E{len(edges)}", edge=(parent, grown[-1])))
        frontier = grown
    return Graph(kind="conversation", procedure="tree", nodes=nodes, edges=edges)


def _mean_coverage(walks, graph: Graph, n: int, seeds: int = 100) -> float:
    return statistics.mean(edge_coverage(graph, walks(graph, n, s)) for s in range(seeds))


@pytest.mark.parametrize("seed", range(5))
def test_coverage_walk_covers_a_star_and_a_binary_tree_with_as_many_paths_as_leaves(seed: int) -> None:
    star, binary = _tree(1, 10), _tree(3, 2)
    assert edge_coverage(star, coverage_walks(star, 10, seed)) == 1.0
    assert edge_coverage(binary, coverage_walks(binary, 8, seed)) == 1.0


def test_coverage_walk_falls_back_to_algorithm_1_once_every_edge_is_covered() -> None:
    # two leaves: paths 1-2 take both; path 3 then sees equal visits, and path 4 takes the leaf path 3 did
    # not with probability 1/2 / (1/2 + 1/3) = 3/5 (uniform walks: 1/2)
    star, runs = _tree(1, 2), 3000
    walks = [coverage_walks(star, 4, s) for s in range(runs)]
    assert all({walk[0][-1], walk[1][-1]} == {"N1", "N2"} for walk in walks)
    assert sum(walk[2] != walk[3] for walk in walks) / runs == pytest.approx(3 / 5, abs=0.03)


def test_coverage_walk_is_seeded() -> None:
    noisy = add_noise(_graphs("return_item")[2], seed=1)
    assert coverage_walks(noisy, 5, seed=3) == coverage_walks(noisy, 5, seed=3)
    assert any(coverage_walks(noisy, 5, seed=3) != coverage_walks(noisy, 5, seed=s) for s in range(4, 8))


def test_coverage_walk_covers_at_least_the_weighted_walk_and_1_3x_uniform_where_possible() -> None:
    for procedure in SAMPLE.procedures:
        noisy = add_noise(_graphs(procedure.name)[2], seed=0)
        for n in (3, 4, 5):
            coverage, weighted = (
                _mean_coverage(walks, noisy, n) for walks in (coverage_walks, weighted_walks)
            )
            assert coverage >= weighted, (procedure.name, n)
    # the goal (edge coverage >= 1.3x that of uniform walks with as many paths) where covering
    # every edge allows it: the star at n = 10 (uniform walks cover 1 - 0.9^10 = 65%) and a sample graph
    for graph, n in ((_tree(1, 10), 10), (add_noise(_graphs("track_order")[2], seed=0), 5)):
        assert _mean_coverage(coverage_walks, graph, n) / _mean_coverage(uniform_walks, graph, n) >= 1.3


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
        assert tests[0].expected.content.startswith("Could you tell me the order number")


RETURNS = {t.name: t.returns for t in SAMPLE.tools}
TABLES = [(d.id, d.rows) for d in SAMPLE.documents if d.rows]


def test_offline_conversations_read_as_dialogue_with_values_from_the_project() -> None:
    procedure, _, conv = _graphs("rent_ebike")
    column = {c: {r[c] for _, rows in TABLES for r in rows if c in r} for c in ("sku", "store_id")}
    for k, path in enumerate(weighted_walks(conv, 6, seed=3)):
        turns = render_path(conv, path, APIS, procedure.intent, random.Random(k), TABLES, RETURNS).turns
        assert conversation_problems(turns, APIS) == []
        asked: set[str] = set()
        for i, turn in enumerate(turns):
            if turn.role == "assistant":
                assert not turn.content.startswith(("Ask ", "Explain ", "Collect ", "Give ")), turn.content
            if turn.role == "user" and i > 1 and turns[i - 1].role == "assistant":
                said = {
                    w.strip().replace(" ", "_") for w in re.findall(r"(?:^|, |\. )([a-z ]+):", turn.content)
                }
                asked |= said
                question = turns[i - 1].content.lower()
                assert all(any(w in question for w in _WORDS[n]) for n in said), (question, said)
            if turn.role == "tool_call":
                args = turn.arguments
                assert args["store_id"] in column["store_id"]
                assert args["end_date"] >= args["start_date"]
                if "sku" in args:
                    assert args["sku"] in column["sku"]
                if "rider_age" in args:
                    assert 18 <= args["rider_age"] <= 70
                if "renter_email" in args:
                    first, last = args["renter_name"].lower().split()
                    assert args["renter_email"] == f"{first}.{last}@example.com"
            if turn.role == "tool_result":
                output = json.loads(turn.content)
                if output["result"] == "available":
                    assert output["available"] and output["available"][0]["sku"] in column["sku"]
                    assert set(output["available"][0]) >= {
                        "sku",
                        "units_free",
                        "daily_rate_usd",
                        "deposit_usd",
                    }
        assert "renter_name" not in asked or "start_date" in asked, "dates are asked first, names later"


_WORDS = {
    "store_id": ("store",),
    "start_date": ("date",),
    "end_date": ("date",),
    "rider_age": ("ride",),
    "damage_waiver": ("waiver",),
    "renter_name": ("name",),
    "renter_email": ("email",),
    "renter_phone": ("phone",),
}


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


def test_a_node_that_says_nothing_concrete_breaks_the_rule() -> None:
    """Seed 001, Section 3.4: node descriptions are concrete messages, not a bare act or a placeholder."""
    vague = GraphBody(
        nodes=[
            Node(node_id="N1", node_type="start_message", node_description="Ask for the order number."),
            Node(node_id="N2", node_type="api", node_description="lookup_order"),
            Node(node_id="N3", node_type="end_message", node_description="Reply"),
            Node(node_id="N4", node_type="end_message", node_description="..."),
        ],
        edges=[
            Edge(edge_id="E1", edge=("N1", "N2"), edge_description="Customer gives the order number"),
            Edge(edge_id="E2", edge=("N2", "N3"), edge_description="found"),
            Edge(edge_id="E3", edge=("N2", "N4"), edge_description="not_found"),
        ],
    )
    broken = checked("flowgraph", "p", vague, TOOLS).broken
    assert broken == [
        "node N3 says nothing concrete ('Reply'): write what is said",
        "node N4 says nothing concrete ('...'): write what is said",
    ]
