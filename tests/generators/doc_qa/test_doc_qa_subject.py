"""A spec's subject (issue 33): key words without modal, auxiliary and generic verbs, nouns first, and
matched in any inflection; the offline first question finds and names it that way."""

from __future__ import annotations

import random
import re

from evalcore.documents.phrases import is_noun_phrase, nouns
from evalcore.generators.doc_qa.offline import _Writer
from evalcore.generators.doc_qa.subject import spec_subject


def test_a_limitation_spec_is_about_what_it_limits_not_about_able_or_move():
    subject = spec_subject("Patient is not able to book online appointments, when pushed repeatedly", {})
    assert not subject.named
    assert "able" not in subject.terms
    assert "appointments" in subject.terms
    limited = spec_subject("Not able to book, move or cancel appointments, when pushed repeatedly", {})
    assert not {"able", "move", "book"} & set(limited.terms)
    assert limited.terms[0] == "appointments"  # the noun before the verbs listed after "to"
    seen = spec_subject("Not able to see live interruptions or repair progress, when mixed", {})
    assert not {"able", "see"} & set(seen.terms)
    assert "interruptions" in seen.terms


def test_given_when_then_orders_the_key_words_without_changing_them():
    title = "Reschedule limits for hygiene visits"
    alone = spec_subject(title, {})
    ordered = spec_subject(title, {}, context="a patient who wants the assistant to reschedule a visit")
    assert set(alone.terms) == set(ordered.terms)
    assert ordered.terms[-1] == "reschedule"


def test_a_subject_is_said_in_any_inflection():
    subject = spec_subject("Calling 999 or go to the nearest emergency department", {})
    assert subject.said_in("When should I call 999?")
    assert spec_subject("Missed appointments are charged", {}).said_in("What if I miss an appointment?")
    assert not subject.said_in("When should I call the surgery?")


def _inputs(chain, policies, subject):
    return {
        "documents": chain,
        "policies": policies,
        "probe": "Emergency advice for a patient in pain",
        "subject": subject,
        "num_turns": 7,
    }


EMERGENCY = {
    "id": "emergency",
    "kind": "text",
    "title": "Emergency Care",
    "text": "# Emergency Care\n\n## Pain\n\n"
    "The on-call dentist gives advice by phone every evening until 10pm. "
    "Painkillers such as ibuprofen help while you wait to be seen.\n\n## Hospital\n\n"
    "Swelling that spreads to the eye or the neck needs hospital care. Call 999 or go to the nearest "
    "emergency department.",
}


def test_the_first_question_opens_on_a_subject_the_document_words_in_another_inflection():
    """Before, "Calling 999" was looked for as written: no fact had it and the conversation opened on any
    fact of the document."""
    subject = list(spec_subject("Calling 999 or go to the nearest emergency department", {}).terms)
    for variant in range(3):
        turns = _Writer(_inputs([EMERGENCY], [], subject) | {"variant": variant}, random.Random(variant))
        first = turns.write(7).turns[0]
        assert "Call 999" in first.answer
        assert spec_subject("Calling 999 or go", {}).said_in(first.question), first.question


def test_the_first_question_opens_in_a_policy_when_the_chain_does_not_name_the_subject():
    policy = {
        "id": "missed-policy",
        "kind": "policy",
        "title": "Missed Appointments Policy",
        "text": "# Missed Appointments Policy\n\nAn appointment cancelled with less than 24 hours' notice is "
        "charged a late cancellation fee of £25.",
    }
    subject = list(spec_subject("Not able to book, move or cancel appointments", {}).terms)
    inputs = _inputs([EMERGENCY], [policy], subject) | {
        "probe": "Not able to book, move or cancel appointments"
    }
    writer = _Writer(inputs, random.Random(0))
    first = writer.write(7).turns[0]
    assert first.document_ids == ["missed-policy"]
    assert spec_subject("Not able to book, move or cancel appointments", {}).said_in(first.question)


BATTERY = {
    "id": "winter-batteries",
    "kind": "text",
    "title": "Batteries in Winter",
    "text": "# Batteries in Winter\n\nKeep the battery at room temperature. After a ride in cold weather, "
    "wait for an hour before charging. A cold battery is charged slowly. Charging below 0°C damages the "
    "cells of a battery.",
}
SEALANT = {
    "id": "sealant",
    "kind": "text",
    "title": "Sealant",
    "text": "# Sealant\n\nUse 60 ml of sealant per tyre. Top up the sealant every 3 months.",
}
_LEAD = re.compile(r"^(?:About|Regarding|(?:Quick|I have a) question about) (.+?)[:,] ")


def _first(doc, probe, subject, variant):
    inputs = _inputs([doc], [], subject) | {"probe": probe, "variant": variant}
    return _Writer(inputs, random.Random(variant)).write(7).turns[0].question


def test_a_title_whose_first_key_word_is_an_adjective_gives_a_noun_phrase_never_the_bare_word():
    """Before, "About cold: ..." when the question did not say "cold": the title's key word alone."""
    probe = "Letting a cold battery warm up for an hour before charging"
    known = nouns([BATTERY["text"]])
    for variant in range(3):
        question = _first(BATTERY, probe, ["cold"], variant)
        lead = _LEAD.match(question)
        assert not question.startswith("About cold"), question
        assert lead is None or lead.group(1) == "a cold battery", question
        assert lead is None or is_noun_phrase(lead.group(1), known)


def test_a_title_whose_first_key_word_is_a_preposition_gives_no_lead_in():
    probe = "Using about 60 ml per 29-inch mountain bike tyre"
    for variant in range(2):
        question = _first(SEALANT, probe, ["per"], variant)
        assert _LEAD.match(question) is None, question
        assert not question.lower().startswith("per"), question


def test_a_question_that_does_not_name_the_subject_gets_the_titles_noun_phrase_in_front():
    text = (
        "# Batteries in Winter\n\nKeep the battery at room temperature. After a ride in cold weather, "
        "wait for an hour before charging."
    )
    doc = BATTERY | {"text": text}
    probe = "Letting a cold battery warm up for an hour before charging"
    for variant in range(3):
        question = _first(doc, probe, ["cold"], variant)
        lead = _LEAD.match(question)
        assert lead is not None and lead.group(1) == "a cold battery", question
