"""Noun phrases of a spec's title (`evalcore.documents.phrases`): nouns learnt from the documents, the
title's phrase that holds a subject term, never a bare adjective, preposition or verb."""

from __future__ import annotations

from evalcore.documents.phrases import is_noun_phrase, listed_verbs, nouns, title_phrase

DOCS = [
    "Keep the battery at room temperature. A cold battery charges slowly, so wait an hour.",
    "A late fee of $5 applies. The fees are waived once a year. Split shipments arrive in 2 parcels.",
    "Each order has a status. Track an online order on the website. Your inseam is measured in cm.",
    "Every session is booked in advance and the sessions are free.",
]
KNOWN = nouns(DOCS)


def test_nouns_are_words_the_documents_end_a_noun_phrase_on():
    assert {"battery", "fee", "order", "hour", "session", "inseam"} <= KNOWN
    assert "cold" not in KNOWN  # "a cold battery": an adjective before its noun
    assert "late" not in KNOWN


def test_a_title_phrase_is_the_noun_phrase_around_the_term_never_an_adjective_alone():
    assert title_phrase("Letting a cold battery warm up for an hour before charging", "cold", KNOWN) == (
        "a cold battery"
    )
    assert title_phrase("Late fees after a 15-minute grace period", "late", KNOWN) == "late fees"
    assert title_phrase("Helping a customer find out where an online order is", "order", KNOWN) == (
        "an online order"
    )
    assert title_phrase("Multiplying your inseam by 0.665", "inseam", KNOWN) == "my inseam"


def test_no_title_phrase_for_a_preposition_a_verb_or_a_measure():
    assert title_phrase("Using about 60 ml per 29-inch mountain bike tyre", "per", KNOWN) is None
    assert title_phrase("Helping a customer find out where an online order is", "out", KNOWN) is None
    assert (
        title_phrase("Letting a cold battery warm up for an hour before charging", "charging", KNOWN) is None
    )
    assert title_phrase("Sessions last 4 hours and restart", "hours", KNOWN) is None  # when, not what
    assert title_phrase("Sessions last 4 hours and restart", "sessions", KNOWN) == "sessions"
    # "cancel" is one of the verbs listed after "to": the phrase is the noun alone
    assert title_phrase("Not able to book, move or cancel orders", "orders", KNOWN) == "orders"


def test_listed_verbs_are_the_words_after_to():
    assert listed_verbs("Not able to book, move or cancel appointments") == {"book", "mov", "cancel"}


def test_a_noun_phrase_test_refuses_closed_words_and_adjectives():
    assert is_noun_phrase("late fees", KNOWN)
    assert is_noun_phrase("a cold battery", KNOWN)
    assert is_noun_phrase("Pine Hollow", KNOWN)
    assert not is_noun_phrase("cold", KNOWN)
    assert not is_noun_phrase("per", KNOWN)
    assert not is_noun_phrase("out", KNOWN)


def test_a_run_listed_after_a_verb_put_after_to_drops_its_verb():
    title = "Not able to see a courier's live location or reschedule freight deliveries"
    known = nouns(["The freight deliveries are late. A location is shown."])
    assert title_phrase(title, "deliveries", known) == "freight deliveries"
    assert title_phrase(title, "reschedule", known) is None


def test_a_word_before_an_article_is_no_noun():
    known = nouns(["Customers who miss two instalments in a row receive a reminder."])
    assert "receive" not in known
    assert (
        title_phrase("Customers who miss two instalments in a row receive a reminder", "receive", known)
        is None
    )
