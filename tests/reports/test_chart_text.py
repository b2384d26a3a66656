"""No text from a file or a model is live HTML in a chart: spec scenarios, categories, document titles,
failure-table groups and query types reach plotly only through `chart_label` (chart text renders <b>,
<br>, <span style> and <a href>)."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from evalcore.generators.doc_qa.browse import summary
from evalcore.models.common import chart_label
from evalcore.reports.charts import failure_rate_chart
from evalcore.specs.charts import coverage_chart, map_chart, map_frame
from evalcore.specs.spec_map import MapPoint, SpecMap

BOLD = "<b>loud</b>"
STYLED = "<span style='font-size:40px;color:red'>big</span>"
LINK = "<a href='https://example.com'>click</a>"


def _live(figure) -> list[str]:
    text = str(figure.to_dict())  # not to_json(): it writes < as \u003c, which would hide live markup
    return [markup for markup in ("<b>loud", "<span style", "<a href", "&lt;b") if markup in text]


def test_chart_label_leaves_only_text():
    assert chart_label(BOLD) == "‹b›loud‹/b›" and chart_label("R&D") == "R＆D" and chart_label(3) == "3"


def test_the_diversity_charts_show_scenarios_categories_and_titles_as_text():
    points = [
        MapPoint(id=f"s{i}", x=float(i), y=0.0, scenario=BOLD, category=STYLED, documents=["d1"],
                 text_hash=str(i))
        for i in range(3)
    ]  # fmt: skip
    spec_map = SpecMap(run_id="m", method="PCA", fitted_by="m", fitted_at=datetime.now(UTC),
                       embedding_model="e", points=points, versions={})  # fmt: skip
    frame = map_frame(spec_map, {"s0"}, {"d1": LINK})
    assert _live(map_chart(frame, "category")) == [] and _live(map_chart(frame, "document")) == []
    assert _live(coverage_chart([("s0", BOLD, ["d1"])], [("d1", LINK)])) == []


def test_report_and_conversation_charts_show_group_names_as_text():
    table = pd.DataFrame(
        [{"spec": BOLD, "target": STYLED, "failure_rate": 0.5, "ci_low": 0.1, "ci_high": 0.9, "failures": 1,
          "n": 2}]
    )  # fmt: skip
    assert _live(failure_rate_chart(table, "spec", "By spec", within="target")) == []
    rows = pd.DataFrame([{"pair_types": [BOLD], "chain_length": 1, "documents": 1}])
    assert all("<" not in str(v) for v in summary(rows)["query_types"]["query type"])
