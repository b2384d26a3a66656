"""pages/_pickers.py: a long picker cut to its first options, the chosen one kept; a word search."""

from pages import _pickers as pickers
from pages._pickers import first_listed, matching


def test_a_long_list_is_cut_to_its_first_options_with_the_chosen_one_after_them(monkeypatch):
    monkeypatch.setattr(pickers, "LISTED", 3)
    options = [f"s{i}" for i in range(10)]
    assert first_listed(options) == ["s0", "s1", "s2"]
    assert first_listed(options, "s7") == ["s0", "s1", "s2", "s7"]
    assert first_listed(options, "s1") == ["s0", "s1", "s2"], "listed already: not twice"
    assert first_listed(options[4:], "s1") == ["s4", "s5", "s6", "s1"], "a search that leaves it out keeps it"
    assert first_listed(options[:2], "s1") == ["s0", "s1"]


def test_matching_keeps_the_keys_whose_label_holds_every_word_in_any_case():
    labels = {"a": "Refund of an E-bike", "b": "Refund window", "c": "Opening hours"}
    assert matching(labels, "refund") == ["a", "b"]
    assert matching(labels, "REFUND e-bike") == ["a"]
    assert matching(labels, "") == ["a", "b", "c"]
    assert matching(labels, "parcel") == []
