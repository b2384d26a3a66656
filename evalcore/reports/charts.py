"""Plots for the pages, as Vega-Lite specs (dicts drawn by `st.vega_lite_chart`, their data pandas tables):
failure rate per group with its 95% Wilson interval (Reports), counts per value (Conversations), a count
per pair of values as a heatmap (Simulations), and the LLM judge's precision and recall on gold per score
threshold (Agreement and calibration, Tool cases). Vega-Lite draws labels, titles and tooltips as text:
group names from files or models go in as they are."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evalcore.reports.tables import TOTAL_LABEL, column_label
from evalcore.stats.calibration import CurvePoint

RED = "#c0392b"
BLUE = "#2e6da4"


def _label(value: object) -> str:
    missing = value is None or (not isinstance(value, str) and pd.isna(value))
    return "(none)" if missing else str(value)


def _category_axis(values: pd.Series, limit: int) -> dict:
    """An axis naming every value (none skipped where they crowd), words aslant, numbers upright."""
    upright = all(len(str(v)) <= 3 for v in values)
    return {"labelAngle": 0 if upright else -35, "labelLimit": limit, "labelOverlap": False}


def failure_rate_chart(table: pd.DataFrame, key: str, title: str, within: str | None = None) -> dict:
    """Bars of failure rate (in %) per value of `key`, with Wilson-interval error bars and the counts on
    hover. With `within` (e.g. 'target'), one bar series per value of that column, side by side."""
    rows = table[table[key].astype("object") != TOTAL_LABEL]
    series = [_label(v) for v in rows[within]] if within else ["failure rate"] * len(rows)
    data = pd.DataFrame(
        {
            "group": [_label(v) for v in rows[key]],
            "series": series,
            "rate": (rows["failure_rate"] * 100).to_numpy(float),
            "low": (rows["ci_low"] * 100).to_numpy(float),
            "high": (rows["ci_high"] * 100).to_numpy(float),
            "failures": rows["failures"].to_numpy(int),
            "n": rows["n"].to_numpy(int),
        }
    )
    names = list(dict.fromkeys(series))
    axis_title = column_label(key)  # "documents", not "n documents"
    x = {"field": "group", "type": "nominal", "title": axis_title, "sort": list(dict.fromkeys(data["group"])),
         "axis": _category_axis(data["group"], 160)}  # fmt: skip
    offset = {"xOffset": {"field": "series", "type": "nominal", "sort": names}} if within else {}
    colour = {
        "field": "series", "type": "nominal", "title": within.replace("_", " ") if within else None,
        "scale": {"domain": names, "range": [[RED, BLUE][i % 2] for i in range(len(names))]},
        "legend": {"orient": "bottom", "labelLimit": 320} if within else None,
    }  # fmt: skip
    return {
        "title": title,
        "height": 200,  # the bars' own: labels, legend and title come on top
        "autosize": {"type": "fit-x", "contains": "padding"},
        "data": {"values": data},
        "encoding": {"x": x, **offset},
        "layer": [
            {
                "mark": "bar",
                "encoding": {
                    "y": {
                        "field": "rate",
                        "type": "quantitative",
                        "title": "failure rate (%)",
                        "scale": {"domain": [0, 105]},
                    },
                    "color": colour,
                    "tooltip": [
                        {"field": "group", "title": axis_title},
                        *([{"field": "series", "title": within.replace("_", " ")}] if within else []),
                        {"field": "rate", "title": "failure rate (%)", "format": ".1f"},
                        {"field": "failures", "title": "failed"},
                        {"field": "n", "title": "scored"},
                    ],
                },
            },
            {
                "mark": {"type": "rule", "color": "#555555"},
                "encoding": {"y": {"field": "low", "type": "quantitative"}, "y2": {"field": "high"}},
            },
        ],
    }


def count_chart(data: pd.DataFrame, x: str, y: str, title: str) -> dict:
    """Bars of the column `y` per value of the column `x` (in the table's order), the names as titles."""
    frame = pd.DataFrame({"value": data[x].map(str), "count": data[y]})
    return {
        "title": title,
        "height": 150,  # the bars' own: the labels and title come on top
        "autosize": {"type": "fit-x", "contains": "padding"},
        "data": {"values": frame},
        "mark": "bar",
        "encoding": {
            "x": {
                "field": "value",
                "type": "nominal",
                "title": x,
                "sort": list(frame["value"]),
                "axis": _category_axis(frame["value"], 120),
            },
            "y": {"field": "count", "type": "quantitative", "title": y},
            "tooltip": [{"field": "value", "title": x}, {"field": "count", "title": y}],
        },
    }


def count_heatmap(matrix: pd.DataFrame, columns: Sequence[str], titles: tuple[str, str, str]) -> dict:
    """The counts of `matrix` as coloured cells with the count written in each: rows by its index, columns
    named `columns` (the names shown for its columns, in order); `titles` name the rows, the columns and
    the counts (the colour bar's title)."""
    row_title, column_title, what = titles
    cells = pd.DataFrame(
        [
            {"row": str(row), "column": name, "count": int(value)}
            for row, values in zip(matrix.index, matrix.to_numpy(), strict=True)
            for name, value in zip(columns, values, strict=True)
        ]
    )
    rows = [str(r) for r in matrix.index]
    dark = float(cells["count"].max()) / 2 if len(cells) else 0.0
    place = {
        "x": {"field": "column", "type": "nominal", "title": column_title, "sort": list(columns),
              "axis": {"labelAngle": -35, "labelLimit": 260}},
        "y": {"field": "row", "type": "nominal", "title": row_title, "sort": rows,
              "axis": {"labelLimit": 260}},
    }  # fmt: skip
    return {
        "height": max(120, 36 * len(rows)),
        "autosize": {"type": "fit-x", "contains": "padding"},
        "data": {"values": cells},
        "encoding": place,
        "layer": [
            {
                "mark": "rect",
                "encoding": {
                    "color": {
                        "field": "count",
                        "type": "quantitative",
                        "title": what,
                        "scale": {"scheme": "reds"},
                    },
                    "tooltip": [
                        {"field": "row", "title": row_title},
                        {"field": "column", "title": column_title},
                        {"field": "count", "title": what},
                    ],
                },
            },
            {
                "mark": {"type": "text"},
                "encoding": {
                    "text": {"field": "count", "type": "quantitative"},
                    # White on the darker half of the scale, dark on the lighter half.
                    "color": {
                        "condition": {"test": f"datum.count > {dark:g}", "value": "#ffffff"},
                        "value": "#111827",
                    },
                },
            },
        ],
    }


def calibration_chart(points: Sequence[CurvePoint], target: float, threshold: float | None) -> dict:
    """Precision and recall on gold of the rule "judge score >= threshold" at every threshold, with the
    target precision as a dotted line and the chosen threshold (None: none reaches it) as a dashed one."""
    curve = pd.DataFrame(
        [
            {"threshold": p.threshold, "measure": measure, "value": getattr(p, measure)}
            for p in points
            for measure in ("precision", "recall")
        ],
        columns=["threshold", "measure", "value"],
    )
    layers: list[dict] = [
        {
            "data": {"name": "curve"},
            "mark": {"type": "line", "point": True},
            "encoding": {
                "x": {"field": "threshold", "type": "quantitative", "title": "judge score threshold"},
                "y": {
                    "field": "value",
                    "type": "quantitative",
                    "title": "on gold",
                    "scale": {"domain": [0, 1.05]},
                },
                "color": {
                    "field": "measure",
                    "type": "nominal",
                    "title": "measure",
                    "legend": {"orient": "bottom"},
                },
                "tooltip": [
                    {"field": "measure", "title": "measure"},
                    {"field": "threshold", "title": "threshold", "format": ".3f"},
                    {"field": "value", "title": "on gold", "format": ".2f"},
                ],
            },
        },
        {
            "mark": {"type": "rule", "strokeDash": [2, 3], "color": "#374151"},
            "encoding": {"y": {"datum": target}},
        },
        {
            "mark": {"type": "text", "align": "left", "dx": 4, "dy": -8, "x": 0, "color": "#374151"},
            "encoding": {"y": {"datum": target}, "text": {"value": f"target {target:.2f}"}},
        },
    ]
    if threshold is not None:
        layers += [
            {
                "mark": {"type": "rule", "strokeDash": [6, 4], "color": "#374151"},
                "encoding": {"x": {"datum": threshold}},
            },
            {
                "mark": {"type": "text", "align": "left", "dx": 4, "y": 0, "dy": 8, "color": "#374151"},
                "encoding": {"x": {"datum": threshold}, "text": {"value": f"{threshold:.3f}"}},
            },
        ]
    for layer in layers[1:]:
        layer["data"] = {"values": [{}]}  # one line, one label: not one per point of the curve
    fit = {"type": "fit-x", "contains": "padding"}  # the height is the plot's: the legend comes on top
    return {"height": 260, "autosize": fit, "datasets": {"curve": curve}, "layer": layers}
