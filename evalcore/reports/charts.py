"""Plots of failure tables, for the Reports page: failure rate per group with its 95% Wilson interval."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from evalcore.reports.tables import TOTAL_LABEL

RED = "#c0392b"
BLUE = "#2e6da4"


def _label(value: object) -> str:
    return "(none)" if value is None or (not isinstance(value, str) and pd.isna(value)) else str(value)


def failure_rate_chart(table: pd.DataFrame, key: str, title: str, within: str | None = None) -> go.Figure:
    """Bars of failure rate (in %) per value of `key`, with Wilson-interval error bars and n on hover.

    With `within` (e.g. 'target'), one bar series per value of that column, side by side.
    """
    rows = table[table[key].astype("object") != TOTAL_LABEL]
    figure = go.Figure()
    groups = list(rows.groupby(within, sort=False)) if within else [(None, rows)]
    for i, (name, part) in enumerate(groups):
        rate = part["failure_rate"] * 100
        figure.add_bar(
            name=_label(name) if within else "failure rate",
            x=[_label(v) for v in part[key]],
            y=rate,
            marker_color=[RED, BLUE][i % 2] if within else RED,
            error_y={
                "type": "data",
                "array": part["ci_high"] * 100 - rate,
                "arrayminus": rate - part["ci_low"] * 100,
                "color": "#555",
            },
            customdata=part[["failures", "n"]].to_numpy(),
            hovertemplate="%{x}: %{y:.1f}% (%{customdata[0]} of %{customdata[1]} failed)<extra></extra>",
        )
    figure.update_layout(
        title=title,
        yaxis={"title": "failure rate (%)", "range": [0, 105]},
        xaxis={"title": key.replace("_", " "), "type": "category"},
        barmode="group",
        showlegend=bool(within),
        height=340,
        margin={"l": 50, "r": 20, "t": 50, "b": 50},
    )
    return figure
