"""The offline breakdown rules scored against the annotators' labels of a run's turns (issue 31), beside
the run's own detector: the published ChatChecker run with three turns labelled by hand."""

from __future__ import annotations

from chatchecker_reference import reference_run

from evalcore.generators.simulation import import_chatchecker_run
from evalcore.generators.simulation.store_ops import run_dialogues
from evalcore.review import save_review
from evalcore.review.breakdown_labels import BreakdownLabel
from evalcore.review.detector_quality import detector_quality
from evalcore.review.rules_quality import rules_quality
from evalcore.review.workitem import head_version


def label(store, run_id: str, user_suffix: str, labels: list[BreakdownLabel]) -> None:
    _, pairs = run_dialogues(store, run_id)
    item = next(cid for cid, d in pairs if d.user_name.endswith(user_suffix))
    save_review(store, item, "ann", head_version(store, item)[0], breakdowns=labels)


def test_the_rules_and_the_runs_detector_on_the_same_labelled_turns(sqlite_store):
    run_id = import_chatchecker_run(sqlite_store, reference_run()).run_id
    # persona 03, turn 10: the user gave break times, the bot asks when to start (the rules: Ignore request)
    label(
        sqlite_store, run_id, "_03", [BreakdownLabel(turn_index=10, breakdown=True, types=["Ignore request"])]
    )
    label(
        sqlite_store,
        run_id,
        "_04",
        [
            BreakdownLabel(turn_index=12, breakdown=True, types=["Contradiction"]),
            BreakdownLabel(turn_index=2, breakdown=False, types=[]),
        ],
    )
    rules = rules_quality(sqlite_store, run_id)
    # rules: turn 10 breakdown (right, type right), turn 12 none (missed), turn 2 none (right)
    assert rules.labelled_turns == 3
    assert (rules.true_positives, rules.false_positives, rules.false_negatives, rules.true_negatives) == (
        1,
        0,
        1,
        1,
    )
    assert (rules.precision, rules.recall) == (1.0, 0.5)
    assert {t.title: t.f1 for t in rules.per_type}["Ignore request"] == 1.0
    # the published detector (GPT-4o) on the same turns: it flagged turn 12 (Contradiction), not turn 10
    model = detector_quality(sqlite_store, run_id)
    assert (model.true_positives, model.false_negatives, model.true_negatives) == (1, 1, 1)
