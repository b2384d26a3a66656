"""Procedures: procedure-grounded tests for tool-using agents (seed 001, ALMITA). Per procedure its
flowgraph and conversation graph drawn (sampled paths highlighted, noise marked), the rules a graph
broke, path and edge coverage, the tests of a conversation; and Table 2 of the runs against targets with
the drill-down to failing tests and exports."""

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.generators.procedure.apis import generated_names
from evalcore.generators.procedure.funnel import funnel, funnel_line
from evalcore.generators.procedure.job import DEFAULT_PATHS, RUN_KIND, create_generation, list_graphs
from evalcore.generators.procedure.job import RUN_KIND as GENERATION_KIND
from evalcore.generators.procedure.noise import DEFAULT_P
from evalcore.generators.procedure.origins import procedure_sources
from evalcore.generators.procedure.paths import WALK_LABELS
from evalcore.items.store_ops import list_tests
from evalcore.jobs.control import committed_counts
from evalcore.jobs.queue import enqueue
from evalcore.models import RunStatus
from evalcore.models.wording import split_citation, term, term_help, told_apart, words
from evalcore.reports.procedure_tables import (
    by_metric,
    counts_frame,
    export_procedure_tables,
    failing_frame,
    offline_runs,
    report_about,
    score_run,
    table2_display,
)
from evalcore.reports.procedure_views import graph_figure, graphs_summary, path_coverage, tests_frame
from evalcore.runs.procedure_tests import RUN_KIND as TESTS_RUN_KIND
from evalcore.runs.procedure_tests import create_procedure_run, procedure_runs
from evalcore.targets import list_targets
from evalcore.targets.acting import ACTING_KINDS
from pages._common import (
    current_actor,
    current_project,
    flash,
    job_panel,
    may_start,
    md,
    next_step,
    run_name_inputs,
    show_error,
    show_flash,
    store_or_stop,
)
from pages._procedure_failures import failing_tests
from pages._targets import tool_target_form

store = store_or_stop()
project_id = current_project(store)


def _plain_turns(frame):
    """A table's 'last turn' with its role in words ('tool_result: ...' -> 'tool result: ...')."""
    if "last turn" not in frame:
        return frame
    role = frame["last turn"].str.extract(r"^(\w+):", expand=False).fillna("")
    return frame.assign(
        **{
            "last turn": [
                r.replace("_", " ") + t[len(r) :] for r, t in zip(role, frame["last turn"], strict=True)
            ]
        }
    )


st.title("Procedures")
st.page_link("pages/results.py", label="Every item of every run: Results", icon=":material/list_alt:")
st.caption(
    "Tests of the next action of a tool-using agent, grounded on the project's procedures: flowgraph -> "
    "conversation graph -> noise -> random-walk paths -> conversations -> tests. Generate them here; play "
    "them against a target below.",
    help=term_help("seed 001"),
)
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()

generations = store.runs(project_id, kind=RUN_KIND)
procedure_names = sorted(pr.name for pr in store.procedures(project_id))
with st.expander("Generate tests from the procedures", expanded=not generations):
    with st.form("generate_procedures", enter_to_submit=False):
        chosen_names = st.multiselect(
            "Procedures", procedure_names, placeholder="all of the project's procedures"
        )
        left, middle, right = st.columns(3)
        n_paths = left.number_input("Paths per graph (conversations)", 1, 100, DEFAULT_PATHS)
        noise = middle.slider("Noise probability per agent turn", 0.0, 1.0, DEFAULT_P, 0.05)
        seed = right.number_input("Seed", 0, 10**6, 0)
        walk = st.selectbox(
            "Path sampling",
            list(WALK_LABELS),
            format_func=lambda w: split_citation(WALK_LABELS[w])[0],
            help=" ".join(
                f"{split_citation(label)[0]}: {split_citation(label)[1]}."
                for label in WALK_LABELS.values()
                if split_citation(label)[1]
            ),
        )
        if st.form_submit_button("Generate", type="primary", icon=":material/play_arrow:"):
            try:
                may_start(store, GENERATION_KIND)  # before a run record is made for nothing
                made = create_generation(store, project_id, procedures=chosen_names or None,
                                         paths=int(n_paths), p=noise, seed=int(seed), walk=walk)  # fmt: skip
                enqueue(store, made.id, actor=current_actor())
            except EvalcoreError as exc:
                show_error(exc)
            else:
                st.session_state["procedure_generation"] = made.id
                st.success("Started: handed to the workers; its progress shows below.")
                generations = store.runs(project_id, kind=RUN_KIND)
    unfinished = next((r.id for r in generations if r.status != RunStatus.finished), None)
    if generating := st.session_state.get("procedure_generation") or unfinished:
        job_panel(store, generating, "procedures", resumable=True)

if not generations:
    st.info("No procedure generation run yet: generate one above.")
else:
    described = {r.id: f"{r.started_at:%Y-%m-%d %H:%M} · {words(r.status.value)}" for r in generations}
    run_id = st.selectbox("Generation run", list(described), format_func=described.get)
    walked = store.run(run_id).params.get("walk", "weighted")
    walk_label, walk_source = split_citation(WALK_LABELS.get(walked, walked))
    st.caption(f"Paths sampled by: {walk_label}", help=walk_source)
    st.caption(
        f"What the run kept at each stage: {funnel_line(funnel(store, project_id, run_id))}",
        help="Seed 001's Table 1: where a run lost material (an unknown API, a graph that broke a rule, "
        "a conversation that broke A.6's rules).",
    )
    graphs = {g.procedure: g for g in list_graphs(store, project_id, run_id)}
    made = {c for g in graphs.values() for c in g.conversations}
    tests = [t for t in list_tests(store, project_id) if t.conversation_id in made]
    st.subheader("Procedures")
    st.dataframe(
        graphs_summary(list(graphs.values()), tests, procedure_sources(store, project_id, [run_id])),
        hide_index=True,
        width="stretch",
        column_config={"edge coverage": st.column_config.NumberColumn(format="percent")},
    )
    if graphs:
        name = st.selectbox("Procedure", list(graphs))
        chosen = graphs[name]
        producer = chosen.provenance.producer
        st.caption(
            ("Made offline (graphs compiled from the procedure's steps)" if producer == "offline"
             else f"Made by {md(producer)}")
            + ("; a generated procedure, not one of the project's" if name.startswith("generated_") else "")
        )  # fmt: skip
        from_policy = {p["name"]: p for p in store.run(run_id).params.get("generated_procedures") or []}
        cited = [
            (k, step.get("api") or "message", source)
            for k, step in enumerate(from_policy.get(name, {}).get("steps") or [], 1)
            for source in step.get("sources") or []
        ]
        if cited:
            with st.expander("Policy passages each step comes from"):
                st.markdown("\n".join(f"- step {k} ({md(kind)}): {md(source)}" for k, kind, source in cited))
        made_up = set(chosen.generated_apis)
        if made_up:
            st.warning(
                "Generated APIs (the project has no such tool; diamonds in the graphs): "
                + md(", ".join(sorted(made_up)))
            )
        for label, graph in (
            ("Flowgraph", chosen.flowgraph),
            ("Conversation graph", chosen.conversation_graph),
        ):
            if graph is not None and not graph.valid:
                st.error(f"{label}: kept, not used. It breaks {len(graph.broken)} rule(s):")
                st.text("\n".join(f"- {rule}" for rule in graph.broken))
        flow_tab, conv_tab, paths_tab, tests_tab = st.tabs(
            ["Flowgraph", "Conversation graph", "Paths and coverage", "Tests"]
        )
        with flow_tab:
            if chosen.flowgraph.nodes:
                st.vega_lite_chart(
                    graph_figure(chosen.flowgraph, generated=made_up), width="stretch", key="flowgraph"
                )
            else:
                st.caption("No graph: the model's reply was not one (the reason is above).")
        with conv_tab:
            noisy = chosen.noisy_graph or chosen.conversation_graph
            if noisy is None:
                st.caption("Not made: the flowgraph is not valid.")
            else:
                shown = st.radio(
                    "Highlight",
                    ["all sampled paths", *[f"path {k}" for k in range(1, len(chosen.paths) + 1)]],
                    horizontal=True,
                )
                paths = (
                    chosen.paths
                    if shown == "all sampled paths"
                    else [chosen.paths[int(shown.split()[1]) - 1]]
                )
                st.caption(
                    "Noise nodes are red crosses; edges on the highlighted path(s) are thick and pink."
                )
                st.vega_lite_chart(
                    graph_figure(noisy, paths, generated=made_up), width="stretch", key="conversation_graph"
                )
        with paths_tab:
            if chosen.coverage is None:
                st.caption("No paths: there is no valid conversation graph.")
            else:
                st.metric("Edge coverage of the noisy conversation graph", f"{chosen.coverage:.0%}")
                st.dataframe(
                    path_coverage(chosen),
                    hide_index=True,
                    width="stretch",
                    column_config={
                        "edge coverage so far": st.column_config.NumberColumn(format="percent"),
                        "conversation": None,  # its id: the path's number says which
                    },
                )
        with tests_tab:
            if not chosen.conversations:
                st.caption("No conversations.")
            else:
                conversation = st.selectbox(
                    "Conversation",
                    chosen.conversations,
                    format_func=lambda c: f"Conversation {chosen.conversations.index(c) + 1}",
                )
                mine = [t for t in tests if t.conversation_id == conversation]
                if not mine:
                    st.caption(
                        "No tests: the conversation broke A.6's rules (its problems are on Conversations)."
                    )
                st.dataframe(
                    _plain_turns(tests_frame(mine, made_up)),
                    hide_index=True,
                    width="stretch",
                    column_config={"test": None},  # its id; the rows are in the conversation's order
                )

st.subheader(term("Table 2"), help=term_help("Table 2"))
show_flash()
tool_target_form(store, project_id, "procedure_target")
acting = [t.name for t in list_targets(store, project_id) if t.kind in ACTING_KINDS]
with st.form("play_tests", enter_to_submit=False):
    st.caption(
        "Play the procedure tests against a target that calls tools (OpenAI tools API, Anthropic tool use, "
        "an HTTP endpoint answering a reply or an action, or a built-in agent: add one just above). "
        "The run goes to the workers."
    )
    target_name = st.selectbox("Target", acting, index=None, placeholder="a target that calls tools")
    only = st.checkbox("Only the tests of the generation run chosen above", value=bool(generations))
    run_name, notes = run_name_inputs()
    if st.form_submit_button("Play the tests", type="primary", icon=":material/play_arrow:"):
        try:
            if target_name is None:
                raise EvalcoreError("choose a target that calls tools")
            generation = run_id if only and generations else None
            may_start(store, TESTS_RUN_KIND)  # before a run record is made for nothing
            started = create_procedure_run(
                store, project_id, target_name, generation=generation, name=run_name, notes=notes
            )
            enqueue(store, started.id, actor=current_actor())
        except EvalcoreError as exc:
            show_error(exc)
        else:
            st.session_state["procedure_run"] = started.id
            flash("success", "Started: handed to the workers; its progress shows below.")
playing = next((r.id for r in procedure_runs(store, project_id) if r.status != RunStatus.finished), None)
if watched := st.session_state.get("procedure_run") or playing:
    job_panel(store, watched, "tests", resumable=True)
runs = procedure_runs(store, project_id)
if not runs:
    st.info("No procedure test run yet: play the tests against a target above.")
    st.stop()
newest: dict[str | None, str] = {}
for r in runs:
    newest.setdefault(r.target, r.id)
labels = told_apart(
    {r.id: f"{r.target} ({r.started_at:%Y-%m-%d %H:%M}, {words(r.status.value).lower()})" for r in runs}
)
picked = st.multiselect(
    "Runs side by side", list(labels), default=list(newest.values()), format_func=labels.get
)
if not picked:
    st.stop()
# Scoring embeds every reply: it runs again only when a run moves on (its status or committed tests),
# not on every click on this page.
committed = committed_counts(store, picked)
statuses = {r.id: r.status.value for r in runs}


@st.cache_data(max_entries=16, show_spinner=False)
def _scored(run_id: str, key: tuple):
    return score_run(store, run_id)


try:
    scored = [_scored(r, (store.url, statuses[r], committed.get(r, 0))) for r in picked]
except EvalcoreError as e:
    show_error(e)
    st.stop()
about = report_about(scored)
if offline := offline_runs([s.run for s in scored]):
    st.caption(
        "Offline: a built-in target (an agent or the demo) played the tests, or the replies were compared "
        f"on the offline embedding ({md(', '.join(labels[r] for r in offline))})."
    )
if "reply threshold" in about:
    st.caption(f"Correct reply: similarity >= {md(about['reply threshold'])}")
# A figure per row and a run per column: seven metrics with intervals fit the page beside a few runs.
st.dataframe(by_metric(table2_display(scored), labels), hide_index=True, width="stretch")
with st.expander("Counts"):
    st.dataframe(by_metric(counts_frame(scored), labels), hide_index=True, width="stretch")
drill = st.selectbox("Failing tests of", picked, format_func=labels.get)
failing = failing_frame(
    next(s for s in scored if s.run.id == drill), generated=generated_names(store, project_id)
)
failing_tests(store, project_id, next(s for s in scored if s.run.id == drill), _plain_turns(failing),
              generated_names(store, project_id))  # fmt: skip
columns = st.columns(4)
for column, fmt in zip(columns, ("md", "csv", "jsonl", "latex"), strict=True):
    column.download_button(
        f"Download ({fmt})",
        data=lambda fmt=fmt: ("\n" if fmt in ("md", "latex") else "").join(
            export_procedure_tables(scored, fmt, failing=True).values()
        ),
        file_name=f"table2.{'tex' if fmt == 'latex' else fmt}",
        key=f"export_{fmt}",
    )
next_step("pages/reports.py", "compare runs on Reports")
