"""Home: the projects in the store, importing a project, and counts per stage."""

from pathlib import Path

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.inputs import import_project
from evalcore.reports.status import project_status, tier_counts
from evalcore.review import QueueFilter, queue_page
from pages._common import current_actor, current_project, current_user, md, show_error, store_or_stop
from pages._interop import import_picker
from pages._upload import upload_form

ROOT = Path(__file__).resolve().parents[1]
# Where each stage is worked on; a link appears once its page exists.
STAGE_PAGES = {
    "Specs": [("pages/specs.py", "Review specs"), ("pages/diversity.py", "Diversity")],
    "Conversations": [("pages/conversations.py", "Browse"), ("pages/annotate.py", "Annotate")],
    "Tests": [("pages/procedures.py", "Procedures")],
    "Personas": [("pages/simulations.py", "Simulations")],
    "Runs": [("pages/runs.py", "Runs"), ("pages/reports.py", "Reports")],
}

store = store_or_stop()
st.title("evalcore")
st.caption(
    "Turn a system description and its documents into test specs, synthesize conversations, "
    "have people accept or reject them, run them against your assistant and read where it fails."
)


def _report_import(result) -> None:
    changes = result.changes
    if changes.total_written:
        st.success(
            f"Imported project '{md(result.project_id)}': {changes.total_written} record(s) added or updated."
        )
    else:
        st.info(f"Project '{md(result.project_id)}' is already up to date: nothing changed.")


with st.expander("Import a project", expanded=not store.projects()):
    folder_tab, upload_tab = st.tabs(["From a folder", "Upload"])
    with folder_tab, st.form("import_folder"):
        folder = st.text_input(
            "Project folder on this machine",
            placeholder="data/sample",
            help="A folder with system.yaml and documents/, policies/, tables/, tools/, procedures/.",
        )
        if st.form_submit_button("Import folder", type="primary"):
            if not folder.strip():
                st.warning("Type the path of a project folder first.")
            else:
                try:
                    _report_import(import_project(store, folder.strip(), actor=current_actor()))
                except EvalcoreError as exc:
                    show_error(exc)
    with upload_tab:
        upload_form(store, _report_import)

project_id = current_project(store)
if project_id is None:
    st.info("The store has no project yet. Import one above: try the bundled sample, `data/sample`.")
    st.stop()

info = store.project(project_id)
card = store.system_card(project_id)
st.header(md(info.title))
if card:
    st.markdown(md(card.chatbot_info.description))
    st.caption(md(f"Project id {info.id} · imported from {info.source_path or 'an upload'}"))

st.subheader("Counts per stage")
rows = project_status(store, project_id)
inputs, pipeline = rows[:4], rows[4:]
for group, label in ((inputs, "Inputs"), (pipeline, "Pipeline")):
    st.caption(label)
    for column, row in zip(st.columns(len(group)), group, strict=True):
        column.metric(row.stage, f"{row.count:,}", help=row.detail or None)
        for page, label in STAGE_PAGES.get(row.stage, []):
            if (ROOT / page).exists():
                column.page_link(page, label=label, icon=":material/arrow_forward:")
details = [f"{row.stage}: {row.detail}" for row in rows if row.detail]
if details:
    st.caption(md(" · ".join(details)))

st.subheader("Annotation", help="Conversations per tier, under the project's tier policy.")
tiers = tier_counts(store, project_id)
for column, (tier, n) in zip(st.columns(len(tiers)), tiers.items(), strict=True):
    column.metric(tier, f"{n:,}")
user = current_user()
if user:
    mine = QueueFilter(needs_review_by=user)
    waiting = queue_page(store, project_id, mine, limit=1, user=user).total
    st.caption(f"{waiting:,} conversation(s) assigned to {md(user)} wait for your verdict.")
    if waiting:
        st.page_link("pages/annotate.py", label="Review them", icon=":material/rate_review:")
else:
    st.caption("Type your name in the sidebar to see the conversations waiting for you.")

with st.expander("Import tests or conversations from another tool"):
    st.caption(
        "DeepEval goldens, Ragas testsets, promptfoo tests, tau2-bench tasks, Inspect samples, Langfuse "
        "items, LangSmith examples or OpenAI evals samples become tests and conversations of this project."
    )
    import_picker(store, project_id, "home_interop")

with st.expander("Documents, tools and procedures"):
    st.dataframe(
        [
            {"id": d.id, "kind": d.kind.value, "title": d.title, "file": d.path}
            for d in store.documents(project_id)
        ],
        hide_index=True,
        width="stretch",
    )
    st.dataframe(
        [{"tool": t.name, "description": t.description} for t in store.tools(project_id)],
        hide_index=True,
        width="stretch",
    )
    st.dataframe(
        [
            {"procedure": p.name, "intent": p.intent, "steps": len(p.steps)}
            for p in store.procedures(project_id)
        ],
        hide_index=True,
        width="stretch",
    )
