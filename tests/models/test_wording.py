"""Plain words for stored values (evalcore/models/wording.py): enum values, tiers, passages, the papers'
terms kept for tooltips, ids taken out of messages a page shows."""

from evalcore.models import Tier
from evalcore.models.wording import (
    GLOSSARY,
    passage_words,
    split_citation,
    term,
    term_help,
    tier,
    told_apart,
    without_ids,
    words,
)


def test_enum_values_read_as_words_and_nothing_reads_none():
    assert words("user_ended_chat") == "The user ended the chat"
    assert words("price_band") == "Price band", "a value not listed is still spelled out"
    assert words("POS") == "Handled well" and words("Ridgeline") == "Ridgeline"
    assert words(None) == "—" and words("", missing="none") == "none"


def test_silver_says_it_is_the_judges_not_a_persons():
    assert tier(Tier.silver) == "Accepted by the judge" and tier("gold") == "Accepted by a person"
    assert tier("disagreement") == "People disagree"


def test_the_papers_terms_go_to_the_tooltip_with_their_seed_section():
    assert term("SPUR") == "Rubrics from user satisfaction" and "seed 004" in term_help("SPUR")
    assert all("seed" in source for _, source in GLOSSARY.values() if "Table" in source)
    assert split_citation("Failures by error class (seed 000, Table 10)") == (
        "Failures by error class",
        "seed 000, Table 10",
    )
    assert split_citation("Failure rate by spec") == ("Failure rate by spec", None)


def test_ids_leave_messages_and_passages_read_as_places():
    said = "spec 'Returns' (spec-1a2b3c4d5e6f): chains of 1; the map is waiting (run-06bd6c766313)"
    assert without_ids(said) == "spec 'Returns': chains of 1; the map is waiting"
    assert without_ids("Run run-06bd6c766313 finished", bare="the run") == "Run the run finished"
    assert passage_words("products#r11") == "row 11 of the table"
    assert passage_words("guide#p0") == "passage 1 of the text" and passage_words("x") == "a passage"


def test_names_in_a_picker_are_told_apart():
    assert told_apart({"r1": "demo · 10:00", "r2": "demo · 10:00", "r3": "x"}) == {
        "r1": "demo · 10:00",
        "r2": "demo · 10:00 #2",
        "r3": "x",
    }
