"""Specs a QA analyst would keep (issue 13): the card's behaviours and procedures become specs, a spec's
documents are the ones it is about, titles read as sentences, and generation says when it runs dry."""

import shutil
from pathlib import Path

from evalcore.inputs import import_project
from evalcore.specs.generation import generate_specs
from evalcore.specs.offline import _clause, offline_card_specs, sentence_subject
from evalcore.specs.store_ops import list_specs

PROJECT = "ridgeline_support"


def test_every_card_behaviour_and_procedure_becomes_a_marked_spec(sqlite_store):
    import_project(sqlite_store, "data/sample")
    card = sqlite_store.system_card(PROJECT)
    generate_specs(sqlite_store, PROJECT, m=20)
    views = list_specs(sqlite_store, PROJECT)
    from_card = [v.spec for v in views if v.spec.provenance.task == "specs_from_card"]
    behaviours = [s for s in from_card if s.category == "card behaviour"]
    procedures = [s for s in from_card if s.category == "procedure"]
    assert len(behaviours) == len(card.behaviors) == 9
    assert len(procedures) == len(sqlite_store.procedures(PROJECT)) == 5
    assert len(views) == 20  # m counts them
    refund = behaviours[0]
    assert refund.then.startswith("the assistant should refuse to promise a refund outside the return window")
    assert "and state the window" in refund.then  # one "should" governs every verb of the behaviour
    assert "return-policy" in refund.documents


def test_a_spec_cites_only_its_own_documents(sqlite_store):
    import_project(sqlite_store, "data/sample")
    generate_specs(sqlite_store, PROJECT, m=60)
    views = list_specs(sqlite_store, PROJECT)
    fact_specs = [v.spec for v in views if v.spec.category in ("policy", "product information")]
    assert fact_specs and all(len(s.documents) == 1 for s in fact_specs)
    assert all(len(v.spec.documents) == 2 for v in views if v.spec.category == "multi-document")
    sizes = {len(v.spec.documents) for v in views}
    assert len(sizes) > 1  # the number varies with the spec


def test_titles_are_sentences_not_keyword_strings():
    sentence = "Opened spare batteries carry a 15% restocking fee and must be brought to a store."
    assert (
        _clause(sentence)
        == "Opened spare batteries carry a 15% restocking fee and must be brought to a store"
    )
    assert (
        _clause("A half day (up to 4 hours) costs 60% of the daily rate.")
        == "A half day costs 60% of the daily rate"
    )
    assert sentence_subject(sentence) == "opened spare batteries"
    assert sentence_subject("Westbrook Station does not rent bikes.") == "Westbrook Station"
    assert sentence_subject("It takes two days.") is None


def test_card_specs_offline_follow_the_behaviours_in_order():
    import random

    behaviors = ["Does not book rentals at Pine Hollow.", "Checks stock first."]
    inputs = {"assistant_name": "Bot", "behaviors": behaviors, "procedures": []}
    drafts = offline_card_specs(inputs, random.Random(0)).specs
    assert [d.then for d in drafts] == [
        "the assistant should not book rentals at Pine Hollow",
        "the assistant should check stock first",
    ]


def test_generation_stops_and_says_so_when_it_runs_out_of_new_specs(sqlite_store, tmp_path):
    folder = tmp_path / "tiny"
    (folder / "documents").mkdir(parents=True)
    shutil.copy(Path("data/sample/documents/tyres_and_tubeless_faq.md"), folder / "documents")
    (folder / "system.yaml").write_text(
        "id: tiny\nchatbot_info:\n  name: Tyre Help\n  description: Answers tyre questions.\n"
    )
    project_id = import_project(sqlite_store, folder).project_id
    outcome = generate_specs(sqlite_store, project_id, m=2000, batch=5)
    assert outcome.exhausted
    assert outcome.run.status.value == "stopped"
    assert "ran out of new specs" in outcome.run.stopped_reason
    assert outcome.duplicates > 0
    assert outcome.added == len(list_specs(sqlite_store, project_id)) < 2000
