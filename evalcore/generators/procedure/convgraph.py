"""Conversation graph from a flowgraph (seed 001, Section 3.5, prompt A.5; issue 17, item 3).

The LLM task `generate_conversation_graph` is one-shot as A.5 (an example flowgraph and its conversation
graph are in the prompt). Its offline implementation converts the flowgraph mechanically:

- the conversation opens with a customer node stating the intent, followed by the start_message;
- every message, start_message and end_message node becomes an agent node, every api node an api node;
- an edge out of an agent action is the customer's reply, so it becomes a customer node between the two
  (a customer node is then always followed by an agent or api node);
- an edge out of an api node stays an edge, with the API outcome as its description.

Leaves stay end_messages, i.e. agent nodes, so a valid flowgraph gives a valid conversation graph.
"""

from __future__ import annotations

import random
from typing import Any

from evalcore.generators.procedure.graphs import Edge, Graph, GraphBody, Node, checked
from evalcore.llm.tasks import Task


def convert_flowgraph(flowgraph: GraphBody, intent: str) -> GraphBody:
    """The conversation graph of a flowgraph (module docstring)."""
    nodes: list[Node] = []
    edges: list[Edge] = []
    ids: dict[str, str] = {}

    def node(kind: str, description: str) -> str:
        node_id = f"N{len(nodes) + 1}"
        nodes.append(Node(node_id=node_id, node_type=kind, node_description=description))
        return node_id

    def edge(source: str, target: str, description: str = "") -> None:
        edges.append(Edge(edge_id=f"E{len(edges) + 1}", edge=(source, target), edge_description=description))

    opening = node("customer", f"Customer wants to {intent}")
    kinds = {n.node_id: n.node_type for n in flowgraph.nodes}
    for n in flowgraph.nodes:
        ids[n.node_id] = node("api" if n.node_type == "api" else "agent", n.node_description)
    for n in flowgraph.nodes:
        if n.node_type == "start_message":
            edge(opening, ids[n.node_id])
    for e in flowgraph.edges:
        source, target = e.edge
        if kinds.get(source) == "api":
            edge(ids[source], ids[target], e.edge_description)
        else:
            reply = node("customer", e.edge_description or "Customer replies")
            edge(ids[source], reply)
            edge(reply, ids[target])
    return GraphBody(nodes=nodes, edges=edges)


def _offline(inputs: dict[str, Any], rng: random.Random) -> GraphBody:
    return convert_flowgraph(GraphBody.model_validate(inputs["flowgraph"]), inputs["intent"])


GENERATE_CONVERSATION_GRAPH = Task(
    "generate_conversation_graph",
    GraphBody,
    _offline,
    prompt="generate_conversation_graph.md",
    max_tokens=6000,
)


def build_conversation_graph(procedure: str, body: GraphBody, tools: list[str]) -> Graph:
    """The conversation graph with its broken rules listed."""
    return checked("conversation", procedure, body, tools)
