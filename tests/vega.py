"""Vega-Lite charts as AppTest sees them (`st.vega_lite_chart`): each chart's spec as the browser gets it and
its data tables decoded from the Arrow bytes Streamlit sends beside the spec."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest

KIND = "vega_lite_chart"  # AppTest's element type of st.vega_lite_chart and st.altair_chart


@dataclass
class Chart:
    """One drawn chart: `spec` the Vega-Lite spec, `data` its tables by dataset name ('' for the
    top-level data)."""

    spec: dict
    data: dict[str, pd.DataFrame]

    def table(self, name: str = "") -> pd.DataFrame:
        """The dataset `name` (the top-level data by default)."""
        return self.data[name]


def charts(at: AppTest) -> list[Chart]:
    """Every Vega-Lite chart of the rendered page, in page order."""
    return [from_proto(element.proto) for element in at.get(KIND)]


def from_proto(proto: Any) -> Chart:
    """A chart element's proto (VegaLiteChart) read back."""
    data = {d.name: dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in proto.datasets}
    if proto.data.data:
        data[""] = dataframe_util.convert_arrow_bytes_to_pandas_df(proto.data.data)
    return Chart(json.loads(proto.spec), data)


def from_spec(spec: dict) -> Chart:
    """A chart builder's spec (data still pandas tables inside it) as a `Chart`, for tests of the builders."""
    data = {str(name): frame for name, frame in (spec.get("datasets") or {}).items()}
    values = (spec.get("data") or {}).get("values")
    if values is not None:
        data[""] = values
    rest = {k: v for k, v in spec.items() if k != "datasets"}
    if values is not None:
        rest = {k: v for k, v in rest.items() if k != "data"}
    return Chart(rest, data)


def titles(part: Any) -> Iterator[str]:
    """Every title in a spec a reader sees without hovering (the chart's, axes', legends', colour bars',
    panels'; not the tooltips'), and every fixed text a text mark writes."""
    if isinstance(part, list):
        for item in part:
            yield from titles(item)
    elif isinstance(part, dict):
        for key, value in part.items():
            if key == "tooltip":
                continue
            if key == "title":
                text = value.get("text") if isinstance(value, dict) else value
                if isinstance(text, str):
                    yield text
            elif key == "text" and isinstance(value, dict) and isinstance(value.get("value"), str):
                yield value["value"]
            else:
                yield from titles(value)


def shown_channels(part: Any) -> Iterator[dict]:
    """The encodings whose values a chart writes: nominal axes, legends (colour, fill), facets and text
    marks (not positions on a number scale, sizes or tooltips)."""
    if isinstance(part, list):
        for item in part:
            yield from shown_channels(item)
    elif isinstance(part, dict):
        encoding = part.get("encoding") or {}
        for channel in ("x", "y", "color", "fill", "text"):
            field = encoding.get(channel)
            if isinstance(field, dict) and "field" in field and field.get("type") != "quantitative":
                yield field
        if isinstance(part.get("facet"), dict):
            yield from (f for f in part["facet"].values() if isinstance(f, dict) and "field" in f)
        for key, value in part.items():
            if key != "encoding":
                yield from shown_channels(value)


def texts(chart: Chart) -> set[str]:
    """What a chart writes for a reader without hovering: its titles and the values of its shown fields."""
    channels = list(shown_channels(chart.spec))
    fields = {c["field"] for c in channels}
    written = set(titles(chart.spec))
    for channel in channels:  # a scale's domain lists values the data may lack (an uncited document)
        written |= {str(v) for v in (channel.get("scale") or {}).get("domain") or [] if isinstance(v, str)}
    for frame in chart.data.values():
        for field in fields & set(frame.columns):
            written |= {str(v) for v in frame[field] if isinstance(v, str)}
    return written
