"""Agreement and calibration: how far annotators agree, what leads must decide, how precise the LLM judge
is against gold, who reviews what, and the gold and silver sets as JSONL."""

import math

import pandas as pd
import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.items.jsonl import export_jsonl
from evalcore.reports.charts import calibration_chart
from evalcore.reports.status import tier_counts
from evalcore.review import (
    DISAGREEMENT,
    adjudication_queue,
    agreement_report,
    annotation_stamp,
    assign_items,
    judge_human_correlation,
    leads_of,
    progress,
    project_policy,
    set_leads,
    set_policy,
    shown_pairs,
    silver_calibration,
    unassign,
)
from pages._common import (
    current_actor,
    current_project,
    current_user,
    guarded,
    md,
    next_step,
    show_error,
    store_or_stop,
)
from pages._interop import export_picker

store = store_or_stop()
project_id = current_project(store)
st.title("Agreement and calibration")
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()
# Reading agreement, calibration and exports needs no name; assigning and changing the policy do.
user = current_user()
NEEDS_NAME = "Type your name in the sidebar to change this: every change is saved with who made it."


def _fmt(value: float) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.2f}"


@st.cache_data(show_spinner="Computing agreement…", max_entries=8)
def _agreement(store_url: str, project: str, stamp: tuple[int, int]) -> dict:
    # `stamp` changes with every new annotation, so a cached report is never stale; `store_url` keys the
    # cache too (a leading underscore would leave it out), so one server on two stores never mixes them.
    return agreement_report(store, project)


counts = tier_counts(store, project_id)
columns = st.columns(len(counts))
for column, (name, n) in zip(columns, counts.items(), strict=True):
    column.metric(name, f"{n:,}")


def _agreement_section() -> None:
    report = _agreement(store.url, project_id, annotation_stamp(store, project_id))
    st.caption(
        "Cohen's kappa for two annotators, Krippendorff's alpha (nominal) for more; leads' decisions are "
        "left out (they are made after seeing the annotators). Pairs with n = 0 share no item: raise the "
        "overlap when assigning."
    )
    for level in ("conversation", "turn"):
        result = report[level]
        st.subheader(f"{level.capitalize()} verdicts")
        a, b, c = st.columns(3)
        a.metric(result.overall_name, result.headline)
        b.metric("Annotators", len(result.annotators))
        c.metric(f"{level.capitalize()}s labelled by 2+", f"{result.pairable:,} of {result.units:,}")
        if result.too_few:
            st.caption(result.too_few)
        if len(result.pairs):
            right = st.column_config.TextColumn(alignment="right")  # numbers as text, for 'n/a'
            st.dataframe(
                shown_pairs(result.pairs),
                hide_index=True,
                column_config={
                    "shared": st.column_config.NumberColumn(help="labelled by both", format="localized"),
                    "observed agreement": right,
                    "Cohen's kappa": right,
                },
            )
        else:
            st.info("Agreement needs two annotators who labelled the same items.")


def _adjudication_section() -> None:
    queue = adjudication_queue(store, project_id)
    if not queue:
        st.success("No disagreement waits for a lead.")
    else:
        st.caption("Annotators disagree on these; a lead's decision settles the tier. Pick one to open it.")
        frame = pd.DataFrame(
            [
                {
                    "conversation": d.item_id,
                    "generator": d.generator,
                    "accepted by": ", ".join(d.accepted_by),
                    "rejected by": ", ".join(d.rejected_by),
                    "reasons": ", ".join(d.reasons),
                    "judge": d.judge_score,
                }
                for d in queue
            ]
        )
        event = st.dataframe(
            frame, hide_index=True, on_select="rerun", selection_mode="single-row", key="adjudication"
        )
        if event.selection.rows:
            chosen = frame.iloc[event.selection.rows[0]]["conversation"]
            # The Annotate page then walks the disagreements: "next" after a decision is the next one.
            st.session_state.update(q_tier=DISAGREEMENT, q_mine=False)
            st.switch_page("pages/annotate.py", query_params={"item": chosen})


def _calibration_section() -> None:
    policy = project_policy(store, project_id)
    target = st.number_input("Target precision", 0.5, 1.0, 0.9, 0.01, key="target_precision", width=220)
    cal = silver_calibration(store, project_id, target)
    table6 = judge_human_correlation(store, project_id)
    st.metric(
        "Judge vs people: Pearson r",
        f"{table6.r:.2f} [{table6.low:.2f}, {table6.high:.2f}]" if table6.defined else "n/a",
        help="How closely the judge's score follows the people's decision (accepted 1, rejected 0) on the "
        f"{table6.n} conversations that have both"
        + (f"; p = {table6.p_value:.2g}, 95% interval" if table6.defined else "; at least 5 with both kinds")
        + ". Seed 000, Table 6.",
    )
    if cal.n == 0:
        st.info(
            "Calibration needs conversations that people decided (gold or rejected) and that have a judge "
            "score."
        )
    else:
        a, b, c, d = st.columns(4)
        a.metric("Decided items with a judge score", cal.n, help=f"{cal.positives} accepted by people")
        b.metric("Judge's own verdict: precision", _fmt(cal.judge_precision))
        c.metric("… recall", _fmt(cal.judge_recall))
        if cal.choice:
            d.metric(
                f"Threshold for precision ≥ {target:.2f}",
                f"{cal.choice.threshold:.3f}",
                help=f"precision {cal.choice.precision:.2f}, recall {cal.choice.recall:.2f}, "
                f"on {cal.choice.n} items",
            )
        else:
            d.metric(f"Threshold for precision ≥ {target:.2f}", "none reaches it")
        chosen_threshold = cal.choice.threshold if cal.choice else None
        st.vega_lite_chart(calibration_chart(cal.points, target, chosen_threshold), width="stretch")
        st.caption(
            "Accepted by the judge (silver) = conversations nobody decided that the judge passes: the "
            "judge's verdict, not a person's. With a threshold set, the judge passes a conversation whose "
            "score reaches it (tuned for precision on what people decided).",
            help="seed 004: the judge's threshold tuned for precision on gold.",
        )
        current = policy.judge_threshold
        st.write(f"Silver threshold now: **{'judge verdict' if current is None else f'{current:.3f}'}**")
        left, right = st.columns(2)
        if (
            cal.choice
            and left.button(
                f"Use {cal.choice.threshold:.3f} for silver",
                type="primary",
                disabled=not user,
                help=None if user else NEEDS_NAME,
            )
            and guarded(
                lambda: set_policy(
                    store, project_id, judge_threshold=cal.choice.threshold, actor=current_actor()
                )
            )
        ):
            st.rerun()
        if (
            current is not None
            and right.button(
                "Back to the judge's own verdict", disabled=not user, help=None if user else NEEDS_NAME
            )
            and guarded(lambda: set_policy(store, project_id, clear_threshold=True, actor=current_actor()))
        ):
            st.rerun()


def _assign_section() -> None:
    team = progress(store, project_id)
    known = [p.annotator for p in team]
    with st.form("assign", enter_to_submit=False):
        names = st.multiselect(
            "Annotators",
            known,
            default=known,
            accept_new_options=True,
            placeholder="Type names and press Enter",
        )
        a, b, c = st.columns(3)
        overlap = a.number_input("Overlap (annotators per conversation)", 1, 10, 2)
        limit = b.number_input("How many conversations (0 = all)", 0, 1_000_000, 0, step=50)
        seed = c.number_input("Seed", 0, 1_000_000, 0)
        only_new = st.checkbox("Only conversations nobody is assigned yet", value=True)
        if st.form_submit_button(
            "Assign", type="primary", disabled=not user, help=None if user else NEEDS_NAME
        ):
            try:
                result = assign_items(
                    store, project_id, names, int(overlap), user,
                    only_unassigned=only_new, limit=int(limit) or None, seed=int(seed), actor=current_actor(),
                )  # fmt: skip
                shares = ", ".join(f"{k}: {v}" for k, v in result.per_annotator.items())
                st.success(f"Assigned {result.items} conversation(s) ({md(shares)}).")
            except EvalcoreError as exc:
                show_error(exc)
    team = progress(store, project_id)
    if team:
        frame = pd.DataFrame([vars(p) for p in team])
        frame["progress"] = [p.done / p.assigned if p.assigned else 0.0 for p in team]
        st.dataframe(
            frame,
            hide_index=True,
            column_config={
                "done": st.column_config.NumberColumn(help="assigned conversations with their verdict"),
                "reviewed": st.column_config.NumberColumn("reviewed in all"),
                "progress": st.column_config.ProgressColumn(min_value=0.0, max_value=1.0, format="percent"),
            },
        )
        left, right = st.columns([2, 1], vertical_alignment="bottom")
        who = left.selectbox("Take back open conversations from", [p.annotator for p in team])
        if right.button("Take back", disabled=not user, help=None if user else NEEDS_NAME):
            try:
                taken = unassign(store, project_id, who, actor=current_actor())
                st.toast(f"{taken} conversation(s) taken back from {md(who)}.")
            except EvalcoreError as exc:
                show_error(exc)
    st.subheader("Policy")
    policy = project_policy(store, project_id)
    settings = store.project(project_id).settings
    with st.form("policy", enter_to_submit=False):
        left, right = st.columns([1, 2])
        required = left.number_input("Annotators who must accept for gold", 1, 10, policy.required_agreement)
        leads = right.text_input(
            "Leads (comma-separated; empty: anyone may adjudicate)", ", ".join(leads_of(settings))
        )
        if st.form_submit_button("Save policy", disabled=not user, help=None if user else NEEDS_NAME):
            try:
                set_leads(store, project_id, leads.split(","), actor=current_actor())
                set_policy(store, project_id, required_agreement=int(required), actor=current_actor())
                st.success("Policy saved; tiers re-derived.")
            except EvalcoreError as exc:
                show_error(exc)


def _export_section() -> None:
    st.caption(
        "One JSON line per conversation: the conversation with corrections applied, who accepted or "
        "rejected what (turn by turn, with reasons), and the judge's verdict and score."
    )
    for tier in ("gold", "silver"):
        st.download_button(
            f"Download the {tier} set ({counts[tier]:,} conversations)",
            data=lambda tier=tier: "\n".join(export_jsonl(store, project_id, tier=tier, review=True)) + "\n",
            file_name=f"{project_id}-{tier}.jsonl",
            mime="application/jsonl",
            icon=":material/download:",
            disabled=not counts[tier],
            on_click="ignore",
        )
    st.caption("Every conversation or test in another tool's format (tiers and provenance travel in it).")
    kind = st.radio("Items", ["conversation", "test"], horizontal=True, key="interop_kind")
    export_picker(store, project_id, kind, "agreement_interop")


tabs = st.tabs(
    ["Agreement", "Adjudication", "Silver calibration", "Assignments", "Export"],
    key="agreement_tab",
    on_change="rerun",
)
agreement_tab, adjudication_tab, calibration_tab, assign_tab, export_tab = tabs

if agreement_tab.open:
    with agreement_tab:
        _agreement_section()
if adjudication_tab.open:
    with adjudication_tab:
        _adjudication_section()
if calibration_tab.open:
    with calibration_tab:
        _calibration_section()
if assign_tab.open:
    with assign_tab:
        _assign_section()
if export_tab.open:
    with export_tab:
        _export_section()
next_step("pages/runs.py", "run the reviewed conversations against your assistant on Runs")
