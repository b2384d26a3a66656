"""Diversity and coverage: where the selected specs sit among the candidates, and what they cover."""

import hashlib

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from evalcore.errors import EvalcoreError
from evalcore.specs.projection import map_2d
from evalcore.specs.selecting import load_candidates, metrics_by_k
from evalcore.specs.store_ops import list_specs
from pages._common import current_project, md, store_or_stop

store = store_or_stop()
project_id = current_project(store)
st.title("Diversity and coverage")
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()

views = list_specs(store, project_id)
if len(views) < 2:
    st.info("Generate at least two candidate specs on the Spec review page first.")
    st.stop()

# The heavy work is keyed by the candidates' ids and versions: it reruns only when a spec changes.
fingerprint = hashlib.sha256("|".join(f"{v.spec.id}:{v.version}" for v in views).encode()).hexdigest()


@st.cache_data(show_spinner="Embedding the candidates and drawing the map...", max_entries=8)
def _map(project: str, key: str) -> tuple[pd.DataFrame, str]:
    candidates = load_candidates(store, project)
    points, method = map_2d(candidates.embeddings)
    frame = pd.DataFrame(
        {
            "id": [v.spec.id for v in candidates.views],
            "x": points[:, 0],
            "y": points[:, 1],
            "scenario": [v.spec.scenario for v in candidates.views],
            "category": [v.spec.category for v in candidates.views],
            "document": [v.spec.documents[0] if v.spec.documents else "(none)" for v in candidates.views],
        }
    )
    return frame, method


@st.cache_data(show_spinner="Measuring Greedy, Random and Max-Min...", max_entries=8)
def _curves(project: str, key: str, ks: tuple[int, ...]) -> pd.DataFrame:
    points = metrics_by_k(load_candidates(store, project), list(ks))
    return pd.DataFrame([p.__dict__ for p in points])


try:
    frame, method = _map(project_id, fingerprint)
except EvalcoreError as exc:
    st.error(md(exc))
    st.stop()
selected = {v.spec.id for v in views if v.spec.selected}
frame["selected"] = frame["id"].isin(selected)
if not selected:
    st.warning("No selection yet: select specs on the Spec review page to see them highlighted.")

st.subheader(f"Candidates on a 2D map ({method})")
colour = st.radio("Colour by", ["category", "document"], horizontal=True)
fig = px.scatter(
    frame.assign(
        size=np.where(frame["selected"], 14, 7), status=np.where(frame["selected"], "selected", "candidate")
    ),
    x="x",
    y="y",
    color=colour,
    symbol="status",
    symbol_map={"selected": "star", "candidate": "circle"},
    size="size",
    size_max=14,
    hover_data={"scenario": True, "x": False, "y": False, "size": False},
    height=520,
)
fig.update_layout(xaxis_title=None, yaxis_title=None, legend_title_text=None, margin={"t": 10})
st.plotly_chart(fig, width="stretch")
st.caption(
    f"{len(frame)} candidates (rejected specs excluded), {len(selected)} selected (stars). "
    f"Nearby points are specs with similar wording; {method} of their embeddings."
)

st.subheader("Which documents the selected specs cover")
chosen = [v.spec for v in views if v.spec.selected]
documents = [d.id for d in store.documents(project_id)]
if chosen:
    matrix = np.array([[1 if d in s.documents else 0 for s in chosen] for d in documents])
    heat = go.Figure(
        go.Heatmap(
            z=matrix,
            x=[s.scenario[:40] for s in chosen],
            y=documents,
            colorscale=[[0, "#f3f4f6"], [1, "#2563eb"]],
            showscale=False,
            hovertemplate="%{y}<br>%{x}<extra></extra>",
        )
    )
    heat.update_layout(
        height=max(320, 22 * len(documents)), margin={"t": 10}, xaxis={"showticklabels": False}
    )
    st.plotly_chart(heat, width="stretch")
    uncovered = [d for d, row in zip(documents, matrix, strict=True) if not row.any()]
    covered = len(documents) - len(uncovered)
    st.caption(
        f"{covered} of {len(documents)} documents covered."
        + (f" Not covered: {', '.join(uncovered)}." if uncovered else "")
    )

st.subheader("SPWD, Var Div and Coverage against k")
top = len(frame)
ks = tuple(sorted({k for k in (2, 5, 10, 15, 20, 30, 40, 50, 75, 100) if k <= top} | {min(top, 30)}))
curves = _curves(project_id, fingerprint, ks)
panel = make_subplots(rows=1, cols=3, subplot_titles=("SPWD", "Var Div", "Coverage (documents)"))
colours = {"greedy": "#2563eb", "random": "#9ca3af", "maxmin": "#f59e0b"}
for i, metric in enumerate(("spwd", "var_div", "coverage"), start=1):
    for name, group in curves.groupby("method"):
        panel.add_trace(
            go.Scatter(
                x=group["k"],
                y=group[metric],
                name=name,
                mode="lines+markers",
                line={"color": colours[name]},
                legendgroup=name,
                showlegend=i == 1,
            ),
            row=1,
            col=i,
        )
panel.update_layout(height=340, margin={"t": 40})
st.plotly_chart(panel, width="stretch")
note = "Greedy is the method (log-det diversity + document coverage); Random is the mean of 10 seeds."
start = int(curves["k"].min())
if start > ks[0]:
    # metrics_by_k moves every k below the number of locked and human specs up to it.
    note += f" The curves start at k = {start}: every selection keeps the {start} locked and human specs."
st.caption(note)
