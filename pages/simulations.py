"""Simulations: simulated users against a target (seed 002, ChatChecker): runs and their statistics side by
side, breakdown types per persona, and each dialogue with its per-turn breakdown verdicts and ratings."""

import plotly.graph_objects as go
import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.generators.simulation import load_simulation_run
from evalcore.generators.simulation.job import simulation_runs
from evalcore.generators.simulation.personas import OCEAN, edit_persona, list_personas, persona_version
from evalcore.generators.simulation.views import (
    breakdown_matrix,
    chart_label,
    is_offline,
    statistics_frame,
    summaries,
    turn_badge,
)
from evalcore.jobs import progress
from evalcore.models import TurnRole
from pages._common import current_project, flash, md, require_user, show_error, show_flash, store_or_stop

store = store_or_stop()
project_id = current_project(store)
st.title("Simulations")
st.caption(
    "Simulated users (standard and challenging personas) against a target; every target turn checked for "
    "dialogue breakdowns, every dialogue rated 1-5. Start one with `evalcore simulations run --target NAME "
    "--standard N --challenging N`, or import a ChatChecker run with `evalcore simulations import PATH`."
)
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()

show_flash()

personas = list_personas(store, project_id)
with st.expander(f"Personas ({len(personas)})"):
    if not personas:
        st.caption("None yet: `evalcore simulations personas generate` writes them from the system card.")
    else:
        st.dataframe(
            [
                {"persona": p.persona_id, "type": p.type, "name": p.profile.name, "task": p.task}
                for p in personas.values()
            ],
            hide_index=True,
            width="stretch",
        )
        item_id = st.selectbox(
            "Edit persona",
            list(personas),
            format_func=lambda i: f"{personas[i].persona_id}: {personas[i].profile.name}",
        )
        persona = personas[item_id]
        version = persona_version(store, item_id)
        with st.form(f"edit_{item_id}_{version}"):
            task = st.text_input("Task", persona.task)
            background = st.text_area(
                "Background (one fact per line)", "\n".join(persona.profile.background_info)
            )
            style = st.text_area(
                "Interaction style (one per line)", "\n".join(persona.profile.interaction_style)
            )
            traits = {
                trait: st.selectbox(
                    trait,
                    ["low", "medium", "high"],
                    index=["low", "medium", "high"].index(persona.profile.personality.get(trait, "medium"))
                    if persona.profile.personality.get(trait, "medium") in ("low", "medium", "high")
                    else 1,
                )
                for trait in OCEAN
            }
            if st.form_submit_button("Save persona"):
                author = require_user()
                try:
                    edit_persona(
                        store,
                        item_id,
                        author,
                        version,
                        task=task,
                        background_info=background.splitlines(),
                        interaction_style=style.splitlines(),
                        personality=traits,
                    )
                except EvalcoreError as exc:
                    show_error(exc)
                else:
                    flash("success", f"Saved {md(persona.persona_id)}.")

runs = simulation_runs(store, project_id)
if not runs:
    st.info("No simulation run in this project yet.")
    st.stop()
# What a run shows changes only when it moves on: its status, end and committed dialogues key the caches,
# so a rerun (a click anywhere) does not reload and recount every dialogue of every run.
stamps = {run.id: (run.status.value, str(run.finished_at), progress(store, run)[0]) for run in runs}


@st.cache_data(max_entries=8, show_spinner=False)
def _summaries(_runs: list, key: tuple) -> list:
    return summaries(store, project_id, _runs)


@st.cache_data(max_entries=16, show_spinner=False)
def _statistics(run_ids: tuple[str, ...], key: tuple):
    return statistics_frame(store, list(run_ids))


@st.cache_data(max_entries=16, show_spinner=False)
def _run(run_id: str, key: tuple):
    return load_simulation_run(store, run_id)


listed = _summaries(runs, (store.url, project_id, tuple(sorted(stamps.items()))))
st.subheader("Runs")
st.dataframe(
    [
        {
            "run": s.run_id,
            "source": s.source,
            "target": s.target,
            "status": s.status,
            "dialogues": s.dialogues,
            "made by": "offline (no model)" if s.offline else "models",
            "started": s.started,
        }
        for s in listed
    ],
    hide_index=True,
    width="stretch",
)

st.subheader("Statistics side by side")
ids = [s.run_id for s in listed]
compared = st.multiselect("Runs to compare", ids, default=ids[:2])
if compared:
    st.dataframe(_statistics(tuple(compared), (store.url, *(stamps[r] for r in compared))), width="stretch")

st.subheader("One run")
run_id = st.selectbox("Run", ids)
sim = _run(run_id, (store.url, stamps[run_id]))
if is_offline(sim):
    st.info(
        "Offline output: these users, breakdown verdicts and ratings come from evalcore's offline "
        "heuristics, not from a model."
    )

matrix = breakdown_matrix(sim)
st.markdown("**Breakdown types per persona** (target turns with a breakdown of the type)")
if matrix.empty:
    st.caption("No breakdown in this run.")
else:
    heat = go.Figure(
        go.Heatmap(
            z=matrix.to_numpy(),
            x=[chart_label(c) for c in matrix.columns],
            y=[chart_label(i) for i in matrix.index],
            colorscale="Reds",
            text=matrix.to_numpy(),
            texttemplate="%{text}",
            hovertemplate="%{y} / %{x}: %{z}<extra></extra>",
        )
    )
    heat.update_layout(height=max(320, 36 * len(matrix.index) + 140), margin={"t": 10, "b": 10})
    heat.update_xaxes(tickangle=-35, automargin=True)  # persona ids are long: keep them whole
    st.plotly_chart(heat, width="stretch")

st.markdown("**Dialogues**")
if not sim.dialogues:
    st.caption("This run has no dialogue yet.")
    st.stop()
names = {d.dialogue_id: d for d in sim.dialogues}
chosen = names[st.selectbox("Dialogue", list(names))]
persona = sim.personas.get(chosen.user_name)
if persona is not None:
    st.caption(md(f"{persona.type} persona {persona.profile.name}: {persona.task}"))
st.caption(md(f"Ended: {chosen.finish_reason.value}" + (f" ({chosen.error})" if chosen.error else "")))
for turn in chosen.turns:
    with st.chat_message("user" if turn.role == TurnRole.user else "assistant"):
        st.markdown(md(turn.content) or " ")
        badge = turn_badge(turn)
        if badge is not None:
            broken = badge.startswith("breakdown")
            st.badge(md(badge), color="red" if broken else "green")
            if turn.breakdown.reasoning:
                st.caption(md(turn.breakdown.reasoning))
if chosen.ratings:
    st.markdown("**Ratings** (1-5)")
    st.dataframe(
        [{"dimension": k, "rating": v.rating, "reasoning": v.reasoning} for k, v in chosen.ratings.items()],
        hide_index=True,
        width="stretch",
    )
