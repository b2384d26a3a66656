"""A spec's subject (issue 33): key words without modal, auxiliary and generic verbs, nouns first, and
matched in any inflection; the offline first question finds and names it that way."""

from __future__ import annotations

import random

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
    writer = _Writer(_inputs([EMERGENCY], [policy], subject), random.Random(0))
    first = writer.write(7).turns[0]
    assert first.document_ids == ["missed-policy"]
    assert spec_subject("Not able to book, move or cancel appointments", {}).said_in(first.question)
