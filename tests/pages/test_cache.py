"""pages/_cache.py: a chart is built once per distinct arguments, and again when they change."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from pages._cache import cached_figure

BUILT: list[tuple] = []


def _bars(table: pd.DataFrame, title: str, *, height: int = 300) -> go.Figure:
    BUILT.append((len(table), title, height))
    return go.Figure(go.Bar(x=table["x"], y=table["y"]), layout={"title": title, "height": height})


def test_a_figure_is_built_once_per_distinct_arguments():
    table = pd.DataFrame({"x": ["a", "b"], "y": [1, 2]})
    first = cached_figure(_bars, table, "rates", height=200)
    again = cached_figure(_bars, table.copy(), "rates", height=200)
    assert BUILT == [(2, "rates", 200)] and again.layout.title.text == first.layout.title.text == "rates"
    assert list(again.data[0].x) == list(first.data[0].x) == ["a", "b"]
    cached_figure(_bars, table.assign(y=[3, 4]), "rates", height=200)  # new data
    cached_figure(_bars, table, "rates", height=300)  # another keyword argument
    assert BUILT == [(2, "rates", 200), (2, "rates", 200), (2, "rates", 300)]
