"""Spec review: generate candidates, select, search and filter, edit, accept or reject, lock, add, history."""

import streamlit as st

from evalcore.errors import EvalcoreError, StaleVersionError
from evalcore.jobs import failed_units, retry_failed
from evalcore.jobs.queue import enqueue
from evalcore.models import SpecStatus
from evalcore.specs.browse import filter_specs, spec_counts, spec_table
from evalcore.specs.drafts import CATEGORIES, SpecDraft
from evalcore.specs.generation import DEFAULT_BATCH, DEFAULT_CANDIDATES, create_generation, latest_generation
from evalcore.specs.selecting import DEFAULT_K, METHODS, select_specs
from evalcore.specs.selection import DEFAULT_ALPHA
from evalcore.specs.store_ops import (
    add_human_spec,
    edit_spec,
    get_spec,
    list_specs,
    lock_spec,
    review_spec,
    spec_stamp,
    version_diffs,
)
from evalcore.specs.transfer import export_specs, import_specs
from pages._common import (
    LIVE,
    current_actor,
    current_project,
    current_user,
    flash,
    job_panel,
    lazy_expander,
    may_start,
    md,
    next_step,
    require_user,
    show_error,
    show_flash,
    store_or_stop,
)
from pages._interop import export_picker
from pages._pickers import first_listed

store = store_or_stop()
project_id = current_project(store)
st.title("Specs")
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()


def _opened_key(spec_id: str) -> str:
    return f"spec_opened_version:{spec_id}"


def _saved(message: str, spec_id: str) -> None:
    st.session_state.pop(_opened_key(spec_id), None)
    st.session_state.pop("spec_refusal", None)
    st.toast(message)
    st.rerun()


def _refused(exc: StaleVersionError, spec_id: str) -> None:
    # Shown below the forms (a button cannot live inside one); nothing of either save is lost.
    st.session_state["spec_refusal"] = (spec_id, str(exc))


def _show_refusal(spec_id: str) -> None:
    refusal = st.session_state.get("spec_refusal")
    if not refusal or refusal[0] != spec_id:
        return
    st.error(md(refusal[1]))
    if st.button("Reload the current version", key=f"reload:{spec_id}", type="primary"):
        st.session_state.pop(_opened_key(spec_id), None)
        st.session_state.pop("spec_refusal", None)
        st.rerun()


def _go(spec_id: str) -> None:
    st.session_state["open_spec"] = spec_id


def _previous_next(order: list[str], spec_id: str) -> None:
    """Previous and Next through the specs the table lists (its search and filters), with where this one
    is: a reviewer goes through them one by one without the table."""
    if spec_id not in order:
        return
    at = order.index(spec_id)
    with st.container(horizontal=True, vertical_alignment="center"):
        st.button(
            "Previous", icon=":material/chevron_left:", shortcut="Alt+P", disabled=at == 0,
            on_click=_go, args=(order[at - 1],), key="spec_previous",
        )  # fmt: skip
        st.button(
            "Next", icon=":material/chevron_right:", shortcut="Alt+N", disabled=at + 1 >= len(order),
            on_click=_go, args=(order[min(at + 1, len(order) - 1)],), key="spec_next",
        )  # fmt: skip
        st.caption(f"{at + 1:,} of {len(order):,} in the list")


@st.cache_data(show_spinner=False, max_entries=4)
def _table(project: str, stamp: tuple):
    # `stamp` changes with every save, review, lock and selection: a rerun reads one cheap query.
    return spec_table(list_specs(store, project))


table = _table(project_id, spec_stamp(store, project_id))
show_flash()

# ------------------------------------------------------------------ generate and select
last = latest_generation(store, project_id)
live = last is not None and last.status in LIVE
# Its forms are drawn only while it is open: closed (once some specs are selected), a visit costs nothing
# of them. A generation under way opens it, to show its progress.
generating = lazy_expander(
    "Generate and select", "specs_generate", expanded=not table["selected"].any() or live
)
if generating.open:
    with generating:
        gen, sel = st.columns(2)
        with gen, st.form("generate", enter_to_submit=False):
            st.markdown("**Generate candidates**")
            m = st.number_input("How many candidates (m)", 5, 2000, DEFAULT_CANDIDATES, step=5)
            seed = st.number_input("Seed", 0, 10_000, 0)
            batch = st.number_input(
                "Specs per model call", 1, 20, DEFAULT_BATCH,
                help="1 asks with seed 000's own prompt, one spec per call (its criteria: names, places "
                "and numbers as placeholders). More asks for that many per call with our prompt: fewer "
                "calls, and the business's own facts (prices, codes, periods) kept exact.",
            )  # fmt: skip
            semantic = st.checkbox(
                "Embeddings find documents for specs citing none",
                help="Beside BM25's word match. Off by default: it gave fewer distinct questions on every "
                "corpus we measured.",
            )
            resume = last is not None and not live and last.status.value != "finished"
            label = "Resume the stopped generation" if resume else "Generate"
            if st.form_submit_button(label, type="primary", disabled=live):
                try:
                    run_id = (
                        last.id
                        if resume
                        else create_generation(
                            store,
                            project_id,
                            int(m),
                            batch=int(batch),
                            seed=int(seed),
                            semantic_fallback=semantic,
                        ).id
                    )
                    enqueue(
                        store, run_id, actor=current_actor()
                    )  # a worker generates; the progress below is read from the store
                    st.rerun()
                except EvalcoreError as exc:
                    show_error(exc)
        if last is not None:
            with gen:
                job_panel(
                    store,
                    last.id,
                    "model calls",
                    stop_help="Specs already generated are kept; Resume goes on.",
                )
        if last is not None and not live:  # e.g. "55 of 60 requested specs generated: ..." and why
            for note in last.warnings:
                gen.caption(note)
        failed = failed_units(store, last.id) if last is not None and not live else {}
        if failed:  # kept with their reasons until retried
            gen.warning(
                f"{len(failed)} model call(s) of the latest generation failed: {', '.join(sorted(failed))}"
            )
            if gen.button(
                "Retry failed units",
                help="Generate them again; replies that could not be used are not reused.",
            ):
                try:
                    may_start(store, last.kind)
                    retry_failed(store, last.id)
                    enqueue(store, last.id, actor=current_actor())
                    st.rerun()
                except EvalcoreError as exc:
                    show_error(exc)
        with sel, st.form("select", enter_to_submit=False):
            st.markdown("**Select for diversity and coverage**")
            k = st.slider("How many to select (k)", 1, max(2, len(table)), min(DEFAULT_K, max(1, len(table))))
            alpha = st.slider(
                "Coverage weight (alpha)",
                0.0,
                2.0,
                float(round(DEFAULT_ALPHA, 3)),
                0.01,
                help="0 = diversity only; higher favours specs that cover documents no selected spec covers "
                "yet.",
            )
            gamma = st.number_input(
                "Kernel width (gamma)",
                min_value=0.0,
                value=0.0,
                format="%.4f",
                help="How far apart two specs must be to count as different (seed 000's RBF kernel). 0 = "
                "automatic: 1 / the median squared distance between the candidates.",
            )
            method = st.selectbox(
                "Method", METHODS, help="greedy is the method; random and maxmin are baselines."
            )
            if st.form_submit_button("Re-select", type="primary", disabled=table.empty):
                try:
                    with st.spinner("Embedding and selecting..."):
                        outcome = select_specs(
                            store, project_id, k, alpha=alpha, gamma=gamma or None, method=method,
                            author=current_user() or "evalcore",
                        )  # fmt: skip
                    metrics = outcome.metrics
                    flash(
                        "success",
                        f"Selected {len(outcome.selected)}: SPWD {metrics.spwd:.1f}, "
                        f"Var Div {metrics.var_div:.3f}, Coverage {metrics.coverage} document(s).",
                    )
                except EvalcoreError as exc:
                    show_error(exc)

if table.empty:
    st.info("No specs yet: generate candidates above, or add one by hand below.")

# ------------------------------------------------------------------ table with filters
if not table.empty:
    counts = spec_counts(table)
    for column, label in zip(st.columns(4), ("Candidates", "Selected", "Accepted", "Rejected"), strict=True):
        column.metric(label, f"{counts[label]:,}")
    if counts["offline"]:
        st.caption(
            f"{counts['offline']:,} spec(s) were written by the offline provider (no model): marked offline."
        )

    f1, f2, f3, f4 = st.columns([3, 2, 2, 1.3], vertical_alignment="bottom")
    query = f1.text_input("Search", placeholder="words in the scenario, steps or documents")
    statuses = f2.multiselect("Status", [s.value for s in SpecStatus])
    categories = f3.multiselect("Category", sorted(set(table["category"])))
    only_selected = f4.toggle("Selected only")
    shown = filter_specs(table, query, statuses, categories, only_selected)
    st.caption(f"{len(shown):,} of {len(table):,} spec(s). Click a row to open it.")
    event = st.dataframe(
        shown.drop(columns=["text"]),
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        # Widths (px) that fit all nine columns in the ~1,030 px of a 1500 px window: the scenario gets
        # the room; documents, author and version show whole or cut at the end, no column is off-screen.
        column_config={
            "id": None,
            "selected": st.column_config.CheckboxColumn("selected", width=60),
            "status": st.column_config.TextColumn("status", width=80),
            "locked": st.column_config.CheckboxColumn("locked", width=52),
            "category": st.column_config.TextColumn("category", width=140),
            "scenario": st.column_config.TextColumn("scenario", width=330),
            "documents": st.column_config.TextColumn("documents", width=130),
            "written by": st.column_config.TextColumn("written by", width=70),
            "version": st.column_config.NumberColumn("version", width=55),
            "saved by": st.column_config.TextColumn("saved by", width=80),
        },
        key="spec_table",
    )
    rows = event.selection.rows if event and event.selection else []
    picked = shown.iloc[rows[0]]["id"] if rows else None
    # A row picked in the table opens its spec once: Previous and Next then move on from it.
    if picked is not None and picked != st.session_state.get("spec_table_picked"):
        st.session_state["open_spec"] = picked
    elif "spec" in st.query_params and "open_spec" not in st.session_state:
        st.session_state["open_spec"] = st.query_params["spec"]  # a shared link to one spec
    st.session_state["spec_table_picked"] = picked
    if "spec_added" in st.session_state:  # a spec just added by hand below
        st.session_state["open_spec"] = st.session_state.pop("spec_added")
    scenarios = dict(zip(shown["id"], shown["scenario"], strict=True))
    if st.session_state.get("open_spec") not in scenarios:
        st.session_state["open_spec"] = None
    # A long table's picker lists its first specs only (a picker of thousands costs every visit); Search
    # above narrows the table and the picker to any spec.
    listed = first_listed(scenarios, st.session_state["open_spec"])
    st.selectbox(
        "Open a spec",
        listed,
        key="open_spec",
        format_func=lambda sid: scenarios[sid],
        placeholder="Type to search, or click a row above"
        if len(listed) >= len(scenarios)
        else f"Type to search the first {len(listed):,} of {len(scenarios):,}, or narrow them with Search",
    )

# ------------------------------------------------------------------ the open spec
spec_id = st.session_state.get("open_spec")
if spec_id:
    st.query_params["spec"] = spec_id
else:
    st.query_params.pop("spec", None)
if spec_id and spec_id in set(table["id"]):
    view = get_spec(store, project_id, spec_id)
    opened = st.session_state.setdefault(_opened_key(spec_id), view.version)
    spec = view.spec
    st.divider()
    _previous_next(list(scenarios), spec_id)
    st.subheader(md(spec.scenario))
    producer = "offline provider" if spec.provenance.is_offline else spec.provenance.producer
    st.caption(
        md(
            f"{spec.id} · version {view.version} saved by {view.saved_by} at {view.saved_at:%Y-%m-%d %H:%M}"
            f" · written by {producer} · {'selected' if spec.selected else 'not selected'}"
            f" · status {spec.status.value}" + (" · locked" if spec.locked else "")
        )
    )
    if opened != view.version:
        st.warning(
            f"This spec changed since you opened it (you opened version {opened}, it is now {view.version})."
        )

    documents = [d.id for d in store.documents(project_id)]
    with st.form(f"edit:{spec_id}", enter_to_submit=False):
        scenario = st.text_input("Scenario", spec.scenario)
        given = st.text_area("Given", spec.given, height=68)
        when = st.text_area("When", spec.when, height=68)
        then = st.text_area("Then", spec.then, height=90)
        c1, c2 = st.columns(2)
        category = c1.selectbox(
            "Category",
            sorted({*CATEGORIES, spec.category}),
            index=sorted({*CATEGORIES, spec.category}).index(spec.category),
        )
        docs = c2.multiselect("Documents", documents, [d for d in spec.documents if d in documents])
        if st.form_submit_button("Save edit", type="primary"):
            author = require_user()
            try:
                edit_spec(
                    store,
                    spec_id,
                    author,
                    opened,
                    actor=current_actor(),
                    scenario=scenario,
                    given=given,
                    when=when,
                    then=then,
                    category=category,
                    documents=docs,
                )
                _saved("Saved as a new version.", spec_id)
            except StaleVersionError as exc:
                _refused(exc, spec_id)
            except EvalcoreError as exc:
                show_error(exc)

    r1, r2, r3 = st.columns([2, 3, 2])
    with r1:
        if st.button("Accept", key=f"accept:{spec_id}", type="primary", width="stretch"):
            try:
                review_spec(
                    store, spec_id, require_user(), opened, SpecStatus.accepted, actor=current_actor()
                )
                _saved("Accepted.", spec_id)
            except StaleVersionError as exc:
                _refused(exc, spec_id)
            except EvalcoreError as exc:
                show_error(exc)
    with r2, st.form(f"reject:{spec_id}", border=False, enter_to_submit=False):
        reason = st.text_input(
            "Reason for rejecting", placeholder="e.g. duplicate of another spec; not testable"
        )
        if st.form_submit_button("Reject", width="stretch"):
            try:
                review_spec(
                    store, spec_id, require_user(), opened, SpecStatus.rejected, reason, actor=current_actor()
                )
                _saved("Rejected.", spec_id)
            except StaleVersionError as exc:
                _refused(exc, spec_id)
            except EvalcoreError as exc:
                show_error(exc)
    with r3:
        label = "Unlock" if spec.locked else "Lock (always selected)"
        if st.button(label, key=f"lock:{spec_id}", width="stretch"):
            try:
                lock_spec(store, spec_id, require_user(), opened, not spec.locked, actor=current_actor())
                _saved("Unlocked." if spec.locked else "Locked.", spec_id)
            except StaleVersionError as exc:
                _refused(exc, spec_id)
            except EvalcoreError as exc:
                show_error(exc)
    if spec.reason:
        st.caption(f"Reason: {md(spec.reason)}")
    _show_refusal(spec_id)

    history = lazy_expander(f"Version history ({view.version} version(s))", "specs_history")
    if history.open:
        with history:
            for rev, diff in reversed(version_diffs(store, spec_id)):
                st.markdown(
                    f"**v{rev.version}** · "
                    + md(f"{rev.note} by {rev.author} at {rev.created_at:%Y-%m-%d %H:%M:%S}")
                )
                if diff:
                    st.code(diff, language="diff")

# ------------------------------------------------------------------ add, import, export
st.divider()
add_col, io_col = st.columns(2)
# The two expanders draw their forms, uploader and downloads only while open.
with add_col:
    adding = lazy_expander("Add a spec by hand", "specs_add")
if adding.open:
    with adding, st.form("add_spec", clear_on_submit=True, enter_to_submit=False):
        scenario = st.text_input("Scenario")
        given = st.text_input("Given")
        when = st.text_input("When")
        then = st.text_input("Then")
        category = st.selectbox("Category", CATEGORIES)
        if st.form_submit_button("Add spec"):
            author = require_user()
            if not all(x.strip() for x in (scenario, given, when, then)):
                st.warning("Fill in Scenario, Given, When and Then.")
            else:
                try:
                    new_id = add_human_spec(
                        store,
                        project_id,
                        SpecDraft(scenario=scenario, given=given, when=when, then=then, category=category),
                        author,
                        actor=current_actor(),
                    )
                except EvalcoreError as exc:
                    show_error(exc)
                    st.stop()
                # The picker above is drawn already: the next run opens it (`spec_added`).
                st.session_state["spec_added"] = new_id
                st.toast("Added; human-written specs are always selected.")
                st.rerun()
with io_col:
    transfer = lazy_expander("Import or export specs", "specs_io")
if transfer.open:
    with transfer:
        upload = st.file_uploader("Spec file (.yaml or .feature)", type=["yaml", "yml", "feature"])
        if upload is not None and st.button("Import file"):
            try:
                result = import_specs(
                    store,
                    project_id,
                    upload.getvalue().decode("utf-8"),
                    upload.name,
                    require_user(),
                    actor=current_actor(),
                )
                st.success(f"{len(result.added)} added, {len(result.updated)} updated.")
            except EvalcoreError as exc:
                show_error(exc)
            except UnicodeDecodeError:
                st.error(f"{md(upload.name)} is not UTF-8 text; nothing was imported.")
        only = st.toggle("Selected specs only", value=True, key="export_selected")
        st.download_button(
            "Download YAML",
            lambda: export_specs(store, project_id, "yaml", selected_only=only),  # written on click only
            f"{project_id}-specs.yaml",
            "application/x-yaml",
        )
        st.download_button(
            "Download Gherkin (.feature)",
            lambda: export_specs(store, project_id, "gherkin", selected_only=only),
            f"{project_id}-specs.feature",
            "text/plain",
        )
        export_picker(store, project_id, "spec", "specs_interop")
next_step("pages/diversity.py", "check diversity and coverage")
