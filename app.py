"""The evalcore dashboard: router and frame. Pages read and write only through evalcore."""

import streamlit as st

from pages._auth import sign_in_gate
from pages._common import identity_sidebar, project_picker, store_or_stop

st.set_page_config(page_title="evalcore", page_icon=":material/science:", layout="wide")

store = store_or_stop()
sign_in_gate(store)  # with sign-in on, a signed-out browser sees the sign-in page only, on every URL
project_picker(store)
identity_sidebar()

navigation = st.navigation(
    {
        "Workbench": [
            st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
            st.Page("pages/settings.py", title="Settings", icon=":material/settings:"),
        ],
        "Specs": [
            st.Page("pages/specs.py", title="Spec review", icon=":material/checklist:"),
            st.Page("pages/diversity.py", title="Diversity and coverage", icon=":material/scatter_plot:"),
        ],
        "Data": [
            st.Page("pages/conversations.py", title="Conversations", icon=":material/forum:"),
            st.Page("pages/annotate.py", title="Annotate", icon=":material/rate_review:"),
            st.Page("pages/agreement.py", title="Agreement and calibration", icon=":material/groups:"),
            st.Page("pages/tool_cases.py", title="Tool cases", icon=":material/build:"),
            st.Page("pages/procedures.py", title="Procedures", icon=":material/account_tree:"),
        ],
        "Results": [
            st.Page("pages/runs.py", title="Runs", icon=":material/play_circle:"),
            st.Page("pages/reports.py", title="Reports", icon=":material/table_chart:"),
            st.Page("pages/results.py", title="Results", icon=":material/list_alt:"),
            st.Page("pages/simulations.py", title="Simulations", icon=":material/smart_toy:"),
            st.Page("pages/scenarios.py", title="Scenarios", icon=":material/fact_check:"),
        ],
    },
    expanded=True,  # fourteen pages: Streamlit would hide the last ones behind "View 3 more"
)
navigation.run()
