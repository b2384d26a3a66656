"""Home: the projects in the store, importing a project, and counts per stage."""

from pathlib import Path

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.inputs import import_project
from evalcore.models.wording import TIER_HELP
from evalcore.models.wording import tier as tier_word
from evalcore.reports.checklist import checklist, next_stage
from evalcore.reports.status import project_status, tier_counts
from evalcore.review import QueueFilter, queue_page
from pages._common import (
    current_actor,
    current_project,
    current_user,
    lazy_expander,
    md,
    show_error,
    store_or_stop,
)
from pages._interop import import_picker
from pages._upload import upload_form

ROOT = Path(__file__).resolve().parents[1]
# Each stage of the checklist: the page where it is worked on, and what to do there while it is not done.
STAGE_PAGES = {
    "documents": (None, "Import a project above"),
    "specs": ("pages/specs.py", "Generate specs on Spec review"),
    "reviewed_specs": ("pages/specs.py", "Accept or reject specs on Spec review"),
    "generated": ("pages/conversations.py", "Generate conversations"),
    "reviewed": ("pages/annotate.py", "Review conversations in Annotate"),
    "runs": ("pages/runs.py", "Start a run against your assistant"),
    "reports": ("pages/reports.py", "Read the report"),
}
# Where a stage's things are seen once it is done.
DONE_LINKS = {
    "specs": ("pages/diversity.py", "Diversity and coverage"),
    "reviewed_specs": ("pages/specs.py", "Spec review"),
    "generated": ("pages/conversations.py", "Conversations"),
    "reviewed": ("pages/agreement.py", "Agreement"),
    "runs": ("pages/runs.py", "Runs"),
    "reports": ("pages/reports.py", "Reports"),
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


# The expanders below draw their forms and tables only while open: closed, they cost no visit anything.
importing = lazy_expander("Import a project", "home_import", expanded=not store.projects())
if importing.open:
    folder_tab, upload_tab = importing.tabs(["From a folder", "Upload"])
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
    st.caption(md(f"Imported from {info.source_path or 'an upload'}"), help=md(f"Project id: {info.id}"))

st.subheader(
    "Where the project stands", help="Each stage with its count in the store; the first open one is next."
)
rows = project_status(store, project_id)
for column, row in zip(st.columns(4), rows[:4], strict=True):
    column.metric(row.stage, f"{row.count:,}", help=row.detail or None)
stages = checklist(store, project_id)
upcoming = next_stage(stages)
for stage in stages:
    mark, label, count = st.columns([4, 1, 3], vertical_alignment="center")
    icon = ":material/check_circle:" if stage.done else ":material/radio_button_unchecked:"
    mark.markdown(f"{icon} **{stage.label}**" + (f"  \n{md(stage.detail)}" if stage.detail else ""))
    label.markdown(f"**{stage.count:,}**")
    page, action = STAGE_PAGES[stage.key] if not stage.done else DONE_LINKS.get(stage.key, (None, ""))
    if page and (ROOT / page).exists():
        count.page_link(page, label=action, icon=":material/arrow_forward:")
if upcoming is None:
    st.success("Every stage has something in it: compare runs on Reports, or add more on any page.")
else:
    page, action = STAGE_PAGES[upcoming.key]
    st.markdown(f"**Next:** {action}.")
    if page:
        st.page_link(page, label=action, icon=":material/arrow_forward:")

st.subheader("Annotation", help="Conversations per tier, under the project's tier policy. " + TIER_HELP)
tiers = tier_counts(store, project_id)
for column, (tier, n) in zip(st.columns(len(tiers)), tiers.items(), strict=True):
    column.metric(tier_word(tier), f"{n:,}")
user = current_user()
if user:
    mine = QueueFilter(needs_review_by=user)
    waiting = queue_page(store, project_id, mine, limit=1, user=user).total
    st.caption(f"{waiting:,} conversation(s) assigned to {md(user)} wait for your verdict.")
    if waiting:
        st.page_link("pages/annotate.py", label="Review them", icon=":material/rate_review:")
else:
    st.caption("Type your name in the sidebar to see the conversations waiting for you.")

other_tools = lazy_expander("Import tests or conversations from another tool", "home_other_tools")
if other_tools.open:
    other_tools.caption(
        "DeepEval goldens, Ragas testsets, promptfoo tests, tau2-bench tasks, Inspect samples, Langfuse "
        "items, LangSmith examples or OpenAI evals samples become tests and conversations of this project."
    )
    with other_tools:
        import_picker(store, project_id, "home_interop")

inputs = lazy_expander("Documents, tools and procedures", "home_inputs")
if inputs.open:
    inputs.dataframe(
        [{"title": d.title, "kind": d.kind.value, "file": d.path} for d in store.documents(project_id)],
        hide_index=True,
        width="stretch",
    )
    inputs.dataframe(
        [{"tool": t.name, "description": t.description} for t in store.tools(project_id)],
        hide_index=True,
        width="stretch",
    )
    inputs.dataframe(
        [
            {"procedure": p.name, "intent": p.intent, "steps": len(p.steps)}
            for p in store.procedures(project_id)
        ],
        hide_index=True,
        width="stretch",
    )
