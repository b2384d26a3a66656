"""The failing procedure tests of a run, each opened on a click: the conversation up to it, what was
expected and what the target did side by side, and the policy passages its procedure cites
(evalcore.reports.procedure_failure)."""

from __future__ import annotations

from collections.abc import Collection

import pandas as pd
import streamlit as st

from evalcore.reports.procedure_failure import failed_test
from evalcore.reports.procedure_tables import RunScores
from evalcore.store import Store
from pages._common import md, md_block


def failing_tests(
    store: Store, project_id: str, scored: RunScores, failing: pd.DataFrame, generated: Collection[str]
) -> None:
    """The failing tests as a table; the row picked opens below it."""
    st.caption(f"{len(failing)} failing test(s). Pick one to see what happened.")
    event = st.dataframe(
        failing,
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        key=f"failing:{scored.run.id}",
        column_config={"test": None, "conversation": None},  # ids: the turn and the actions say which
    )
    if not event.selection.rows:
        return
    opened = failed_test(store, project_id, scored, failing.iloc[event.selection.rows[0]]["test"], generated)
    st.markdown(f"**Why it failed:** {md(opened.why)}")
    if opened.procedure:
        st.caption(
            md(f"Procedure: {opened.intent or opened.procedure} (from the {opened.source or 'project'})")
        )
    with st.container(border=True):
        st.caption("The conversation so far")
        for who, said in opened.context:
            st.markdown(f"**{md(who)}:** {md_block(said)}")
    expected, got = st.columns(2)
    expected.markdown("**Expected**")
    expected.code(opened.expected, language=None, wrap_lines=True)
    got.markdown("**What the target did**")
    got.code(opened.got, language=None, wrap_lines=True)
    if opened.passages:
        st.markdown("**Policy passages the procedure cites**")
        st.markdown(
            "\n".join(
                f"- step {p.step} ({md(p.action)}){' **(the expected step)**' if p.about_expected else ''}: "
                f"{md(p.source)}"
                for p in opened.passages
            )
        )
