"""Text from a file or a model as a plotly chart shows it, on every page.

Chart text (tick labels, legend names, hover text, titles) understands a few HTML tags (<b>, <br>,
<span style>, <a href>), so a spec scenario, a document title or a persona name could style or link a
page. Every chart built from data passes its labels through `chart_label`.
"""

from __future__ import annotations


def chart_label(text: object) -> str:
    """`text` as plain chart text: angle brackets and ampersands are replaced by look-alikes that are
    only text (an entity such as &lt; would still be read by the chart's own parser)."""
    return str(text).replace("&", "＆").replace("<", "‹").replace(">", "›")
