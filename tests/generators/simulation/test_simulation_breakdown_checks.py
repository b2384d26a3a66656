"""The offline breakdown rules cover every type of seed 002's taxonomy that words decide (issue 31): a
dialogue per type that fires it and a near miss that must not (tests/fixtures/breakdown_types.yaml), the
types they cannot decide named with a reason, and the rules' precision on the published run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from chatchecker_reference import reference_run

from evalcore.generators.simulation.breakdown_checks import UNDECIDABLE
from evalcore.generators.simulation.breakdown_rules import SCORES, detect_offline, judge_turn
from evalcore.generators.simulation.chatchecker import read_run
from evalcore.generators.simulation.detector_scores import TurnPair, dialogue_pairs, score
from evalcore.generators.simulation.records import Dialogue, DialogueTurn, FinishReason
from evalcore.generators.simulation.taxonomy import TAXONOMY
from evalcore.models import TurnRole

EXAMPLES = yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "fixtures" / "breakdown_types.yaml").read_text(encoding="utf-8")
)
CASES = EXAMPLES["types"]


def talk(lines: list[str]) -> Dialogue:
    roles = (TurnRole.user, TurnRole.assistant)
    turns = [DialogueTurn(role=roles[i % 2], content=text) for i, text in enumerate(lines)]
    return Dialogue(dialogue_id="d", user_name="u", turns=turns, finish_reason=FinishReason.user_ended_chat)


def types_of(case: dict, which: str) -> list[str]:
    dialogue = talk(case[which])
    task_oriented = case.get("task_oriented", True)
    got = judge_turn(dialogue, len(dialogue.turns) - 1, task_oriented, EXAMPLES["domain"])
    return got.breakdown_types


@pytest.mark.parametrize("case", CASES, ids=[c["type"] for c in CASES])
def test_each_type_fires_on_its_dialogue_and_not_on_the_near_miss(case):
    assert case["type"] in types_of(case, "fires")
    assert case["type"] not in types_of(case, "quiet")


@pytest.mark.parametrize("case", CASES, ids=[c["type"] for c in CASES])
def test_the_near_miss_is_no_breakdown_at_all(case):
    assert types_of(case, "quiet") == []


def test_every_type_is_produced_or_named_undecidable_with_a_reason():
    produced = {c["type"] for c in CASES}
    titles = {t.title for t in TAXONOMY}
    assert produced | set(UNDECIDABLE) == titles and not produced & set(UNDECIDABLE)
    assert produced <= set(SCORES) and all(UNDECIDABLE.values())


def test_task_oriented_types_stay_quiet_for_a_conversational_bot():
    task_only = {t.title for t in TAXONOMY if t.task_oriented_only}
    for case in CASES:
        if case["type"] in task_only:
            dialogue = talk(case["fires"])
            got = judge_turn(dialogue, len(dialogue.turns) - 1, False, EXAMPLES["domain"])
            assert not set(got.breakdown_types) & task_only, case["type"]


def test_scores_hand_computed():
    pairs = [
        TurnPair(frozenset({"Repetition"}), frozenset({"Repetition"})),
        TurnPair(frozenset({"Repetition"}), frozenset()),
        TurnPair(frozenset(), frozenset({"Redundancy"})),
        TurnPair(frozenset(), frozenset()),
    ]
    got = score(pairs)
    assert (got.turns, got.correct, got.accuracy) == (4, 2, 0.5)
    assert (got.decision.tp, got.decision.fp, got.decision.fn) == (1, 1, 1)
    assert got.by_type["Repetition"].precision == 0.5 and got.by_type["Repetition"].f1 == pytest.approx(2 / 3)
    assert got.by_type["Redundancy"].recall == 0.0 and got.by_type["Redundancy"].precision is None


def test_precision_on_the_published_run_is_measured_against_its_labels():
    run = read_run(reference_run())
    pairs = [p for d in run.dialogues for p in dialogue_pairs(d, detect_offline(d, run.task_oriented))]
    got = score(pairs)
    assert got.turns == 155  # every assistant turn of the run is labelled
    # The rules flag few turns of a run its own detector found nearly clean (7 of 155 labelled).
    assert got.decision.tp + got.decision.fp <= 8


def test_a_record_read_out_as_stored_is_unclear_and_one_colon_is_not():
    raw = "Warranty Terms: warranty_code: WR-EXR; applies_to: Ex-rental e-bikes; duration: 1 year"
    fires = talk(["Is my e-bike under warranty?", raw])
    assert "Lack of clarity" in judge_turn(fires, 1, True, EXAMPLES["domain"]).breakdown_types
    plain = talk(["Is my e-bike under warranty?", "Warranty: one year for ex-rental e-bikes."])
    assert "Lack of clarity" not in judge_turn(plain, 1, True, EXAMPLES["domain"]).breakdown_types
