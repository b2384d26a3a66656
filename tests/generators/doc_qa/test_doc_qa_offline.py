"""Offline doc-QA generation on the sample project: the seed's rules, and answers really grounded."""

from __future__ import annotations

import itertools
import re

import pytest

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.documents.entities import canonical_name
from evalcore.documents.facts import key_columns, plain, source_grounded
from evalcore.documents.retrieval import build_index
from evalcore.generators.doc_qa.generate import (
    GENERATE_CONVERSATION,
    conversation_inputs,
    document_input,
    qa_pairs,
)
from evalcore.generators.doc_qa.job import generate_conversations
from evalcore.generators.doc_qa.offline import plan_turns
from evalcore.generators.doc_qa.rules import grounded_share, rule_problems
from evalcore.generators.doc_qa.schema import QUERY_TYPES, is_cannot_answer
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.specs.generation import generate_specs
from evalcore.specs.store_ops import list_specs


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The sample project with 8 offline specs and 3 offline conversations per spec (default d and L)."""
    from evalcore.store import Store

    store = Store(f"sqlite:///{tmp_path_factory.mktemp('docqa') / 'store.db'}")
    project_id = import_project(store, SAMPLE_PROJECT).project_id
    generate_specs(store, project_id, m=8, from_card=False)
    outcome = generate_conversations(store, project_id, specs="all", per_spec=3, leave_spec=True)
    yield store, project_id, outcome
    store.close()


def _context(store, project_id, conversation):
    docs = {d.id: d for d in store.documents(project_id)}
    ids = conversation.metadata["chain"]["documents"] + conversation.metadata["policies"]
    return {i: document_input(docs[i]) for i in ids}


@pytest.mark.parametrize(("d", "pairs"), [(5, 7), (1, 4), (2, 2), (3, 3), (5, 12), (4, 20)])
def test_the_plan_follows_the_seed_rules(d, pairs):
    plan = plan_turns(d, pairs)
    assert len(plan) == pairs
    assert plan[-1].type == "SYNTHESIS" and plan[-1].docs == tuple(range(d))
    assert sum(step.type == "CANNOT" for step in plan) == 1
    for before, after in itertools.pairwise(plan):
        if before.type == "PRE-FILLER":  # a bridge is crossed right away, from one document to the next
            assert after.type == "FILLER" and after.docs[0] == before.docs[0] + 1
    if d >= 2 and pairs >= 5:
        assert {"SINGLE-DOC", "PRE-FILLER", "FILLER", "MULTI-DOC"} <= {s.type for s in plan}


def test_a_conversation_needs_room_for_cannotanswer_and_synthesis():
    with pytest.raises(ValueError, match="at least 2"):
        plan_turns(3, 1)


def test_every_conversation_follows_the_rules(generated):
    store, project_id, outcome = generated
    assert outcome.total == 3 * len(list_specs(store, project_id)) >= 24
    # A conversation that could only repeat the run's questions is left out (issue 33); rarely, here.
    assert outcome.added == outcome.total - outcome.left_out and outcome.left_out <= outcome.total // 8
    assert not outcome.failed and outcome.stopped is None
    for view in list_conversations(store, project_id):
        conversation = view.conversation
        chain = conversation.metadata["chain"]["documents"]
        assert len(chain) == 5 and conversation.metadata["n_documents"] == 5
        pairs = qa_pairs(conversation)
        assert len(pairs) == 7
        assert [t.role.value for t in conversation.turns] == ["user", "assistant"] * 7
        assert all(q.query_type in QUERY_TYPES for q, _ in pairs)
        assert any(is_cannot_answer(a.content) for _, a in pairs)
        last_q, last_a = pairs[-1]
        assert last_q.query_type == "SYNTHESIS" and set(chain) <= set(last_a.grounding)
        for k, (question, answer) in enumerate(pairs):
            assert (
                question.grounding == answer.grounding and question.bridging_entity == answer.bridging_entity
            )
            if question.query_type == "FILLER":  # refers to the entity the previous answer named
                assert question.bridging_entity
                assert canonical_name(question.bridging_entity) not in canonical_name(question.content)
                assert canonical_name(question.bridging_entity) in canonical_name(pairs[k - 1][1].content)
        assert rule_problems(conversation, chain, _context(store, project_id, conversation), 7) == []


def test_every_offline_answer_is_grounded_in_its_documents(generated):
    store, project_id, _ = generated
    docs = {d.id: document_input(d) for d in store.documents(project_id)}
    good = total = 0
    for view in list_conversations(store, project_id):
        conversation = view.conversation
        ok, n = grounded_share(conversation, docs)
        good, total = good + ok, total + n
        for _, answer in qa_pairs(conversation):
            if is_cannot_answer(answer.content):
                assert answer.grounding == []
                continue
            sources = answer.metadata["sources"]
            assert {s["document_id"] for s in sources} == set(answer.grounding)
            for source in sources:
                doc = docs[source["document_id"]]
                assert source_grounded(source, doc, answer.content)
                if "sentence" in source:  # an actual sentence of the document, quoted whole
                    assert plain(source["sentence"]) in plain(doc["text"])
                else:  # actual cells of the table: the row holds exactly these values
                    row = doc["rows"][source["row"]]
                    assert all(row[col] == value for col, value in source["cells"])
            # The answer says nothing beyond its sources: its document sentences, and one sentence per
            # cited table value that carries it ("The Westbrook Station store (RC-04) has 2 of ...").
            rest = plain(answer.content)
            for source in sources:
                if "sentence" in source:
                    rest = rest.replace(plain(source["sentence"]), "")
            marks = {}  # cited cell value -> what it is, marked longest first ("RC-01,RC-02" before "RC-01")
            for source in (s for s in sources if s.get("cells")):
                doc = docs[source["document_id"]]
                key = key_columns(doc["columns"], doc["rows"])
                for column, value in source["cells"]:  # a value cited as a value somewhere counts as one
                    if column in key:
                        marks.setdefault(plain(value), "\u00a7key")
                    else:
                        marks[plain(value)] = "\u00a7value"
            for value in sorted(marks, key=len, reverse=True):
                rest = re.sub(re.escape(value), marks[value], rest, flags=re.IGNORECASE)
            for part in re.split(r"(?<=\.)\s+", rest.strip()):
                assert not part or "\u00a7value" in part, (part, answer.content)
    assert total > 100 and good == total  # 100% on the sample project


def test_a_bm25_bot_over_the_documents_finds_the_single_doc_answers(generated):
    store, project_id, _ = generated
    index = build_index(store.documents(project_id))
    found = asked = 0
    for view in list_conversations(store, project_id):
        for question, answer in qa_pairs(view.conversation):
            if question.query_type == "SINGLE-DOC" and not is_cannot_answer(answer.content):
                asked += 1
                top = [h.passage.id for h in index.retrieve(question.content, k=3)]
                found += answer.metadata["sources"][0]["passage_id"] in top
    # Questions are a customer's now, without the document title BM25 used to match on (issue 13): a
    # lexical bot finds the source of more than half of them in its top 3 (0.58 when this was written).
    assert asked >= 8 and found / asked >= 0.5


def test_the_offline_generator_is_deterministic_and_varies_by_conversation(generated):
    store, project_id, _ = generated
    docs = store.documents(project_id)
    spec = list_specs(store, project_id)[0].spec
    chain = [d for d in docs if d.id in ("stores", "rental-policy", "about-us-and-stores")]
    inputs = conversation_inputs(
        "desc", spec, chain, [["RC-01"], ["Alder Creek"]], [], 5, 0, ["Ridgeline Cycles"]
    )
    first = GENERATE_CONVERSATION.run_offline(inputs, seed=1)
    assert first == GENERATE_CONVERSATION.run_offline(inputs, seed=1)
    variants = {
        tuple(t.answer for t in GENERATE_CONVERSATION.run_offline({**inputs, "variant": v}, seed=1).turns)
        for v in range(5)
    }
    assert len(variants) >= 3  # the n conversations on one chain are not copies of each other
