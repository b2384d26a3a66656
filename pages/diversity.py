"""Diversity and coverage: where the selected specs sit among the candidates, and what they cover.

The map and the curves are computed by a job in a worker (evalcore.specs.spec_map) and read here from the
store; this page never fits a map."""

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.jobs.queue import enqueue
from evalcore.models import RunStatus
from evalcore.specs.charts import coverage_chart, curve_table, gap_chart, map_chart, map_frame
from evalcore.specs.spec_map import map_changes, map_status, read_map, start_map
from evalcore.specs.store_ops import current_selection
from pages._common import (
    current_actor,
    current_project,
    lazy_expander,
    md,
    next_step,
    show_error,
    show_workers,
    store_or_stop,
)

COVERAGE_COLUMNS = 40  # a column per selected spec: beyond this many a label is too thin to read

store = store_or_stop()
project_id = current_project(store)
st.title("Diversity and coverage")
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()


@st.cache_resource(show_spinner=False, max_entries=4)
def _map(run_id: str):
    # A finished map run never changes: its id is the whole key. Held, not copied per rerun (5,000 points);
    # nothing on the page changes it.
    return read_map(store, run_id)


@st.cache_data(show_spinner=False, max_entries=8)
def _map_view(run_id: str, selected: frozenset[str], titles: tuple[tuple[str, str], ...], colour: str):
    # The chart's tables of 5,000 points: built once per map, selection, titles and colour.
    frame = map_frame(_map(run_id), set(selected), dict(titles))
    return map_chart(frame, colour), len(frame), int(frame["selected"].sum())


def _start(refit: bool) -> None:
    try:
        enqueue(store, start_map(store, project_id, refit=refit).id, actor=current_actor())
    except EvalcoreError as exc:
        show_error(exc)


status = map_status(store, project_id)
if status.failed is not None:
    st.error(f"The latest map job stopped: {md(status.failed.stopped_reason or 'no reason recorded')}")
if status.latest is None and status.job is None:
    if store.count_items(project_id).get("spec", 0) < 2:
        st.info("Generate at least two candidate specs on the Spec review page first.")
        st.stop()
    if status.failed is None:
        _start(refit=True)  # nothing to show yet: the first map is computed without asking
        status = map_status(store, project_id)
    elif st.button("Try again", type="primary"):
        _start(refit=True)
        st.rerun()
job, map_run = status.job, status.latest


@st.fragment(run_every=2.0)
def _wait(run_id: str) -> None:
    """While a map job is queued or running: say so, and redraw the page once it has ended."""
    run = store.run(run_id)
    if run.status not in (RunStatus.pending, RunStatus.running):
        st.rerun()
    state = "waiting for a worker" if run.status == RunStatus.pending else "being computed by a worker"
    st.info(
        f"The map is {state}. It appears here when done; the page need not stay open. "
        "`evalcore serve` starts a worker beside the dashboard, `evalcore worker` starts one alone.",
        icon=":material/hourglass_top:",
    )
    show_workers(store, run)


if job is not None:
    _wait(job.id)
if map_run is None:
    st.stop()

spec_map = _map(map_run)
changes = map_changes(store, project_id, spec_map)
selected = set(current_selection(store, project_id))
documents = store.documents(project_id)
titles = tuple((d.id, d.title) for d in documents)
if not selected:
    st.warning("No selection yet: select specs on the Spec review page to see them highlighted.")

fitted = f"{spec_map.method} layout fitted at {spec_map.fitted_at:%Y-%m-%d %H:%M} UTC"
if spec_map.placed:
    fitted += f"; {spec_map.placed} spec(s) placed since by their nearest neighbours"
if changes:
    st.warning(
        f"The map is stale: since it was drawn, {changes.added} spec(s) were added, {changes.changed} saved "
        f"(edited, reviewed or locked) and {changes.removed} removed. Update it to place new and reworded "
        "specs by their nearest neighbours (the layout stays), or refit every point.",
        icon=":material/update:",
    )
buttons = st.container(horizontal=True)
if changes and buttons.button("Update the map", type="primary", disabled=job is not None):
    _start(refit=False)
    st.rerun()
refit_help = "Fit every point again (about a minute at 5,000 specs)."
if buttons.button("Refit the map", disabled=job is not None, help=refit_help):
    _start(refit=True)
    st.rerun()


def _map_view_tab() -> None:
    colour = st.radio("Colour by", ["category", "document"], horizontal=True)
    figure, candidates, stars = _map_view(map_run, frozenset(selected), titles, colour)
    st.vega_lite_chart(figure, width="stretch")
    st.caption(
        f"{candidates:,} candidates (rejected specs excluded), {stars} selected (stars). Nearby points are "
        f"specs with similar wording. Drag to move, shift + scroll to zoom, double click to reset. {fitted}."
    )


def _coverage_tab() -> None:
    chosen = [(p.id, p.scenario, p.documents) for p in spec_map.points if p.id in selected]
    if not chosen:
        st.info("No spec is selected yet: select specs on the Spec review page.")
        return
    ordered = [(d.id, d.title) for d in documents]
    drawn = chosen
    if len(chosen) > COVERAGE_COLUMNS and not st.toggle(f"Show all {len(chosen)} selected specs"):
        drawn = chosen[:COVERAGE_COLUMNS]
        st.caption(
            f"The first {COVERAGE_COLUMNS} of {len(chosen)} selected specs; the count below is of all."
        )
    st.vega_lite_chart(coverage_chart(drawn, ordered), width="stretch")
    cited = {d for _, _, docs in chosen for d in docs}
    uncovered = [title for doc_id, title in ordered if doc_id not in cited]
    st.caption(
        f"{len(ordered) - len(uncovered)} of {len(ordered)} documents covered."
        + (f" Not covered: {md(', '.join(uncovered))}." if uncovered else "")
    )


def _gains_tab() -> None:
    if not spec_map.curves:
        st.info("No curves in this map: refit it to compare the selection methods.")
        return
    st.vega_lite_chart(gap_chart(spec_map.curves), width="content")  # three panels of a set width
    note = (
        "Each point is the method's selection of k specs minus Random's (mean of 10 seeds) at the same k: "
        "above the dotted zero line the method beats picking at random. Greedy is the method (log-det "
        "diversity + document coverage)."
    )
    start = min(c.k for c in spec_map.curves)
    if start > 2:
        # metrics_by_k moves every k below the number of locked and human specs up to it.
        note += f" The curves start at k = {start}: every selection keeps the {start} locked and human specs."
    st.caption(note)
    values = lazy_expander("The values", "diversity_values")  # the table drawn only once opened
    if values.open:
        values.dataframe(curve_table(spec_map.curves), hide_index=True, width="stretch")


# One view at a time, another drawn when its tab is opened (a switch reruns the page): at a team's scale
# each chart costs the browser a quarter to half a second, the map the most (issue 28).
VIEWS = (
    ("Candidates on a 2D map", _map_view_tab),
    ("Which documents the selected specs cover", _coverage_tab),
    ("What Greedy and Max-Min gain over Random", _gains_tab),
)
tabs = st.tabs([label for label, _ in VIEWS], key="diversity_view", on_change="rerun")
for tab, (_, draw) in zip(tabs, VIEWS, strict=True):
    if tab.open:
        with tab:
            draw()
next_step("pages/conversations.py", "generate conversations from the chosen specs")
