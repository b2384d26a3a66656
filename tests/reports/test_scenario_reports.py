"""Scenario reports (issue 19, item 7) on hand-made results: pass share per scenario, accuracy per
assertion kind as Rasa reports it (unscored left out and counted apart), criteria, the failing checks
with their events, one repetition's outcomes and transcript, exports with provenance and the offline
mark."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scenario_results import CRITERION, DELAY, RESULTS, TRANSFER, scenario, store_run, turns
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.errors import EvalcoreError
from evalcore.models import Run
from evalcore.reports.scenarios import (
    assertion_accuracy,
    criteria_accuracy,
    describe_event,
    export_scenario_tables,
    failures,
    outcomes,
    pass_rates,
    per_assertion,
    scenario_report,
    scenario_tables,
    transcript,
    transcripts,
)
from evalcore.store import Store
from evalcore.targets.events import BotUttered, FlowCompleted, SlotSet


def rows(df: pd.DataFrame) -> list[list]:
    return [
        [None if isinstance(v, float) and math.isnan(v) else v for v in row] for row in df.values.tolist()
    ]


def test_pass_share_per_scenario_over_its_repetitions():
    assert rows(pass_rates(RESULTS)) == [
        [DELAY, 3, 1, 1, 1, pytest.approx(1 / 3)],
        [TRANSFER, 1, 1, 0, 0, 1.0],
        ["All", 4, 2, 1, 1, 0.5],
    ]
    assert pass_rates([]).empty
    named = ["never played", DELAY]  # a run's scenarios in its order: one that never played keeps its row
    assert rows(pass_rates(RESULTS[:1], named)) == [
        ["never played", 0, 0, 0, 0, None],
        [DELAY, 1, 1, 0, 0, 1.0],
        ["All", 1, 1, 0, 0, 1.0],
    ]


def test_accuracy_per_kind_leaves_unscored_out_and_counts_it_apart():
    assert rows(assertion_accuracy(RESULTS)) == [
        ["flow_started", 3, 0, 0, 1.0],
        ["slot_was_set", 2, 1, 0, pytest.approx(2 / 3)],
        ["generative_response_is_relevant", 2, 0, 1, 1.0],
        ["sequencing", 1, 0, 0, 1.0],
        ["All", 8, 1, 1, pytest.approx(8 / 9)],
    ]
    assert assertion_accuracy([]).empty


def test_each_assertion_of_each_scenario_over_its_repetitions():
    table = per_assertion(RESULTS, {DELAY: scenario(DELAY)})
    assert rows(table) == [
        [DELAY, 1, "flow_started", "flow_started: check_order_status", 3, 0, 0, 1.0],
        [DELAY, 2, "slot_was_set", 'slot_was_set: [{"name": "order_id", "value": "ORD-9981"}]', 2, 1, 0,
         pytest.approx(2 / 3)],
        [DELAY, 3, "generative_response_is_relevant", "generative_response_is_relevant: {}", 2, 0, 1, 1.0],
        [TRANSFER, 1, "sequencing", "", 1, 0, 0, 1.0],
    ]  # fmt: skip


def test_criteria_per_scenario():
    assert rows(criteria_accuracy(RESULTS)) == [[DELAY, CRITERION, 2, 1, 0, pytest.approx(2 / 3), True]]


def test_failing_checks_carry_the_events_that_broke_them():
    table = failures(RESULTS)
    assert table[["scenario", "repetition", "conversation", "#", "check", "outcome"]].values.tolist() == [
        [DELAY, 2, "conv-d2", 2, "slot_was_set", "failed"],
        [DELAY, 2, "conv-d2", 4, "criterion", "failed"],
        [DELAY, 3, "conv-d3", 3, "generative_response_is_relevant", "unscored"],
    ]
    assert table["events"][0] == 'turn 1 · slot_set order_id = "ORD-0000"'
    assert table["why"][1] == f"{CRITERION} — It never says why."
    assert failures(RESULTS[:1]).empty


def test_one_repetition_its_outcomes_and_its_transcript():
    table = outcomes(RESULTS[1])
    assert table[["#", "check", "outcome"]].values.tolist() == [
        [1, "flow_started", "passed"],
        [2, "slot_was_set", "failed"],
        [3, "generative_response_is_relevant", "passed"],
        [4, "criterion", "failed"],
    ]
    shown = transcript(list(reversed(turns("conv-d2"))))
    assert shown[["turn", "role", "text"]].values.tolist() == [
        [0, "user", "Where is **my** order?"],
        [1, "assistant", "It is <i>late</i>."],
    ]
    assert shown["events"][1].splitlines() == [
        "turn 1 · flow_started check_order_status",
        'turn 1 · slot_set order_id = "ORD-0000"',
        'turn 1 · bot_uttered utter_late: "It is <i>late</i>."',
    ]


def test_transcripts_of_the_repetitions_that_did_not_pass():
    shown = transcripts(RESULTS, {r.conversation_id: turns(r.conversation_id) for r in RESULTS})
    heads = shown[["scenario", "repetition", "conversation", "turn", "role"]].values.tolist()
    assert heads == [
        [DELAY, 2, "conv-d2", 0, "user"],
        [DELAY, 2, "conv-d2", 1, "assistant"],
        [DELAY, 3, "conv-d3", 0, "user"],
        [DELAY, 3, "conv-d3", 1, "assistant"],
    ], "the failing and the unscored repetitions, not the passing ones"
    assert 'slot_set order_id = "ORD-0000"' in shown["events"][1]
    assert transcripts(RESULTS, {}).empty and list(transcripts([], {})) == list(shown)
    md = export_scenario_tables({"transcripts": shown}, "md")["transcripts"]
    assert "<i>late</i>" not in md and "&lt;i&gt;late" in md, "escaped like the other tables"


def test_events_are_described_in_one_line():
    long = BotUttered(text="word " * 40, source="EnterpriseSearchPolicy")
    assert describe_event(long).startswith('bot_uttered [EnterpriseSearchPolicy]: "word word')
    assert describe_event(long).endswith('…"')
    assert (
        describe_event(FlowCompleted(flow_id="f", step_id="s2", turn=4)) == "turn 4 · flow_completed f at s2"
    )
    assert describe_event(SlotSet(name="n", value=None)) == "slot_set n = null"


def test_a_run_read_back_and_exported_with_provenance(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    store.create_project("demo", "Demo", None)
    run_id = store_run(store, "demo")
    report = scenario_report(store, run_id)
    assert [(r.scenario, r.repetition) for r in report.results] == [
        (r.scenario, r.repetition) for r in RESULTS
    ]
    assert report.about["run"] == run_id and report.about["offline"].startswith("yes")
    assert set(report.turns) == {"conv-d2", "conv-d3"}, "the turns of the repetitions that did not pass"
    exported = export_scenario_tables(scenario_tables(report.results, report.scenarios), "md", report.about)
    assert set(exported) == {"pass_rates", "assertions", "per_assertion", "criteria", "failures"}
    tables = scenario_tables(report.results, report.scenarios, report.turns)
    assert tables["transcripts"]["conversation"].unique().tolist() == ["conv-d2", "conv-d3"]
    assert exported["pass_rates"].startswith("**Scenarios: pass share over their repetitions**")
    assert (
        "offline: yes" in exported["pass_rates"]
        and "| All | 4 | 2 | 1 | 1 | 50.0% |" in exported["pass_rates"]
    )
    assert "| slot_was_set | 2 | 1 | 0 | 0.667 |" in exported["assertions"]
    written = '| Order delay | 2 | slot_was_set | slot_was_set: [{"name": "order_id", "value": "ORD-9981"}] |'
    assert written in exported["per_assertion"], "each assertion as its file writes it"
    csv = export_scenario_tables({"assertions": assertion_accuracy(report.results)}, "csv", report.about)
    assert csv["assertions"].startswith(f"# run: {run_id}\n")
    latex = export_scenario_tables({"failures": failures(report.results)}, "latex", report.about)["failures"]
    assert r"\label{tab:scenario-failures}" in latex and "(offline)" in latex
    store.start_run("demo", Run(id="other", kind="specs.generate"))
    with pytest.raises(EvalcoreError, match="not a scenario run"):
        scenario_report(store, "other")


def test_the_cli_prints_a_runs_tables(tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store = Store(url)
    store.create_project("demo", "Demo", None)
    run_id = store_run(store, "demo")
    runner = CliRunner()
    result = runner.invoke(app, ["scenarios", "report", run_id, "--db", url])
    assert result.exit_code == 0, result.output
    assert "**Scenarios: pass share over their repetitions**" in result.stdout
    assert "| All | 8 | 1 | 1 | 0.889 |" in result.stdout and "Failing" not in result.stdout
    out = tmp_path / "failures.csv"
    result = runner.invoke(
        app, ["scenarios", "report", run_id, "-f", "csv", "--failures", "-o", str(out), "--db", url]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text().count(f"# run: {run_id}") == 6, "each table headed by its provenance"
    assert "conv-d2" in out.read_text().split("turn,role,text,events")[1], "with the failing transcripts"
    bad = runner.invoke(app, ["scenarios", "report", run_id, "-f", "pdf", "--db", url])
    assert bad.exit_code == 2 and "unknown format" in bad.output
