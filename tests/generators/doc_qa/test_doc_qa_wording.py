"""Offline doc-QA wording (issue 13): questions a customer would ask, answers that read as one, a
SYNTHESIS about one entity; measured on the sample project as benchmarks/content.py measures it."""

from __future__ import annotations

import random
import re

import pytest

from evalcore.documents.entities import canonical_name
from evalcore.documents.facts import document_facts, source_grounded
from evalcore.documents.naming import code_names
from evalcore.documents.wording import (
    cells_answer,
    cells_question,
    measure,
    sentence_question,
    topic_question,
)
from evalcore.generators.doc_qa.generate import conversation_inputs, document_input, qa_pairs
from evalcore.generators.doc_qa.job import generate_conversations
from evalcore.generators.doc_qa.offline import _Writer
from evalcore.generators.doc_qa.schema import is_cannot_answer
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.specs.generation import generate_specs
from evalcore.specs.selecting import select_specs
from evalcore.specs.store_ops import list_specs

ID_LIKE = re.compile(r"\b[A-Z][A-Z0-9]*-[A-Z0-9][A-Z0-9-]*\b")  # as benchmarks/content.py counts leaks


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The sample project: 60 offline specs, 15 selected, 4 conversations each (the benchmark's setup
    before issue 33 made chains through the graph the default)."""
    from evalcore.store import Store

    store = Store(f"sqlite:///{tmp_path_factory.mktemp('wording') / 'store.db'}")
    project_id = import_project(store, "data/sample").project_id
    generate_specs(store, project_id, m=60)
    select_specs(store, project_id, k=15)
    # Chains within the spec's documents (the option `chains="spec"`): the wording was tuned on them.
    generate_conversations(store, project_id, specs="selected", per_spec=4, dense=False, chains="spec")
    yield store, project_id
    store.close()


def test_codes_are_named_as_customers_know_them(sample):
    store, project_id = sample
    names = code_names(store.documents(project_id), ["Ridgeline Cycles", "Ridgeline Assist"])
    assert names["RC-HYB-300"] == "the Ridgeline Commuter 300"
    assert names["RC-04"] == "the Westbrook Station store"  # the business's own name dropped, its noun added
    assert names["SVC-BASIC"] == "the Basic tune-up"  # the bracketed details dropped


def test_an_inventory_row_is_asked_by_product_and_store_names(sample):
    store, project_id = sample
    docs = {d.id: d for d in store.documents(project_id)}
    spec = list_specs(store, project_id)[0].spec
    names = code_names(list(docs.values()), ["Ridgeline Cycles"])
    inputs = conversation_inputs("desc", spec, [docs["inventory"]], [], [], 4, 0, [], names)
    writer = _Writer(inputs, random.Random(0))
    inventory = document_input(docs["inventory"])
    fact = next(
        f for f in document_facts(inventory) if f.cells[:2] == (("store_id", "RC-04"), ("sku", "RC-HYB-300"))
    )
    question = writer.ask(fact)
    assert "Ridgeline Commuter 300" in question and "Westbrook Station store" in question
    assert "stock" in question and not ID_LIKE.search(question), question


def test_an_inventory_row_is_answered_as_a_sentence_naming_store_and_product(sample):
    store, project_id = sample
    docs = {d.id: d for d in store.documents(project_id)}
    spec = list_specs(store, project_id)[0].spec
    names = code_names(list(docs.values()), ["Ridgeline Cycles"])
    inputs = conversation_inputs("desc", spec, [docs["inventory"]], [], [], 4, 0, [], names)
    writer = _Writer(inputs, random.Random(0))
    inventory = document_input(docs["inventory"])
    fact = next(
        f for f in document_facts(inventory) if f.cells[:2] == (("store_id", "RC-04"), ("sku", "RC-HYB-300"))
    )
    answer = writer.answer(fact)
    # The customer's names, the count, and the codes (in brackets) the grounding check traces to the row.
    assert (
        answer
        == "The Westbrook Station store (RC-04) has 2 of the Ridgeline Commuter 300 (RC-HYB-300) in stock."
    )
    assert source_grounded(fact.source(), inventory, answer)


def test_table_answers_are_sentences_that_name_things_as_customers_do(sample):
    store, project_id = sample
    docs = {d.id: document_input(d) for d in store.documents(project_id)}
    names = code_names(store.documents(project_id), ["Ridgeline Cycles", "Ridgeline Assist"])
    checked = 0
    for view in list_conversations(store, project_id):
        for _, answer in qa_pairs(view.conversation):
            for source in answer.metadata.get("sources") or []:
                if not source.get("cells"):
                    continue
                checked += 1
                doc = docs[source["document_id"]]
                assert source_grounded(source, doc, answer.content)  # every cited value is in the answer
                # No "Inventory: for store id RC-04 and sku ..., in stock is 2." template.
                assert not answer.content.startswith(f"{doc['title']}:"), answer.content
                assert not re.search(r"\bfor \w+(?: \w+)? [A-Z]+-[A-Z0-9-]+,", answer.content), answer.content
                for _, value in source["cells"]:  # a named code is said by its name too
                    if value in names:
                        assert names[value].removeprefix("the ") in answer.content, answer.content
    assert checked >= 50


def test_a_table_cell_is_answered_by_what_its_column_means():
    assert cells_answer(
        "the Commuter 300 (RC-HYB-300)", "the Westbrook Station store (RC-04)", "in_stock", "2"
    ) == ("The Westbrook Station store (RC-04) has 2 of the Commuter 300 (RC-HYB-300) in stock.")
    assert (
        cells_answer("the Ridge E-MTB 29", None, "price_usd", "1,299.00")
        == "The Ridge E-MTB 29 costs $1,299.00."
    )
    assert cells_answer("the Metro E8", "the Alder Creek store", "deposit_usd", "300") == (
        "The deposit for the Metro E8 at the Alder Creek store is $300."
    )
    assert cells_answer("the Metro E8", "the Alder Creek store", "units", "6") == (
        "The Alder Creek store has 6 units of the Metro E8."
    )
    assert cells_answer("the Pine Hollow store", None, "has_workshop", "no") == (
        "No, the Pine Hollow store does not have a workshop."
    )
    assert (
        cells_answer("the Alder Creek store", None, "rents_ebikes", "yes")
        == "Yes, the Alder Creek store rents ebikes."
    )
    assert (
        cells_answer("the Basic tune-up", None, "duration_hours", "1.5")
        == "The Basic tune-up takes 1.5 hours."
    )
    assert cells_answer("the warranty for kids bikes (WB-KIDS)", None, "covers", "Frame") == (
        "The warranty for kids bikes (WB-KIDS) covers Frame."
    )
    assert cells_answer("the Alder Creek store", None, "opening_hours", "Sun 10:00-17:00") == (
        "The opening hours of the Alder Creek store are Sun 10:00-17:00."
    )
    assert cells_answer("the Basic tune-up", None, "available_at", "RC-01,RC-02") == (
        "The Basic tune-up is available at RC-01,RC-02."
    )
    assert cells_answer("the Commuter 300", None, "frame_sizes", "S,M,L") == (
        "The frame sizes of the Commuter 300 are S,M,L."
    )


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("An opened spare battery can be returned within 30 days with a 15% restocking fee.",
         {"Can an opened spare battery be returned?",
          "Is it possible for an opened spare battery to be returned?"}),
        ("Kids bikes require an adult renter.",
         {"What do kids bikes require?", "What exactly do kids bikes require?"}),
        ("Spare batteries cost $699 (500Wh) and $849 (625Wh).",
         {"How much do spare batteries cost?", "What's the cost of spare batteries?"}),
        ("E-bike motor and battery claims are assessed at Alder Creek or Harbor Point only.",
         {"Where are e-bike motor and battery claims assessed?"}),
        ("Report a lost parcel if it has not arrived 14 days after the expected delivery date.", {None}),
        # a plural noun that looks like a verb ("charges"), then the real verb
        ("Taxes and airport charges are refunded on request for unused tickets.",
         {"How are taxes and airport charges refunded?"}),
        ("Weather delays do not entitle passengers to hotel rooms or compensation.", {None}),
        ("We hold orders for 7 days, then cancel and refund them.", {"How long do you hold orders?"}),
        # a yes/no verb keeps what it is about: not "Does a battery count?"
        ("A battery counts as faulty only if it holds less than 60% of its rated capacity.",
         {"Does a battery count as faulty?"}),
        # no question from a future or a negation ("What do my tubeless tyre will?"), nor from a
        # preposition's object ("When is after a tooth taken?")
        ("My tubeless tyre will not seal.", {None}),
        ("After a tooth is taken out, do not rinse your mouth for 24 hours.", {None}),
        # an indefinite pronoun opening the sentence is no name: lower-case inside the question
        ("Anyone ordering a custom build gets a free fitting.",
         {"What does anyone ordering a custom build get?",
          "What exactly does anyone ordering a custom build get?"}),
    ],
)  # fmt: skip
def test_a_sentence_is_asked_by_its_subject_and_verb(sentence, expected):
    assert sentence_question(sentence, random.Random(3)) in expected


def test_a_table_cell_is_asked_by_what_its_column_means():
    rng = random.Random(0)
    assert measure("daily_rate_usd") == "daily rate"
    assert cells_question("the Alder Creek store", None, "has_workshop", "yes", rng) == (
        "Does the Alder Creek store have a workshop?"
    )
    assert cells_question("the Alder Creek store", None, "rents_ebikes", "no", rng) == (
        "Does the Alder Creek store rent ebikes?"
    )
    assert cells_question("kids bikes", None, "covers", "Frame", rng) == "What is covered for kids bikes?"
    assert cells_question("the Oakbrook surgery", None, "parking", "yes", rng) == (
        "Does the Oakbrook surgery have parking?"
    )
    assert cells_question("the Metro E8", "the Alder Creek store", "deposit_usd", "300", rng) == (
        "How much is the deposit for the Metro E8 at the Alder Creek store?"
    )
    # a column that ends in a preposition is asked with it last, not as a noun ("What available at ...")
    assert cells_question("the bike assembly", None, "available_at", "Alder Creek", rng) == (
        "What is the bike assembly available at?"
    )


@pytest.mark.parametrize("seed", range(6))
def test_a_plural_measure_takes_a_plural_verb(seed):
    question = cells_question("helmets", None, "exclusions", "crash damage", random.Random(seed))
    assert not question.startswith("What is the exclusions"), question


def test_sample_questions_are_distinct_and_name_no_title_or_hidden_code(sample):
    store, project_id = sample
    card = store.system_card(project_id).model_dump_json()
    titles = [d.title.lower() for d in store.documents(project_id) if len(d.title) > 3]
    questions = [
        q.content for v in list_conversations(store, project_id) for q, _ in qa_pairs(v.conversation)
    ]
    distinct = len({q.strip().lower() for q in questions}) / len(questions)
    leaky = [
        q for q in questions
        if any(t in q.lower() for t in titles) or any(c not in card for c in ID_LIKE.findall(q))
    ]  # fmt: skip
    # 0.84 and 11.7% before this wording (issue 13, item 3); the goals are >= 0.9 and <= 2%.
    assert distinct >= 0.9
    assert len(leaky) / len(questions) <= 0.02, leaky


def test_answers_read_as_one_and_a_synthesis_is_about_one_entity(sample):
    store, project_id = sample
    synthesis_checked = 0
    for view in list_conversations(store, project_id):
        conversation = view.conversation
        for question, answer in qa_pairs(conversation):
            if is_cannot_answer(answer.content):
                continue
            # Multi-fact answers are their facts in turn, with no "Document title:" glue between them.
            assert not any(answer.content.startswith(f"{d}:") for d in answer.grounding)
            entity = answer.bridging_entity
            one_document = conversation.metadata["chain"]["length"] == 1
            if question.query_type == "SYNTHESIS" and entity and one_document:
                sources = answer.metadata["sources"]
                said = [s.get("sentence") or " ".join(v for _, v in s["cells"]) for s in sources]
                assert all(canonical_name(entity) in canonical_name(t) for t in said), (entity, said)
                synthesis_checked += 1
    assert synthesis_checked >= 10


def test_a_row_known_by_a_hidden_code_is_named_by_a_describing_cell_not_a_list(sample):
    store, project_id = sample
    docs = {d.id: d for d in store.documents(project_id)}
    spec = list_specs(store, project_id)[0].spec
    inputs = conversation_inputs("desc", spec, [docs["warranty-terms"]], [], [], 4, 0, [])
    writer = _Writer(inputs, random.Random(0))
    for fact in document_facts(document_input(docs["warranty-terms"])):
        thing, _ = writer.row_ref(fact)
        assert ";" not in thing and ": " not in thing, thing  # never "frame: lifetime; components: 2 years"


def test_a_topic_question_does_not_open_its_topic_with_a_capital_article():
    for seed in range(4):
        question = topic_question("The Concession card", random.Random(seed))
        assert "the Concession card" in question and "The Concession" not in question, question
