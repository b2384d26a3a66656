"""A generated conversation checked against the path it was written from (seed 001, Section 3.8; issue
26, item 3): a model writes the conversation of a sampled path, and may stray from it. The check reads
three things the path fixes: a turn per node (a message per agent or customer node, a call per API node),
the tools called and their order, and each call's outcome (the `result` of its output is the label of the
path's edge out of that API node). A conversation that strays is kept out of the tests with its reasons
(the job's `problems`), never cut into tests silently.
"""

from __future__ import annotations

import json

from evalcore.generators.procedure.graphs import Graph

_ROLE = {"agent": "assistant", "customer": "user", "api": "tool_call"}


def _outcome(content: str) -> str | None:
    """The `result` field of a tool output, or None when it has none (a tool without outcomes)."""
    try:
        output = json.loads(content or "null")
    except json.JSONDecodeError:
        return None
    value = output.get("result") if isinstance(output, dict) else None
    return value if isinstance(value, str) else None


def path_problems(turns: list, graph: Graph, path: list[str]) -> list[str]:
    """How the turns stray from the path (empty when they follow it)."""
    g = graph.digraph()
    wanted = [_ROLE.get(g.nodes[n]["type"], "?") for n in path if n in g]
    written = [t.role for t in turns if t.role != "tool_result"]
    problems = []
    if written != wanted:
        problems.append(f"{len(written)} turns for the path's {len(wanted)} nodes, or not in its order")
    apis = [(n, g.nodes[n]["description"]) for n in path if n in g and g.nodes[n]["type"] == "api"]
    calls = [t for t in turns if t.role == "tool_call"]
    if [t.tool_name for t in calls] != [name for _, name in apis]:
        shown = ", ".join(str(t.tool_name) for t in calls) or "none"
        problems.append(f"calls {shown}; the path calls {', '.join(n for _, n in apis) or 'none'}")
        return problems
    results = [t for t in turns if t.role == "tool_result"]
    for (node, name), result in zip(apis, results, strict=False):
        after = path[path.index(node) + 1] if path.index(node) + 1 < len(path) else None
        label = g.edges[node, after].get("description") if after and g.has_edge(node, after) else None
        got = _outcome(result.content)
        if label and got is not None and got != label:
            problems.append(f"{name} answered '{got}' where the path takes '{label}'")
    return problems
