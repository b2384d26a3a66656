"""Settings: where the store is and which model providers are configured (never a key's value)."""

import os

import streamlit as st

from pages._common import current_project, store_or_stop

store = store_or_stop()
st.title("Settings")

st.subheader("Store")
st.write(f"**{store.dialect}** at `{store.display_url}`")
st.caption(
    "Set EVALCORE_DATABASE_URL (e.g. postgresql://user@host/db) to share one store between annotators."
)

st.subheader("Model providers")
keys = {
    "OpenAI": "OPENAI_API_KEY",
    "Anthropic": "ANTHROPIC_API_KEY",
}
st.dataframe(
    [
        {"provider": name, "environment variable": var, "key present": "yes" if os.environ.get(var) else "no"}
        for name, var in keys.items()
    ],
    hide_index=True,
)
st.info(
    "With no key, every pipeline runs through the offline provider; items it produced are marked offline."
)

project_id = current_project(store)
if project_id:
    st.subheader(f"Project settings: {project_id}")
    st.json(store.project(project_id).settings or {})
