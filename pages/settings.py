"""Settings: the store, the model providers (never a key's value), the model per role, spend and budget."""

import pandas as pd
import streamlit as st

from evalcore.auth import audit
from evalcore.auth.roles import Permission
from evalcore.errors import EvalcoreError
from evalcore.llm import status
from evalcore.llm.types import ROLES
from evalcore.models.wording import words
from pages._common import (
    current_actor,
    current_project,
    lazy_expander,
    md,
    next_step,
    require_user,
    show_error,
    store_or_stop,
)

store = store_or_stop()
project_id = current_project(store)
st.title("Settings")

st.subheader("Store")
st.write(f"**{store.dialect}** at `{store.display_url}`")
st.caption(
    "Set EVALCORE_DATABASE_URL (e.g. postgresql://user@host/db) to share one store between annotators."
)

st.subheader("Model providers")
if status.offline_mode():
    st.warning("EVALCORE_OFFLINE is set: every role uses the offline provider, whatever is configured.")
st.dataframe(
    pd.DataFrame(
        [
            {
                "provider": p.name,
                "kind": p.kind,
                "base URL": p.base_url or "",
                "key variable": p.api_key_env or "",
                "key present": "not needed" if not p.api_key_env else ("yes" if p.key_present else "no"),
                "structured output": words(p.structured),
            }
            for p in status.providers(store, project_id)
        ]
    ),
    hide_index=True,
    width="stretch",
)
st.caption(
    "Keys are read from the environment only and are never stored or shown. With no key, every pipeline "
    "runs through the offline provider, and items it produced are marked offline."
)

if project_id is None:
    st.info("Import a project on Home to set its models, budget and prices.")
    st.stop()

st.subheader(f"Models per role: {md(store.project(project_id).title)}")
roles = status.role_models(store, project_id)
st.dataframe(
    pd.DataFrame([{"role": r.role, "model": r.model, "chosen by": r.source} for r in roles]),
    hide_index=True,
    width="stretch",
)
# The forms are drawn only once opened, like the audit trail: most visits read, few change (issue 28).
choosing = lazy_expander("Change a role's model", "settings_role_model")
if choosing.open:
    with choosing, st.form("role_model", enter_to_submit=False):
        c1, c2 = st.columns([1, 2])
        role = c1.selectbox("Role", [*ROLES, "embedding"])
        model = c2.text_input(
            "Model (provider/model; empty = back to the default)", placeholder="openai/gpt-4o-mini"
        )
        if st.form_submit_button("Set model"):
            require_user()
            try:
                status.set_role_model(store, project_id, role, model.strip() or None, actor=current_actor())
                st.rerun()
            except EvalcoreError as exc:
                show_error(exc)

st.subheader("Spend")
summary = status.spend(store, project_id)
a, b, c, d = st.columns(4)
a.metric("Model calls", summary.calls)
b.metric("Cache hit rate", f"{summary.hit_rate:.0%}")
c.metric(
    "Model tokens in / out",
    f"{summary.tokens_in:,} / {summary.tokens_out:,}",
    help="What models used. The offline provider's calls are not counted here: they use no model.",
)
d.metric("Cost", f"${summary.cost_usd:,.4f}")
if summary.offline_calls:
    st.caption(
        f"{summary.offline_calls:,} of the calls went to the offline provider (no model, no key): the "
        f"{summary.offline_tokens:,} tokens it records are estimates from text length, not usage."
    )
if summary.runs:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "job": words(r.kind, missing="(no job)"),
                    "status": words(r.status),
                    "stopped for": r.stopped_reason or "",
                    "calls": r.calls,
                    "cache hits": r.cache_hits,
                    "tokens in": r.tokens_in,
                    "tokens out": r.tokens_out,
                    "offline calls": r.offline_calls,
                    "cost ($)": round(r.cost_usd, 4),
                }
                for r in summary.runs
            ]
        ),
        hide_index=True,
        width="stretch",
    )

st.subheader("Output repairs per model")
st.caption(
    "Task replies that needed a repair to be read (e.g. a think block, a key in the singular, an enum in "
    "another case), and replies that could not be read and were asked again. A high rate says the model "
    "needs a stricter structured-output mode for its provider, or a larger model."
)
rates = status.repair_rates(store, project_id)
if rates:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "model": f"{r.provider}/{r.model}",
                    "task replies": r.replies,
                    "repaired": f"{r.repair_rate:.0%}",
                    "asked again": f"{r.invalid_rate:.0%}",
                    "repairs": ", ".join(f"{name} ({n})" for name, n in r.kinds.items()),
                }
                for r in rates
            ]
        ),
        hide_index=True,
        width="stretch",
    )
else:
    st.caption("No task replies yet.")

st.subheader("Model profiles")
st.caption(
    "What a model behind an OpenAI-compatible server accepts: how to ask it for structured output, the "
    "most output tokens it grants, whether it takes a temperature. Its calls follow the profile. A probe "
    "learns the structured mode and the temperature from one call; set the token limit by hand."
)
profiles = status.model_profiles(store, project_id)
if profiles:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "model": model,
                    "structured output": p.structured or "(provider's setting)",
                    "max tokens": p.max_tokens or "",
                    "temperature": "yes" if p.temperature else "no",
                    "probed": p.probed_at or "",
                    "note": p.note,
                }
                for model, p in profiles.items()
            ]
        ),
        hide_index=True,
        width="stretch",
    )
profiling = lazy_expander("Probe a model or set its token limit", "settings_model_profile")
if profiling.open:
    with profiling, st.form("model_profile", enter_to_submit=False):
        c1, c2 = st.columns([3, 1])
        profile_model = c1.text_input("Model (provider/model)", placeholder="compat/qwen2.5-0.5b-instruct")
        limit = c2.number_input("Max tokens (0 = no limit)", min_value=0, step=256)
        probe_clicked = c1.form_submit_button("Probe (one call)")
        save_clicked = c2.form_submit_button("Save max tokens")
        if (probe_clicked or save_clicked) and profile_model.strip():
            require_user()
            name = profile_model.strip()
            try:
                if probe_clicked:
                    status.probe_model(store, project_id, name, actor=current_actor())
                else:
                    kept = profiles.get(name) or status.ModelProfile()
                    limited = kept.with_max_tokens(int(limit) or None)
                    status.set_model_profile(store, project_id, name, limited, actor=current_actor())
                st.rerun()
            except EvalcoreError as exc:
                show_error(exc)

st.subheader("Budget")
current = status.budget(store, project_id)
st.caption(
    "A run stops before the call that would exceed its budget, and records that it stopped for budget. "
    f"Current default: {'none' if current is None else f'${current.usd} / {current.tokens} tokens'}."
)
with st.form("budget", enter_to_submit=False):
    c1, c2 = st.columns(2)
    usd = c1.number_input(
        "Dollars per run (0 = no limit)", 0.0, 10_000.0, float(current.usd or 0) if current else 0.0
    )
    tokens = c2.number_input(
        "Tokens per run (0 = no limit)", 0, 100_000_000, int(current.tokens or 0) if current else 0
    )
    if st.form_submit_button("Save budget"):
        require_user()
        try:
            status.set_budget(
                store, project_id, usd=usd or None, tokens=int(tokens) or None, actor=current_actor()
            )
            st.rerun()
        except EvalcoreError as exc:
            show_error(exc)

st.subheader("Audit trail")
reader = current_actor()
if not reader.may(Permission.read_audit):
    st.caption(f"Who did what and when is for leads; {md(reader.name)} is {reader.role.name}.")
    st.stop()
st.caption(
    "Every action with who did it and when, newest first: settings, jobs started and stopped, imports, "
    "accounts, sign-ins, refused attempts, saved versions and verdicts, each by the id of what it acted "
    "on (the command line's evalcore audit prints it all)."
)
# 500 rows read, drawn and made a CSV on every visit cost more than the rest of the page: drawn when opened.
trail = lazy_expander("The latest 500 actions", "settings_audit")
if trail.open:
    entries = audit.trail(store, actor=reader, limit=500)
    trail.dataframe(
        pd.DataFrame([e.model_dump() for e in entries], columns=list(audit.AuditEntry.model_fields)),
        hide_index=True,
        width="stretch",
    )
    trail.download_button(
        # The file is made when clicked, not on every rerun.
        "Download the trail (CSV)", lambda: audit.trail_csv(entries), file_name="evalcore-audit.csv",
        mime="text/csv",
    )  # fmt: skip
next_step("pages/home.py", "back to the checklist on Home")
