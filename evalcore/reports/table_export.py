"""Exporting result tables as CSV, JSONL, Markdown (GitHub pipe table) and LaTeX (booktabs).

CSV and JSONL carry the raw values (rates as fractions), for machines and round trips. Markdown and LaTeX
are for people, so numbers are formatted by column name, matching `evalcore.reports.tables`:

- `failure_rate*`, `share*`: fractions shown as percentages with one decimal ("26.3%");
- `ci_low*` + `ci_high*`: merged into one column `ci*` shown as "[23.7%, 76.3%]";
- `diff*`: a difference of rates, in signed percentage points ("+5.0 pp");
- other floats: integral ones as integers, the rest with three decimals; booleans as yes/no;
- missing values as a dash.

The LaTeX is written here rather than by `Styler.to_latex`, which needs jinja2.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any, Literal

import numpy as np
import pandas as pd

from evalcore.models.common import spreadsheet_cell
from evalcore.reports.tables import TOTAL_LABEL

Format = Literal["csv", "jsonl", "md", "latex"]

FORMATS: tuple[str, ...] = ("csv", "jsonl", "md", "latex")
_ALIASES = {"markdown": "md", "tex": "latex", "json": "jsonl"}

RATE_PREFIXES = ("failure_rate", "share")
DIFF_PREFIXES = ("diff",)
CI_LOW, CI_HIGH = "ci_low", "ci_high"
# A text column with a cell longer than WRAP_AT characters becomes a WRAP_EM-wide paragraph column: a
# scenario title (often 60-100 characters) then wraps onto two or three lines within a page's width.
WRAP_AT, WRAP_EM = 40, 16

# One pass over the text, so the braces added for "\" are not escaped a second time.
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_LATEX_RE = re.compile("|".join(re.escape(c) for c in _LATEX_SPECIAL))


def latex_escape(text: str) -> str:
    """Text with LaTeX's special characters (& % $ # _ { } ~ ^ \\) escaped."""
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group(0)], text)


def _md_escape(text: str) -> str:
    # A pipe would end the cell and a newline the row; a Markdown viewer renders raw HTML, and a cell's text
    # (a turn, a model's reason) must stay text there as on the pages.
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", r"\|").replace("\r\n", " ").replace("\n", " ")


# ---------------------------------------------------------------------------------------------- values


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float | np.floating) and math.isnan(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )


def _jsonable(value: Any) -> Any:
    """A value json.dumps can write: NaN/NA as null, numpy scalars as Python ones, dates as ISO text."""
    if _missing(value):
        return None
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, datetime | date | pd.Timestamp):
        return value.isoformat()
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def _percent(value: Any, signed: bool = False) -> str | None:
    if _missing(value) or not _is_number(value):
        return None
    return f"{100 * float(value):+.1f} pp" if signed else f"{100 * float(value):.1f}%"


def _plain(value: Any) -> str | None:
    if _missing(value):
        return None
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        number = float(value)
        return str(int(number)) if number.is_integer() else f"{number:.3f}"
    return str(value)


def _display(df: pd.DataFrame) -> tuple[list[str], list[list[str | None]], list[bool]]:
    """Headers, formatted cells (None = missing) and right-alignment per column, for md and LaTeX."""
    columns = [str(c) for c in df.columns]
    data = {str(c): df[c].tolist() for c in df.columns}
    dtypes = {str(c): df[c].dtype for c in df.columns}
    headers: list[str] = []
    cells: list[list[str | None]] = []
    right: list[bool] = []
    for name in columns:
        values = data[name]
        if name.startswith(CI_HIGH) and CI_LOW + name[len(CI_HIGH) :] in data:
            continue  # shown together with its ci_low
        if name.startswith(CI_LOW) and CI_HIGH + name[len(CI_LOW) :] in data:
            highs = data[CI_HIGH + name[len(CI_LOW) :]]
            formatted = []
            for low, high in zip(values, highs, strict=True):
                a, b = _percent(low), _percent(high)
                formatted.append(None if a is None or b is None else f"[{a}, {b}]")
            headers.append("ci" + name[len(CI_LOW) :])
            cells.append(formatted)
            right.append(True)
            continue
        if name.startswith(RATE_PREFIXES) or name.startswith(DIFF_PREFIXES):
            signed = name.startswith(DIFF_PREFIXES)
            headers.append(name)
            cells.append([_percent(v, signed) for v in values])
            right.append(True)
            continue
        headers.append(name)
        cells.append([_plain(v) for v in values])
        # A key column like n_documents stays numeric (right-aligned) despite its 'All' total row.
        dtype = dtypes[name]
        if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
            right.append(True)
        else:
            present = [v for v in values if not _missing(v) and v != TOTAL_LABEL]
            right.append(bool(present) and all(_is_number(v) for v in present))
    rows = [list(row) for row in zip(*cells, strict=True)] if cells else []
    return headers, rows, right


# --------------------------------------------------------------------------------------------- formats


def _one_line(value: object) -> str:
    # A provenance value goes into a comment line: a newline in it would end the comment.
    return " ".join(str(value).split())


def _csv(df: pd.DataFrame, provenance: Mapping[str, str]) -> str:
    # '#' lines before the header (pandas: read_csv(..., comment="#")).
    head = "".join(f"# {k}: {_one_line(v)}\n" for k, v in provenance.items())
    safe = df.map(spreadsheet_cell).rename(columns=spreadsheet_cell)  # names and cells may come from data
    # The csv module quotes a cell holding a character of its line terminator only, and a bare carriage
    # return left unquoted starts a new row in a spreadsheet (where a formula would run): each row is
    # written with CRLF, so such cells are quoted, and ends in '\n' like every file we write.
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    rows = []
    for row in csv.reader(io.StringIO(safe.to_csv(index=False, lineterminator="\r\n"), newline="")):
        writer.writerow(row)
        rows.append(buffer.getvalue().removesuffix("\r\n") + "\n")
        buffer.seek(0)
        buffer.truncate()
    return head + "".join(rows)


def _jsonl(df: pd.DataFrame, provenance: Mapping[str, str]) -> str:
    columns = [str(c) for c in df.columns]
    head = [json.dumps({"provenance": dict(provenance)}, ensure_ascii=False)] if provenance else []
    lines = head + [
        json.dumps(dict(zip(columns, (_jsonable(v) for v in row), strict=True)), ensure_ascii=False)
        for row in df.itertuples(index=False, name=None)
    ]
    return "".join(line + "\n" for line in lines)


def _markdown(df: pd.DataFrame, caption: str | None, provenance: Mapping[str, str]) -> str:
    headers, rows, right = _display(df)
    dash = "—"
    lines = []
    if caption:
        lines += [f"**{_md_escape(caption)}**", ""]
    if provenance:
        lines += [
            "_" + " · ".join(f"{k}: {_md_escape(_one_line(v))}" for k, v in provenance.items()) + "_",
            "",
        ]
    if not headers:
        return "\n".join(lines)
    lines.append("| " + " | ".join(_md_escape(h) for h in headers) + " |")
    lines.append("|" + "|".join("---:" if r else "---" for r in right) + "|")
    for row in rows:
        lines.append("| " + " | ".join(dash if c is None else _md_escape(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def _column_spec(right: bool, cells: list[str | None]) -> str:
    """'r' for numbers, 'l' for short text; a paragraph column for long labels, which wrap in it instead
    of running off the page."""
    if right:
        return "r"
    longest = max((len(c) for c in cells if c is not None), default=0)
    return f"p{{{WRAP_EM}em}}" if longest > WRAP_AT else "l"


def _latex(df: pd.DataFrame, caption: str | None, label: str | None, provenance: Mapping[str, str]) -> str:
    headers, rows, right = _display(df)
    columns = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in headers]
    spec = "".join(_column_spec(r, c) for r, c in zip(right, columns, strict=True))
    offline = str(provenance.get("offline", "")).startswith("yes")
    if offline and caption is not None:
        caption += " (offline)"
    body = [
        *(f"% {k}: {_one_line(v)}" for k, v in provenance.items()),
        r"\begin{tabular}{" + spec + "}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in headers) + r" \\",
        r"\midrule",
        *(" & ".join("--" if c is None else latex_escape(c) for c in row) + r" \\" for row in rows),
        r"\bottomrule",
        r"\end{tabular}",
    ]
    if caption is None and label is None:
        return "\n".join(body) + "\n"
    # Caption above the table, as booktabs recommends; labels are keys, not text, so not escaped.
    head = [r"\begin{table}[htbp]", r"\centering"]
    if caption is not None:
        head.append(r"\caption{" + latex_escape(caption) + "}")
    if label is not None:
        head.append(r"\label{" + label + "}")
    return "\n".join([*head, *body, r"\end{table}"]) + "\n"


def export_table(
    df: pd.DataFrame,
    fmt: Format | str,
    caption: str | None = None,
    label: str | None = None,
    provenance: Mapping[str, str] | None = None,
) -> str:
    """The table as text in `fmt`: 'csv', 'jsonl', 'md' or 'latex' (also 'markdown', 'tex', 'json').

    CSV and JSONL hold the raw values, one row per line (JSONL: one object per line, missing as null);
    `caption` and `label` apply to LaTeX (a `table` float is written when either is given) and `caption`
    to Markdown (a bold line above the table). `provenance` (what produced the numbers: run, target,
    judge, offline or not) heads every format: '#' lines in CSV, a first {"provenance": ...} line in
    JSONL, an italic line in Markdown, '%' lines in LaTeX (and "(offline)" in its caption). Formatting
    rules are in the module docstring.
    """
    kind = _ALIASES.get(fmt, fmt)
    about = dict(provenance or {})
    writers: dict[str, Callable[[], str]] = {
        "csv": lambda: _csv(df, about),
        "jsonl": lambda: _jsonl(df, about),
        "md": lambda: _markdown(df, caption, about),
        "latex": lambda: _latex(df, caption, label, about),
    }
    if kind not in writers:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if label is not None and re.search(r"[\s{}\\%#]", label):
        raise ValueError(f"a LaTeX label cannot contain spaces or {{ }} \\ % #: {label!r}")
    return writers[kind]()
