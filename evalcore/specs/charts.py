"""Plots of the Diversity and coverage page, from a stored `SpecMap`: the candidates on the map, the
documents the selected specs cite, and what Greedy and Max-Min gain over Random at each k."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from evalcore.models.common import chart_label
from evalcore.specs.spec_map import Curve, SpecMap, curve_gaps

# Qualitative palettes, most distinct first: D3's ten (blue, orange, green, red, purple, brown, pink, grey,
# olive, cyan), then 24 dark and 24 light colours, before any colour repeats.
PALETTE = list(dict.fromkeys([*qualitative.D3, *qualitative.Dark24, *qualitative.Light24]))
METHOD_COLOURS = {"greedy": "#2563eb", "maxmin": "#f59e0b"}
METHOD_NAMES = {"greedy": "Greedy", "maxmin": "Max-Min", "random": "Random"}
METRICS = (("spwd", "SPWD"), ("var_div", "Var Div"), ("coverage", "Coverage (documents)"))
LABEL_CHARS = 40
HOVER_CHARS = 90  # a scenario's first line or so: the hover box stays narrow, the page light


def short(text: str, limit: int = LABEL_CHARS) -> str:
    """`text` cut to `limit` characters at a word, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else text[: limit - 1]
    return cut.rstrip(" ,;:") + "…"


def map_frame(spec_map: SpecMap, selected: set[str], titles: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per point of the map: position, scenario, category, first document (its title when
    known), whether it is selected and whether it was placed by neighbours."""
    titles = titles or {}
    return pd.DataFrame(
        [
            {
                "id": p.id,
                "x": p.x,
                "y": p.y,
                "scenario": p.scenario,
                "category": p.category,
                "document": titles.get(p.documents[0], p.documents[0]) if p.documents else "(none)",
                "selected": p.id in selected,
                "placed": p.placed,
            }
            for p in spec_map.points
        ],
        columns=["id", "x", "y", "scenario", "category", "document", "selected", "placed"],
    )


def map_chart(frame: pd.DataFrame, colour: str) -> go.Figure:
    """The candidates as points coloured by `colour` (a column), selected ones as larger stars; the
    legend under the plot, where no toolbar covers it.

    Quick at a team's scale (5,000 specs): WebGL traces (one canvas, not an SVG element per point),
    positions as float32 arrays (plotly sends them as binary, not as decimal text), and each point's
    hover label its scenario cut to HOVER_CHARS."""
    figure = go.Figure()
    groups = sorted(frame[colour].unique(), key=str)
    for i, value in enumerate(groups):
        part, label = frame[frame[colour] == value], chart_label(value)
        for chosen in (False, True):
            rows = part[part["selected"] == chosen]
            if rows.empty:
                continue
            figure.add_scattergl(
                x=rows["x"].to_numpy(np.float32), y=rows["y"].to_numpy(np.float32), mode="markers",
                name=label, legendgroup=label, showlegend=bool(not chosen or part["selected"].all()),
                marker={"color": PALETTE[i % len(PALETTE)], "size": 14 if chosen else 7,
                        "symbol": "star" if chosen else "circle",
                        "line": {"width": 1, "color": "#111827"} if chosen else {"width": 0}},
                text=[chart_label(short(text, HOVER_CHARS)) for text in rows["scenario"]],
                hovertemplate="%{text}" + ("<br>selected" if chosen else "") + "<extra></extra>",
            )  # fmt: skip
    figure.update_layout(
        height=560,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"showticklabels": False, "title": None},
        yaxis={"showticklabels": False, "title": None},
        legend={"orientation": "h", "yanchor": "top", "y": -0.02, "xanchor": "left", "x": 0, "title": None},
    )
    return figure


def coverage_chart(
    specs: Sequence[tuple[str, str, Sequence[str]]], documents: Sequence[tuple[str, str]]
) -> go.Figure:
    """Which documents (rows, by title) each selected spec cites (columns, by scenario): `specs` are
    (id, scenario, document ids), `documents` (id, title)."""
    z = [[1 if doc_id in cited else 0 for _, _, cited in specs] for doc_id, _ in documents]
    labels = [chart_label(f"{short(scenario)} ({spec_id[-6:]})") for spec_id, scenario, _ in specs]
    titles = [chart_label(title) for _, title in documents]
    figure = go.Figure(
        go.Heatmap(
            z=z, x=labels, y=titles, colorscale=[[0, "#f3f4f6"], [1, "#2563eb"]], showscale=False, xgap=1,
            ygap=1, customdata=[[chart_label(scenario) for _, scenario, _ in specs]] * len(documents),
            hovertemplate="%{y}<br>%{customdata}<extra></extra>",
        )
    )  # fmt: skip
    figure.update_layout(
        height=max(360, 24 * len(documents) + 260),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"title": "Selected spec", "tickangle": -45, "automargin": True, "type": "category"},
        yaxis={"title": "Document", "automargin": True, "type": "category", "autorange": "reversed"},
    )
    return figure


def gap_chart(curves: Sequence[Curve]) -> go.Figure:
    """Greedy's and Max-Min's SPWD, Var Div and Coverage minus Random's (mean of its seeds) against k: the
    zero line is Random, a point above it is what the method gains over picking at random."""
    gaps = curve_gaps(curves)
    figure = make_subplots(rows=1, cols=3, subplot_titles=[title for _, title in METRICS])
    for col, (metric, _) in enumerate(METRICS, start=1):
        for method in ("greedy", "maxmin"):
            points = sorted((c for c in gaps if c.method == method), key=lambda c: c.k)
            figure.add_scatter(
                x=[c.k for c in points], y=[getattr(c, metric) for c in points], name=METHOD_NAMES[method],
                mode="lines+markers", line={"color": METHOD_COLOURS[method]}, legendgroup=method,
                showlegend=col == 1, row=1, col=col,
                hovertemplate=f"k = %{{x}}<br>{METHOD_NAMES[method]} - Random: %{{y:.3g}}<extra></extra>",
            )  # fmt: skip
        figure.add_hline(y=0, line={"color": "#9ca3af", "dash": "dot"}, row=1, col=col)
        figure.update_xaxes(title_text="k (specs selected)", row=1, col=col)
        figure.update_yaxes(title_text="minus Random", row=1, col=col)
    figure.update_layout(
        height=360,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "yanchor": "top", "y": -0.22, "xanchor": "left", "x": 0},
    )
    return figure


def curve_table(curves: Sequence[Curve]) -> pd.DataFrame:
    """The curves' values, one row per k, a column per method and metric (what the gap chart subtracts)."""
    frame = pd.DataFrame([c.model_dump() for c in curves])
    if frame.empty:
        return frame
    wide = frame.pivot(index="k", columns="method", values=[m for m, _ in METRICS])
    wide.columns = [f"{title} · {METHOD_NAMES.get(method, method)}" for (metric, method) in wide.columns
                    for m, title in METRICS if m == metric]  # fmt: skip
    return wide.reset_index()
