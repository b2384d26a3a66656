"""Reports of runs, checked against a small case computed by hand; drill-downs, comparison, exports, CLI."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from runs_support import conversation, sample_project
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.items.store_ops import add_conversation, add_test
from evalcore.models import Annotation, Provenance, Run, Turn
from evalcore.models import Test as ItemTest
from evalcore.reports import build_report, compare_runs, export_tables, failing_turns
from evalcore.runs.records import JudgedTurn
from evalcore.runs.store_ops import insert_judgments
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.store_ops import add_specs
from evalcore.store import Store

PROJECT = "p1"
runner = CliRunner()

# (item, spec, n_documents, turn, multi_turn, query_type, score, error_type)
HAND = [
    ("c1", "s1", 2, 1, False, "SINGLE-DOC", 1, None),
    ("c1", "s1", 2, 3, True, "MULTI-DOC", 0, "incomplete"),
    ("c1", "s1", 2, 5, True, "SYNTHESIS", None, None),
    ("c2", "s1", 3, 1, False, "SINGLE-DOC", 0, "wrong_fact"),
    ("c2", "s1", 3, 3, True, "SYNTHESIS", 0, "crash"),
    ("c3", "s2", 2, 1, False, "SINGLE-DOC", 1, None),
    ("c3", "s2", 2, 3, True, "MULTI-DOC", 1, None),
    ("t1", "s2", 1, 3, True, None, 0, "ignored_context"),
]
# Tiers: c1 accepted by an annotator (gold), c2 passed its generation judge (silver), c3 unreviewed,
# t1 rejected by an annotator.


def judged(run_id: str, rows, specs: dict[str, str]) -> list[JudgedTurn]:
    out = []
    for item, spec, docs, turn, multi, qtype, score, error in rows:
        out.append(
            JudgedTurn(
                run_id=run_id,
                conversation_id=None if item == "t1" else item,
                test_id=item if item == "t1" else None,
                turn_index=turn,
                score=score,
                error_type=error,
                rationale=f"{item}/{turn} rationale",
                reply=f"reply {item}/{turn}",
                judge="offline",
                spec_id=specs[spec],
                n_documents=docs,
                query_type=qtype,
                multi_turn=multi,
                item_judge_passed=item == "c2",
                question=f"question {item}/{turn}",
                expected=f"expected {item}/{turn}",
                history=[{"role": "user", "content": "earlier"}] if multi else [],
                grounding=["return-policy"],
                crash="error: HTTP 500" if error == "crash" else None,
            )
        )
    return out


@pytest.fixture
def hand(store: Store):
    """The hand-computed case: run 'r1' (target A) over HAND, run 'r2' (target B) over two turns of c1.

    On SQLite and PostgreSQL alike (the `store` fixture)."""
    store.create_project(PROJECT, "Hand case")
    drafts = [
        SpecDraft(scenario=f"Spec {n}", given="g", when="w", then="t", category="c") for n in ("one", "two")
    ]
    ids = add_specs(store, PROJECT, drafts, Provenance(producer="offline"))
    specs = {"s1": ids[0], "s2": ids[1]}
    for cid in ("c1", "c2", "c3"):
        qa = [("q", "a", "SINGLE-DOC", [])]
        # c2 passed the generation-time judge: silver, the same verdict its judgments carry.
        add_conversation(store, PROJECT, conversation(cid, specs["s1"], [], qa, judge_passed=cid == "c2"))
    expected = Turn(index=3, role="assistant", content="a")
    add_test(store, PROJECT, ItemTest(id="t1", expected=expected, provenance=Provenance(producer="offline")))
    store.annotate(
        "c1", [Annotation(item_kind="conversation", item_id="c1", label="accept", author="ann")], "ann", 1
    )
    store.annotate("t1", [Annotation(item_kind="test", item_id="t1", label="reject", author="ann")], "ann", 1)
    r2 = [
        ("c1", "s1", 2, 1, False, "SINGLE-DOC", 0, "wrong_fact"),
        ("c1", "s1", 2, 3, True, "MULTI-DOC", 0, "incomplete"),
    ]
    for run_id, target, rows in (("r1", "A", HAND), ("r2", "B", r2)):
        store.start_run(PROJECT, Run(id=run_id, kind="run", target=target, params={"project_id": PROJECT}))
        with store.write() as conn:
            insert_judgments(conn, judged(run_id, rows, specs))
    return store, specs


def row(table, key, value):
    [found] = [r for _, r in table.iterrows() if r[key] == value]
    return found


def test_tables_match_the_hand_computed_counts_rates_and_wilson_intervals(hand):
    store, specs = hand
    report = build_report(store, ["r1"])
    assert report.overall["n"] == 7 and report.overall["failures"] == 4 and report.overall["unscored"] == 1
    assert report.crashes == 1
    by_spec = report.tables["by_spec"]
    s1 = row(by_spec, "spec_id", specs["s1"])
    assert (s1["spec_label"], s1["n"], s1["failures"], s1["unscored"]) == ("Spec one", 4, 3, 1)
    # Wilson 95% for 3/4, by hand: centre (0.75 + 1.96²/8) / (1 + 1.96²/4) = 0.62753, half-width 0.32689.
    assert s1["failure_rate"] == 0.75 and math.isclose(s1["ci_low"], 0.30064, abs_tol=1e-4)
    assert math.isclose(s1["ci_high"], 0.95441, abs_tol=1e-4)
    s2 = row(by_spec, "spec_id", specs["s2"])
    assert (s2["n"], s2["failures"]) == (3, 1) and math.isclose(s2["ci_low"], 0.06149, abs_tol=1e-4)
    docs = {
        r["n_documents"]: (r["n"], r["failures"], r["unscored"])
        for _, r in report.tables["by_n_documents"].iterrows()
    }
    assert docs == {1: (1, 1, 0), 2: (4, 1, 1), 3: (2, 2, 0), "All": (7, 4, 1)}
    turns = {r["turns"]: (r["n"], r["failures"]) for _, r in report.tables["by_turns"].iterrows()}
    assert turns == {"single-turn": (3, 1), "multi-turn": (4, 3), "All": (7, 4)}
    errors = {
        r["error_type"]: (r["failures"], r["share"]) for _, r in report.tables["by_error_type"].iterrows()
    }
    # "ignored_context" is stored (the older name): the report reads it under the seed's name.
    assert errors == {"crash": (1, 0.25), "coreference": (1, 0.25), "incomplete": (1, 0.25),
                      "wrong_fact": (1, 0.25), "All": (4, 1.0)}  # fmt: skip
    classes = {
        r["error_class"]: r["failures"] for _, r in report.tables["by_error_class"].iterrows()
    }  # seed 000, Table 10
    assert classes == {"LLM fact retrieval errors": 2, "Coreference errors": 1,
                       "Other failures (not in the seed's Table 10)": 1, "All": 4}  # fmt: skip
    tiers = {
        r["tier"]: (r["n"], r["failures"], r["unscored"]) for _, r in report.tables["by_tier"].iterrows()
    }
    assert tiers == {
        "unreviewed": (2, 0, 0),
        "silver": (2, 2, 0),
        "gold": (2, 1, 1),
        "rejected": (1, 1, 0),
        "All": (7, 4, 1),
    }
    query = {r["query_type"]: (r["n"], r["failures"]) for _, r in report.tables["by_query_type"].iterrows()}
    assert query["SYNTHESIS"] == (1, 1) and query["MULTI-DOC"] == (2, 1) and query["SINGLE-DOC"] == (3, 1)


def test_a_report_of_some_tables_makes_the_others_when_asked(hand):
    """Two runs of two targets (every table split per target): the tables a page asks for first are
    made, the rest are made when asked and equal the full report's; a run without pairs has none."""
    store, _ = hand
    full = build_report(store, ["r1", "r2"])
    first = build_report(store, ["r1", "r2"], tables=("by_n_documents", "by_query_type"))
    assert set(first.tables) == {"by_n_documents", "by_query_type"}
    assert first.table_names == list(full.tables) and "by_pair" not in first.table_names
    for name in full.tables:
        pd.testing.assert_frame_equal(first.table(name), full.tables[name])
    assert "target" in first.table("by_spec")


def test_tier_scopes_gold_only_and_silver_too(hand):
    store, _ = hand
    gold = build_report(store, ["r1"], tiers="gold").overall
    assert (gold["n"], gold["failures"], gold["unscored"]) == (2, 1, 1)
    silver = build_report(store, ["r1"], tiers="silver+gold").overall
    assert (silver["n"], silver["failures"]) == (4, 3)
    # Tiers are derived when the report is read: a new verdict changes them at once.
    store.annotate(
        "c3", [Annotation(item_kind="conversation", item_id="c3", label="accept", author="ann")], "ann", 1
    )
    assert build_report(store, ["r1"], tiers="gold").overall["n"] == 4


def test_two_runs_side_by_side_with_the_difference(hand):
    store, specs = hand
    report = build_report(store, ["r1", "r2"])
    assert report.within == "target" and set(report.tables["by_spec"]["target"]) == {"A", "B"}
    tables = compare_runs(report.frame, "r1", "r2")
    s1 = row(tables["by_spec"], "spec_id", specs["s1"])
    assert (s1["n_a"], s1["failures_a"], s1["n_b"], s1["failures_b"]) == (4, 3, 2, 2)
    assert math.isclose(s1["diff"], 1.0 - 0.75)
    by_target = compare_runs(report.frame, "A", "B", on="target")["by_turns"]
    single = row(by_target, "turns", "single-turn")
    assert (single["failures_a"], single["n_a"], single["failures_b"], single["n_b"]) == (1, 3, 1, 1)
    errors = tables["by_error_type"].set_index("error_type")
    assert errors.loc["wrong_fact", "failures_b"] == 1 and errors.loc["crash", "failures_b"] == 0


def test_each_cell_drills_down_to_its_failing_turns(hand):
    store, specs = hand
    report = build_report(store, ["r1"])
    details, count = failing_turns(store, report.frame, {"spec_id": specs["s1"]})
    assert count == 3 and [(d.turn.conversation_id, d.turn.turn_index) for d in details] == [
        ("c1", 3), ("c2", 1), ("c2", 3),
    ]  # fmt: skip
    first = details[0]
    assert (first.tier, first.target, first.spec_label) == ("gold", "A", "Spec one")
    assert first.turn.expected == "expected c1/3" and first.turn.reply == "reply c1/3"
    assert (
        first.turn.history == [{"role": "user", "content": "earlier"}]
        and first.turn.rationale == "c1/3 rationale"
    )
    assert first.documents == [], "no documents in this project"
    single, n = failing_turns(store, report.frame, {"turns": "single-turn"})
    assert n == 1 and single[0].turn.conversation_id == "c2"
    rejected, n = failing_turns(store, report.frame, {"tier": "rejected"})
    assert n == 1 and rejected[0].turn.test_id == "t1"
    assert failing_turns(store, report.frame, {"n_documents": 2})[1] == 1
    assert failing_turns(store, report.frame, {"spec_id": specs["s1"]}, outcome="unscored")[1] == 1


def test_every_table_exports_in_every_format(hand):
    store, _ = hand
    tables = build_report(store, ["r1"]).tables
    for fmt in ("csv", "jsonl", "md", "latex"):
        texts = export_tables(tables, fmt)
        assert set(texts) == set(tables) and all(texts.values())
    assert "75.0%" in export_tables(tables, "md")["by_spec"]
    latex = export_tables(tables, "latex")["by_turns"]
    assert r"\toprule" in latex and r"\label{tab:by-turns}" in latex and "57.1\\%" in latex
    first = json.loads(export_tables(tables, "jsonl")["by_spec"].splitlines()[0])
    assert first["spec_label"] == "Spec one" and first["failure_rate"] == 0.75


def test_cli_report_prints_tables_and_gates_ci_on_the_failure_rate(hand, tmp_path):
    store, _ = hand
    db = ["--db", store.url]
    args = ["report", "--run", "r1", "--by", "turns", "--format", "csv", "--include-rejected", *db]
    csv = runner.invoke(app, args)
    assert csv.exit_code == 0, csv.output
    lines = csv.stdout.splitlines()
    assert lines[0] == "# run: r1", "what produced the table comes first"
    assert next(x for x in lines if not x.startswith("#")).startswith("turns,n,failures,failure_rate")
    assert "single-turn,3,1," in csv.stdout and "failure rate 57.1%" in csv.stderr
    assert "counts all tiers\n" in csv.stderr
    # By default the rejected test t1 (one failed turn) is left out, and the headline says so.
    default = runner.invoke(app, ["report", "--run", "r1", *db])
    assert "failure rate 50.0%" in default.stderr and "counts all tiers but rejected" in default.stderr
    rejected = ["--include-rejected"]
    assert runner.invoke(app, ["report", "--run", "r1", "--fail-above", "0.5", *rejected, *db]).exit_code == 1
    assert runner.invoke(app, ["report", "--run", "r1", "--fail-above", "60%", *rejected, *db]).exit_code == 0
    out = tmp_path / "tables.tex"
    latex = runner.invoke(
        app, ["report", "--run", "r1", "--compare", "r2", "-f", "latex", "-o", str(out), *db]
    )
    assert latex.exit_code == 0 and r"\begin{table}" in out.read_text() and "diff" in out.read_text()
    bad = runner.invoke(app, ["report", "--run", "r1", "--by", "colour", *db])
    assert bad.exit_code == 2 and "unknown table" in bad.output  # a usage error, not a failing gate


def test_cli_targets_and_run_on_the_demo_target(tmp_path, monkeypatch):
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    store = Store(url)
    pid, _ = sample_project(store)
    db = ["--db", url]
    web = ["--kind", "http", "--url", "http://127.0.0.1:9/chat", "--response-path", "answer"]
    added = runner.invoke(
        app, ["targets", "add", "web", *web, "--header", "Authorization: Bearer ${WEB_TOKEN}", *db]
    )
    assert added.exit_code == 0, added.output
    listed = runner.invoke(app, ["targets", "list", *db])
    assert "demo" in listed.output and "POST http://127.0.0.1:9/chat" in listed.output
    secret = ["--api-key-env", "sk-live-0123456789abcdefgh"]
    refused = runner.invoke(app, ["targets", "add", "k", "--kind", "openai", "--model", "m", *secret, *db])
    assert refused.exit_code == 1 and "environment variable" in refused.output
    played = runner.invoke(app, ["run", "--target", "demo", "--judge", "offline", *db])
    assert played.exit_code == 0, played.output
    assert "finished" in played.stdout and "failure rate" in played.stdout
    [run] = store.runs(pid, kind="run")
    gate = runner.invoke(app, ["report", "--fail-above", "0.99", *db])
    assert gate.exit_code == 0 and run.id in gate.stderr
