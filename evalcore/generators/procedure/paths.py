"""Path sampling by weighted random walks (seed 001, Section 3.7, Algorithm 1; issue 17, item 5).

Algorithm 1: a weight vector w starts at ones; each path starts at the root and repeatedly appends a
child of its last node, chosen with probability proportional to 1 / w[child], where w[child] is the
number of times the child was visited plus one; the path ends at a leaf. Visits count across the n
paths, so later walks prefer what earlier ones missed. `uniform_walks` is the vanilla random walk the
seed improves on (every child equally likely), kept as the baseline for the coverage figure.
"""

from __future__ import annotations

import random
from itertools import pairwise

import networkx as nx

from evalcore.generators.procedure.graphs import Graph


def _walks(graph: Graph, n: int, seed: int, weighted: bool) -> list[list[str]]:
    g = graph.digraph()
    root = graph.root()
    if root is None or not nx.is_directed_acyclic_graph(g):
        raise ValueError(f"{graph.procedure}: paths need one root and no cycle (check the graph first)")
    rng = random.Random(seed)
    w = dict.fromkeys(g, 1)  # line 3: weights initialised with ones
    paths = []
    for _ in range(n):
        path = [root]
        w[root] += 1
        while children := sorted(g.successors(path[-1])):  # lines 11-13: stop at a leaf
            probs = [1.0 / w[c] if weighted else 1.0 for c in children]  # line 9
            child = rng.choices(children, weights=probs)[0]
            w[child] += 1
            path.append(child)
        paths.append(path)
    return paths


def weighted_walks(graph: Graph, n: int, seed: int = 0) -> list[list[str]]:
    """n root-to-leaf paths by Algorithm 1 (node ids in order)."""
    return _walks(graph, n, seed, weighted=True)


def uniform_walks(graph: Graph, n: int, seed: int = 0) -> list[list[str]]:
    """n root-to-leaf paths by vanilla random walks (every child equally likely)."""
    return _walks(graph, n, seed, weighted=False)


def edge_coverage(graph: Graph, paths: list[list[str]]) -> float:
    """Share of the graph's edges that some path traverses."""
    total = {tuple(e.edge) for e in graph.edges}
    seen = {(a, b) for path in paths for a, b in pairwise(path)}
    return len(seen & total) / len(total) if total else 1.0


def has_branches(graph: Graph) -> bool:
    """Whether some node has more than one child (else every walk is the same path)."""
    return any(d > 1 for _, d in graph.digraph().out_degree())
