"""Plots for the pages: failure rate per group with its 95% Wilson interval (Reports), and the LLM judge's
precision and recall on gold per score threshold (Agreement and calibration, Tool cases)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from evalcore.models.common import chart_label
from evalcore.reports.tables import TOTAL_LABEL
from evalcore.stats.calibration import CurvePoint

RED = "#c0392b"
BLUE = "#2e6da4"


def _label(value: object) -> str:
    missing = value is None or (not isinstance(value, str) and pd.isna(value))
    return "(none)" if missing else chart_label(value)


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


def calibration_chart(points: Sequence[CurvePoint], target: float, threshold: float | None) -> go.Figure:
    """Precision and recall on gold of the rule "judge score >= threshold" at every threshold, with the
    target precision as a dotted line and the chosen threshold (None: none reaches it) as a dashed one."""
    x = [p.threshold for p in points]
    figure = go.Figure()
    figure.add_scatter(x=x, y=[p.precision for p in points], name="precision", mode="lines+markers")
    figure.add_scatter(x=x, y=[p.recall for p in points], name="recall", mode="lines+markers")
    figure.add_hline(y=target, line_dash="dot", annotation_text=f"target {target:.2f}")
    if threshold is not None:
        figure.add_vline(x=threshold, line_dash="dash", annotation_text=f"{threshold:.3f}")
    figure.update_layout(
        xaxis_title="judge score threshold", yaxis_title="on gold", yaxis_range=[0, 1.05], height=380,
        margin={"t": 30, "b": 40}, legend={"orientation": "h"},
    )  # fmt: skip
    return figure
