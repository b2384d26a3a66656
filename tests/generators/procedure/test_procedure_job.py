"""The procedure generation job and its CLI (issue 17, items 2-7 and 11), offline on the sample project."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.errors import UsageError
from evalcore.generators.procedure.job import (
    create_generation,
    execute_generation,
    generate,
    list_graphs,
)
from evalcore.generators.procedure.paths import coverage_walks
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations, list_tests
from evalcore.models import RunStatus, TurnRole
from evalcore.store import Store

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env

SAMPLE = Path(__file__).resolve().parents[3] / "data" / "sample"


@pytest.fixture
def sample(sqlite_store: Store, monkeypatch) -> tuple[Store, str]:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    return sqlite_store, import_project(sqlite_store, SAMPLE).project_id


def test_offline_generation_stores_graphs_conversations_and_tests(sample) -> None:
    store, pid = sample
    outcome = generate(store, pid, paths=4, seed=1)
    assert outcome.run.status == RunStatus.finished and (outcome.done, outcome.total) == (5, 5)
    graphs = list_graphs(store, pid, outcome.run.id)
    assert sorted(g.procedure for g in graphs) == sorted(p.name for p in store.procedures(pid))
    assert all(g.flowgraph.valid and g.conversation_graph.valid and len(g.paths) == 4 for g in graphs)
    conversations = [v.conversation for v in list_conversations(store, pid, generator="procedure")]
    assert len(conversations) == 20
    assert all(c.provenance.is_offline and c.provenance.run_id == outcome.run.id for c in conversations)
    roles = {t.role for c in conversations for t in c.turns}
    assert {TurnRole.tool_call, TurnRole.tool_result} <= roles
    tests = list_tests(store, pid)
    expected = sum(
        1
        for c in conversations
        for a, b in zip(c.turns, c.turns[1:], strict=False)
        if a.role in (TurnRole.user, TurnRole.tool_result)
        and b.role in (TurnRole.assistant, TurnRole.tool_call)
    )
    assert len(tests) == expected > 0
    # resuming a finished run works nothing twice
    again = execute_generation(store, outcome.run.id)
    assert again.done == 5 and len(list_tests(store, pid)) == expected


def test_unknown_procedure_is_refused(sample) -> None:
    store, pid = sample
    with pytest.raises(Exception, match="no procedure"):
        create_generation(store, pid, procedures=["fly_to_mars"])


def test_the_walk_is_a_run_parameter_weighted_by_default(sample) -> None:
    store, pid = sample
    assert create_generation(store, pid, paths=2).params["walk"] == "weighted"
    outcome = generate(store, pid, paths=3, walk="coverage", seed=2)
    assert outcome.run.params["walk"] == "coverage"
    graph = list_graphs(store, pid, outcome.run.id)[0]
    assert graph.paths == coverage_walks(graph.noisy_graph, 3, 2)
    with pytest.raises(UsageError, match="unknown walk 'zigzag' \\(choose one of: weighted, coverage\\)"):
        create_generation(store, pid, walk="zigzag")
    refused = CliRunner().invoke(app, ["procedures", "generate", "--walk", "zigzag", "--db", store.url])
    assert refused.exit_code == 2
    assert refused.output.strip() == "error: unknown walk 'zigzag' (choose one of: weighted, coverage)"


def test_cli_generate_graphs_paths_tests(sample, tmp_path: Path) -> None:
    store, _ = sample
    runner = CliRunner()
    db = ["--db", store.url]
    result = runner.invoke(app, ["procedures", "generate", "--paths", "2", *db])
    assert result.exit_code == 0, result.output
    run_id = result.output.strip().splitlines()[-1]
    assert run_id.startswith("run-")
    graphs = runner.invoke(app, ["procedures", "graphs", "--run", run_id, *db])
    assert graphs.exit_code == 0 and "flowgraph: 10 nodes, 11 edges, valid" in graphs.output
    paths = runner.invoke(app, ["procedures", "paths", *db])
    assert paths.exit_code == 0 and "edge coverage" in paths.output
    out = tmp_path / "tests.jsonl"
    tests = runner.invoke(app, ["procedures", "tests", "--out", str(out), *db])
    assert tests.exit_code == 0, tests.output
    assert len(out.read_text().splitlines()) == int(tests.output.split()[0]) > 0


def _last_user(body: dict) -> str:
    messages = body.get("messages") or []
    content = messages[-1].get("content", "") if messages else ""
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


BROKEN_GRAPH = {
    "nodes": [
        {"node_id": "N1", "node_type": "start_message", "node_description": "Ask for the order."},
        {"node_id": "N2", "node_type": "start_message", "node_description": "Ask again."},
        {"node_id": "N3", "node_type": "api", "node_description": "lookup_order"},
    ],
    "edges": [{"edge_id": "E1", "edge": ["N1", "N3"], "edge_description": "Gives it"}],
}


def test_model_replies_that_are_not_valid_graphs_are_kept_with_the_reason(
    sqlite_store: Store, llm_env
) -> None:
    import json

    pid = import_project(sqlite_store, SAMPLE).project_id

    def responder(api: str, body: dict) -> str:
        text = _last_user(body)
        if '"name": "track_order"' in text or "track_order" in text:
            return json.dumps(BROKEN_GRAPH)
        return "I would rather describe the procedure in prose."

    llm_env.responder = responder
    outcome = generate(
        sqlite_store, pid, procedures=["book_repair", "track_order"], model="openai/gpt-4o-mini", paths=2
    )
    assert outcome.run.status == RunStatus.finished and outcome.failed == []
    graphs = {g.procedure: g for g in list_graphs(sqlite_store, pid, outcome.run.id)}
    prose = graphs["book_repair"].flowgraph
    assert not prose.valid and prose.broken[0].startswith("the model's reply is not a valid graph")
    broken = graphs["track_order"].flowgraph
    assert "the flowgraph needs exactly one start_message node, found 2" in broken.broken
    assert "leaf N3 is of type api, not end_message" in broken.broken
    assert all(g.conversation_graph is None and not g.conversations for g in graphs.values())
    assert list_conversations(sqlite_store, pid, generator="procedure") == []


def test_cli_score_prints_table2_side_by_side_and_failing_tests(sample) -> None:
    store, _ = sample
    runner = CliRunner()
    db = ["--db", store.url]
    assert runner.invoke(app, ["procedures", "generate", "--paths", "2", *db]).exit_code == 0
    result = runner.invoke(app, ["procedures", "score", "--failing", "null", *db])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.output.splitlines() if line.split()}
    assert rows["oracle"].count("100.0") == 7
    null = rows["null"].split()
    assert null[1] == "100.0" and null[5] == "0.0"  # reply recall 100, API recall 0
    assert "null:" in result.output and "failing test(s)" in result.output
    bad = runner.invoke(app, ["procedures", "score", "--agents", "gpt", *db])
    assert bad.exit_code != 0 and "unknown agent(s) gpt" in bad.output


def test_a_spent_budget_stops_the_run_before_a_unit(sqlite_store: Store, llm_env) -> None:
    pid = import_project(sqlite_store, SAMPLE).project_id
    run = create_generation(
        sqlite_store, pid, procedures=["track_order"], model="openai/gpt-4o-mini", budget={"usd": 0.0}
    )
    outcome = execute_generation(sqlite_store, run.id)
    assert outcome.done == 0 and outcome.run.status != RunStatus.finished
    assert list_graphs(sqlite_store, pid, run.id) == []


GIFT_WRAP = {
    "name": "gift_wrap",
    "intent": "wrap a gift",
    "description": "Gift-wrap an order.",
    "steps": [
        {"kind": "message", "text": "Ask for the order number and the gift message."},
        {
            "kind": "api",
            "api": "wrap_gift",
            "text": "Wrap the order's items.",
            "outcomes": {"wrapped": "Say it is wrapped.", "too_large": "Say it is too large to wrap."},
        },
    ],
}
WRAP_API = {
    "name": "wrap_gift",
    "description": "Gift-wraps the items of an order with a message.",
    "parameters": {
        "type": "object",
        "properties": {"order_number": {"type": "string"}, "gift_message": {"type": "string"}},
        "required": ["order_number", "gift_message"],
    },
    "returns": {
        "type": "object",
        "properties": {"result": {"type": "string", "enum": ["wrapped", "too_large"]}},
    },
}


def test_an_api_a_generated_procedure_needs_is_generated_and_marked(
    sqlite_store: Store, llm_env, monkeypatch
):
    import json

    from evalcore.generators.procedure.apis import generated_names, known_tools

    pid = import_project(sqlite_store, SAMPLE).project_id
    replies = {"Intents": {"intents": ["wrap a gift"]}, "ProcedureDraft": GIFT_WRAP, "GeneratedApi": WRAP_API}
    llm_env.responder = lambda api, body: json.dumps(replies[body["response_format"]["json_schema"]["name"]])
    run = create_generation(
        sqlite_store, pid, procedures=["track_order"], intents=1, model="openai/gpt-4o-mini", paths=2
    )
    assert [t["name"] for t in run.params["generated_tools"]] == ["wrap_gift"]
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")  # the graphs and conversations offline
    execute_generation(sqlite_store, run.id)
    graphs = {g.procedure: g for g in list_graphs(sqlite_store, pid, run.id)}
    wrap = graphs["generated_gift_wrap"]
    assert wrap.generated_apis == ["wrap_gift"] and graphs["track_order"].generated_apis == []
    assert wrap.flowgraph.valid and wrap.conversations, wrap.flowgraph.broken
    calls = [
        t
        for v in list_conversations(sqlite_store, pid, generator="procedure")
        if v.conversation.id in wrap.conversations
        for t in v.conversation.turns
        if t.role == TurnRole.tool_call
    ]
    assert calls and all(set(t.arguments) == {"order_number", "gift_message"} for t in calls)
    assert "wrap_gift" not in {t.name for t in sqlite_store.tools(pid)}  # never among the project's tools
    assert "wrap_gift" in {t.name for t in known_tools(sqlite_store, pid)}
    assert generated_names(sqlite_store, pid) == {"wrap_gift"}
    shown = CliRunner().invoke(app, ["procedures", "graphs", "--run", run.id, "--db", sqlite_store.url])
    assert "generated APIs (not the project's): wrap_gift" in shown.output, shown.output


def test_offline_generated_api_takes_the_details_asked_before_and_the_outcomes() -> None:
    from evalcore.generators.procedure.apis import GENERATE_API, api_inputs, as_tool, missing_apis
    from evalcore.models import Procedure

    procedure = Procedure.model_validate(GIFT_WRAP)
    [step] = missing_apis(procedure, {"lookup_order"})
    api = GENERATE_API.run_offline(api_inputs(procedure, step), 0)
    tool = as_tool(api, "wrap_gift")
    assert tool is not None and tool.parameters["required"] == ["order_number", "gift_message"]
    assert tool.returns["properties"]["result"]["enum"] == ["too_large", "wrapped"]
    assert as_tool(api, "another_name") is None  # a reply defining another API is not taken
    assert missing_apis(procedure, {"wrap_gift"}) == []


def test_a_model_writes_a_procedure_with_the_policy_passages_retrieved_for_its_intent(
    sqlite_store: Store, llm_env
):
    import json

    retail = Path(__file__).resolve().parents[3] / "data" / "retail"
    pid = import_project(sqlite_store, retail).project_id
    replies = {
        "Intents": {"intents": ["cancel an order that was not packed"]},
        "ProcedureDraft": GIFT_WRAP,
        "GeneratedApi": WRAP_API,
    }
    llm_env.responder = lambda api, body: json.dumps(replies[body["response_format"]["json_schema"]["name"]])
    create_generation(sqlite_store, pid, intents=1, model="openai/gpt-4o-mini", paths=1)
    asked = [
        c.body for c in llm_env.calls if c.body["response_format"]["json_schema"]["name"] == "ProcedureDraft"
    ]
    prompt = asked[0]["messages"][-1]["content"]
    passages = prompt.split("Policy passages about it:")[1].split("APIs:")[0]
    # the order-states page says which status allows cancel_order, the refusals page when to refuse
    assert "`cancel_order` only if the status is pending" in passages and "- 02-order-states:" in passages
    assert "Refuse to cancel or change an order that is packed" in passages
