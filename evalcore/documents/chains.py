"""Document chains: simple paths of d documents through the document graph (seed 000, Algorithm 2, line 15).

`chains_for` runs a depth-first search from every node (or from the given start nodes) and collects every
simple path of exactly d documents, as the seed does. Rules:

- deduplication: a path and its reverse are one chain. Without start nodes the kept orientation starts at
  the smaller document id; with start nodes a chain starts at a start node, and when both ends are start
  nodes, at the better-ranked one;
- cap and sampling: when there are more than `max_chains`, a weighted random sample without replacement
  is kept (Efraimidis-Spirakis A-Res: key = ln(u) / w). `u` is a hash of the seed and the chain's document
  ids, so the sample depends only on the graph, the seed and the weights, never on enumeration order. The
  default weight is the number of distinct document kinds in the chain (1-3): chains that mix text, policy
  and table documents are preferred, since crossing modalities is the point of the unified graph. Chains
  come back in sample order (highest key first), so taking the first n gives a weighted sample of n;
- a scan budget (`max_scan` paths) bounds the work on dense graphs; beyond it the search stops and a
  warning is logged (the per-spec helper says so in its reason).

`chains_for_spec` picks chains for one spec from its ranked retrieved documents and never raises: when no
chain of length d exists it returns the longest available, with a reason the caller can show.
"""

from __future__ import annotations

import hashlib
import heapq
import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import networkx as nx

log = logging.getLogger(__name__)

Weight = Callable[[tuple[str, ...]], float]


@dataclass(frozen=True)
class Chain:
    """Documents in order; `bridges[i]` are the entities joining `doc_ids[i]` and `doc_ids[i + 1]`."""

    doc_ids: tuple[str, ...]
    bridges: list[list[str]]
    edge_kinds: tuple[str, ...] = ()

    def __hash__(self) -> int:
        return hash(self.doc_ids)

    @property
    def length(self) -> int:
        """Number of documents in the chain (the seed's d)."""
        return len(self.doc_ids)


@dataclass(frozen=True)
class SpecChains:
    """Chains chosen for one spec; `reason` is empty when chains of the requested length were found."""

    chains: list[Chain]
    requested: int
    used: int
    reason: str = ""


def _uniform(seed: int, doc_ids: tuple[str, ...]) -> float:
    text = "\x1f".join((str(seed), *doc_ids))
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") + 0.5) / 2.0**64


def kind_mix(graph: nx.Graph) -> Weight:
    """The default weight: how many distinct document kinds (text, policy, table) the chain visits."""
    return lambda ids: float(len({graph.nodes[i].get("kind") for i in ids}))


def _sample(
    graph: nx.Graph,
    d: int,
    start_nodes: Sequence[str] | None,
    must_include: set[str] | None,
    max_chains: int,
    seed: int,
    weight: Weight,
    max_scan: int,
) -> tuple[list[tuple[str, ...]], bool]:
    """(sampled paths best key first, whether the scan budget was hit)."""
    names = sorted(graph.nodes, key=str)
    index = {node: i for i, node in enumerate(names)}
    adjacency = [sorted(index[m] for m in graph.neighbors(node)) for node in names]
    rank = {index[s]: r for r, s in enumerate(dict.fromkeys(start_nodes or ())) if s in index}
    starts = sorted(rank, key=rank.__getitem__) if start_nodes is not None else range(len(names))
    required = {index[n] for n in must_include or () if n in index}
    heap: list[tuple[float, tuple[str, ...]]] = []
    scanned = 0

    def keep(path: list[int]) -> bool:
        first, last = path[0], path[-1]
        if d > 1 and start_nodes is None and first > last:
            return False  # the reverse orientation is the canonical one
        if d > 1 and start_nodes is not None and last in rank and rank[last] < rank[first]:
            return False
        return not required or any(i in required for i in path)

    def visit(path: list[int], on_path: set[int]) -> bool:
        nonlocal scanned
        if len(path) == d:
            if keep(path):
                scanned += 1
                ids = tuple(str(names[i]) for i in path)
                key = math.log(_uniform(seed, ids)) / max(weight(ids), 1e-9)
                if len(heap) < max_chains:
                    heapq.heappush(heap, (key, ids))
                elif key > heap[0][0]:
                    heapq.heapreplace(heap, (key, ids))
            return scanned < max_scan
        for nxt in adjacency[path[-1]]:
            if nxt not in on_path:
                path.append(nxt)
                on_path.add(nxt)
                going = visit(path, on_path)
                path.pop()
                on_path.discard(nxt)
                if not going:
                    return False
        return True

    complete = True
    for start in starts:
        if not visit([start], {start}):
            complete = False
            log.warning("chain scan stopped after %d chains of length %d (max_scan)", scanned, d)
            break
    return [ids for _, ids in sorted(heap, key=lambda item: (-item[0], item[1]))], not complete


def _chain(graph: nx.Graph, ids: tuple[str, ...]) -> Chain:
    edges = [graph.edges[a, b] for a, b in pairwise(ids)]
    return Chain(ids, [list(e.get("bridges", [])) for e in edges], tuple(str(e.get("kind")) for e in edges))


def chains_for(
    graph: nx.Graph,
    d: int,
    start_nodes: Sequence[str] | None = None,
    max_chains: int = 2000,
    seed: int = 0,
    *,
    weight: Weight | None = None,
    max_scan: int = 1_000_000,
) -> list[Chain]:
    """Simple paths of exactly `d` documents, deduplicated, at most `max_chains` (sampled by `seed`).

    With `start_nodes` (ranked, best first) only chains starting at one of them are returned; nodes not in
    the graph are ignored. `weight` maps a chain's document ids to its sampling weight (default:
    `kind_mix`). See the module docstring for the orientation and sampling rules.
    """
    if d < 1 or max_chains < 1:
        return []
    paths, _ = _sample(graph, d, start_nodes, None, max_chains, seed, weight or kind_mix(graph), max_scan)
    return [_chain(graph, ids) for ids in paths]


def count_chains(graph: nx.Graph, d: int, start_nodes: Sequence[str] | None = None) -> int:
    """How many deduplicated chains of length d exist (exhaustive, so exponential in d: for reports)."""
    if d < 1:
        return 0
    counter = [0]

    def weight(ids: tuple[str, ...]) -> float:
        counter[0] += 1
        return 1.0

    _sample(graph, d, start_nodes, None, 1, 0, weight, max_scan=10**12)
    return counter[0]


def chains_for_spec(
    graph: nx.Graph,
    ranked_doc_ids: Iterable[str],
    d: int,
    *,
    top: int = 3,
    n: int | None = None,
    restrict: bool = True,
    max_chains: int = 2000,
    seed: int = 0,
    max_scan: int = 1_000_000,
) -> SpecChains:
    """Chains of length `d` for one spec, from the documents retrieved for it (best first); never raises.

    With `restrict`, chains stay within the retrieved documents, as in the seed (the graph over D_t).
    Chains start at one of the `top` best documents; if none of length L does, chains that include one
    are taken; if none of length d exist at all, L drops until some do, and `reason` says so. The sampling
    weight favours chains through better-ranked documents and mixing kinds:
    kinds * (1 + sum of 1 / (1 + rank) over the chain's documents). `n` caps how many are returned.
    """
    ranked = [doc for doc in dict.fromkeys(ranked_doc_ids) if doc in graph]
    if not ranked:
        return SpecChains([], d, 0, "none of the spec's documents is in the document graph")
    scope = graph.subgraph(ranked) if restrict else graph
    starts = ranked[: max(1, top)]
    position = {doc: r for r, doc in enumerate(ranked)}
    mix = kind_mix(scope)

    def weight(ids: tuple[str, ...]) -> float:
        return mix(ids) * (1 + sum(1 / (1 + position[i]) for i in ids if i in position))

    notes: list[str] = []
    if d < 1:
        notes.append(f"chain length {d} is below 1")
    for length in range(min(max(d, 1), scope.number_of_nodes()), 0, -1):
        for start_nodes, include in ((starts, None), (None, set(starts))):
            paths, cut = _sample(scope, length, start_nodes, include, max_chains, seed, weight, max_scan)
            if paths:
                chains = [_chain(scope, ids) for ids in paths][:n]
                if cut:
                    notes.append(f"scan stopped after {max_scan} chains")
                if length != d:
                    where = f"within its {scope.number_of_nodes()} retrieved documents" if restrict else ""
                    notes.insert(0, f"no chain of length {d} through {', '.join(starts)} {where}".strip())
                    notes.append(f"used {length}")
                return SpecChains(chains, d, length, "; ".join(notes))
    return SpecChains([], d, 0, "; ".join([*notes, "no chain found"]))
