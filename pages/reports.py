"""Reports: failure rates of a run by spec, error type, documents, query type, turns and tier; drill-downs."""

import pandas as pd
import streamlit as st

from evalcore.jobs.control import committed_counts
from evalcore.models.wording import split_citation, told_apart, without_ids, words
from evalcore.reports import (
    TABLE_TITLES,
    build_report,
    cell_filter,
    compare_runs,
    export_tables,
    failing_turns,
    provenance,
)
from evalcore.reports.charts import failure_rate_chart
from evalcore.reports.compare import scope_label
from evalcore.reports.failures import TABLE_KEYS, history_label, overall, per_run_table, report_stamp, snippet
from evalcore.reports.tables import TOTAL_LABEL, column_kind, column_label, display_order, points_change
from evalcore.runs import RUN_KIND
from evalcore.runs.control import run_label
from evalcore.runs.records import ERROR_TYPES
from pages._cache import cached_figure
from pages._common import answer_block, current_project, md, md_block, next_step, quoted, store_or_stop

store = store_or_stop()
project_id = current_project(store)
st.title("Reports")
st.page_link("pages/results.py", label="Every item of every run: Results", icon=":material/list_alt:")
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()

every_run = store.runs(project_id, kind=RUN_KIND)
judged = committed_counts(store, [r.id for r in every_run])  # one query, not one per run
runs = [r for r in every_run if judged.get(r.id)]
if not runs:
    st.info("No run with judged turns yet: start one on the Runs page.")
    st.page_link("pages/runs.py", label="Go to Runs", icon=":material/play_circle:")
    st.stop()

by_id = {r.id: r for r in runs}


LABELS = told_apart({r.id: without_ids(run_label(r)) for r in runs})  # name, target, judge, start, status


def _label(run_id: str) -> str:
    return LABELS[run_id]


SCOPES = {"all": "All tiers", "gold": "Gold only", "silver+gold": "Silver and gold"}
# Run labels are long (target, judge, start, status, id): the pickers get the width to show them whole.
left, middle = st.columns([3, 1])
right = st.columns([3, 1])[0]
if st.session_state.get("report_run") not in by_id:
    st.session_state["report_run"] = runs[0].id
run_id = left.selectbox("Run", list(by_id), key="report_run", format_func=_label)
tiers = middle.selectbox(
    "Items",
    list(SCOPES),
    format_func=SCOPES.get,
    key="report_tiers",
    help="Verification tier of the played items.",
)
with_rejected = middle.checkbox(
    "Include rejected items",
    key="report_rejected",
    help="Items annotators rejected are left out of every count unless ticked.",
)
others = ["-", *[r for r in by_id if r != run_id]]
versus = right.selectbox(
    "Compare with",
    others,
    format_func=lambda r: "(no comparison)" if r == "-" else _label(r),
    key="report_vs",
)
versus = None if versus == "-" else versus


# The table a first visit draws, the first tab's; another tab's is made when opened.
FIRST_TABLES = ("by_spec",)


@st.cache_data(show_spinner="Loading judged turns...", max_entries=16)
def _report(url: str, run_ids: tuple[str, ...], scope: str, rejected: bool, stamp: tuple):
    # `stamp` changes as a run progresses and as annotators decide or correct: the report is re-read.
    return build_report(store, list(run_ids), tiers=scope, include_rejected=rejected, tables=FIRST_TABLES)


run_ids = (run_id, versus) if versus else (run_id,)
report = _report(store.url, run_ids, tiers, with_rejected, report_stamp(store, run_ids))
st.caption(f"Counts {scope_label(tiers, with_rejected)}.")
run = by_id[run_id]
if report.outdated:
    st.caption(
        f"{report.outdated} turn(s) left out: judged against an expected answer an annotator corrected "
        "since. Run again to judge them against the correction."
    )
if report.frame.empty:
    st.warning(f"No judged turn of this run is in scope ({SCOPES[tiers].lower()}).")
    st.stop()


# ----------------------------------------------------------------------------------------- summary
def _metrics(o: dict, title: str = "", delta: dict | None = None) -> None:
    cols = st.columns(4)
    rate = f"{o['failure_rate']:.1%}" if o["n"] else "-"
    change, flat = (None, True)
    if delta and o["n"]:
        change, flat = points_change(o["failure_rate"], delta["failure_rate"])
    # More failures is worse (red up); a gap that rounds to none gets neither colour nor arrow.
    cols[0].metric(
        f"Failure rate{title}", rate, change, delta_color="off" if flat else "inverse",
        delta_arrow="off" if flat else "auto",
        help=f"95% Wilson interval [{o['ci_low']:.1%}, {o['ci_high']:.1%}]" if o["n"] else None,
    )  # fmt: skip
    cols[1].metric(f"Failed / scored turns{title}", f"{int(o['failures']):,} / {int(o['n']):,}")
    cols[2].metric(
        f"Unscored{title}",
        f"{int(o['unscored']):,}",
        help="The judge's output could not be parsed: never counted as 0.",
    )
    cols[3].metric(
        f"Crashes{title}", f"{int(o['crashes']):,}", help="Turns where the target gave no usable reply."
    )
    if o["n"]:
        st.caption(f"Failure rate{title}: 95% interval [{o['ci_low']:.1%}, {o['ci_high']:.1%}]")


def _about(r) -> None:
    versions = ", ".join(
        f"{words(k).lower()} v{v}" for k, v in (r.params.get("prompt_versions") or {}).items()
    )
    st.caption(
        f"Target **{md(r.target)}** ({md(r.params.get('target_description', ''))}) · "
        f"judge **{md(r.judge)}** · "
        + md(
            f"history {history_label(r)} · prompts {versions or '-'} · evalcore {r.code_version} · "
            f"status {words(r.status.value).lower()}" + (f" ({r.stopped_reason})" if r.stopped_reason else "")
        )
    )


if versus:
    side_a = overall(report.frame[report.frame["run_id"] == run_id])
    side_b = overall(report.frame[report.frame["run_id"] == versus])
    _metrics(side_a, " (a)")
    _about(run)
    _metrics(side_b, " (b)", delta=side_a)
    _about(by_id[versus])
else:
    _metrics(report.overall)
    _about(run)
for r in report.runs:
    for warning in r.warnings:
        st.warning(md(f"{r.target}: {warning}"))

tables = compare_runs(report.frame, run_id, versus) if versus else None
within = report.within if not versus else None

# ------------------------------------------------------------------------------------------ charts
# The failure rate by number of documents and by query type, each drawn in its table's tab.
CHARTS = {"by_n_documents": ("n_documents", "Failure rate by number of documents"),
          "by_query_type": ("query_type", "Failure rate by query type")}  # fmt: skip


def _chart(key: str, title: str) -> None:
    if versus:
        # Two runs of one target are told apart by their ids (as in the run pickers), not only by the target.
        sides = {rid: f"{side}: {by_id[rid].target} ({rid})" for side, rid in (("a", run_id), ("b", versus))}
        table, split = per_run_table(report.frame, key, sides), "run"
    else:
        table, split = report.table(f"by_{key}"), within
    if key == "query_type":  # the seed's query types in words, as the tables show them
        table = table.assign(query_type=[v if pd.isna(v) else words(v) for v in table["query_type"]])
    st.vega_lite_chart(cached_figure(failure_rate_chart, table, key, title, split), width="stretch")


# ------------------------------------------------------------------------------------------ tables
PERCENT = {"failure_rate", "share", "diff"}


def _shown(df: pd.DataFrame) -> pd.DataFrame:
    """Rates in %, each Wilson interval as one 'low-high' column `ci`, unscored only when some turn is,
    keys of mixed type as text. Headers stay code names: `_config` labels them."""
    out = df.copy()
    if "spec_label" in out:  # the label says it; the id stays in the exports
        total = out["spec_id"] == TOTAL_LABEL  # the total row has an id 'All' and no label: say 'All'
        out["spec_label"] = out["spec_label"].where(~total, TOTAL_LABEL).fillna("")
        out = out.drop(columns=["spec_id"])
    for suffix in ("", "_a", "_b"):
        low, high = f"ci_low{suffix}", f"ci_high{suffix}"
        if low in out:
            interval = [
                "" if pd.isna(a) else f"{a * 100:.1f}-{b * 100:.1f}"
                for a, b in zip(out[low], out[high], strict=True)
            ]
            out.insert(out.columns.get_loc(low), f"ci{suffix}", interval)
            out = out.drop(columns=[low, high])
        if f"unscored{suffix}" in out and not out[f"unscored{suffix}"].any():
            out = out.drop(columns=[f"unscored{suffix}"])
    for column in ("error_type", "error_class", "tier", "query_type"):  # stored names, shown as words
        if column in out:
            out[column] = [v if pd.isna(v) else words(v) for v in out[column]]
    for column in list(out.columns):
        if column.removesuffix("_a").removesuffix("_b") in PERCENT:
            out[column] = (out[column].astype(float) * 100).round(1)
    for column in out.columns:
        if out[column].dtype == object and out[column].map(type).nunique() > 1:
            # A key with its total row (n_documents 1, 2, 3, 'All') is text for Arrow, which refuses
            # mixed columns; a missing key shows empty, not 'None'.
            out[column] = ["" if pd.isna(v) else str(v) for v in out[column]]
    return out


FORMATS = {"count": "localized", "percent": "%.1f", "points": "%+.1f"}  # localized: 14,000


def _config(df: pd.DataFrame) -> dict:
    """Plain headers and number formats for a shown table; the spec column wide and pinned, so a long
    scenario stays readable while the statistics scroll beside it."""
    config = {
        column: st.column_config.NumberColumn(column_label(column), format=FORMATS[column_kind(column)])
        if column_kind(column) in FORMATS
        else st.column_config.Column(column_label(column))
        for column in df.columns
    }
    if "spec_label" in df:
        # 560 px shows most scenarios whole beside four statistics at 1500 px; a comparison's eleven
        # statistics leave it the medium width, so diff and the second run stay on screen.
        config["spec_label"] = st.column_config.TextColumn(
            column_label("spec_label"), width="medium" if versus else 560, pinned=True
        )
    return config


def _row_label(table: str, row: pd.Series, key: str) -> str:
    name = row.get("spec_label") if table == "by_spec" and row.get(key) != TOTAL_LABEL else row.get(key)
    name = words(name) if key in ("error_type", "error_class", "tier", "query_type") else name
    prefix = f"{row[within]} · " if within and within in row else ""
    if versus:
        return f"{prefix}{name}: {int(row['failures_a'])} vs {int(row['failures_b'])} failing"
    return f"{prefix}{name}: {int(row['failures'])} failing"


def _drill(table: str, df: pd.DataFrame) -> None:
    key = TABLE_KEYS[table]
    rows = [
        i
        for i, row in df.iterrows()
        if (row["failures_a"] + row["failures_b"] if versus else row["failures"]) > 0
        or (not versus and row.get("unscored", 0) > 0)
    ]
    if not rows:
        st.caption("No failing turn here.")
        return
    choice = st.selectbox(
        "Show the failing turns of",
        [None, *rows],
        format_func=lambda i: "(choose a row)" if i is None else _row_label(table, df.loc[i], key),
        key=f"drill:{table}",
    )
    if choice is None:
        return
    filters = cell_filter(table, df.loc[choice].to_dict(), within)
    if versus:
        side = st.radio(
            "Of", ["a", "b"], horizontal=True, key=f"side:{table}",
            format_func=lambda s: md(_label(run_id if s == "a" else versus)),
        )  # fmt: skip
        filters["run_id"] = run_id if side == "a" else versus
    outcome = "failed"
    if report.overall["unscored"]:
        outcome = st.radio(
            "Turns", ["failed", "unscored"], horizontal=True, key=f"outcome:{table}",
            format_func={"failed": "failing", "unscored": "unscored (the judge's output was unusable)"}.get,
        )  # fmt: skip
    details, count = failing_turns(store, report.frame, filters, outcome=outcome, limit=20)
    word = "failing" if outcome == "failed" else "unscored"
    st.caption(f"{count} {word} turn(s){'; the first 20 shown' if count > 20 else ''}.")
    for detail in details:
        _turn(detail)


def _turn(detail) -> None:
    turn = detail.turn
    item = turn.conversation_id or turn.test_id
    with st.container(border=True):
        st.markdown(
            f"**{md(item)} · turn {turn.turn_index}** · {md(words(turn.query_type or 'untyped'))} · "
            f"error **{md(turn.error_type or 'unspecified')}** · tier **{md(detail.tier)}** · "
            f"target {md(detail.target)}"
        )
        if detail.spec_label:
            st.caption(f"Spec: {md(detail.spec_label)}")
        if turn.history:
            st.markdown("Conversation so far")
            for message in turn.history:
                st.markdown(f"**{md(message['role'])}**:\n" + quoted(message["content"]))
        st.markdown(f"**Question:** {md_block(turn.question)}")
        expected, got = st.columns(2)
        expected.markdown("**Expected**")
        expected.info(answer_block(turn.expected or "(none)"))
        got.markdown("**Got**")
        got.error(md_block(turn.reply or f"(no reply: {turn.crash})"))
        if turn.target_details and turn.target_details.get("passage"):
            got.caption(f"Answered from passage {md(turn.target_details['passage'])}")
        st.markdown(f"**Judge** ({md(turn.judge)}): {md_block(turn.rationale)}")
        if turn.error_type in ERROR_TYPES:
            st.caption(f"{turn.error_type}: {ERROR_TYPES[turn.error_type]}")
        for assertion in turn.assertions:
            st.caption(f"Assertion {md(assertion['detail'])}")
        if detail.documents:
            st.markdown("Grounding documents")
            for doc_id, title, text in detail.documents:
                st.caption(f"**{md(title)}** ({md(doc_id)}): {md(snippet(text))}")


def _downloads(name: str, df: pd.DataFrame) -> None:
    about = provenance(report.runs)  # run, target, judge, offline or not: at the head of every file
    formats = [
        ("csv", "CSV", "csv", "text/csv"),
        ("jsonl", "JSONL", "jsonl", "application/jsonl"),
        ("md", "Markdown", "md", "text/markdown"),
        ("latex", "LaTeX", "tex", "application/x-tex"),
    ]
    for column, (fmt, label, ext, mime) in zip(st.columns(len(formats)), formats, strict=True):
        column.download_button(
            # The file is made when clicked, not on every rerun (four formats of every table).
            label, lambda fmt=fmt: export_tables({name: df}, fmt, about)[name],
            file_name=f"{run_id}_{name}.{ext}", mime=mime, key=f"dl:{name}:{fmt}", icon=":material/download:",
        )  # fmt: skip


TAB_LABELS = {
    "by_spec": "By spec",
    "by_error_type": "By error type",
    "by_error_class": "By kind of error",
    "by_n_documents": "By number of documents",
    "by_query_type": "By query type",
    "by_turns": "First vs later turns",
    "by_pair": "Same question alone vs in context",
    "by_tier": "By tier",
}
# Only the open tab is drawn (a switch reruns the page): eight tables with their downloads and drill-downs,
# and two charts, cost the browser more than the rest of the page together (issue 28).
names = list(tables) if tables is not None else report.table_names
tabs = st.tabs([TAB_LABELS[name] for name in names], key="report_tab", on_change="rerun")
for tab, name in zip(tabs, names, strict=True):
    if not tab.open:
        continue
    df = tables[name] if tables is not None else report.table(name)
    with tab:
        if name in CHARTS:
            _chart(*CHARTS[name])
        title, source = split_citation(TABLE_TITLES[name])
        st.caption(
            title
            + (f": {md(_label(run_id))} (a) vs {md(_label(versus))} (b), diff = b - a" if versus else ""),
            help=source,
        )
        shown = _shown(df)
        st.dataframe(
            shown, hide_index=True, width="stretch", column_config=_config(shown),
            column_order=display_order(list(shown.columns)),
        )  # fmt: skip
        _downloads(name, df)
        if name in TABLE_KEYS:  # the pair table's turns are in two rows at once: no drill-down
            _drill(name, df)
next_step("pages/home.py", "see what is left on Home's checklist")
