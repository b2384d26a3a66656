"""Human breakdown labels on simulated dialogues and the detector scored against them (issue 18, item 7):
labels saved as annotations (version-checked, per annotator, never overwritten, invisible to tiers; SQLite
and PostgreSQL), the majority rule, the seed's accuracy / precision / recall / F1 and type metrics by
hand, and the CLI."""

from __future__ import annotations

import json

import pytest
from chatchecker_reference import reference_run
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.errors import EvalcoreError, StaleVersionError
from evalcore.generators.simulation import import_chatchecker_run
from evalcore.generators.simulation.records import BreakdownAnnotation
from evalcore.generators.simulation.store_ops import run_dialogues
from evalcore.review import agreement_report, open_item, save_review
from evalcore.review.breakdown_labels import BreakdownLabel, current_labels, form_labels
from evalcore.review.detector_quality import LabelledTurn, detector_quality, score_detector
from evalcore.review.workitem import head_version


def label(turn: int, broken: bool, *types: str, note: str = "") -> BreakdownLabel:
    return BreakdownLabel(turn_index=turn, breakdown=broken, types=list(types), note=note)


@pytest.fixture
def imported(store):
    """The published ChatChecker run (SQLite and PostgreSQL); its dialogues by persona number (assistant
    turns are the even ones)."""
    run_id = import_chatchecker_run(store, reference_run()).run_id
    _, pairs = run_dialogues(store, run_id)
    by_persona = {int(d.user_name.rsplit("_", 1)[1]): cid for cid, d in pairs}
    return store, run_id, by_persona


def save(store, item, author, *labels, cleared=()):
    version = head_version(store, item)[0]
    return save_review(store, item, author, version, breakdowns=labels, cleared_breakdowns=cleared)


def test_labels_are_kept_per_annotator_a_stale_save_is_refused_and_tiers_never_see_them(imported):
    store, _, dialogue = imported
    item = dialogue[4]
    tier_before = open_item(store, item).state.tier
    opened = head_version(store, item)[0]
    save_review(
        store, item, "bea", opened, breakdowns=[label(12, True, "contradiction", note="says 3, then 5")]
    )
    with pytest.raises(StaleVersionError):
        save_review(store, item, "ann", opened, breakdowns=[label(12, False)])
    assert set(current_labels(store.annotations(item))) == {"bea"}, "the refused save wrote nothing"
    save(store, item, "ann", label(12, False), label(10, True, "Repetition", "Ignore question"))
    view = open_item(store, item, "ann")
    assert view.breakdown_labels == {
        "ann": {10: label(10, True, "Repetition", "Ignore question"), 12: label(12, False)},
        "bea": {12: label(12, True, "Contradiction", note="says 3, then 5")},
    }, "titles are stored as the taxonomy writes them; bea's label survives ann's"
    assert view.breakdown_turns == list(range(0, 29, 2)) and "Lack of clarity" in view.breakdown_titles
    assert view.state.tier == tier_before and not view.mine and view.annotations == []
    assert agreement_report(store, store.projects()[0].id)["turn"].units == 0, "labels are no verdicts"
    assert save(store, item, "ann", label(12, False)).appended == 0, "an unchanged label appends nothing"
    save(store, item, "ann", label(10, True, "Repetition"), cleared=[12])
    assert current_labels(store.annotations(item))["ann"] == {10: label(10, True, "Repetition")}


def test_bad_labels_are_refused_with_the_turn_named_and_nothing_written(imported):
    store, _, dialogue = imported
    item = dialogue[1]
    with pytest.raises(EvalcoreError, match="turn 3 is no target turn"):
        save(store, item, "ann", label(2, False), label(3, True))
    with pytest.raises(ValueError, match="unknown breakdown type 'Rudeness'"):
        label(2, True, "Rudeness")
    with pytest.raises(ValueError, match="types are named only for a breakdown"):
        label(2, False, "Repetition")
    with pytest.raises(EvalcoreError, match="two breakdown labels for turn 2"):
        save(store, item, "ann", label(2, False), label(2, True))
    assert store.annotations(item) == []
    mine = {4: label(4, False)}
    assert form_labels(
        {2: ("breakdown", ["Repetition"], ""), 4: (None, [], ""), 6: (None, [], "")}, mine
    ) == (
        [label(2, True, "Repetition")],
        [4],
    ), "an unlabelled turn withdraws only a label I gave"


def test_the_detector_is_scored_against_the_majority_by_hand(imported):
    store, run_id, dialogue = imported
    # The published detector: persona 4 turn 12 is a breakdown (Contradiction, Lack of clarity), persona 6
    # turn 4 one (Redundancy); persona 1 has none.
    save(store, dialogue[4], "ann", label(12, True, "Contradiction"))  # TP
    save(store, dialogue[6], "ann", label(4, False))  # FP
    save(
        store,
        dialogue[1],
        "ann",
        label(2, True, "Ignore question"),
        label(4, False),
        label(6, True, "Repetition"),
    )
    save(store, dialogue[1], "bea", label(6, False))  # a tie on turn 6: no breakdown (TN); turn 2 FN, 4 TN
    quality = detector_quality(store, run_id)
    assert (quality.true_positives, quality.false_positives, quality.false_negatives) == (1, 1, 1)
    assert quality.true_negatives == 2 and quality.labelled_turns == 5 and quality.dialogues == 3
    assert quality.accuracy == pytest.approx(3 / 5) and quality.f1 == pytest.approx(0.5)
    assert quality.precision == pytest.approx(0.5) and quality.recall == pytest.approx(0.5)
    assert quality.annotators == ["ann", "bea"] and quality.typed_turns == 2
    # types on the two human breakdowns: {Contradiction} vs the detector's two; {Ignore question} vs none
    assert (quality.exact_match, quality.superset_match, quality.partial_match) == (0.0, 0.5, 0.5)
    assert quality.average_type_f1 == pytest.approx((2 / 3 + 0) / 2)
    assert [(s.title, s.human, s.detector, s.both, s.f1) for s in quality.per_type] == [
        ("Ignore question", 1, 0, 0, None),
        ("Contradiction", 1, 1, 1, 1.0),
        ("Redundancy", 0, 1, 0, None),
        ("Lack of clarity", 0, 1, 0, None),
    ]


def test_the_majority_and_unknown_detector_titles():
    said = BreakdownAnnotation(score=0.2, decision="breakdown", breakdown_types=["REPETITION", "Rambling"])
    turn = LabelledTurn(
        "c",
        "d",
        1,
        said,
        {
            "ann": label(1, True, "Repetition", "Redundancy"),
            "bea": label(1, True, "Repetition"),
            "cy": label(1, False),
        },
    )
    assert turn.human_breakdown and turn.human_types == {"Repetition", "Redundancy"}
    assert turn.detector_types == {"Repetition", "Rambling"}, "case ignored, an unknown title kept"
    quality = score_detector("r", [turn])
    assert quality.exact_match == 0.0 and quality.average_type_f1 == pytest.approx(0.5)
    assert [s.title for s in quality.per_type] == ["Repetition", "Redundancy", "Rambling"]
    empty = score_detector("r", [])
    assert empty.accuracy is None and empty.f1 is None and empty.exact_match is None


def test_the_cli_prints_the_quality_of_a_run(tmp_path):
    db = ["--db", f"sqlite:///{tmp_path / 'q.db'}"]
    runner = CliRunner()
    run_id = runner.invoke(app, ["simulations", "import", str(reference_run()), *db]).stdout.splitlines()[-1]
    from evalcore.store import Store

    store = Store(f"sqlite:///{tmp_path / 'q.db'}")
    _, pairs = run_dialogues(store, run_id)
    item = next(cid for cid, d in pairs if d.user_name.endswith("_04"))
    save(store, item, "ann", label(12, True, "Contradiction"), label(10, True))
    printed = runner.invoke(app, ["simulations", "quality", run_id, *db])
    assert printed.exit_code == 0, printed.output
    assert "labelled target turns  2" in printed.stdout and "accuracy" in printed.stdout
    figures = json.loads(runner.invoke(app, ["simulations", "quality", run_id, "--json", *db]).stdout)
    assert figures["true_positives"] == 1 and figures["false_negatives"] == 1 and figures["precision"] == 1.0
    assert figures["recall"] == 0.5 and figures["per_type"][0]["title"] == "Contradiction"
