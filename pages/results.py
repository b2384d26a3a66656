"""Results: every played item of every run against a target in one table (filters, search, pages), an
opened row in full, and a run compared with a baseline item by item."""

import pandas as pd
import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.models.wording import told_apart, words
from evalcore.reports.compare import (
    CHANGE_ORDER,
    compare_to_baseline,
    likely_baseline,
    read_ahead,
    scope_label,
)
from evalcore.reports.failures import report_stamp
from evalcore.reports.item_titles import item_titles
from evalcore.reports.pass_k import pass_k_line, run_pass_k
from evalcore.reports.result_detail import result_detail
from evalcore.reports.results import (
    VERDICTS,
    ResultFilters,
    filter_choices,
    result_runs,
    results_page,
    run_labels,
    run_name,
    spec_titles,
)
from evalcore.runs import RUN_KIND
from evalcore.runs.repetitions import repetitions_of
from pages._common import answer_block, current_project, md, md_block, show_error, store_or_stop

PAGE_SIZES = (25, 50, 100)
COMPARE_ROWS = 200  # rows of the compare's table per page
FLIPS_SHOWN = 20  # flipped turns listed as text above the compare's table
COLUMNS = {
    "run_name": "run",
    "item_id": "item",
    "turn_index": "turn",
    "generator": "generator",
    "spec": "spec",
    "verdict": "verdict",
    "score": "score",
    "error_type": "error type",
    "reason": "reason",
}

store = store_or_stop()
project_id = current_project(store)
st.title("Results")
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()

runs = result_runs(store, project_id)
if not runs:
    st.info("No run against a target yet: start one on the Runs page.")
    st.page_link("pages/runs.py", label="Go to Runs", icon=":material/play_circle:")
    st.stop()
by_id = {r.id: r for r in runs}
# Runs in words, never by id: pickers by name, target, judge, start and status (as Runs and Reports name
# them), the table by name alone; a repeated name gets ' #2'.
labels = run_labels(runs)
names = told_apart({r.id: run_name(r) for r in runs})

if not [r for r in st.session_state.get("results_runs", []) if r in by_id]:
    st.session_state["results_runs"] = [runs[0].id]
run_ids = st.multiselect(
    "Runs",
    list(by_id),
    key="results_runs",
    format_func=labels.get,
    placeholder="Pick runs",
)
if not run_ids:
    st.info("Pick one or more runs.")
    st.stop()

stamp = report_stamp(store, tuple(run_ids))


# Every cache below is keyed on `stamp` (hashed: a growing run, a verdict or a renamed spec reads afresh).
@st.cache_data(show_spinner=False, max_entries=8)
def _spec_titles(url: str, pid: str, stamp: tuple) -> dict[str, str]:
    # Read once per stamp and handed to every read below: each read them again (a scan of every spec,
    # three per first visit at 5,000 specs).
    return spec_titles(store, pid)


titles_of_specs = _spec_titles(store.url, project_id, stamp)


@st.cache_data(show_spinner=False, max_entries=32)
def _choices(url: str, pid: str, ids: tuple[str, ...], stamp: tuple) -> tuple[list[str], dict[str, str]]:
    return filter_choices(store, pid, ids, titles_of_specs)


generators, specs = _choices(store.url, project_id, tuple(run_ids), stamp)
cols = st.columns([1, 1, 2, 2])
generator = cols[0].selectbox(
    "Generator", ["", *generators], format_func=lambda g: words(g) if g else "every generator"
)
verdict = cols[1].selectbox("Verdict", ["", *VERDICTS], format_func=lambda v: v or "every verdict")
spec_id = cols[2].selectbox("Spec", ["", *specs], format_func=lambda s: specs.get(s, "every spec"))
text = cols[3].text_input("Search", placeholder="words in the item, spec, question, reply or reason")
with_rejected = st.checkbox(
    "Include rejected items",
    key="results_rejected",
    help="Items annotators rejected are left out unless ticked.",
)
filters = ResultFilters(
    run_ids=list(run_ids),
    generator=generator or None,
    verdict=verdict or None,
    spec_id=spec_id or None,
    text=text,
    include_rejected=with_rejected,
)


@st.cache_data(show_spinner="Reading results...", max_entries=64)
def _page(url: str, pid: str, wanted: str, offset: int, limit: int, stamp: tuple):
    filters = ResultFilters.model_validate_json(wanted)
    return results_page(store, pid, filters, offset=offset, limit=limit, titles=titles_of_specs)


# The headline above the table, written once the rows are read.
above = st.container()
# A session's first run draws the table's empty frame at once: the browser fetches and compiles the
# table's scripts (1.2 MB, on a browser's first visit) while the rows are read. Later runs draw the table
# in place (an empty frame there would blank the rows shown until the new ones are read).
first_run = "results_table" not in st.session_state
table = st.empty() if first_run else st
if first_run:
    table.dataframe(pd.DataFrame(columns=list(COLUMNS.values())), hide_index=True, width="stretch")
# The page size picker is drawn below the table: its default set here, or the first run would read 50
# rows and every later rerun 25 (a second read of the store after any click).
size = st.session_state.setdefault("results_size", PAGE_SIZES[1])
number = st.session_state.get("results_page_number", 1)
try:
    page = _page(store.url, project_id, filters.model_dump_json(), (number - 1) * size, size, stamp)
except EvalcoreError as exc:
    if first_run:
        table.empty()  # no frame of a table that will not come
    show_error(exc)
    st.stop()
pages = max(1, -(-page.total // size))
if number > pages:  # the filters left fewer pages than the one shown: go back to the first
    st.session_state["results_page_number"] = number = 1
    page = _page(store.url, project_id, filters.model_dump_json(), 0, size, stamp)
rate = "-" if page.failure_rate is None else f"{page.failure_rate:.1%}"
above.caption(
    f"{page.total:,} rows · failure rate {rate} ({page.verdicts['fail']:,} failed, "
    f"{page.verdicts['unscored']:,} unscored) · counts {md(scope_label('all', with_rejected))}."
)


@st.cache_data(show_spinner=False, max_entries=16)
def _pass_k(url: str, run_id: str, rejected: bool, stamp: tuple) -> dict:
    return run_pass_k(store, store.run(run_id), include_rejected=rejected)


# Only a run repeated with --repeat N has a pass^k to show (tau-bench's, beside the failure rate): a run
# played once is not read again for it (a third of the page's time on a run of 100,000 judged turns).
for rid in [r for r in run_ids if by_id[r].kind == RUN_KIND and len(repetitions_of(store, by_id[r])) > 1]:
    repeated = _pass_k(store.url, rid, with_rejected, stamp)
    if len(repeated) > 1:
        above.caption(md(f"{names[rid]}: over {len(repeated)} repetitions, ") + pass_k_line(repeated))


@st.cache_data(show_spinner=False, max_entries=64)
def _titles(url: str, pid: str, ids: tuple[str, ...], stamp: tuple) -> dict[str, str]:
    return item_titles(store, ids, titles_of_specs)


frame = pd.DataFrame([r.model_dump() for r in page.rows], columns=[*COLUMNS, "ref"])
# A row of a whole item (a test, a scenario, a dialogue with no breakdown) has no turn: blank, not "None".
frame["turn_index"] = [str(r.turn_index) if r.turn_index is not None else "" for r in page.rows]
frame["generator"] = [words(r.generator, missing="") for r in page.rows]  # 'Questions about documents'
frame["error_type"] = [words(r.error_type, missing="") for r in page.rows]  # 'A check failed'
# Items and runs in words: what the item's user first asks, the run's name.
titles = _titles(store.url, project_id, tuple(sorted({r.item_id for r in page.rows})), stamp)
frame["item_id"] = [titles[r.item_id] for r in page.rows]
frame["run_name"] = [names.get(r.run_id, r.run_name) for r in page.rows]
selected = table.dataframe(
    frame[list(COLUMNS)].rename(columns=COLUMNS),
    hide_index=True,
    width="stretch",
    on_select="rerun",
    selection_mode="single-row",
    key="results_table",
)
nav = st.columns([1, 1, 4])
nav[0].number_input("Page", min_value=1, max_value=pages, step=1, key="results_page_number")
nav[1].selectbox("Rows per page", PAGE_SIZES, key="results_size")
nav[2].caption(f"Page {number} of {pages:,}")


# ------------------------------------------------------------------------------------ the opened row
def _show_detail(row) -> None:
    detail = result_detail(store, row)
    turn = "" if row.turn_index is None else f", turn {row.turn_index}"
    st.subheader(md(f"{titles[row.item_id]}{turn}: {row.verdict}"))
    st.caption(
        md(f"run {names.get(row.run_id, row.run_name)} · {words(row.generator, missing='no generator')}")
        + md(f" · spec {row.spec or '-'}")
        + (md(f" · {words(row.error_type)}") if row.error_type else "")
    )
    if detail.question:
        st.markdown("**Asked**")
        st.markdown(md_block(detail.question))
    left, right = st.columns(2)
    left.markdown("**Expected**")
    left.markdown(answer_block(detail.expected or "-"))
    right.markdown("**Actual**")
    right.markdown(md_block(detail.actual or "-"))
    st.markdown("**Reason**")
    st.markdown(md_block(detail.reason or "-"))
    if detail.checks:
        checks = pd.DataFrame([c.model_dump() for c in detail.checks])
        st.dataframe(checks, hide_index=True, width="stretch")
    if detail.documents:
        st.caption("Documents: " + md(", ".join(detail.documents)))
    if detail.tool_calls:
        st.caption("Tool calls: " + md("; ".join(detail.tool_calls)))
    if detail.transcript:
        st.markdown("**The item** (the judged turn marked)")
        for line in detail.transcript:
            said = f"**{md(line.role)}**: {md_block(line.text)}"
            # The judged turn stands out in red; the others read as a transcript.
            if line.highlighted:
                st.error(said, icon=":material/arrow_forward:")
            else:
                st.markdown(said)
    st.markdown("**Review history**")
    if detail.reviews:
        history = pd.DataFrame(
            [a.model_dump(include={"created_at", "author", "role", "label", "reason", "turn_index", "note"})
             for a in detail.reviews]
        )  # fmt: skip
        st.dataframe(history, hide_index=True, width="stretch")
    else:
        st.caption("Nobody has reviewed this item yet.")


chosen = selected.selection.rows if selected else []
if chosen and chosen[0] < len(page.rows):
    with st.container(border=True):
        _show_detail(page.rows[chosen[0]])
else:
    st.caption("Select a row to open the item.")


# --------------------------------------------------------------------------------- against a baseline
st.header("Compare with a baseline")
# The run compared follows the first run picked above until one is chosen here.
if (
    st.session_state.get("results_compare_follows") != run_ids[0]
    or st.session_state.get("results_compare_run") not in by_id
):
    st.session_state["results_compare_follows"] = st.session_state["results_compare_run"] = run_ids[0]
left, right = st.columns(2)
run_id = left.selectbox("Run to compare", list(by_id), key="results_compare_run", format_func=labels.get)
bases = [r.id for r in runs if r.kind == by_id[run_id].kind and r.id != run_id]
if st.session_state.get("results_baseline") not in ["", *bases]:
    st.session_state["results_baseline"] = ""
baseline = right.selectbox(
    "Baseline",
    ["", *bases],
    format_func=lambda r: labels[r] if r else "(no baseline)",
    key="results_baseline",
    help="The run to compare is compared with it item by item. Runs of the same kind only: items are "
    "paired by what every run of the kind calls them.",
)
if not bases:
    st.caption("No other finished run of this kind to compare with yet.")
if not baseline:
    # While a baseline is picked: the run, then the baseline most picked, so that the compare reads
    # neither or only the baseline picked.
    likely = likely_baseline(by_id[run_id], [by_id[b] for b in bases])
    read_ahead(store, [run_id, *([likely] if likely else [])])
    st.stop()


# Kept as the object, not pickled: pickling a compare of 100,000 turns in and out of the cache cost more
# than pairing them. Nothing below changes it.
@st.cache_resource(show_spinner="Comparing...", max_entries=16)
def _compare(url: str, now: str, base: str, rejected: bool, stamp: tuple):
    return compare_to_baseline(store, now, base, include_rejected=rejected)


compare_stamp = report_stamp(store, (run_id, baseline))
try:
    cmp = _compare(store.url, run_id, baseline, with_rejected, compare_stamp)
except EvalcoreError as exc:
    show_error(exc)
    st.stop()
o = cmp.overall
unit = "turns" if by_id[run_id].kind == RUN_KIND else "items"
counts = cmp.items["change"].value_counts()
metrics = st.columns(5)
for col, change in zip(metrics, CHANGE_ORDER, strict=False):
    col.metric(change.capitalize(), f"{int(counts.get(change, 0)):,}")
metrics[4].metric(
    "McNemar p", f"{o.p_value:.3g}", help="Exact two-sided test on the broken and fixed counts (same items)."
)
st.caption(
    f"{o.n:,} {unit} scored in both runs, counts {md(cmp.scope)}: failure rate {o.baseline_rate:.1%} "
    f"[{o.baseline_ci[0]:.1%}, {o.baseline_ci[1]:.1%}] in the baseline, {o.rate:.1%} "
    f"[{o.ci[0]:.1%}, {o.ci[1]:.1%}] now; {o.broken:,} broken against {o.fixed:,} fixed."
)
flipped = cmp.flipped()
flips = flipped.head(FLIPS_SHOWN)
# Items in words (what their user first asks), read for the rows shown only.
said = _titles(store.url, project_id, tuple(sorted(set(flips["item_id"]))), compare_stamp)
# The flips as plain text first (what broke, then what got fixed), as the CI gate prints them.
st.text(
    "\n".join(
        f"{r.change}: {said[r.item_id]}{'' if r.turn_index is None else f' turn {r.turn_index}'} ({r.spec})"
        for r in flips.itertuples()
    )
    + (
        f"\n... and {len(flipped) - FLIPS_SHOWN:,} more in the table below"
        if len(flipped) > FLIPS_SHOWN
        else ""
    )
    or f"No {unit[:-1]} changed its verdict."
)
shown = st.multiselect("Show", list(CHANGE_ORDER), default=["broken", "fixed"], key="results_changes")
kept = cmp.items[cmp.items["change"].isin(shown)]
# The compare's table is paged too: a page of rows is sent and titled, not every pair of 100,000.
compare_pages = max(1, -(-len(kept) // COMPARE_ROWS))
if st.session_state.get("results_compare_page", 1) > compare_pages:
    st.session_state["results_compare_page"] = 1
start = (st.session_state.get("results_compare_page", 1) - 1) * COMPARE_ROWS
items = kept.iloc[start : start + COMPARE_ROWS]
compared = _titles(store.url, project_id, tuple(sorted(set(items["item_id"]))), compare_stamp)
if unit == "items":  # whole items (tests, scenarios, dialogues) have no turn to show
    items = items.drop(columns=["turn_index"])
if items.empty:
    st.caption(f"No {unit[:-1]} is {' or '.join(shown) or 'chosen'}.")
else:
    st.dataframe(
        items.drop(columns=["judgment_id"])
        .assign(  # an error type is shown only where there is one, in words
            item_id=lambda f: [compared[i] for i in f["item_id"]],
            baseline_error=lambda f: [
                words(e, missing="") if isinstance(e, str) else "" for e in f["baseline_error"]
            ],
            error_type=lambda f: [
                words(e, missing="") if isinstance(e, str) else "" for e in f["error_type"]
            ],
        )
        .rename(
            columns={
                "item_id": "item",
                "turn_index": "turn",
                "baseline_error": "error before",
                "error_type": "error now",
            }
        ),
        hide_index=True,
        width="stretch",
        key="results_compare_items",
    )
if compare_pages > 1:
    below = st.columns([1, 5])
    below[0].number_input("Page", min_value=1, max_value=compare_pages, step=1, key="results_compare_page")
    below[1].caption(f"Rows {start + 1:,}-{start + len(items):,} of {len(kept):,}")
st.subheader("By spec", help="Regressions first: more broken than fixed, then the smallest p.")
st.dataframe(
    cmp.spec_table().rename(columns={"paired": unit}),
    hide_index=True,
    width="stretch",
    key="results_compare_specs",
    column_config={
        "baseline %": st.column_config.NumberColumn(format="%.1f", help="Failure rate in the baseline"),
        "now %": st.column_config.NumberColumn(format="%.1f", help="Failure rate in the run"),
        "McNemar p": st.column_config.NumberColumn(format="%.3g"),
    },
)
