"""The Tool cases page's "Find rubrics" form: a rubric set learnt from the labelled tool cases, as a job
handed to the workers (evalcore.generators.tool_case.discovery), with the last one's progress."""

from __future__ import annotations

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.generators.tool_case.discovery import RUN_KIND, create_discovery, discovery_runs
from evalcore.generators.tool_case.evaluation import labelled_conversations
from evalcore.jobs import failed_units
from evalcore.jobs.queue import enqueue
from evalcore.models import RunStatus
from evalcore.store import Store
from pages._common import current_actor, current_user, flash, job_panel, may_start, md, show_error

METHODS = {
    "scope": "Rubrics per area of the conversation (recommended)",
    "spur": "Rubrics about the user's satisfaction only (the simpler baseline)",
}


def _any_accepted(store: Store, project_id: str) -> bool:
    """Whether people or the judge accepted any tool case yet (else the form uses every one)."""
    try:
        return bool(labelled_conversations(store, project_id))
    except EvalcoreError:
        return False


def discovery_form(store: Store, project_id: str, needs_name: str) -> None:
    """The form, and the progress of the newest discovery (or why it failed)."""
    accepted = _any_accepted(store, project_id)
    with st.form("tc_discover", enter_to_submit=False):
        st.markdown("**Find rubrics in the labelled conversations**")
        left, right = st.columns(2)
        method = left.radio(
            "Kind of rubrics",
            list(METHODS),
            format_func=METHODS.get,
            help="SCOPE (seed 004, Section 3) learns areas, then good and bad behaviours per area with "
            "weights and make-or-break rubrics; SPUR learns satisfaction rubrics only.",
        )
        everything = right.checkbox(
            "Use every tool case",
            value=not accepted,
            help="Also the conversations nobody reviewed yet and those rejected. Without it only the ones "
            "accepted by people (gold) or by the judge (silver) are used.",
        )
        if not accepted:
            right.caption("No tool case has been accepted yet, so every one is used.")
        user = current_user()
        if st.form_submit_button(
            "Find rubrics", type="primary", disabled=not user, help=None if user else needs_name
        ):
            try:
                may_start(store, RUN_KIND)  # before a run record is made for nothing
                run = create_discovery(store, project_id, method=method, all_conversations=everything)
                enqueue(store, run.id, actor=current_actor())
            except EvalcoreError as exc:
                show_error(exc)
            else:
                flash("success", "Finding rubrics: a worker learns them; the set appears here when done.")
    if runs := discovery_runs(store, project_id):
        newest = runs[0]
        job_panel(store, newest.id, "rubric sets", resumable=True)
        if newest.status != RunStatus.pending:
            for warning in newest.warnings:
                st.caption(md(warning))
        for why in failed_units(store, newest.id).values():
            st.warning(md(f"No rubric set was found: {why}"))
