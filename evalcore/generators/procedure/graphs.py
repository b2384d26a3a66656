"""The flowgraph and the conversation graph, and their rules checked in networkx (seed 001, Sections 3.4
and 3.5; issue 17, items 2 and 3).

Both graphs have the seed's shape: nodes with `node_id`, `node_type`, `node_description`; edges with
`edge_id`, the (source, target) tuple `edge` and `edge_description`. The seed converts a generated graph
into networkx and discards it when a rule is broken; here a graph that breaks a rule is kept with every
broken rule listed (`Graph.broken`) so the page can show why, and `Graph.valid` keeps it out of the next
stage.

Flowgraph rules (Section 3.4, issue 17 item 2): node types start_message/message/api/end_message;
exactly one start_message, and it is the only root; every api node's out-edges carry an API outcome;
every node reachable from the root; every leaf an end_message. Conversation graph rules (Section 3.5,
item 3): node types agent/customer/api; one root; a customer node is followed by an agent or api node;
every api node's out-edges carry an outcome; every node reachable; leaves are agent nodes. Both also
need edges between known nodes, unique ids, no cycle (issue 17, "Bad input": a walk ends only at a leaf,
Algorithm 1 lines 11-13) and api nodes that name a known tool, when the tools are given; and, as Section
3.4 asks of the model, concrete descriptions: a message or customer node says what is said, in words,
not "Reply", "message", "N4" or "..." (issue 26, item 3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

import networkx as nx
from pydantic import Field

from evalcore.models.common import Record

FLOW_TYPES = ("start_message", "message", "api", "end_message")
CONVERSATION_TYPES = ("agent", "customer", "api")
# what a node says when it says nothing concrete: a bare role or act, a placeholder, a node's own id
_VAGUE = re.compile(
    r"^\W*((the )?(agent|customer|user|bot)?\s*(message|reply|replies|respond|responds|response|answer|"
    r"answers|says something|speaks)|send (a )?(message|reply)|tbd|todo|placeholder|n/?a|step \d+|"
    r"n\d+|node \w+|\.\.\.|…)?\W*$",
    re.IGNORECASE,
)
Kind = Literal["flowgraph", "conversation"]


class Node(Record):
    """One node: an agent action (flowgraph) or a message or API call (conversation graph)."""

    node_id: str = Field(description="Id, e.g. 'N1'.")
    node_type: str = Field(description="start_message/message/api/end_message, or agent/customer/api.")
    node_description: str = Field(description="The message, the step it comes from, or the API's name.")
    noise: bool = Field(default=False, description="Added by the noise generator (Section 3.6).")


class Edge(Record):
    """One edge: a customer reply or an API outcome (flowgraph); consecutive turns (conversation graph)."""

    edge_id: str = Field(description="Id, e.g. 'E1'.")
    edge: tuple[str, str] = Field(description="(source node_id, target node_id).")
    edge_description: str = Field(default="", description="Customer reply or API outcome; may be empty.")


class GraphBody(Record):
    """The nodes and edges of a graph, as a model returns them (prompts A.4 and A.5)."""

    nodes: list[Node] = Field(description="The graph's nodes.")
    edges: list[Edge] = Field(description="The graph's edges.")


class Graph(GraphBody):
    """A flowgraph or conversation graph of one procedure, with the rules it breaks."""

    kind: Kind = Field(description="flowgraph or conversation.")
    procedure: str = Field(description="Name of the procedure it encodes.")
    broken: list[str] = Field(default_factory=list, description="Rules it breaks; empty when valid.")

    @property
    def valid(self) -> bool:
        """True when no rule is broken: only valid graphs go on to the next stage."""
        return not self.broken

    def node(self, node_id: str) -> Node:
        """The node with this id."""
        return next(n for n in self.nodes if n.node_id == node_id)

    def digraph(self) -> nx.DiGraph:
        """The graph in networkx: node attributes `type` and `description`, edge attribute `description`."""
        g = nx.DiGraph()
        for n in self.nodes:
            g.add_node(n.node_id, type=n.node_type, description=n.node_description)
        for e in self.edges:
            if e.edge[0] in g and e.edge[1] in g:
                g.add_edge(*e.edge, id=e.edge_id, description=e.edge_description)
        return g

    def root(self) -> str | None:
        """The root node's id, when there is exactly one."""
        roots = [n for n, d in self.digraph().in_degree() if d == 0]
        return roots[0] if len(roots) == 1 else None


def _structure(body: GraphBody, types: tuple[str, ...], tools: set[str] | None) -> list[str]:
    """Rules both graphs share; the first ones found stop the rest (a graph with unknown ends is not
    worth walking)."""
    broken: list[str] = []
    ids = [n.node_id for n in body.nodes]
    for twice in sorted({i for i in ids if ids.count(i) > 1}):
        broken.append(f"node id {twice} is used twice")
    edge_ids = [e.edge_id for e in body.edges]
    for twice in sorted({i for i in edge_ids if edge_ids.count(i) > 1}):
        broken.append(f"edge id {twice} is used twice")
    known = set(ids)
    for e in body.edges:
        for end in e.edge:
            if end not in known:
                broken.append(f"edge {e.edge_id} points to unknown node {end}")
    for n in body.nodes:
        if n.node_type not in types:
            broken.append(f"node {n.node_id} has type '{n.node_type}', not one of {', '.join(types)}")
        elif n.node_type == "api" and tools is not None and n.node_description not in tools:
            broken.append(f"api node {n.node_id} calls unknown tool '{n.node_description}'")
    for n in body.nodes:
        if n.node_type != "api" and _VAGUE.match(n.node_description):
            said = n.node_description.strip()
            broken.append(f"node {n.node_id} says nothing concrete ('{said}'): write what is said")
    if not body.nodes:
        broken.append("the graph has no node")
    return broken


def _common(g: nx.DiGraph, body: GraphBody) -> tuple[list[str], str | None]:
    """Root, reachability, cycles and api outcomes; the root's id when there is exactly one."""
    broken: list[str] = []
    roots = sorted(n for n, d in g.in_degree() if d == 0)
    root = roots[0] if len(roots) == 1 else None
    if len(roots) != 1:
        broken.append(f"the graph needs exactly one root, found {len(roots)}: {', '.join(roots) or 'none'}")
    for cycle in list(nx.simple_cycles(g))[:3]:
        broken.append(f"cycle through {' -> '.join(cycle)}")
    if root is not None:
        unreachable = sorted(set(g) - nx.descendants(g, root) - {root})
        if unreachable:
            broken.append(f"not reachable from the root {root}: {', '.join(unreachable)}")
    for e in body.edges:
        if g.nodes.get(e.edge[0], {}).get("type") == "api" and not e.edge_description.strip():
            broken.append(f"edge {e.edge_id} out of api node {e.edge[0]} carries no API outcome")
    return broken, root


def check_flowgraph(body: GraphBody, tools: Iterable[str] | None = None) -> list[str]:
    """Every flowgraph rule the graph breaks (module docstring); empty when valid."""
    broken = _structure(body, FLOW_TYPES, set(tools) if tools is not None else None)
    if broken:
        return broken
    g = Graph(kind="flowgraph", procedure="", nodes=body.nodes, edges=body.edges).digraph()
    starts = [n.node_id for n in body.nodes if n.node_type == "start_message"]
    if len(starts) != 1:
        broken.append(f"the flowgraph needs exactly one start_message node, found {len(starts)}")
    common, root = _common(g, body)
    broken += common
    if root is not None and starts and root != starts[0]:
        broken.append(f"the root {root} is not the start_message node {starts[0]}")
    for n in sorted(g):
        if g.out_degree(n) == 0 and g.nodes[n]["type"] != "end_message":
            broken.append(f"leaf {n} is of type {g.nodes[n]['type']}, not end_message")
    return broken


def check_conversation_graph(body: GraphBody, tools: Iterable[str] | None = None) -> list[str]:
    """Every conversation-graph rule the graph breaks (module docstring); empty when valid."""
    broken = _structure(body, CONVERSATION_TYPES, set(tools) if tools is not None else None)
    if broken:
        return broken
    g = Graph(kind="conversation", procedure="", nodes=body.nodes, edges=body.edges).digraph()
    broken += _common(g, body)[0]
    for n in sorted(g):
        kind = g.nodes[n]["type"]
        if kind == "customer":
            for child in sorted(g.successors(n)):
                if g.nodes[child]["type"] not in ("agent", "api"):
                    broken.append(f"customer node {n} is followed by {g.nodes[child]['type']} node {child}")
        if g.out_degree(n) == 0 and kind != "agent":
            broken.append(f"leaf {n} is of type {kind}, not agent")
    return broken


def checked(kind: Kind, procedure: str, body: GraphBody, tools: Iterable[str] | None = None) -> Graph:
    """The graph with the rules it breaks listed."""
    check = check_flowgraph if kind == "flowgraph" else check_conversation_graph
    return Graph(
        kind=kind, procedure=procedure, nodes=body.nodes, edges=body.edges, broken=check(body, tools)
    )
