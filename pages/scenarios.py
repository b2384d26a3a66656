"""Scenarios (seed 003; issue 19): the project's scenario tests, an editor of their YAML with live
validation (a valid edit saved as a new revision, an invalid one refused), and the results of scenario
runs per scenario and per assertion kind, down to one repetition's checks, their events and its
transcript."""

import pandas as pd
import streamlit as st

from evalcore.errors import EvalcoreError, StaleVersionError
from evalcore.generators.scenario.e2e import case_yaml
from evalcore.generators.scenario.from_specs import OFFLINE_MARK
from evalcore.generators.scenario.run import MAX_RUN_COUNT, RUN_KIND, create_scenario_run
from evalcore.generators.scenario.run import RUN_KIND as SCENARIO_RUN_KIND
from evalcore.generators.scenario.store_ops import (
    add_scenario,
    check_scenario_text,
    import_uploads,
    list_scenarios,
    save_scenario,
    scenario_text,
)
from evalcore.generators.scenario.targets import event_targets, target_domain
from evalcore.generators.scenario.user_faults import scenario_fault_report
from evalcore.generators.scenario.wording import assertion_at, event_words
from evalcore.items.current import read_item
from evalcore.jobs import progress
from evalcore.jobs.queue import enqueue
from evalcore.models.wording import without_ids, words
from evalcore.reports.results import run_labels
from evalcore.reports.scenarios import (
    export_scenario_tables,
    outcomes,
    per_assertion,
    repetition_label,
    scenario_list,
    scenario_report,
    scenario_tables,
    transcript,
)
from pages._common import (
    current_actor,
    current_project,
    flash,
    job_panel,
    may_start,
    md,
    next_step,
    require_user,
    run_name_inputs,
    show_error,
    show_flash,
    store_or_stop,
)
from pages._scenario_writing import from_specs_form

store = store_or_stop()
project_id = current_project(store)


def _kinds_as_words(frame):
    """A table's assertion kinds and checks in words ('slot_was_set' -> 'A value was set'), no None."""
    for column in ("kind", "check"):
        if column in frame:
            frame = frame.assign(**{column: [words(v) for v in frame[column]]})
    gaps = [c for c in frame.columns if frame[c].isna().any()]  # as text, so a number column can hold '—'
    return frame.assign(**{c: ["—" if pd.isna(v) else str(v) for v in frame[c]] for c in gaps})


st.title("Scenarios")
st.page_link("pages/results.py", label="Every item of every run: Results", icon=":material/list_alt:")
st.caption(
    "Scenario tests as Rasa writes them (files in eval/scenarios): a briefing of the simulated user, "
    "initial slots, criteria judged on the transcript and assertions on the events the target reports. "
    "Bring them in below; Rasa E2E test files become scripted tests, played as written.",
    help="On the command line: evalcore scenarios import PATH (seed 003).",
)
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()

show_flash()


@st.cache_data(ttl=60, max_entries=8, show_spinner="Reading the target's domain…")
def _domain(url: str, project: str, target: str, config: str):
    # keyed by the target's configuration: an edited target is read again
    return target_domain(store, project, target)


@st.cache_data(max_entries=8, show_spinner=False)
def _report(url: str, run_id: str, stamp: tuple):
    # a run's results change only as it moves on: its status and committed units key the cache
    return scenario_report(store, run_id)


@st.cache_data(max_entries=8, show_spinner=False)
def _user_faults(url: str, run_id: str, stamp: tuple):
    # keyed as the report is: the check reads the run's finished conversations
    return scenario_fault_report(store, run_id)


NEW_SCENARIO = """\
scenario:
  name: Customer returns a helmet
  simulation_context: >
    You bought a helmet two weeks ago and it does not fit. You want to return it for a refund.
  goals:
    criteria:
      - The assistant should state the return window that applies
"""


def _problems(problems: list) -> None:
    st.dataframe(
        [{"line": p.line, "field": p.field or "", "problem": p.message} for p in problems],
        hide_index=True,
        width="stretch",
    )


with st.expander("Import scenario files or Rasa E2E test files"):
    kind = st.radio(
        "The files are",
        ["scenarios", "e2e"],
        format_func=lambda k: {
            "scenarios": "Scenario files (scenario:)",
            "e2e": "Rasa E2E tests (files with test cases)",
        }[k],
        horizontal=True,
        help="Rasa E2E test cases are played as written against an event-reporting target and checked as "
        "Rasa's test runner checks them (seed 003's assertions on each user turn's events).",
    )
    uploaded = st.file_uploader("YAML files", type=["yml", "yaml"], accept_multiple_files=True)
    if st.button("Import", disabled=not uploaded):
        try:
            author = require_user()
            files = [(f.name, f.getvalue()) for f in uploaded or []]
            done = import_uploads(store, project_id, files, author, e2e=kind == "e2e", actor=current_actor())
            summary = f"{len(done.added)} added, {len(done.updated)} updated, {len(done.unchanged)} unchanged"
            flash("success", md("; ".join([summary, *done.skipped])))
        except EvalcoreError as exc:
            show_error(exc)

scenarios = list_scenarios(store, project_id)
targets = {t.name: t for t in event_targets(store, project_id)}
st.subheader(f"Scenarios ({len(scenarios)})")
against = st.selectbox(
    "Check slots and flows against the domain of",
    [None, *targets],
    format_func=lambda name: "no target (the format only)" if name is None else name,
    help="A target that reports events publishes its slots, flows, actions and responses.",
)
domain = None
if against is not None:
    try:
        domain = _domain(store.url, project_id, against, targets[against].model_dump_json())
    except EvalcoreError as exc:
        st.warning(f"The domain of {md(against)} cannot be read: {md(exc)}")
from_specs_form(store, project_id, domain, against)


def _checked(item_id: str | None, text: str) -> bool:
    """Show the text's problems (or that it is valid); True when it has none."""
    checked, problems = check_scenario_text(store, project_id, item_id, text, domain)
    if problems:
        st.error(f"{len(problems)} problem(s): fix them to save.")
        _problems(problems)
    else:
        st.success("Valid.")
    return checked is not None


by_id = {s.item_id: s for s in scenarios}
if not scenarios:
    st.info("No scenario in this project yet: write one below, or import files.")
else:
    st.dataframe(scenario_list(scenarios), hide_index=True, width="stretch")
    if any(s.written_by == OFFLINE_MARK for s in scenarios):
        st.info(
            f"Offline output: scenarios written by {md(OFFLINE_MARK)} come from the offline implementation "
            "(from the specs, with no model): review them before relying on them."
        )
    item_id = st.selectbox("Edit scenario", list(by_id), format_func=lambda i: by_id[i].scenario.name)
    stored = by_id[item_id]
    st.caption(f"Version {stored.version}" + (f" · from {md(stored.file)}" if stored.file else ""))
    if stored.e2e is not None:
        st.info(
            "A scripted test (a Rasa E2E test case): its user messages are played as written and its steps "
            "and assertions checked on each turn. Edit its file and import it again to change it."
        )
        st.code(case_yaml(stored.e2e), language="yaml")
    else:
        text = st.text_area(
            "Scenario YAML",
            scenario_text(stored),
            height=420,
            key=f"yaml:{item_id}:{stored.version}",
            help="Checked as you edit (Ctrl+Enter or click outside applies it): every problem with its line "
            "and field. Saving a valid edit adds a revision; the earlier ones are kept.",
        )
        valid = _checked(item_id, text)
        if st.button("Save as a new revision", key=f"save:{item_id}:{stored.version}"):
            author = require_user()
            if not valid:
                st.error("Not saved: fix the problems above. Nothing was changed.")
            else:
                try:
                    version = save_scenario(store, project_id, item_id, text, author, stored.version, domain)
                except StaleVersionError as exc:
                    st.error(md(exc))
                except EvalcoreError as exc:
                    st.error(f"Not saved: {md(exc)}")
                else:
                    if version == stored.version:
                        flash("info", "Nothing changed, nothing saved.")
                    else:
                        flash("success", f"Saved {md(stored.scenario.name)} as version {version}.")

with st.expander("Write a new scenario", expanded=not scenarios):
    written = st.session_state.setdefault("scenarios_written", 0)
    text = st.text_area("New scenario YAML", NEW_SCENARIO, height=300, key=f"new_yaml:{written}")
    valid = _checked(None, text)
    if st.button("Add scenario", key=f"add:{written}"):
        author = require_user()
        if not valid:
            st.error("Not added: fix the problems above. Nothing was stored.")
        else:
            try:
                add_scenario(store, project_id, text, author, domain)
            except EvalcoreError as exc:
                st.error(f"Not added: {md(exc)}")
            else:
                st.session_state["scenarios_written"] = written + 1  # a fresh text area next time
                flash("success", "Scenario added.")

st.subheader("Results")
if scenarios and targets:
    with st.expander("Start a run"), st.form("start_run", enter_to_submit=False):
        target = st.selectbox("Target", list(targets), help="Targets that report events.")
        chosen = st.multiselect(
            "Scenarios", list(by_id), default=list(by_id), format_func=lambda i: by_id[i].scenario.name
        )
        run_count = st.number_input(
            "Repetitions of each", 1, MAX_RUN_COUNT, 1, help="run_count in Rasa's terms."
        )
        run_name, notes = run_name_inputs()
        if st.form_submit_button("Start run", type="primary", icon=":material/play_arrow:"):
            require_user()
            try:
                may_start(store, SCENARIO_RUN_KIND)  # before a run record is made for nothing
                started = create_scenario_run(
                    store, project_id, target, [by_id[i] for i in chosen], run_count=int(run_count),
                    name=run_name, notes=notes,
                )  # fmt: skip
                enqueue(store, started.id, actor=current_actor())
            except EvalcoreError as exc:
                show_error(exc)
            else:
                st.session_state["scenario_run"] = started.id
                flash("success", "Run queued: a worker plays it; its progress shows below.")
runs = store.runs(project_id, kind=RUN_KIND)
if not runs:
    st.info("No scenario run in this project yet: start one above.")
    st.stop()
labels = run_labels(runs)  # name, target, judge, start and status, as Runs and Results name runs
ids = list(labels)
watched = st.session_state.get("scenario_run")
run_id = st.selectbox(
    "Run", ids, index=ids.index(watched) if watched in ids else 0, format_func=labels.__getitem__
)
run = next(r for r in runs if r.id == run_id)
job_panel(store, run_id, "repetitions", resumable=True)
for warning in run.warnings:
    st.warning(md(warning))
report = _report(store.url, run_id, (run.status.value, str(run.finished_at), progress(store, run)[0]))
about = report.about
st.caption(
    " · ".join(f"{md(k)}: {md(without_ids(v, bare='this run'))}" for k, v in about.items() if k != "run")
)
if about.get("offline", "no") != "no":
    st.info("Offline output: the judge, the target or the criteria verdicts came from no model.")
if not report.results:
    st.info("No repetition of this run has finished yet.")
    st.stop()

tables = scenario_tables(report.results, report.scenarios, report.turns)
st.markdown("**Pass share per scenario**")
st.dataframe(
    tables["pass_rates"],
    hide_index=True,
    width="stretch",
    column_config={"share_passed": st.column_config.ProgressColumn("pass share", format="percent")},
)
faults = _user_faults(store.url, run_id, (run.status.value, str(run.finished_at), progress(store, run)[0]))
st.markdown(
    "**Simulator faults** (repetitions whose simulated user, not the target, went wrong: discount them)"
)
if faults.faults:
    st.warning(
        md(
            f"{len(faults.faults)} of {faults.played} repetition(s) had a simulated user at fault: "
            f"{faults.passed} of {faults.played} passed over all, {faults.passed_without} of "
            f"{faults.played_without} without them. Their verdicts, passed or failed, say more about the "
            "simulator than about the target."
        ),
        icon=":material/person_alert:",
    )
    by_conversation = {r.conversation_id: r for r in report.results}
    st.dataframe(
        [
            {
                "repetition": repetition_label(by_conversation[cid]) if cid in by_conversation else cid,
                "turn": f.turn + 1,  # the transcript's numbering
                "kind": words(f.kind.value),
                "reason": f.reason,
            }
            for cid, found in faults.faults.items()
            for f in found
        ],
        hide_index=True,
        width="stretch",
    )
else:
    st.caption(
        f"No simulated user was at fault in the {faults.played} repetition(s) played: every verdict "
        "counts against the target (scripted E2E scenarios have no simulated user to check)."
    )
st.markdown("**Accuracy per assertion kind** (passed / (passed + failed); unscored apart)")
st.dataframe(
    _kinds_as_words(tables["assertions"]),
    hide_index=True,
    width="stretch",
    column_config={"accuracy": st.column_config.NumberColumn(format="%.3f")},
)
st.markdown("**Each assertion of each scenario** over its repetitions")
# Each assertion said in words (the export keeps it as the scenario file writes it); its kind is then
# the start of the sentence, not a column of its own.
each = per_assertion(report.results, report.scenarios, assertion_at)
st.dataframe(
    _kinds_as_words(each),
    hide_index=True,
    width="stretch",
    column_order=[c for c in each.columns if c != "kind"],
    column_config={"accuracy": st.column_config.NumberColumn(format="%.3f")},
)
if not tables["criteria"].empty:
    st.markdown("**Criteria**")
    st.dataframe(
        tables["criteria"],
        hide_index=True,
        width="stretch",
        column_config={"accuracy": st.column_config.NumberColumn(format="%.3f")},
    )

with st.expander("Export"):
    name = st.selectbox("Table", list(tables), format_func=words)
    formats = {
        "csv": "text/csv",
        "jsonl": "application/jsonl",
        "md": "text/markdown",
        "latex": "application/x-tex",
    }
    for column, (fmt, mime) in zip(st.columns(len(formats)), formats.items(), strict=True):
        column.download_button(
            fmt, export_scenario_tables({name: tables[name]}, fmt, about)[name],
            file_name=f"{run_id}_{name}.{'tex' if fmt == 'latex' else fmt}", mime=mime,
            key=f"dl:{name}:{fmt}",
        )  # fmt: skip

st.markdown("**A repetition**")
failing_only = st.toggle("Only failing or unscored repetitions", value=True)
picked = [r for r in report.results if not failing_only or r.verdict.passed is not True]
if not picked:
    st.success("Every repetition passed.")
    st.stop()
index = st.selectbox("Repetition", range(len(picked)), format_func=lambda i: repetition_label(picked[i]))
result = picked[index]
st.dataframe(_kinds_as_words(outcomes(result, event_words)), hide_index=True, width="stretch")
st.markdown(f"**Transcript** of {md(result.scenario)}, repetition {result.repetition}")
try:
    turns = read_item(store, result.conversation_id).conversation().turns
except EvalcoreError as exc:
    st.warning(f"The conversation cannot be read: {md(exc)}")
    st.stop()
# Under the turn they belong to, the events need not say their turn.
for row in transcript(turns, lambda event: event_words(event, turn=False)).itertuples(index=False):
    with st.chat_message("user" if row.role == "user" else "assistant"):
        st.text(row.text)
        if row.events:
            st.caption(md(row.events))
next_step("pages/reports.py", "compare runs on Reports")
