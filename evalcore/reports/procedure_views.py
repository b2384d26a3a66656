"""What the Procedures page shows (issue 17, item 10), computed here so the page only lays it out: each
procedure's graphs drawn (a layered networkx layout, nodes coloured by type, noise nodes marked, the
sampled paths highlighted), the summary per procedure (broken rules, noise, paths, edge coverage,
conversations, tests), how much each path adds to the edge coverage, and the tests of a conversation.

Ids, types and descriptions come from procedures or a model: a figure is a Vega-Lite spec, which draws them
as text, and in tables they are plain cells.
"""

from __future__ import annotations

import textwrap
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import networkx as nx
import pandas as pd

from evalcore.generators.procedure.graphs import Graph
from evalcore.generators.procedure.job import ProcedureGraphs
from evalcore.generators.procedure.origins import GENERATED_PREFIX
from evalcore.models import Test, TurnRole
from evalcore.models.items import expected_action
from evalcore.models.wording import words
from evalcore.reports.procedure_tables import describe_action

COLOURS = {
    "start_message": "#2e7d32",
    "message": "#1565c0",
    "end_message": "#6a1b9a",
    "api": "#ef6c00",
    "agent": "#1565c0",
    "customer": "#607d8b",
}
UNKNOWN_COLOUR = "#9e9e9e"  # a node type no rule admits (a broken graph)
NOISE_COLOUR = "#c62828"
PATH_COLOUR = "#d81b60"


@dataclass(frozen=True)
class DrawnNode:
    """A node placed for drawing."""

    node_id: str
    kind: str
    description: str
    x: float
    y: float
    noise: bool
    paths: int  # sampled paths through it


@dataclass(frozen=True)
class DrawnEdge:
    """An edge placed for drawing."""

    source: str
    target: str
    description: str
    points: tuple[float, float, float, float]  # x0, y0, x1, y1
    paths: int  # sampled paths along it


def layout(graph: Graph) -> dict[str, tuple[float, float]]:
    """Node positions: layers top-down by the longest path from the root (a DAG), nodes of one layer side
    by side; a graph with a cycle (a broken one) gets a seeded spring layout."""
    g = graph.digraph()
    if not g:
        return {}
    if not nx.is_directed_acyclic_graph(g):
        return {n: (float(x), float(y)) for n, (x, y) in nx.spring_layout(g, seed=0).items()}
    depth: dict[str, int] = {}
    for n in nx.topological_sort(g):
        depth[n] = max((depth[p] + 1 for p in g.predecessors(n)), default=0)
    nx.set_node_attributes(g, depth, "layer")
    placed = nx.multipartite_layout(g, subset_key="layer", align="horizontal", scale=1.0)
    return {n: (float(x), -float(depth[n])) for n, (x, _) in placed.items()}


def drawing(graph: Graph, paths: Sequence[Sequence[str]] = ()) -> tuple[list[DrawnNode], list[DrawnEdge]]:
    """The graph's nodes and edges placed, each with how many of `paths` go through it."""
    where = layout(graph)
    through = {n: sum(n in p for p in paths) for n in where}
    along: dict[tuple[str, str], int] = {}
    for path in paths:
        for step in set(pairwise(path)):
            along[step] = along.get(step, 0) + 1
    nodes = [
        DrawnNode(n.node_id, n.node_type, n.node_description, *where[n.node_id], n.noise, through[n.node_id])
        for n in graph.nodes
        if n.node_id in where
    ]
    edges = [
        DrawnEdge(
            e.edge[0],
            e.edge[1],
            e.edge_description,
            (*where[e.edge[0]], *where[e.edge[1]]),
            along.get(e.edge, 0),
        )
        for e in graph.edges
        if e.edge[0] in where and e.edge[1] in where
    ]
    return nodes, edges


def _generated_api(node: DrawnNode, generated: Collection[str]) -> bool:
    return node.kind == "api" and node.description in generated


def _symbol(node: DrawnNode, generated: Collection[str]) -> str:
    return "cross" if node.noise else ("diamond" if _generated_api(node, generated) else "circle")


def _note(node: DrawnNode, generated: Collection[str]) -> str:
    return " (noise)" if node.noise else (" (generated API)" if _generated_api(node, generated) else "")


def _label(node: DrawnNode) -> str:
    """A node's id and the start of its text beside its marker: a graph read without hovering."""
    short = textwrap.shorten(node.description, 30, placeholder="…")
    return node.node_id + (f" {short}" if short else "")


def _x_range(nodes: Sequence[DrawnNode]) -> list[float]:
    """Room on the right of the rightmost node for its label."""
    xs = [n.x for n in nodes] or [0.0]
    span = (max(xs) - min(xs)) or 1.0
    return [min(xs) - 0.05 * span, max(xs) + 0.35 * span]


def _text(text: str) -> str:
    """A description as a tooltip shows it: some six lines of it at most."""
    return textwrap.shorten(text, 420, placeholder="…")


def _edge_rows(edges: Sequence[DrawnEdge]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "x": e.points[0], "y": e.points[1], "x2": e.points[2], "y2": e.points[3],
                "edge": f"on {e.paths} path(s)" if e.paths else "not on a path", "width": 1 + 2 * e.paths,
            }
            for e in sorted(edges, key=lambda e: e.paths)  # the highlighted ones drawn last, on top
        ],
        columns=["x", "y", "x2", "y2", "edge", "width"],
    )  # fmt: skip


def _middle_rows(edges: Sequence[DrawnEdge]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "x": (e.points[0] + e.points[2]) / 2, "y": (e.points[1] + e.points[3]) / 2,
                "edge": f"{e.source} -> {e.target} ({e.paths} path(s))", "text": _text(e.description),
            }
            for e in edges
            if e.description
        ],
        columns=["x", "y", "edge", "text"],
    )  # fmt: skip


def _node_rows(nodes: Sequence[DrawnNode], generated: Collection[str]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "x": n.x, "y": n.y, "type": words(n.kind), "label": _label(n),
                "node": f"{n.node_id} {n.kind}{_note(n, generated)}, {n.paths} path(s)",
                "text": _text(n.description), "shape": _symbol(n, generated), "size": 260 if n.paths else 150,
                "noise": n.noise,
            }
            for n in nodes
        ],
        columns=["x", "y", "type", "label", "node", "text", "shape", "size", "noise"],
    )  # fmt: skip


def graph_figure(
    graph: Graph, paths: Sequence[Sequence[str]] = (), title: str = "", generated: Collection[str] = ()
) -> dict:
    """The graph drawn, as a Vega-Lite spec: nodes coloured by type (noise nodes a cross ringed red; api
    nodes calling a `generated` API a diamond, "generated API" on hover), edges on the sampled `paths`
    thick and coloured (wider for more paths), the others thin and grey; hover shows the text."""
    nodes, edges = drawing(graph, paths)
    kinds = list(dict.fromkeys(n.kind for n in nodes))
    on_paths = sorted({e.paths for e in edges if e.paths})
    edge_names = ["not on a path", *(f"on {k} path(s)" for k in on_paths)]
    place = {
        "x": {"field": "x", "type": "quantitative", "axis": None, "scale": {"domain": _x_range(nodes)}},
        "y": {"field": "y", "type": "quantitative", "axis": None, "scale": {"zero": False, "nice": False}},
    }
    bottom = {"orient": "bottom", "direction": "horizontal"}
    noisy = {"test": "datum.noise"}
    return {
        **({"title": title} if title else {}),
        "height": max(420, 70 * (1 + int(-min((n.y for n in nodes), default=0)))),
        "datasets": {
            "edges": _edge_rows(edges),
            "middles": _middle_rows(edges),
            "nodes": _node_rows(nodes, generated),
        },
        "layer": [
            {
                "data": {"name": "edges"},
                "mark": {"type": "rule"},
                "encoding": {
                    **place, "x2": {"field": "x2"}, "y2": {"field": "y2"},
                    "strokeWidth": {"field": "width", "type": "quantitative", "scale": None, "legend": None},
                    "color": {
                        "field": "edge", "type": "nominal", "title": "Edges",
                        "scale": {"domain": edge_names, "range": ["#cfd8dc", *[PATH_COLOUR] * len(on_paths)]},
                        "legend": bottom,
                    },
                },
            },
            {
                "data": {"name": "middles"},
                "mark": {"type": "square", "size": 36, "color": "#90a4ae"},
                "encoding": {
                    **place,
                    "tooltip": [{"field": "edge", "title": "edge"}, {"field": "text", "title": "says"}],
                },
            },
            {
                "data": {"name": "nodes"},
                "mark": {"type": "point", "filled": True, "opacity": 1},
                "encoding": {
                    **place,
                    "fill": {
                        "field": "type", "type": "nominal", "title": "Node type",
                        "scale": {"domain": [words(k) for k in kinds],
                                  "range": [COLOURS.get(k, UNKNOWN_COLOUR) for k in kinds]},
                        "legend": bottom,
                    },
                    "shape": {"field": "shape", "type": "nominal", "scale": None},
                    "size": {"field": "size", "type": "quantitative", "scale": None},
                    "stroke": {"condition": {**noisy, "value": NOISE_COLOUR}, "value": "#ffffff"},
                    "strokeWidth": {"condition": {**noisy, "value": 3}, "value": 1},
                    "tooltip": [{"field": "node", "title": "node"}, {"field": "text", "title": "says"}],
                },
            },
            {
                "data": {"name": "nodes"},
                "mark": {"type": "text", "align": "left", "dx": 12, "fontSize": 11},
                "encoding": {**place, "text": {"field": "label"}},
            },
        ],
        "config": {"view": {"stroke": None}},
    }  # fmt: skip


def graphs_summary(
    graphs: Sequence[ProcedureGraphs], tests: Sequence[Test], sources: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """One row per procedure: where it comes from (`sources` by name, when given), each graph valid or
    how many rules it breaks, noise, paths, edge coverage, conversations and the tests cut from them."""
    per_conversation: dict[str | None, int] = {}
    for t in tests:
        per_conversation[t.conversation_id] = per_conversation.get(t.conversation_id, 0) + 1

    def state(graph: Graph | None) -> str:
        if graph is None:
            return "not made"
        return "valid" if graph.valid else f"{len(graph.broken)} broken rule(s): not used"

    return pd.DataFrame(
        [
            {
                "procedure": g.procedure,
                "source": (sources or {}).get(g.procedure)
                or ("generated" if g.procedure.startswith(GENERATED_PREFIX) else "project"),
                "generated APIs": ", ".join(g.generated_apis),
                "flowgraph": state(g.flowgraph),
                "conversation graph": state(g.conversation_graph),
                "noise nodes": sum(n.noise for n in g.noisy_graph.nodes) if g.noisy_graph else None,
                "paths": len(g.paths),
                "edge coverage": g.coverage,
                "conversations": len(g.conversations),
                "tests": sum(per_conversation.get(c, 0) for c in g.conversations),
            }
            for g in graphs
        ]
    )


def path_coverage(graphs: ProcedureGraphs) -> pd.DataFrame:
    """Each sampled path: its length, the edges it covers first, and the edge coverage so far."""
    graph = graphs.noisy_graph
    total = {tuple(e.edge) for e in graph.edges} if graph else set()
    seen: set[tuple[str, str]] = set()
    rows = []
    for k, path in enumerate(graphs.paths, start=1):
        steps = set(pairwise(path)) & total
        new = steps - seen
        seen |= steps
        rows.append(
            {
                "path": k,
                "nodes": len(path),
                "noise nodes": sum(graph.node(n).noise for n in path) if graph else 0,
                "new edges": len(new),
                "edge coverage so far": len(seen) / len(total) if total else 1.0,
                "conversation": graphs.conversations[k - 1] if k <= len(graphs.conversations) else None,
            }
        )
    return pd.DataFrame(rows)


def tests_frame(tests: Sequence[Test], generated: Collection[str] = ()) -> pd.DataFrame:
    """The tests of a conversation in order: context length, its last turn, the expected action (a call
    of a `generated` API marked)."""
    rows = []
    for t in tests:
        last = t.context[-1] if t.context else None
        said = "" if last is None else (last.content if last.role != TurnRole.tool_call else last.tool_name)
        rows.append(
            {
                "test": t.id,
                "context turns": len(t.context),
                "last turn": f"{last.role.value}: {said}" if last else "",
                "expected action": describe_action(expected_action(t), generated),
            }
        )
    return pd.DataFrame(rows, columns=["test", "context turns", "last turn", "expected action"])
