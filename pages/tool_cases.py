"""Tool cases (seed 004, TRACE/SCOPE): the situation catalog with its labels and what each tool group cannot
produce, the synthesized conversations per situation with their intended labels."""

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.generators.tool_case.overview import (
    catalog_rows,
    group_skips,
    intended_labels,
    situation_conversations,
)
from evalcore.models import TurnRole
from pages._common import current_project, md, md_block, show_error, store_or_stop

store = store_or_stop()
project_id = current_project(store)
st.title("Tool cases")
st.caption(
    "Labelled tool-use conversations (seed 004): situations where the tool works or fails, the agent "
    "behaves or not, the user is satisfied or not, each POS or NEG. Generate them with `evalcore toolcases "
    "generate`; a team adds its own situations with `evalcore toolcases situations --add FILE`."
)
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()


def _catalog_section() -> None:
    rows = catalog_rows(store, project_id)
    team = sum(r["origin"] == "team" for r in rows)
    st.caption(f"{len(rows) - team} situations of the seed's catalog (Appendix G) and {team} of the team's.")
    st.dataframe(
        rows,
        hide_index=True,
        width="stretch",
        column_config={"description": st.column_config.TextColumn(width="large")},
    )
    st.subheader("What each tool group cannot produce")
    try:
        skips = group_skips(store, project_id)
    except EvalcoreError as exc:
        show_error(exc)
        return
    if not store.tools(project_id):
        st.info("This project has no tools: import a project with tools/*.json.")
    elif not skips:
        st.success("Every tool group can produce every situation.")
    else:
        st.caption("A situation is generated only from a group whose schemas allow it; others skip it.")
        st.dataframe(skips, hide_index=True, width="stretch")


def _turn(turn) -> None:
    tool = turn.role in (TurnRole.tool_call, TurnRole.tool_result)
    with st.chat_message(turn.role.value, avatar=":material/build:" if tool else None):
        if turn.role == TurnRole.tool_call:
            st.caption(f"Turn {turn.index} · calls {md(turn.tool_name)}")
            st.json(turn.arguments or {}, expanded=True)
        elif turn.role == TurnRole.tool_result:
            st.caption(f"Turn {turn.index} · {md(turn.tool_name)} answers")
            st.text(turn.content)
        else:
            st.caption(f"Turn {turn.index} · {turn.role.value}")
            st.markdown(md_block(turn.content) if turn.content else "_(empty)_")


def _conversations_section() -> None:
    rows = [r for r in catalog_rows(store, project_id) if r["conversations"]]
    if not rows:
        st.info("No tool-case conversations yet: `evalcore toolcases generate` synthesizes them.")
        return
    names = {r["situation"]: f"{r['name']} ({r['conversations']})" for r in rows}
    situation = st.selectbox("Situation", list(names), format_func=names.get, key="tc_situation")
    conversations = situation_conversations(store, project_id, situation)
    by_id = {c.id: c for c in conversations}
    chosen = st.selectbox(
        "Conversation",
        list(by_id),
        format_func=lambda i: f"{i} · {by_id[i].metadata.get('tool_group')}",
        key=f"tc_conversation:{situation}",
    )
    conversation = by_id[chosen]
    if conversation.provenance.is_offline:
        st.info("Offline output: written by a template of the offline provider, not by a model.")
    st.markdown(f"**Intended:** {md(intended_labels(conversation))}")
    if defect := conversation.metadata.get("defect"):
        st.caption(f"Where it happens: {md(defect)}")
    for turn in conversation.turns:
        _turn(turn)


tabs = st.tabs(["Catalog", "Conversations"], key="tool_cases_tab", on_change="rerun")
catalog_tab, conversations_tab = tabs
if catalog_tab.open:
    with catalog_tab:
        _catalog_section()
if conversations_tab.open:
    with conversations_tab:
        _conversations_section()
