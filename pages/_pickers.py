"""Pickers of many options (issue 28): a selectbox of a few thousand options costs every visit ~0.3 s of
browser CPU, however short its labels (measured: 5,000 specs against 200). A long list is cut to its first
`LISTED` options, the chosen one kept; a search beside the picker reaches the rest."""

from __future__ import annotations

from collections.abc import Iterable

LISTED = 300  # options a picker lists at most


def first_listed(options: Iterable, chosen: object = None) -> list:
    """The first `LISTED` of `options`, with `chosen` after them when it is not among them (a picker must
    list its own value, or Streamlit resets it)."""
    listed = list(options)[:LISTED]
    if chosen is not None and chosen not in listed:
        listed.append(chosen)
    return listed


def matching(labels: dict, words: str) -> list:
    """The keys of `labels` whose label holds every word of `words` (any case), in their order."""
    wanted = words.lower().split()
    return [key for key, label in labels.items() if all(w in str(label).lower() for w in wanted)]
