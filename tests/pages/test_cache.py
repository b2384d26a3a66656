"""pages/_cache.py: a chart is built once per distinct arguments, and again when they change."""

from __future__ import annotations

import pandas as pd

from pages._cache import cached_figure

BUILT: list[tuple] = []


def _bars(table: pd.DataFrame, title: str, *, height: int = 300) -> dict:
    BUILT.append((len(table), title, height))
    return {"title": title, "height": height, "data": {"values": table}, "mark": "bar"}


def test_a_figure_is_built_once_per_distinct_arguments():
    table = pd.DataFrame({"x": ["a", "b"], "y": [1, 2]})
    first = cached_figure(_bars, table, "rates", height=200)
    again = cached_figure(_bars, table.copy(), "rates", height=200)
    assert BUILT == [(2, "rates", 200)] and again["title"] == first["title"] == "rates"
    assert list(again["data"]["values"]["x"]) == list(first["data"]["values"]["x"]) == ["a", "b"]
    cached_figure(_bars, table.assign(y=[3, 4]), "rates", height=200)  # new data
    cached_figure(_bars, table, "rates", height=300)  # another keyword argument
    assert BUILT == [(2, "rates", 200), (2, "rates", 200), (2, "rates", 300)]
