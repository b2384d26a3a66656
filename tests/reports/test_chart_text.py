"""No text from a file or a model is live HTML in a chart. The charts are Vega-Lite specs, which draw labels,
titles, legends and tooltips as text (tests/test_e2e_chart_text.py shows it in a browser): so spec
scenarios, categories, document titles, failure-table groups and personas go in as they are written, only
as data values, titles or scale domains, never where Vega reads code (a field name, an expression, a
link)."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
from vega import from_spec

from evalcore.generators.doc_qa.browse import summary
from evalcore.reports.charts import count_chart, count_heatmap, failure_rate_chart
from evalcore.specs.charts import coverage_chart, map_chart, map_frame
from evalcore.specs.spec_map import MapPoint, SpecMap

BOLD = "<b>loud</b>"
STYLED = "<span style='font-size:40px;color:red'>big</span>"
LINK = "<a href='https://example.com'>click</a>"
CODE_KEYS = {"field", "expr", "test", "filter", "calculate", "labelExpr", "href", "url", "name"}


def _in_code(part: object) -> list[str]:
    """Strings of the spec at keys Vega reads as code or a reference, that hold markup."""
    found = []
    if isinstance(part, list):
        for item in part:
            found += _in_code(item)
    elif isinstance(part, dict):
        for key, value in part.items():
            if key in CODE_KEYS and isinstance(value, str) and "<" in value:
                found.append(value)
            elif not isinstance(value, pd.DataFrame):
                found += _in_code(value)
    return found


def _values(chart) -> set[str]:
    return {str(v) for frame in chart.data.values() for column in frame for v in frame[column]}


def test_the_diversity_charts_keep_scenarios_categories_and_titles_as_written_data():
    points = [
        MapPoint(id=f"s{i}", x=float(i), y=0.0, scenario=BOLD, category=STYLED, documents=["d1"],
                 text_hash=str(i))
        for i in range(3)
    ]  # fmt: skip
    spec_map = SpecMap(run_id="m", method="PCA", fitted_by="m", fitted_at=datetime.now(UTC),
                       embedding_model="e", points=points, versions={})  # fmt: skip
    frame = map_frame(spec_map, {"s0"}, {"d1": LINK})
    for colour, name in (("category", STYLED), ("document", LINK)):
        spec = map_chart(frame, colour)
        assert _in_code(spec) == [] and {BOLD, name} <= _values(from_spec(spec))
    heat = coverage_chart([("s0", BOLD, ["d1"])], [("d1", LINK)])
    assert _in_code(heat) == [] and {BOLD, LINK} <= _values(from_spec(heat))
    assert heat["encoding"]["y"]["scale"]["domain"] == [LINK]


def test_report_and_simulation_charts_keep_group_names_as_written_data():
    table = pd.DataFrame(
        [{"spec": BOLD, "target": STYLED, "failure_rate": 0.5, "ci_low": 0.1, "ci_high": 0.9, "failures": 1,
          "n": 2}]
    )  # fmt: skip
    bars = failure_rate_chart(table, "spec", LINK, within="target")
    assert _in_code(bars) == [] and {BOLD, STYLED} <= _values(from_spec(bars)) and bars["title"] == LINK
    heat = count_heatmap(pd.DataFrame({"u1": [2]}, index=[BOLD]), [STYLED], ("type", "user", "turns"))
    assert _in_code(heat) == [] and {BOLD, STYLED} <= _values(from_spec(heat))
    rows = pd.DataFrame([{"pair_types": [BOLD], "chain_length": 1, "documents": 1}])
    types = count_chart(summary(rows)["query_types"], "query type", "pairs", "Query types of the pairs")
    assert _in_code(types) == [] and BOLD in _values(from_spec(types))
