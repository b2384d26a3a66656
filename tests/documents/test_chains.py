"""Document chains by DFS, their sampling, and the per-spec helper (evalcore.documents.chains)."""

from __future__ import annotations

import networkx as nx
import pytest

from evalcore.documents.chains import Chain, chains_for, chains_for_spec, count_chains
from evalcore.documents.graph import build_graph
from evalcore.inputs import load_project


def known_graph() -> nx.Graph:
    """a - b - c - d with a chord b - d; node kinds and bridges as build_graph sets them."""
    graph = nx.Graph()
    for node, kind in {"a": "text", "b": "policy", "c": "table", "d": "table"}.items():
        graph.add_node(node, kind=kind, title=node.upper())
    for u, v, kind in [
        ("a", "b", "text"),
        ("b", "c", "cross_modal"),
        ("c", "d", "table"),
        ("b", "d", "cross_modal"),
    ]:
        graph.add_edge(u, v, kind=kind, bridges=[f"{u}{v}-entity"])
    return graph


def ids(chains: list[Chain]) -> set[tuple[str, ...]]:
    return {chain.doc_ids for chain in chains}


@pytest.fixture(scope="module")
def sample_graph() -> nx.Graph:
    bundle = load_project("data/sample")
    return build_graph(bundle.documents, ignore=[bundle.card.chatbot_info.business])


def test_dfs_finds_exactly_the_chains_of_a_small_graph():
    graph = known_graph()
    assert ids(chains_for(graph, 1)) == {("a",), ("b",), ("c",), ("d",)}
    assert ids(chains_for(graph, 2)) == {("a", "b"), ("b", "c"), ("b", "d"), ("c", "d")}
    assert ids(chains_for(graph, 3)) == {
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("c", "b", "d"),
        ("b", "c", "d"),
        ("b", "d", "c"),
    }
    assert ids(chains_for(graph, 4)) == {("a", "b", "c", "d"), ("a", "b", "d", "c")}
    assert chains_for(graph, 5) == [] and chains_for(graph, 0) == []
    assert [count_chains(graph, d) for d in range(1, 6)] == [4, 4, 5, 2, 0]


def test_chains_carry_bridges_and_edge_kinds_in_order():
    (chain,) = [c for c in chains_for(known_graph(), 3) if c.doc_ids == ("a", "b", "c")]
    assert chain.bridges == [["ab-entity"], ["bc-entity"]]
    assert chain.edge_kinds == ("text", "cross_modal")
    assert chain.length == 3


def test_start_nodes_orient_chains_from_them():
    graph = known_graph()
    assert ids(chains_for(graph, 3, start_nodes=["d"])) == {("d", "b", "a"), ("d", "b", "c"), ("d", "c", "b")}
    # both ends are start nodes: kept once, from the better-ranked one
    assert ids(chains_for(graph, 2, start_nodes=["c", "b"])) == {
        ("c", "b"),
        ("c", "d"),
        ("b", "a"),
        ("b", "d"),
    }
    assert chains_for(graph, 2, start_nodes=["missing"]) == []


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_chain_and_its_reverse_count_once_and_match_networkx(seed):
    graph = nx.gnp_random_graph(9, 0.45, seed=seed)
    graph = nx.relabel_nodes(graph, {n: f"n{n}" for n in graph})
    for d in (2, 3, 4):
        found = ids(chains_for(graph, d, max_chains=10**6))
        assert not any(tuple(reversed(chain)) in found for chain in found)
        expected = set()
        for source in graph:
            for target in graph:
                for path in nx.all_simple_paths(graph, source, target, cutoff=d - 1):
                    if len(path) == d:
                        expected.add(min(tuple(path), tuple(reversed(path))))
        assert found == expected


def test_cap_and_sampling_are_deterministic_per_seed(sample_graph):
    first = chains_for(sample_graph, 4, max_chains=50, seed=7)
    assert len(first) == 50 and len(ids(first)) == 50
    assert chains_for(sample_graph, 4, max_chains=50, seed=7) == first
    assert ids(chains_for(sample_graph, 4, max_chains=50, seed=8)) != ids(first)
    shuffled = nx.Graph()  # the sample depends on the graph, not on the order nodes were added
    shuffled.add_nodes_from(reversed(list(sample_graph.nodes(data=True))))
    shuffled.add_edges_from(reversed(list(sample_graph.edges(data=True))))
    assert chains_for(shuffled, 4, max_chains=50, seed=7) == first
    for chain in first:
        assert all(
            sample_graph.has_edge(u, v) for u, v in zip(chain.doc_ids, chain.doc_ids[1:], strict=False)
        )


def test_sampling_prefers_chains_that_mix_kinds(sample_graph):
    def kinds(doc_ids):
        return len({sample_graph.nodes[i]["kind"] for i in doc_ids})

    everything = chains_for(sample_graph, 3, max_chains=10**6)
    sample = chains_for(sample_graph, 3, max_chains=100, seed=3)
    share_all = sum(kinds(c.doc_ids) == 3 for c in everything) / len(everything)
    share_sample = sum(kinds(c.doc_ids) == 3 for c in sample) / len(sample)
    assert share_sample > share_all


def test_sample_project_chain_counts(sample_graph):
    counts = {d: count_chains(sample_graph, d) for d in range(2, 6)}
    print("\nsample chains by length:", counts)
    assert counts[2] == sample_graph.number_of_edges()
    assert counts[2] < counts[3] < counts[4] < counts[5]
    assert len(chains_for(sample_graph, 5)) == 2000  # capped


def test_spec_chains_start_from_the_top_documents(sample_graph):
    ranked = [
        "ebike-battery-care-guide",
        "warranty-policy",
        "warranty-terms",
        "products",
        "return-policy",
        "repair-services",
    ]
    result = chains_for_spec(sample_graph, ranked, 5, top=2, n=10)
    assert result.reason == "" and result.used == 5 and result.requested == 5
    assert len(result.chains) == 10
    assert all(c.doc_ids[0] in ranked[:2] and set(c.doc_ids) <= set(ranked) for c in result.chains)
    assert chains_for_spec(sample_graph, ranked, 5, top=2, n=10) == result


def test_spec_chains_fall_back_to_the_longest_available_with_a_reason():
    graph = nx.path_graph(["a", "b", "c"])
    result = chains_for_spec(graph, ["b", "c", "a", "zzz"], 5, top=1)
    assert result.used == 3 and result.requested == 5
    assert ids(result.chains) == {("a", "b", "c")}  # includes the top document b, though not at an end
    assert "no chain of length 5" in result.reason and result.reason.endswith("used 3")
    short = chains_for_spec(graph, ["a", "b", "c"], 3, top=1)
    assert short.reason == "" and ids(short.chains) == {("a", "b", "c")}
    outside = chains_for_spec(known_graph(), ["a", "d"], 3, top=1)  # a and d are not adjacent
    assert outside.used == 1 and ids(outside.chains) == {("a",)}
    assert chains_for_spec(known_graph(), ["a", "d"], 3, top=1, restrict=False).used == 3
    missing = chains_for_spec(graph, ["nope"], 5)
    assert missing.chains == [] and missing.used == 0 and "none of the spec's documents" in missing.reason


def test_scan_budget_is_reported(sample_graph):
    result = chains_for_spec(sample_graph, list(sample_graph.nodes), 5, max_scan=100, max_chains=20)
    assert result.used == 5 and len(result.chains) == 20
    assert "scan stopped after 100 chains" in result.reason
