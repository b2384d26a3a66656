"""Doc-QA conversations that test their spec (issue 13): chains through the spec's own documents, policies
as graph nodes when they are the knowledge, a note when a chain leaves the spec's documents."""

import random
import shutil
from pathlib import Path

from evalcore.documents.naming import code_names
from evalcore.generators.doc_qa.generate import qa_pairs
from evalcore.generators.doc_qa.job import generate_conversations
from evalcore.generators.doc_qa.schema import is_cannot_answer
from evalcore.generators.doc_qa.specs import system_description
from evalcore.generators.doc_qa.subject import spec_subject
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.specs.generation import generate_specs
from evalcore.specs.store_ops import list_specs


def _answered(conversation):
    return [a for _, a in qa_pairs(conversation) if not is_cannot_answer(a.content)]


def test_chains_run_through_the_graph_from_the_specs_own_documents(sqlite_store):
    """The default (seed 000, Algorithm 2, spec-first): a chain starts at one of its spec's documents
    and reaches d documents through the graph; its answers stay within the spec's documents and chain;
    the first question names the spec's subject; no question repeats across the run (a conversation
    that could only repeat one is left out, with a warning)."""
    project_id = import_project(sqlite_store, "data/sample").project_id
    generate_specs(sqlite_store, project_id, m=12, from_card=False)
    outcome = generate_conversations(sqlite_store, project_id, specs="all", per_spec=2, d=3, dense=False)
    specs = {v.spec.id: v.spec for v in list_specs(sqlite_store, project_id)}
    conversations = [v.conversation for v in list_conversations(sqlite_store, project_id)]
    assert len(conversations) == outcome.total - outcome.left_out > 0.8 * outcome.total
    # Where the graph allows (no note on the chain), every chain has d documents; a spec whose document
    # has no neighbour gets a shorter chain and a note.
    allowed = [c for c in conversations if not c.metadata["chain"]["note"]]
    assert len(allowed) >= len(conversations) / 3
    assert all(c.metadata["chain"]["length"] == 3 for c in allowed)
    assert all(c.metadata["chain"]["length"] < 3 for c in conversations if c.metadata["chain"]["note"])
    names = code_names(sqlite_store.documents(project_id), system_description(sqlite_store, project_id)[1])
    first_on_subject = 0
    for conversation in conversations:
        spec = specs[conversation.spec_id]
        chain = conversation.metadata["chain"]["documents"]
        assert chain[0] in spec.documents
        assert all(set(a.grounding) <= set(spec.documents) | set(chain) for a in _answered(conversation))
        subject = spec_subject(spec.scenario, names, system_description(sqlite_store, project_id)[1])
        first_on_subject += subject.said_in(qa_pairs(conversation)[0][0].content)
    assert first_on_subject >= 0.8 * len(conversations)
    questions = [q.content.strip().casefold() for c in conversations for q, _ in qa_pairs(c)]
    assert len(set(questions)) == len(questions)


def test_conversations_stay_in_their_specs_documents(sqlite_store):
    project_id = import_project(sqlite_store, "data/sample").project_id
    generate_specs(sqlite_store, project_id, m=12, from_card=False)
    outcome = generate_conversations(
        sqlite_store, project_id, specs="all", per_spec=1, dense=False, chains="spec"
    )
    specs = {v.spec.id: v.spec for v in list_specs(sqlite_store, project_id)}
    conversations = [v.conversation for v in list_conversations(sqlite_store, project_id)]
    assert len(conversations) == outcome.total > 0
    for conversation in conversations:
        own = set(specs[conversation.spec_id].documents)
        assert set(conversation.metadata["chain"]["documents"]) <= own
        assert not conversation.metadata["chain"]["left_spec_documents"]
        assert all(set(a.grounding) <= own for a in _answered(conversation))


def test_leaving_the_specs_documents_is_said_per_spec(sqlite_store):
    project_id = import_project(sqlite_store, "data/sample").project_id
    generate_specs(sqlite_store, project_id, m=6, from_card=False)
    outcome = generate_conversations(
        sqlite_store, project_id, specs="all", per_spec=1, d=3, dense=False, leave_spec=True, chains="spec"
    )
    left = [v.conversation for v in list_conversations(sqlite_store, project_id)
            if v.conversation.metadata["chain"]["left_spec_documents"]]  # fmt: skip
    assert left
    for conversation in left:
        assert any(conversation.spec_id in m and " leave " in m for m in outcome.messages)


def test_a_policy_only_knowledge_base_gives_chains_through_its_policies(sqlite_store, tmp_path):
    folder = tmp_path / "faq"
    (folder / "policies").mkdir(parents=True)
    for name in ("return_policy.md", "rental_policy.md", "warranty_policy.md"):
        shutil.copy(Path("data/sample/policies") / name, folder / "policies")
    (folder / "system.yaml").write_text(
        "id: faq\nchatbot_info:\n  name: Help\n  description: Answers questions from the policies.\n"
    )
    project_id = import_project(sqlite_store, folder).project_id
    generate_specs(sqlite_store, project_id, m=6)
    outcome = generate_conversations(sqlite_store, project_id, specs="all", per_spec=1, d=2, dense=False)
    conversations = [v.conversation for v in list_conversations(sqlite_store, project_id)]
    assert conversations and outcome.added == outcome.total
    assert any("policies took part as graph nodes" in m for m in outcome.messages)
    policies = {d.id for d in sqlite_store.documents(project_id)}
    for conversation in conversations:
        assert set(conversation.metadata["chain"]["documents"]) <= policies
        assert _answered(conversation)


def test_offline_verification_fails_a_conversation_that_does_not_test_its_spec():
    from evalcore.generators.doc_qa.verify_offline import offline_check

    turns = [
        {"question": "Which stores open on Sunday?", "answer": "Harbor Point opens on Sunday.",
         "query_type": "SINGLE-DOC", "bridging_entity": None},
        {"question": "And what does it sell?", "answer": "Helmets and locks.", "query_type": "FILLER",
         "bridging_entity": "Westbrook Station"},
    ]  # fmt: skip
    inputs = {"probe": "Restocking fee for an opened spare battery", "probe_given": "a customer opened it",
              "probe_when": "the customer asks to return the battery", "conversation": turns,
              "probe_then": "the assistant should mention the 15% restocking fee"}  # fmt: skip
    check = offline_check(inputs, random.Random(0))
    assert not check.adheres and not check.coherent and check.score < 1
    assert any("spec's vocabulary" in p for p in check.problems)


def test_a_corpus_too_small_for_the_conversations_asked_is_said_per_spec(sqlite_store, tmp_path):
    folder = tmp_path / "faq"
    (folder / "policies").mkdir(parents=True)
    shutil.copy(Path("data/sample/policies/price_match_policy.md"), folder / "policies")
    (folder / "system.yaml").write_text(
        "id: faq\nchatbot_info:\n  name: Help\n  description: Answers questions from the policies.\n"
    )
    project_id = import_project(sqlite_store, folder).project_id
    generate_specs(sqlite_store, project_id, m=2, from_card=False)
    few = generate_conversations(sqlite_store, project_id, specs="all", per_spec=1, d=1, turns=3, dense=False)
    assert not any("repeat facts" in m for m in few.messages)
    many = generate_conversations(sqlite_store, project_id, specs="all", per_spec=12, d=1, dense=False)
    assert any("repeat facts" in m for m in many.messages)


def test_a_spec_citing_no_document_is_skipped_with_a_message(sqlite_store):
    from evalcore.specs.drafts import SpecDraft
    from evalcore.specs.store_ops import add_human_spec

    project_id = import_project(sqlite_store, "data/sample").project_id
    draft = SpecDraft(scenario="Reply in the customer's language", given="A customer who wrote in French",
                      when="they ask anything", then="the assistant should reply in French",
                      category="card behaviour")  # fmt: skip
    spec_id = add_human_spec(sqlite_store, project_id, draft, "analyst")
    outcome = generate_conversations(sqlite_store, project_id, specs=[spec_id], per_spec=2, dense=False)
    assert outcome.total == 0 and not list_conversations(sqlite_store, project_id)
    assert any(spec_id in m and "cites no document" in m and "skipped" in m for m in outcome.messages)


def test_specs_over_one_document_are_given_different_facts(sqlite_store):
    project_id = import_project(sqlite_store, "data/sample").project_id
    generate_specs(sqlite_store, project_id, m=3, batch=3, from_card=False)  # three rental-policy specs
    specs = list_specs(sqlite_store, project_id)
    assert {tuple(v.spec.documents) for v in specs} == {("rental-policy",)}
    # Within the spec's one document (through the graph, chains reach other documents' facts too).
    outcome = generate_conversations(
        sqlite_store, project_id, specs="all", per_spec=3, dense=False, chains="spec"
    )
    units = outcome.run.params["plan"]["units"]
    fresh = [set(u["fresh"]) for u in units]
    # 31 facts, 6 a conversation: the first five conversations, over three specs, share none.
    assert all(not fresh[i] & fresh[j] for i in range(5) for j in range(i + 1, 5))
    # ...and a spec's later conversation with no fact left to give is not planned, and said so.
    assert len(units) < 9
    assert any("conversations planned" in m for m in outcome.messages)
