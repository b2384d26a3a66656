"""Plots of the Diversity and coverage page, from a stored `SpecMap`: the candidates on the map, the
documents the selected specs cite, and what Greedy and Max-Min gain over Random at each k.

Each plot is a Vega-Lite spec (a dict, drawn by `st.vega_lite_chart`) whose data are pandas tables: Streamlit
sends them as Arrow. Vega-Lite draws every text (labels, titles, tooltips) as text, so scenarios, categories
and titles go in as they are."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalcore.specs.spec_map import Curve, SpecMap, curve_gaps

# Qualitative palettes, most distinct first: D3's ten (blue, orange, green, red, purple, brown, pink, grey,
# olive, cyan), then Plotly's 24 dark and 24 light colours, before any colour repeats.
PALETTE = [
    "#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2", "#7F7F7F", "#BCBD22",
    "#17BECF", "#2E91E5", "#E15F99", "#1CA71C", "#FB0D0D", "#DA16FF", "#222A2A", "#B68100", "#750D86",
    "#EB663B", "#511CFB", "#00A08B", "#FB00D1", "#FC0080", "#B2828D", "#6C7C32", "#778AAE", "#862A16",
    "#A777F1", "#620042", "#1616A7", "#DA60CA", "#6C4516", "#0D2A63", "#AF0038", "#FD3216", "#00FE35",
    "#6A76FC", "#FED4C4", "#FE00CE", "#0DF9FF", "#F6F926", "#FF9616", "#479B55", "#EEA6FB", "#DC587D",
    "#D626FF", "#6E899C", "#00B5F7", "#B68E00", "#C9FBE5", "#FF0092", "#22FFA7", "#E3EE9E", "#86CE00",
    "#BC7196", "#7E7DCD", "#FC6955", "#E48F72",
]  # fmt: skip
METHOD_COLOURS = {"greedy": "#2563eb", "maxmin": "#f59e0b"}
METHOD_NAMES = {"greedy": "Greedy", "maxmin": "Max-Min", "random": "Random"}
METRICS = (("spwd", "SPWD"), ("var_div", "Var Div"), ("coverage", "Coverage (documents)"))
LABEL_CHARS = 40
HOVER_CHARS = 90  # a scenario's first line or so: the tooltip stays narrow, the page light
# A five-pointed star in Vega's unit square (-1..1): the selected specs' marker.
STAR = "M0,-1L0.225,-0.309L0.951,-0.309L0.363,0.118L0.588,0.809L0,0.382L-0.588,0.809L-0.363,0.118L-0.951,-0.309L-0.225,-0.309Z"  # noqa: E501
COLOUR_TITLES = {"category": "Category", "document": "Document"}


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


def map_chart(frame: pd.DataFrame, colour: str) -> dict:
    """The candidates as points coloured by `colour` (a column), selected ones as larger outlined stars
    drawn over the others; the legend under the plot. Drag pans, shift + wheel zooms, a double click
    resets.

    Light at a team's scale (5,000 specs): only what is drawn or read travels (positions as float32, the
    colour's value, each scenario cut to HOVER_CHARS), drawn on one canvas, not an SVG element per point."""
    groups = sorted(frame[colour].astype(str).unique())
    points = pd.DataFrame(
        {
            "x": frame["x"].to_numpy(np.float32),
            "y": frame["y"].to_numpy(np.float32),
            "scenario": [short(text, HOVER_CHARS) for text in frame["scenario"]],
            "group": frame[colour].astype(str),
        }
    )
    chosen = frame["selected"].to_numpy(bool)
    title = COLOUR_TITLES.get(colour, colour)
    hue = {
        "field": "group",
        "type": "nominal",
        "title": title,
        "scale": {"domain": groups, "range": [PALETTE[i % len(PALETTE)] for i in range(len(groups))]},
        "legend": {
            "orient": "bottom",
            "columns": 4,
            "labelLimit": 260,
            "symbolType": "circle",
            "symbolLimit": len(groups),  # every group named (Vega shows 30 by default)
        },
    }
    place = {
        "x": {"field": "x", "type": "quantitative", "axis": None, "scale": {"zero": False}},
        "y": {"field": "y", "type": "quantitative", "axis": None, "scale": {"zero": False}},
    }
    tooltip = [{"field": "scenario", "title": "Scenario"}, {"field": "group", "title": title}]
    return {
        "height": 560,
        "datasets": {"points": points[~chosen], "selected": points[chosen]},
        "usermeta": {"embedOptions": {"renderer": "canvas"}},
        "layer": [
            {
                "data": {"name": "points"},
                "params": [
                    {
                        "name": "view",
                        "select": {"type": "interval", "zoom": "wheel![event.shiftKey]"},
                        "bind": "scales",
                    }
                ],
                "mark": {"type": "circle", "size": 50, "opacity": 0.85},
                "encoding": {**place, "color": hue, "tooltip": tooltip},
            },
            {
                "data": {"name": "selected"},
                "mark": {
                    "type": "point",
                    "shape": STAR,
                    "size": 260,
                    "filled": True,
                    "opacity": 1,
                    "stroke": "#111827",
                    "strokeWidth": 1,
                },
                "encoding": {
                    **place,
                    "color": hue,
                    "tooltip": [*tooltip, {"datum": "selected", "title": "Selection"}],
                },
            },
        ],
        "config": {"view": {"stroke": None}},
    }


def coverage_chart(
    specs: Sequence[tuple[str, str, Sequence[str]]], documents: Sequence[tuple[str, str]]
) -> dict:
    """Which documents (rows, by title) each selected spec cites (columns, by scenario): `specs` are
    (id, scenario, document ids), `documents` (id, title). Only the cited cells travel as data; the
    axes list every spec and document, so an uncited cell is the grey background."""
    labels = [f"{short(scenario)} ({spec_id[-6:]})" for spec_id, scenario, _ in specs]
    titles = list(dict.fromkeys(title for _, title in documents))
    title_of = dict(documents)
    cells = pd.DataFrame(
        [
            {"spec": label, "document": title_of[doc_id], "scenario": scenario}
            for label, (_, scenario, cited) in zip(labels, specs, strict=True)
            for doc_id in dict.fromkeys(cited)
            if doc_id in title_of
        ],
        columns=["spec", "document", "scenario"],
    )
    # White grid lines between the cells; every spec and document named, however many.
    grid = {"grid": True, "gridColor": "#ffffff", "gridWidth": 2, "bandPosition": 0, "ticks": False,
            "domain": False, "labelOverlap": False}  # fmt: skip
    return {
        "height": max(120, 24 * len(titles)),  # the cells' height: the spec labels below come on top
        "autosize": {"type": "fit-x", "contains": "padding"},
        "data": {"values": cells},
        "mark": {"type": "rect", "color": "#2563eb"},
        "encoding": {
            "x": {
                "field": "spec",
                "type": "nominal",
                "title": "Selected spec",
                "scale": {"domain": labels},
                "axis": {**grid, "labelAngle": -45, "labelLimit": 260},
            },
            "y": {
                "field": "document",
                "type": "nominal",
                "title": "Document",
                "scale": {"domain": titles},
                "axis": {**grid, "labelLimit": 320},
            },
            "tooltip": [
                {"field": "document", "title": "Document"},
                {"field": "scenario", "title": "Cited by"},
            ],
        },
        "config": {"view": {"fill": "#f3f4f6", "stroke": None}},
    }


def gap_chart(curves: Sequence[Curve]) -> dict:
    """Greedy's and Max-Min's SPWD, Var Div and Coverage minus Random's (mean of its seeds) against k, a
    panel per metric: the dotted zero line is Random, a point above it is what the method gains over
    picking at random."""
    rows = [
        {"metric": title, "method": METHOD_NAMES[c.method], "k": c.k, "gap": getattr(c, metric)}
        for c in sorted(curve_gaps(curves), key=lambda c: (c.method, c.k))
        if c.method in ("greedy", "maxmin")
        for metric, title in METRICS
    ]
    order = [title for _, title in METRICS]
    methods = ["greedy", "maxmin"]
    return {
        "data": {"values": pd.DataFrame(rows, columns=["metric", "method", "k", "gap"])},
        "facet": {
            "column": {
                "field": "metric",
                "type": "nominal",
                "sort": order,
                "title": None,
                "header": {"labelFontSize": 13},
            }
        },
        "spec": {
            "width": 210,
            "height": 240,
            "layer": [
                {
                    "mark": {"type": "line", "point": True},
                    "encoding": {
                        "x": {"field": "k", "type": "quantitative", "title": "k (specs selected)"},
                        "y": {"field": "gap", "type": "quantitative", "title": "minus Random"},
                        "color": {
                            "field": "method",
                            "type": "nominal",
                            "title": "Method",
                            "scale": {
                                "domain": [METHOD_NAMES[m] for m in methods],
                                "range": [METHOD_COLOURS[m] for m in methods],
                            },
                            "legend": {"orient": "bottom"},
                        },
                        "tooltip": [
                            {"field": "method", "title": "Method"},
                            {"field": "k", "title": "k"},
                            {"field": "gap", "title": "minus Random", "format": ".3g"},
                        ],
                    },
                },
                {
                    "mark": {"type": "rule", "color": "#9ca3af", "strokeDash": [2, 3]},
                    "encoding": {"y": {"datum": 0}},
                },
            ],
        },
        "resolve": {"scale": {"y": "independent"}},
    }


def curve_table(curves: Sequence[Curve]) -> pd.DataFrame:
    """The curves' values, one row per k, a column per method and metric (what the gap chart subtracts)."""
    frame = pd.DataFrame([c.model_dump() for c in curves])
    if frame.empty:
        return frame
    wide = frame.pivot(index="k", columns="method", values=[m for m, _ in METRICS])
    wide.columns = [f"{title} · {METHOD_NAMES.get(method, method)}" for (metric, method) in wide.columns
                    for m, title in METRICS if m == metric]  # fmt: skip
    return wide.reset_index()
