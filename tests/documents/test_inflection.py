"""Inflection-tolerant matching (issue 33): a spec's "Calling 999" is what a document says as "Call 999"."""

from __future__ import annotations

import pytest

from evalcore.documents.facts import mentions
from evalcore.documents.inflection import says, stem


@pytest.mark.parametrize(
    "forms",
    [
        ("call", "calls", "calling", "called"),
        ("move", "moves", "moving", "moved"),
        ("copy", "copies", "copied"),
        ("appointment", "appointments"),
        ("stop", "stops", "stopping", "stopped"),
        ("match", "matches"),
        ("guarantee", "guaranteed"),
        ("use", "uses"),
        ("patient", "patients", "patient's"),
    ],
)
def test_the_inflections_of_a_word_share_a_stem(forms):
    assert {stem(f) for f in forms} == {stem(forms[0])}


@pytest.mark.parametrize("a, b", [("call", "cell"), ("book", "books-keeper"), ("fee", "feed"), ("999", "99")])
def test_different_words_keep_different_stems(a, b):
    assert stem(a) != stem(b)


def test_a_phrase_is_said_in_any_inflection_as_whole_words_in_order():
    text = "Swelling that spreads to the eye needs hospital care. Call 999 or go to the nearest department."
    assert not mentions(text, "Calling 999")  # whole-word matching alone misses it
    assert says(text, "Calling 999")
    assert says("We send a reminder before each appointment.", "appointments")
    assert not says(text, "999 calling")  # the words in order
    assert not says("Ring the on-call line.", "call")  # a hyphenated word is one word
    assert not says("Call 9999 for help.", "call 999")
    assert not says("anything", "")
