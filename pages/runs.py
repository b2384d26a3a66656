"""Runs: the project's targets; start a run (target, judge, budget), watch its progress, stop, resume."""

import streamlit as st

from evalcore.auth.audit import authorize, authorized
from evalcore.auth.roles import Permission
from evalcore.errors import EvalcoreError
from evalcore.jobs import failed_units
from evalcore.jobs.queue import enqueue
from evalcore.llm import Registry
from evalcore.models import RunStatus, Target
from evalcore.models.wording import told_apart, without_ids, words
from evalcore.reports.status import run_list, run_state
from evalcore.runs import RUN_KIND, create_run, request_stop
from evalcore.runs.control import run_label
from evalcore.targets import DEMO_NAME, describe, list_targets, remove_target, save_target
from evalcore.targets.config import DEMO_FLOWS_NAME
from pages._common import (
    current_actor,
    current_project,
    current_user,
    guarded,
    md,
    next_step,
    retry_and_queue,
    run_name_inputs,
    show_error,
    show_holders,
    store_or_stop,
)

store = store_or_stop()


def _kind_words(described: str) -> str:
    """A target's description with its kind in words ('demo_flows: built-in ...' -> 'Demo flows: ...')."""
    kind, sep, rest = described.partition(": ")
    return f"{words(kind)}{sep}{rest}" if sep else described


project_id = current_project(store)
st.title("Runs")
st.caption("Play conversations and tests against the system under test, and judge every turn.")
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()

# ----------------------------------------------------------------------------------------- targets
targets = list_targets(store, project_id)
st.subheader("Targets")
st.dataframe(
    [
        {
            "target": t.name,
            "how it is reached": _kind_words(describe(t)),
            "model (for the judge guard)": t.model or "-",
        }
        for t in targets
    ],
    hide_index=True,
    width="stretch",
)

with st.expander("Add or replace a target"):
    kinds = {
        "openai": "OpenAI-compatible chat endpoint",
        "anthropic": "Anthropic",
        "http": "Generic HTTP JSON endpoint",
        "python": "Python callable",
    }
    kind = st.selectbox("Kind", list(kinds), key="target_kind", format_func=kinds.get)
    with st.form("add_target", enter_to_submit=False):
        name = st.text_input("Name", placeholder="e.g. prod-bot")
        config: dict = {}
        if kind in ("openai", "anthropic"):
            config["model"] = st.text_input(
                "Model", placeholder="gpt-4o-mini" if kind == "openai" else "claude-haiku-4-5"
            )
            config["base_url"] = st.text_input(
                "Base URL (empty for the provider's own)", placeholder="http://localhost:8000/v1"
            )
            config["system_prompt"] = st.text_area("System prompt")
            config["api_key_env"] = st.text_input(
                "Environment variable holding the API key (its NAME, not the key)"
            )
            config["cache"] = st.checkbox("Serve identical requests from the cache", value=True)
        elif kind == "http":
            config["url"] = st.text_input("URL", placeholder="https://bot.example.com/chat")
            headers = st.text_area("Headers, one 'Name: value' per line (write secrets as ${ENV_NAME})")
            config["headers"] = dict(
                (k.strip(), v.strip())
                for k, _, v in (line.partition(":") for line in headers.splitlines() if ":" in line)
            )
            template = st.text_area("Request template (JSON)", value='{"messages": "{{messages}}"}')
            config["response_path"] = st.text_input("Reply at (dotted path)", value="reply")
        else:
            config["callable"] = st.text_input("Callable", placeholder="mybot.app:answer")
        model = ""
        if kind in ("http", "python"):  # chat targets name their model above
            model = st.text_input("Model behind the target (optional; keeps the judge a different model)")
        if st.form_submit_button("Save target", type="primary"):
            try:
                if kind == "http":
                    import json

                    config["request_template"] = json.loads(template)
                clean = {k: v for k, v in config.items() if v not in ("", None, {})}
                # Targets are being moved (issue 24): their registry is checked here until it moves.
                authorize(
                    store, current_actor(), Permission.set_targets, "targets.save", project_id=project_id
                )
                saved = save_target(
                    store, project_id, Target(name=name.strip(), kind=kind, model=model or None, config=clean)
                )
                st.success(md(f"Saved target {saved.name}: {_kind_words(describe(saved))}"))
            except EvalcoreError as exc:
                show_error(exc)
            except ValueError as exc:  # JSON of the template, or the record itself
                st.error(f"Not saved: {md(exc)}")
    saved_names = [t.name for t in targets if t.name not in (DEMO_NAME, DEMO_FLOWS_NAME)]
    if saved_names:
        gone = st.selectbox("Remove a saved target", ["-", *saved_names], key="target_remove")
        if gone != "-" and st.button(f"Remove {md(gone)}"):
            try:
                with authorized(
                    store, current_actor(), Permission.set_targets, "targets.remove", target=gone
                ):
                    remove_target(store, project_id, gone)
                st.rerun()
            except EvalcoreError as exc:
                show_error(exc)

# --------------------------------------------------------------------------------------- start run
st.subheader("Start a run")
registry = Registry(store.project(project_id).settings)
judge_default = registry.choose("judge").model
judges = ["(judge role)", "offline", *[m for m in registry.configured_models() if m != judge_default]]
with st.form("start_run", enter_to_submit=False):
    a, b = st.columns(2)
    target_name = a.selectbox("Target", [t.name for t in targets])
    judge = b.selectbox(
        "Judge", judges, format_func=lambda j: f"judge role: {judge_default}" if j == judges[0] else j
    )
    template = b.radio(
        "Judge's prompt",
        ["ours", "prometheus"],
        format_func={"ours": "Ours", "prometheus": "Prometheus (the paper's)"}.get,
        horizontal=True,
        help="Both give a 0/1 score, an error type and a rationale. Ours states grading rules and asks "
        "for JSON; Prometheus' absolute-grading template is the one seed 000 names. The offline judge "
        "ignores it.",
    )
    c, d, e = st.columns(3)
    source = c.radio("Play", ["conversations", "tests", "both"], horizontal=True)
    budget = d.number_input("Budget in USD (0 = no limit)", min_value=0.0, value=0.0, step=0.5)
    concurrency = e.slider("Conversations at once", 1, 32, 4)
    f, g, h = st.columns(3)
    limit = f.number_input("At most this many items (0 = all)", min_value=0, value=0)
    history = g.radio(
        "Earlier turns the target sees",
        ["own", "expected"],
        format_func={"own": "its own replies", "expected": "the expected answers"}.get,
        horizontal=True,
        help="With the expected answers, a failing turn is not only the echo of an earlier failure.",
    )
    pairs = h.checkbox(
        "Also ask later turns alone",
        help="Each later turn is played again as its stand-alone question, for the report's "
        "single- vs multi-turn pairs (seed 000).",
    )
    run_name, notes = run_name_inputs()
    if st.form_submit_button("Start run", type="primary"):
        try:
            # Checked before a run record is made for nothing (enqueue checks again).
            authorize(store, current_actor(), Permission.start_run, "job.start", project_id=project_id)
            run = create_run(
                store, project_id, target_name, judge=None if judge == judges[0] else judge,
                judge_template=template, budget={"usd": budget} if budget else {}, concurrency=concurrency,
                source=source, limit=int(limit) or None, history=history, single_turn_pairs=pairs,
                name=run_name, notes=notes,
            )  # fmt: skip
            enqueue(store, run.id, actor=current_actor())
            st.session_state["watch_run"] = run.id
        except EvalcoreError as exc:
            show_error(exc)

# ---------------------------------------------------------------------------------- runs, progress
# Every run against a target, of every kind, in one list; conversation runs are started and watched here,
# the others on their own pages (procedure tests on Procedures, simulations, scenario runs).
listed = run_list(store, project_id)
RUN_COLUMNS = ["name", "kind", "target", "judge", "items", "code_version", "cost_usd", "status", "progress"]
if listed:
    st.subheader("Runs")
    names = told_apart({r.run_id: r.name for r in listed})  # a name two runs share gets ' #2', as in pickers
    st.dataframe(
        [r.__dict__ | {"name": names[r.run_id]} for r in listed],
        hide_index=True,
        width="stretch",
        column_order=RUN_COLUMNS,
        column_config={
            "name": st.column_config.TextColumn(width="medium"),
            "code_version": "code version",
            "cost_usd": st.column_config.NumberColumn("cost", format="$%.4f"),
        },
    )
    st.page_link("pages/results.py", label="Every item of every run: Results", icon=":material/list_alt:")
runs = store.runs(project_id, kind=RUN_KIND)
if not runs:
    st.info(
        "No conversation run yet. Runs of other kinds are started and watched on their own pages: "
        "procedure tests on Procedures, persona simulations on Simulations, scenario runs on Scenarios."
    )
    st.stop()
st.subheader("Conversation runs")
ids = [r.id for r in runs]
if st.session_state.get("watch_run") not in ids:
    st.session_state["watch_run"] = ids[0]
labels = told_apart({r.id: without_ids(run_label(r)) for r in runs})
watched = st.selectbox("Run", ids, key="watch_run", format_func=labels.get)


def _live(run_id: str) -> bool:
    """Queued or played right now, by a worker or another process such as the CLI."""
    return store.run(run_id).status in (RunStatus.pending, RunStatus.running)


def _panel(run_id: str) -> None:
    status = run_state(store, run_id)  # the one status every page shows
    run, done, live = status.run, status.done, status.live
    st.progress(done / status.total if status.total else 0.0, text=status.text("turns"))
    held = show_holders(store, run_id)
    if run.stopped_reason:
        st.caption(f"Stopped: {md(run.stopped_reason)}")
    for warning in run.warnings:
        st.warning(md(warning))
    st.caption(
        md(
            f"Target {run.target} ({run.params.get('target_description', '')}) · judge {run.judge or '-'} · "
            f"budget {run.budget or 'none'} · concurrency {run.params.get('concurrency')} · "
            f"evalcore {run.code_version}"
        )
    )
    failed = failed_units(store, run_id)
    if failed and not live:  # kept with their reasons until retried
        st.warning(f"{len(failed)} item(s) could not be played: {', '.join(sorted(failed)[:5])}")
        retry = st.button("Retry failed units", key=f"retry:{run_id}", icon=":material/replay:")
        if retry and retry_and_queue(store, run_id):
            st.rerun()
    left, middle, right = st.columns(3)
    if live:
        if left.button("Stop", key=f"stop:{run_id}", icon=":material/stop:") and guarded(
            lambda: request_stop(store, run_id, current_user() or "a user", actor=current_actor())
        ):
            st.rerun()
        if status.word == "running" and not held:
            st.caption("No live worker holds it now: a worker takes it over once its claims expire.")
    elif (
        run.status != RunStatus.finished
        and middle.button("Resume", key=f"resume:{run_id}", type="primary", icon=":material/play_arrow:")
        and guarded(lambda: enqueue(store, run_id, actor=current_actor()))
    ):
        st.rerun()
    if done and right.button("Open the report", key=f"report:{run_id}", icon=":material/table_chart:"):
        st.session_state["report_run"] = run_id
        st.switch_page("pages/reports.py")
    if not live and st.session_state.get(f"was_live:{run_id}"):
        st.session_state[f"was_live:{run_id}"] = False
        st.rerun()  # the run just ended: refresh the whole page (run list, buttons, polling) once
    st.session_state[f"was_live:{run_id}"] = live


st.fragment(run_every=1.0 if _live(watched) else None)(_panel)(watched)
next_step("pages/reports.py", "read the report of a run")
