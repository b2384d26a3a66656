"""The form that adds a target able to call tools (a built-in agent, or a model behind the OpenAI or
Anthropic API) from a page, through the same library call as `evalcore targets add`
(evalcore.targets.adding). Only a lead may save it; the library checks."""

from __future__ import annotations

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.store import Store
from evalcore.targets import describe
from evalcore.targets.adding import add_target, new_target
from pages._common import current_actor, flash, md, show_error

# The agents an `agent` target may name (evalcore.targets.config.AgentConfig), in plain words.
AGENTS = {
    "demo": "Follows the project's procedures, with a few realistic mistakes",
    "oracle": "Always takes the expected action (checks that the scoring works)",
    "null": "Always replies 'OK' (the lowest score to compare with)",
}
TOOL_MODES = {
    "native": "Tool calling (the API's own)",
    "prompt": "In the prompt, with the procedure (seed 001, A.8)",
}
KINDS = {
    "agent": "Built-in agent (no model needed)",
    "openai": "A model behind an OpenAI-compatible API",
    "anthropic": "A model behind the Anthropic API",
}


def tool_target_form(store: Store, project_id: str, key: str) -> None:
    """An expander with a form adding (or replacing) a target that calls tools; on save the page reruns
    with a message naming it."""
    with st.expander("Add a target that calls tools"):
        kind = st.selectbox("Kind", list(KINDS), format_func=KINDS.get, key=f"{key}:kind")
        config: dict = {}
        if kind == "agent":
            config["agent"] = st.radio(
                "Agent",
                list(AGENTS),
                format_func=lambda n: f"{n}: {AGENTS[n]}",
                key=f"{key}:agent",
                help="Offline agents that play the procedure tests without a model: the demo agent follows "
                "the procedures with seeded mistakes, the oracle answers every test with its expected "
                "action, the null agent always says 'OK'.",
            )
        with st.form(f"{key}:form", enter_to_submit=False):
            if kind == "agent":
                name = st.text_input("Name", value=f"{config['agent']}-agent", key=f"{key}:{config['agent']}")
            else:
                name = st.text_input("Name", placeholder="e.g. support-agent")
                config["model"] = st.text_input(
                    "Model", placeholder="gpt-4o-mini" if kind == "openai" else "claude-haiku-4-5"
                )
                config["base_url"] = st.text_input(
                    "Address of the API (empty for the provider's own)",
                    placeholder="http://localhost:8000/v1",
                )
                config["api_key_env"] = st.text_input(
                    "Environment variable holding the API key (its name, not the key)"
                )
                config["system_prompt"] = st.text_area("System prompt (optional)")
                config["tool_mode"] = st.radio(
                    "How the model is offered the tools",
                    list(TOOL_MODES),
                    format_func=TOOL_MODES.get,
                    horizontal=True,
                    help="Seed 001 plays its tests both ways: with the model's own tool calling, and with "
                    "one uniform prompt that holds the test's procedure and the tools (Appendix A.8).",
                )
            if st.form_submit_button("Save target", type="primary"):
                try:
                    saved = add_target(
                        store, project_id, new_target(name, kind, config), actor=current_actor()
                    )
                except EvalcoreError as exc:
                    show_error(exc)
                else:
                    flash("success", md(f"Saved target {saved.name}: {describe(saved)}"))
