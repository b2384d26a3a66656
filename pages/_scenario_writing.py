"""The Scenarios page's "Write scenarios from the specs" form: one scenario per spec (selected specs
first), written by the generator model or offline and stored at once
(`store_ops.write_and_import_from_specs`, as `evalcore scenarios from-specs --import` does)."""

from __future__ import annotations

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.generators.scenario.store_ops import write_and_import_from_specs
from evalcore.llm import ModelClient
from evalcore.store import Store
from evalcore.targets.domain import Domain
from pages._common import current_actor, flash, md, require_user, show_error


def from_specs_form(store: Store, project_id: str, domain: Domain | None, against: str | None) -> None:
    """The form; `domain` (of the target `against`, chosen above it) limits the checks written to what
    that target reports."""
    with st.expander("Write scenarios from the specs"), st.form("from_specs", enter_to_submit=False):
        st.caption(
            "A scenario per spec: the spec's situation becomes the simulated customer's briefing and its "
            "expected outcome the criteria. "
            + (
                f"Checks of flows, slots and actions are written for what {md(against)} reports."
                if domain is not None
                else "Choose a target above to also write checks of the events it reports."
            )
        )
        limit = st.number_input("At most this many specs (selected ones first)", 1, 500, 5)
        if st.form_submit_button("Write scenarios", type="primary", icon=":material/edit_note:"):
            author = require_user()
            try:
                llm = ModelClient(store, project_id)
                done = write_and_import_from_specs(
                    store, project_id, llm, author, limit=int(limit), domain=domain, actor=current_actor()
                )
            except EvalcoreError as exc:
                show_error(exc)
            else:
                added = len(done.imported.added) if done.imported else 0
                by = "offline (no model)" if done.offline else ", ".join(sorted(set(done.written_by)))
                flash(
                    "success",
                    md(
                        f"Wrote {len(done.files)} scenario(s), {added} new, {done.with_assertions} with "
                        f"checks of events; written by {by}. Review them before relying on them."
                    ),
                )
