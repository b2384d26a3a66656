"""The evalcore dashboard: router and frame. Pages read and write only through evalcore."""

import streamlit as st

from pages._common import identity_sidebar, project_picker, store_or_stop, warm_up_maps

st.set_page_config(page_title="evalcore", page_icon=":material/science:", layout="wide")

store = store_or_stop()
project_picker(store)
identity_sidebar()
warm_up_maps()

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
        ],
    }
)
navigation.run()
