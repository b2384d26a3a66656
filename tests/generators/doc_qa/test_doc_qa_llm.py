"""The doc-QA job through real SDKs against the local fake model server: calls, caching, kept items."""

from __future__ import annotations

import hashlib
import json

from llm_server import _requested_schema, example_for

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.generators.doc_qa.generate import qa_pairs
from evalcore.generators.doc_qa.job import generate_conversations
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.models import DocumentKind, Tier
from evalcore.specs.generation import generate_specs

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env

MODEL = "openai/gpt-4o-mini"
JUDGE = "anthropic/claude-judge-test"


def distinct_replies(api: str, body: dict) -> str:
    """Schema-minimal replies, except that each generated conversation differs (one pair naming a digest
    of its request), as a model's would: then every correction and check has its own inputs too."""
    schema = _requested_schema(api, body) or {}
    value = example_for(schema)
    if schema.get("title") == "QAConversation":
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]
        value = {"turns": [{"question": f"q {digest}?", "answer": f"a {digest}", "document_ids": [],
                            "query_type": "SINGLE-DOC"}]}  # fmt: skip
    return json.dumps(value)


def _project(store) -> str:
    project_id = import_project(store, SAMPLE_PROJECT).project_id
    generate_specs(store, project_id, m=1, batch=1, from_card=False)  # offline specs: no model call
    return project_id


def test_model_calls_for_n_conversations_then_none_on_a_rerun(sqlite_store, llm_env):
    store = sqlite_store
    project_id = _project(store)
    prose = [d for d in store.documents(project_id) if d.kind == DocumentKind.text]
    llm_env.responder = distinct_replies
    params = {"specs": "all", "per_spec": 3, "model": MODEL, "judge": JUDGE, "dense": False}
    first = generate_conversations(store, project_id, **params)
    # entity extraction once per prose document (policies too when they are the spec's graph nodes),
    # then per conversation: generation, correction, check
    if first.run.params["plan"]["graph"]["policy_nodes"]:
        prose += [d for d in store.documents(project_id) if d.kind == DocumentKind.policy]
    assert len(llm_env.completed()) == len(prose) + 3 * 3
    assert len(llm_env.completed("anthropic")) == 3  # the judge is another model than the generator
    calls = len(llm_env.calls)
    again = generate_conversations(store, project_id, **params)  # a new run with the same parameters
    resumed = generate_conversations(store, project_id, first.run.id)  # the finished run again
    assert len(llm_env.calls) == calls, "a re-run is served from the cache"
    assert again.added == 3 and resumed.added == 0 and resumed.skipped == 3
    for view in list_conversations(store, project_id):
        conversation = view.conversation
        assert conversation.provenance.producer == MODEL and not conversation.provenance.is_offline
        assert conversation.metadata["judge_model"] == JUDGE
        # The fake server's minimal replies break the rules: kept, unreviewed, with the reasons.
        assert conversation.tier == Tier.unreviewed and conversation.metadata["judge_passed"] is False
        assert conversation.metadata["verification"]["reasons"]


def test_a_model_conversation_is_stored_turn_by_turn_with_its_checks(sqlite_store, llm_env, monkeypatch):
    monkeypatch.setenv("EVALCORE_LLM_CONCURRENCY", "1")  # replies are served in call order
    store = sqlite_store
    project_id = _project(store)
    prose = [d for d in store.documents(project_id) if d.kind == DocumentKind.text]
    pairs = [
        {"question": "Which store has no workshop?", "answer": "Westbrook Station has no workshop.",
         "document_ids": ["about-us-and-stores"], "query_type": "PRE-FILLER",
         "bridging_entity": "Westbrook Station"},
        {"question": "What does it sell?", "answer": "CANNOTANSWER", "document_ids": [],
         "query_type": "FILLER"},
        {"question": "Summing up?", "answer": "Westbrook Station has no workshop.",
         "document_ids": ["about-us-and-stores"], "query_type": "SYNTHESIS"},
    ]  # fmt: skip
    replies = ['{"entities": []}'] * len(prose) + [json.dumps({"turns": pairs})]
    replies.append(json.dumps({"turns": [{"pair": i, "verdict": "supported", "answer": p["answer"]}
                                         for i, p in enumerate(pairs)]}))  # fmt: skip
    replies.append(json.dumps({"adheres": True, "coherent": True, "score": 0.9, "problems": []}))
    llm_env.enqueue(*replies)
    # The offline spec is about a policy: leave_spec draws the chain from the text documents retrieval
    # finds (no policy graph, so the queued replies meet the calls in order).
    generate_conversations(store, project_id, specs="all", per_spec=1, turns=3, model=MODEL, judge=JUDGE,
                           dense=False, leave_spec=True)  # fmt: skip
    (view,) = list_conversations(store, project_id)
    conversation = view.conversation
    stored = qa_pairs(conversation)
    assert [q.content for q, _ in stored] == [p["question"] for p in pairs]
    assert [a.content for _, a in stored] == [p["answer"] for p in pairs]
    assert [q.query_type for q, _ in stored] == ["PRE-FILLER", "FILLER", "SYNTHESIS"]
    assert stored[0][0].bridging_entity == "Westbrook Station" and stored[0][1].grounding == [
        "about-us-and-stores"
    ]
    verification = conversation.metadata["verification"]
    assert verification["adherence"]["score"] == 0.9 and verification["correction"]["checked"] == 3
    # The judge passed it, but the deterministic rules did not (a FILLER without a bridge, a synthesis
    # missing chain documents): it stays unreviewed, with every reason recorded.
    problems = verification["rules"]["problems"]
    assert any("FILLER question without a bridging entity" in p for p in problems)
    assert any("does not use every chain document" in p for p in problems)
    assert conversation.metadata["judge_passed"] is False and conversation.tier == Tier.unreviewed
