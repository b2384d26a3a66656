"""Page tests (AppTest): Runs (targets, start, progress) and Reports (tables, charts, exports, drill-down)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from page_app import open_page
from runs_support import sample_project
from streamlit.proto.Metric_pb2 import Metric
from streamlit.testing.v1 import AppTest
from vega import charts

from evalcore.jobs.queue import open_queue
from evalcore.models import Target
from evalcore.runs import run_target
from evalcore.store import DATABASE_URL_ENV, Store
from evalcore.targets import list_targets, save_target

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db_url(tmp_path, monkeypatch) -> str:
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    return url


def texts(at: AppTest) -> str:
    parts = [*at.markdown, *at.caption, *at.info, *at.warning, *at.error, *at.success]
    return "\n".join(str(p.value) for p in parts)


def test_reports_without_a_run_point_to_the_runs_page(db_url):
    sample_project(Store(db_url))
    at = open_page("pages/reports.py")
    assert any("No run with judged turns yet" in str(i.value) for i in at.info)


def test_start_a_demo_run_from_the_runs_page_and_watch_it_finish(db_url):
    store = Store(db_url)
    pid, _ = sample_project(store)
    at = open_page("pages/runs.py")
    assert at.dataframe[0].value["target"].tolist() == ["demo", "demo-flows"]
    assert any(
        "Runs of other kinds are started and watched on their own pages" in str(i.value) for i in at.info
    )
    # The form's defaults: the demo target, the project's judge role (offline here), all conversations.
    next(t for t in at.text_input if t.label == "Run name").input("baseline prompt")
    next(t for t in at.text_input if t.label == "Notes").input("before the retrieval change")
    [start] = [b for b in at.button if b.label == "Start run"]
    start.click().run()
    assert not at.exception, at.exception
    [run] = store.runs(pid, kind="run")
    assert store.run(run.id).status.value == "pending", "queued for a worker, not played by the page"
    assert (run.params["name"], run.params["notes"]) == ("baseline prompt", "before the retrieval change")
    at.run()
    assert any("0 / 14 turns · queued" in str(p.proto.text) for p in at.get("progress"))
    queue = open_queue(db_url)  # a worker's part, in this process: take the task and run it
    queue.huey.execute(queue.huey.dequeue())
    at.run()
    assert store.run(run.id).status.value == "finished"
    assert any("14 / 14 turns" in str(p.proto.text) for p in at.get("progress"))
    assert any(b.label == "Open the report" for b in at.button)


def test_add_a_target_and_refuse_a_key_in_the_form(db_url):
    store = Store(db_url)
    pid, _ = sample_project(store)
    at = open_page("pages/runs.py")
    name, model, base_url, key_env = (at.text_input[i] for i in range(4))
    name.input("local-llm")
    model.input("llama3.1")
    base_url.input("http://127.0.0.1:8000/v1")
    key_env.input("sk-live-0123456789abcdefghij")
    [save] = [b for b in at.button if b.label == "Save target"]
    save.click().run()
    assert any("api_key_env" in str(e.value) or "API key" in str(e.value) for e in at.error)
    at.text_input[3].input("LOCAL_LLM_KEY")
    [save] = [b for b in at.button if b.label == "Save target"]
    save.click().run()
    assert any("Saved target local\\-llm" in str(s.value) for s in at.success)  # the name shown as text
    assert [t.name for t in list_targets(store, pid)] == ["demo", "demo-flows", "local-llm"]


def test_report_tables_charts_exports_and_a_drill_down(db_url):
    store = Store(db_url)
    pid, _ = sample_project(store)
    outcome = run_target(store, pid, "demo", judge="offline")
    at = open_page("pages/reports.py")
    metrics = {m.label: m.value for m in at.metric}
    overall = outcome.done
    assert metrics["Failed / scored turns"].endswith(f"/ {overall:,}") and metrics["Crashes"] == "0"
    assert len(at.tabs) == 7 and not at.get("vega_lite_chart")  # Table 10 by error class too; charts in tabs
    by_spec = at.dataframe[0].value
    assert "spec_label" in by_spec and by_spec["spec_label"].iloc[-1] == "All"  # the total row, named
    # Only the open tab is drawn; each, once chosen, shows its table with plain headers and counts with
    # separators (not the code names: n_documents, failure_rate %), in CSV, JSONL, Markdown and LaTeX.
    for tab in [t.label for t in at.tabs]:
        at.session_state["report_tab"] = tab
        at.run()
        assert not at.exception, at.exception
        [table] = at.dataframe
        charted = tab in ("By number of documents", "By query type")
        assert len(at.get("vega_lite_chart")) == charted, f"{tab}: its chart above its table"
        assert [d.proto.label for d in at.get("download_button")] == ["CSV", "JSONL", "Markdown", "LaTeX"]
        config = json.loads(table.proto.columns)
        labels = {name: column.get("label") for name, column in config.items()}
        assert not [label for label in labels.values() if "_" in str(label)], labels
        for name in {"n", "failures"} & set(config):
            assert config[name]["type_config"]["format"] == "localized", config[name]
    at.session_state["report_tab"] = at.tabs[0].label
    at.run()
    labels = {name: column.get("label") for name, column in json.loads(at.dataframe[0].proto.columns).items()}
    assert labels["spec_label"] == "spec" and labels["n"] == "scored" and labels["ci"] == "95% CI %"
    assert json.loads(at.dataframe[0].proto.columns)["spec_label"]["pinned"] is True
    drill = at.selectbox(key="drill:by_spec")
    failing = [o for o in drill.options if o != "(choose a row)"]
    assert failing and all("failing" in o for o in failing)
    drill.select_index(1).run()
    assert not at.exception, at.exception
    shown = texts(at)
    for part in (
        "failing turn(s)",
        "**Question:**",
        "**Expected**",
        "**Got**",
        "**Judge** (offline)",
        "tier **",
    ):
        assert part in shown, part
    assert "Grounding documents" in shown


def test_two_runs_side_by_side_with_a_drill_down_per_side(db_url):
    store = Store(db_url)
    pid, _ = sample_project(store)
    first = run_target(store, pid, "demo", judge="offline").run
    save_target(
        store, pid, Target(name="echo", kind="python", config={"callable": "target_endpoints:echo_bot"})
    )
    second = run_target(store, pid, "echo", judge="offline").run
    at = open_page("pages/reports.py")
    assert at.selectbox(key="report_run").value == second.id, "the newest run first"
    at.selectbox(key="report_vs").set_value(first.id).run()
    assert not at.exception, at.exception
    metrics = {m.label: m for m in at.metric}
    assert {"Failure rate (a)", "Failure rate (b)"} <= set(metrics)
    assert metrics["Failure rate (b)"].delta.endswith("pp"), "b against a"
    by_spec = at.dataframe[0].value
    assert {"n_a", "failures_b", "diff"} <= set(by_spec.columns)
    labels = {name: column.get("label") for name, column in json.loads(at.dataframe[0].proto.columns).items()}
    assert labels["n_a"] == "scored (a)" and labels["failure_rate_b"] == "failure rate (b) %"
    assert labels["diff"] == "diff pp" and labels["ci_overlap"] == "CIs overlap"
    order = list(at.dataframe[0].proto.column_order)
    assert order.index("diff") < order.index("n_a"), "the difference is on screen before the two sides"
    for tab in ("By number of documents", "By query type"):
        at.session_state["report_tab"] = tab
        at.run()
        [chart] = charts(at)
        sides = (("a", "echo", second.id), ("b", "demo", first.id))  # a: the run picked, b: the other
        assert set(chart.table()["series"]) == {f"{side}: {target} ({run})" for side, target, run in sides}
    at.session_state["report_tab"] = "By spec"
    at.run()
    at.selectbox(key="drill:by_spec").select_index(1).run()
    at.radio(key="side:by_spec").set_value("b").run()
    assert not at.exception, at.exception
    assert "target demo" in texts(at) and "**Judge** (offline)" in texts(at)


def test_two_runs_of_one_target_have_distinct_legend_names(db_url):
    store = Store(db_url)
    pid, _ = sample_project(store)
    first = run_target(store, pid, "demo", judge="offline").run
    run_target(store, pid, "demo", judge="offline")
    at = open_page("pages/reports.py")
    at.selectbox(key="report_vs").set_value(first.id).run()
    at.session_state["report_tab"] = "By number of documents"
    at.run()
    assert not at.exception, at.exception
    chart = charts(at)[0]
    names = chart.spec["layer"][0]["encoding"]["color"]["scale"]["domain"]
    assert set(chart.table()["series"]) == set(names), "every series in the legend"
    assert len({n.split(": ", 1)[1] for n in names}) == 2, names
    # The same target twice fails alike: no change is grey and has no arrow (not a red "up").
    change = next(m for m in at.metric if m.label == "Failure rate (b)")
    assert change.delta == "+0.0 pp"
    assert (change.proto.color, change.proto.direction) == (Metric.GRAY, Metric.NONE), change.proto


def test_a_run_started_on_the_page_can_show_the_expected_answers_and_ask_turns_alone(db_url):
    store = Store(db_url)
    pid, _ = sample_project(store)
    at = open_page("pages/runs.py")
    next(r for r in at.radio if r.label == "Earlier turns the target sees").set_value("expected")
    next(c for c in at.checkbox if c.label == "Also ask later turns alone").check()
    next(b for b in at.button if b.label == "Start run").click().run()
    assert not at.exception, at.exception
    [run] = store.runs(pid, kind="run")
    assert run.params["history"] == "expected" and run.params["single_turn_pairs"] is True
