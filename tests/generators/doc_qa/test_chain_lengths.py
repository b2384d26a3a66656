"""The chain lengths the Conversations page offers by default (evalcore.generators.doc_qa.chain_lengths)."""

from __future__ import annotations

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.generators.doc_qa.chain_lengths import FALLBACK, GRAPH_DEFAULT, allowed_lengths
from evalcore.inputs import import_project
from evalcore.specs.generation import generate_specs
from evalcore.specs.store_ops import list_specs


def test_lengths_follow_the_chain_mode_and_a_project_without_specs_gets_the_fallback(sqlite_store):
    pid = import_project(sqlite_store, SAMPLE_PROJECT).project_id
    assert allowed_lengths(sqlite_store, pid) == list(GRAPH_DEFAULT), "through the graph: the walk-through's"
    assert allowed_lengths(sqlite_store, pid, chains="spec") == [FALLBACK], "no spec yet: no error either"
    generate_specs(sqlite_store, pid, m=6)
    kinds = {d.id: d.kind.value for d in sqlite_store.documents(pid)}
    expected = set()
    for spec in list_specs(sqlite_store, pid):
        own = [d for d in spec.spec.documents if kinds.get(d) in ("text", "table")]
        expected.add(len(own or [d for d in spec.spec.documents if kinds.get(d) == "policy"]))
    assert allowed_lengths(sqlite_store, pid, "all", chains="spec") == sorted(expected - {0}) != []
