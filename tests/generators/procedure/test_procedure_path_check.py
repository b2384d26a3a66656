"""A generated conversation checked against its sampled path (seed 001, Section 3.8; issue 26, item 3):
offline ones follow their paths; one that skips a node, calls another tool or reports another outcome
is refused with its reason, and the job keeps its tests out."""

from __future__ import annotations

import json
from pathlib import Path

from evalcore.generators.procedure.job import generate, list_graphs
from evalcore.generators.procedure.path_check import path_problems
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.store import Store

RETAIL = Path(__file__).resolve().parents[3] / "data" / "retail"


def test_a_conversation_that_strays_from_its_path_is_refused_with_the_reason(
    sqlite_store: Store, monkeypatch
):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, RETAIL).project_id
    run = generate(sqlite_store, pid, paths=4, seed=0).run
    graphs = {g.procedure: g.noisy_graph for g in list_graphs(sqlite_store, pid, run.id)}
    conversations = [v.conversation for v in list_conversations(sqlite_store, pid, generator="procedure")]
    for c in conversations:  # the offline writer follows every path
        assert path_problems(c.turns, graphs[c.metadata["procedure"]], c.metadata["path"]) == []
    c = next(c for c in conversations if sum(t.role == "tool_call" for t in c.turns) >= 2)
    graph, path = graphs[c.metadata["procedure"]], c.metadata["path"]

    skipped = [t for t in c.turns if t is not next(t for t in c.turns if t.role == "user")]
    assert "turns for the path's" in path_problems(skipped, graph, path)[0]

    call = next(t for t in c.turns if t.role == "tool_call")
    other = [t.model_copy(update={"tool_name": "search_products"}) if t is call else t for t in c.turns]
    assert any("the path calls" in p for p in path_problems(other, graph, path))

    result = next(t for t in c.turns if t.role == "tool_result")
    outcome = json.loads(result.content)["result"]
    changed = {**json.loads(result.content), "result": "not_a_path_outcome"}
    turns = [t.model_copy(update={"content": json.dumps(changed)}) if t is result else t for t in c.turns]
    assert f"answered 'not_a_path_outcome' where the path takes '{outcome}'" in " ".join(
        path_problems(turns, graph, path)
    )
