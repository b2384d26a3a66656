"""Gold and silver tool-case conversations (seed 004, Section 2.3; issue 20, item 3): the TRACE judge as a
job writes its verdict into each conversation (silver under the tier policy), people's decisions make
gold, and the judge's threshold is tuned on gold for precision 0.91 and applied."""

from __future__ import annotations

from pathlib import Path

import pytest
from toolcase_support import mislabel
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.generators.tool_case.filtering import calibrate_toolcases, filter_toolcases
from evalcore.generators.tool_case.job import generate_toolcases
from evalcore.generators.tool_case.records import GENERATOR
from evalcore.inputs import import_project
from evalcore.items.current import read_tiers
from evalcore.items.state import project_policy
from evalcore.items.store_ops import list_conversations
from evalcore.models import Annotation, AnnotationLabel, Tier
from evalcore.store import Store

SAMPLE = Path(__file__).resolve().parents[3] / "data" / "sample"


@pytest.fixture
def judged(sqlite_store: Store, monkeypatch) -> tuple[Store, str, list]:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, SAMPLE).project_id
    generate_toolcases(sqlite_store, pid, per_situation=2, pos_share=None)
    mislabel(sqlite_store, pid, as_="null_tool_response")  # shows bad input data: the judge rejects it
    outcome = filter_toolcases(sqlite_store, pid)
    assert (outcome.judged, outcome.total, outcome.failed) == (52, 52, [])
    conversations = [v.conversation for v in list_conversations(sqlite_store, pid, generator=GENERATOR)]
    return sqlite_store, pid, conversations


def _decide(store: Store, conversation, accept: bool) -> None:
    label = AnnotationLabel.accept if accept else AnnotationLabel.reject
    note = Annotation(item_kind="conversation", item_id=conversation.id, label=label, author="ann")
    store.annotate(conversation.id, [note], "ann", store.current(conversation.id).version)


def test_the_judge_verdict_makes_silver_and_a_second_filter_judges_nothing(judged):
    store, pid, conversations = judged
    passed = [c for c in conversations if c.metadata["judge_passed"]]
    assert all(0.0 <= c.metadata["judge_score"] <= 1.0 and c.metadata["judge_labels"] for c in conversations)
    tiers = read_tiers(store, pid, [c.id for c in conversations])
    assert sorted(c.id for c in passed) == sorted(i for i, t in tiers.items() if t == Tier.silver)
    assert 0 < len(passed) < len(conversations)
    assert filter_toolcases(store, pid).total == 0


def test_the_offline_judge_accepts_some_conversations_of_every_situation(judged):
    _, _, conversations = judged
    passed: dict[str, int] = {}
    for c in conversations:
        passed[c.metadata["situation"]] = passed.get(c.metadata["situation"], 0) + c.metadata["judge_passed"]
    assert len(passed) == 26 and [s for s, n in passed.items() if n == 0] == []


def test_the_threshold_is_tuned_on_gold_for_precision_091_and_applied(judged):
    store, pid, conversations = judged
    # People agree with the judge on every conversation but one it scored 1.0: 12 accepted, 1 rejected
    # at the top score; the lower-scored ones (the offline judge scores few below 1.0) rejected.
    top = [c for c in conversations if c.metadata["judge_score"] == 1.0][:13]
    low = [c for c in conversations if c.metadata["judge_score"] < 1.0][:4]
    assert low
    for i, c in enumerate(top):
        _decide(store, c, accept=i > 0)
    for c in low:
        _decide(store, c, accept=False)
    found = calibrate_toolcases(store, pid, 0.91, apply=True)
    assert found.n == 13 + len(low) and found.choice is not None
    assert found.choice.threshold == 1.0 and found.choice.precision == pytest.approx(12 / 13)
    assert found.tiers["gold"] == 12 and found.tiers["rejected"] == 1 + len(low)
    assert project_policy(store, pid).judge_threshold == 1.0
    assert calibrate_toolcases(store, pid, 0.95).choice is None  # 12/13 = 0.923 < 0.95


def test_filter_and_calibrate_commands(judged):
    url = judged[0].display_url
    out = CliRunner().invoke(app, ["toolcases", "calibrate", "--db", url])
    assert out.exit_code == 0 and "0 tool-case conversation(s) with a human decision" in out.output
    assert "no threshold reaches precision 0.91 on gold" in out.output
    out = CliRunner().invoke(app, ["toolcases", "filter", "--db", url])
    assert out.exit_code == 0 and "0/0 judged" in out.output
