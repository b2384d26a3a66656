"""Seed 000 fidelity in runs (issue 13, item 5): the history a target sees (its own replies or the expected
answers), the same question asked alone and in context (Table 11's pair), and the CLI's flags for both."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from runs_support import sample_project
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.errors import EvalcoreError
from evalcore.items.store_ops import add_conversation, list_conversations
from evalcore.reports import build_report, export_tables, provenance
from evalcore.reports.tables import ALONE, IN_CONTEXT
from evalcore.runs import create_run, run_target
from evalcore.runs.player import CANNOT_ANSWER_REPLY
from evalcore.runs.store_ops import judgment_bodies, judgment_rows
from evalcore.store import Store

runner = CliRunner()


@pytest.fixture(autouse=True)
def _online(monkeypatch):
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)


def turns_of(store: Store, run_id: str):
    rows = judgment_rows(store, run_id)
    bodies = judgment_bodies(store, [r[0] for r in rows])
    return [bodies[r[0]] for r in rows]


def test_history_expected_feeds_the_target_the_expected_answers(sqlite_store):
    pid, _ = sample_project(sqlite_store)
    outcome = run_target(sqlite_store, pid, "demo", judge="offline", history="expected")
    run = sqlite_store.run(outcome.run.id)
    assert run.params["history"] == "expected"
    turns = turns_of(sqlite_store, run.id)
    by_item: dict[str, list] = {}
    for turn in turns:
        by_item.setdefault(turn.conversation_id, []).append(turn)
    for played in by_item.values():
        played.sort(key=lambda t: t.turn_index)
        for before, after in itertools.pairwise(played):
            expected = CANNOT_ANSWER_REPLY if before.expected == "CANNOTANSWER" else before.expected
            assert after.history[-1] == {"role": "assistant", "content": expected}
    # Some reply differs from its expected answer, so the two modes really differ.
    assert any(t.reply != t.expected for t in turns)
    assert provenance([run])["history"] == "expected answers"
    csv = export_tables(build_report(sqlite_store, [run.id]).tables, "csv", provenance([run]))["by_spec"]
    assert "# history: expected answers" in csv


def test_history_is_own_or_expected(sqlite_store):
    pid, _ = sample_project(sqlite_store)
    assert create_run(sqlite_store, pid, "demo", judge="offline").params["history"] == "own"
    with pytest.raises(EvalcoreError, match="history"):
        create_run(sqlite_store, pid, "demo", judge="offline", history="mine")


def test_pairs_ask_later_turns_alone_and_the_report_sets_them_side_by_side(sqlite_store):
    pid, _ = sample_project(sqlite_store)
    conversation = next(
        v.conversation for v in list_conversations(sqlite_store, pid) if len(v.conversation.turns) > 4
    )
    follow_up = conversation.turns[2]  # "And what if it shows more than that?"
    resolved = "What if an e-bike I want to return shows more than 25 km?"
    turns = [
        t.model_copy(update={"metadata": {**t.metadata, "resolved_question": resolved}})
        if t is follow_up
        else t
        for t in conversation.turns
    ]
    add_conversation(sqlite_store, pid, conversation.model_copy(update={"id": "c-resolved", "turns": turns}))

    outcome = run_target(sqlite_store, pid, "demo", judge="offline", single_turn_pairs=True)
    played = turns_of(sqlite_store, outcome.run.id)
    alone = [t for t in played if t.alone]
    in_context = [t for t in played if not t.alone]
    assert len(alone) == sum(t.multi_turn for t in in_context) > 0
    assert outcome.done == outcome.total == len(played)
    assert all(t.history == [] for t in alone)
    assert any(t.question == resolved for t in alone), "the resolved question is what is asked alone"

    report = build_report(sqlite_store, [outcome.run.id])
    assert report.overall["n"] + report.overall["unscored"] == len(in_context), "alone turns count once"
    pair = report.tables["by_pair"].set_index("played")
    assert list(pair.index) == [ALONE, IN_CONTEXT]
    assert pair.loc[ALONE, "n"] + pair.loc[ALONE, "unscored"] == len(alone)
    failed_alone = sum(t.score == 0 for t in alone)
    assert pair.loc[ALONE, "failures"] == failed_alone
    # fails_only_here: the pairs that fail one way and pass the other
    context_of = {(t.conversation_id, t.turn_index): t for t in in_context}
    only = sum(t.score == 0 and context_of[(t.conversation_id, t.turn_index)].score == 1 for t in alone)
    assert pair.loc[ALONE, "fails_only_here"] == only
    # A page asks for the tables it draws first; any other, the pair table too, is the same when asked.
    first = build_report(sqlite_store, [outcome.run.id], tables=["by_spec"])
    assert list(first.tables) == ["by_spec"] and first.table_names == list(report.tables)
    for name in report.tables:
        pd.testing.assert_frame_equal(first.table(name), report.tables[name])


def test_a_run_without_pairs_has_no_pair_table(sqlite_store):
    pid, _ = sample_project(sqlite_store)
    outcome = run_target(sqlite_store, pid, "demo", judge="offline")
    assert "by_pair" not in build_report(sqlite_store, [outcome.run.id]).tables


def test_cli_run_takes_history_and_pairs(tmp_path):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    store = Store(url)
    pid, _ = sample_project(store)
    played = runner.invoke(
        app,
        ["run", "--target", "demo", "--judge", "offline", "--history", "expected", "--pairs", "--db", url],
    )
    assert played.exit_code == 0, played.output
    [run] = store.runs(pid, kind="run")
    assert run.params["history"] == "expected" and run.params["single_turn_pairs"] is True
    shown = runner.invoke(app, ["report", "--by", "pair", "--format", "csv", "--db", url])
    assert shown.exit_code == 0 and ALONE in shown.stdout and "# history: expected answers" in shown.stdout
    wrong = runner.invoke(app, ["run", "--target", "demo", "--history", "mine", "--db", url])
    assert wrong.exit_code == 2 and "--history" in wrong.output


def test_the_reports_page_shows_the_history_mode_and_the_pair_table(tmp_path, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from evalcore.store import DATABASE_URL_ENV

    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    pid, _ = sample_project(store)
    run_target(store, pid, "demo", judge="offline", history="expected", single_turn_pairs=True)
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/reports.py").run()
    assert not at.exception, at.exception
    captions = [str(c.value) for c in at.caption]
    assert any("history expected answers" in c and "pairs" in c for c in captions), captions
    labels = [tab.label for tab in at.tabs]
    assert "Same question alone vs in context" in labels and "By kind of error" in labels  # Table 10
