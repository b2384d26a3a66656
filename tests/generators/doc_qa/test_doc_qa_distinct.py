"""Questions distinct across a whole doc-QA run (issue 33): a step whose question the run already asked is
made on a fact no conversation was given; a conversation repeats only when its documents hold nothing new,
and the job then leaves it out with a warning (fewer conversations, never near-copies)."""

from __future__ import annotations

import random

import pytest

from evalcore.documents.naming import code_names
from evalcore.generators.doc_qa.generate import conversation_inputs, qa_pairs
from evalcore.generators.doc_qa.job import generate_conversations
from evalcore.generators.doc_qa.offline import _key, _Writer
from evalcore.generators.doc_qa.schema import is_cannot_answer
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.specs.generation import generate_specs
from evalcore.specs.selecting import select_specs
from evalcore.specs.store_ops import list_specs
from evalcore.store import Store


def _key_of(text: str) -> str:
    return text.strip().lower()  # as benchmarks/content.py counts distinct questions


@pytest.mark.parametrize("corpus", ["data/water", "data/library"])
def test_a_run_at_the_readme_settings_asks_no_question_twice(sqlite_store, corpus):
    """The README's walk-through settings on a small corpus: before, 0.85 (water) and 0.88 (library) of
    the questions were distinct; now all are, and what could only repeat is left out with a warning."""
    project_id = import_project(sqlite_store, corpus).project_id
    generate_specs(sqlite_store, project_id, m=60)
    select_specs(sqlite_store, project_id, k=30)
    outcome = generate_conversations(
        sqlite_store, project_id, specs="selected", per_spec=6, d=[2, 3, 4], dense=False
    )
    conversations = [v.conversation for v in list_conversations(sqlite_store, project_id)]
    questions = [_key_of(q.content) for c in conversations for q, _ in qa_pairs(c)]
    assert len(set(questions)) == len(questions)
    assert len(conversations) == outcome.total - outcome.left_out >= 0.6 * outcome.total
    warnings = [w for w in sqlite_store.run(outcome.run.id).warnings if "left out" in w]
    assert len(warnings) == outcome.left_out
    # a conversation is left out only for what it would have asked again
    assert all("already asked" in w for w in warnings)


def _writer(store, project_id, spec, doc_ids, asked, answered, variant=0):
    docs = {d.id: d for d in store.documents(project_id)}
    inputs = conversation_inputs("desc", spec, [docs[i] for i in doc_ids], [[]], [], 7, variant, [])
    inputs["asked_run"], inputs["answered"] = list(asked), list(answered)
    return _Writer(inputs, random.Random(variant))


def test_a_conversation_repeats_a_question_only_when_its_documents_hold_no_fact_left(sqlite_store):
    """Conversations on one document, each told what the ones before asked and answered: they ask new
    questions on facts not given before while the document has any; a repeat comes only after that."""
    project_id = import_project(sqlite_store, "data/sample").project_id
    generate_specs(sqlite_store, project_id, m=1, from_card=False)
    spec = list_specs(sqlite_store, project_id)[0].spec
    asked: list[str] = []
    answered: list[str] = []
    repeated_at = None
    for n in range(12):
        writer = _writer(sqlite_store, project_id, spec, ["rental-policy"], asked, answered, n)
        pairs = writer.write(7).turns
        new = [t.question for t in pairs if _key(t.question) not in {_key(q) for q in asked}]
        if writer.repeats:
            # nothing of the document was left that the run had not given
            assert not writer.unused(0), [f.text for f in writer.unused(0)]
            repeated_at = repeated_at if repeated_at is not None else n
        else:
            assert len(new) == len(pairs)
        lookups = [t for t in pairs if t.query_type == "SINGLE-DOC" and not is_cannot_answer(t.answer)]
        if repeated_at is None:
            # a lookup made to differ asks a fact no conversation was given, not one in other words
            assert len({t.answer for t in lookups} & set(answered)) <= 1  # the opening may reuse one
        asked += [t.question for t in pairs]
        answered += [t.answer for t in pairs]
    assert repeated_at is not None and repeated_at >= 2  # the document runs out, but not at once


def test_a_filler_whose_pre_filler_was_replaced_names_its_entity(sqlite_store):
    """When the PRE-FILLER that names the bridge had to become another lookup, the next question names
    the entity itself rather than 'that store' pointing at nothing."""
    project_id = import_project(sqlite_store, "data/sample").project_id
    generate_specs(sqlite_store, project_id, m=1, from_card=False)
    spec = list_specs(sqlite_store, project_id)[0].spec
    docs = sqlite_store.documents(project_id)
    by_id = {d.id: d for d in docs}
    names = code_names(docs, [])
    chain = [by_id["stores"], by_id["inventory"]]
    inputs = conversation_inputs("desc", spec, chain, [["RC-02"]], [], 7, 0, [], names)
    plain = _Writer(dict(inputs), random.Random(0)).write(7).turns
    assert [t.query_type for t in plain][1:3] == ["PRE-FILLER", "FILLER"]
    writer = _Writer(dict(inputs), random.Random(0))
    made = writer.step
    # No fact gives a PRE-FILLER the run has not asked: the step falls back to a plain lookup.
    writer.step = lambda step, first: None if step.type == "PRE-FILLER" else made(step, first)
    turns = writer.write(7).turns
    assert "PRE-FILLER" not in [t.query_type for t in turns]
    second = turns[2]
    assert second.query_type == "SINGLE-DOC" and "Harbor Point" in second.question, second.question
    assert "that store" not in second.question


def test_the_first_question_is_on_the_subject_when_the_specs_document_comes_later_in_the_chain(sqlite_store):
    """A chain through the graph may hold the spec's document second (`chains_for_spec` takes chains that
    include it when none starts at it): the first question is still about the spec's subject."""
    project_id = import_project(sqlite_store, "data/sample").project_id
    generate_specs(sqlite_store, project_id, m=1, from_card=False)
    spec = list_specs(sqlite_store, project_id)[0].spec
    docs = sqlite_store.documents(project_id)
    by_id = {d.id: d for d in docs}
    chain = [by_id["tyres-and-tubeless-faq"], by_id["stores"]]
    assert "harbor point" not in by_id["tyres-and-tubeless-faq"].text.lower()
    inputs = conversation_inputs(
        "desc", spec, chain, [[]], [], 7, 0, [], code_names(docs, []), subject=["Harbor Point"]
    )
    first = _Writer(inputs, random.Random(0)).write(7).turns[0]
    assert "Harbor Point" in first.question and first.document_ids == ["stores"], first


def test_the_same_project_and_settings_give_the_same_conversations(tmp_path):
    """Offline, units are made one at a time in plan order: two stores of one project generate the same
    questions at the README's settings, conversation for conversation (threads behind a lock took turns
    in any order, and each conversation is told what the ones before it asked: one walk kept 106
    conversations, the next 109)."""
    made = []
    for name in ("first", "second"):
        store = Store(f"sqlite:///{tmp_path / name}.db")
        try:
            project_id = import_project(store, "data/water").project_id
            generate_specs(store, project_id, m=60)
            select_specs(store, project_id, k=30)
            generate_conversations(store, project_id, specs="selected", per_spec=6, d=[2, 3, 4], dense=False)
            made.append(
                sorted(
                    [q.content for q, _ in qa_pairs(v.conversation)]
                    for v in list_conversations(store, project_id)
                )
            )
        finally:
            store.close()
    assert made[0] == made[1] and len(made[0]) > 10
