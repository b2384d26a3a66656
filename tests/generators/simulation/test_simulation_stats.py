"""ChatChecker's run statistics (seed 002): equal to the published run's files, and the counting rules of
its code on hand-made dialogues."""

from __future__ import annotations

import pytest
from chatchecker_reference import assert_same, published, published_summary, reference_run
from lexical_diversity import lex_div

from evalcore.generators.simulation import stats
from evalcore.generators.simulation.chatchecker import read_run
from evalcore.generators.simulation.records import (
    BreakdownAnnotation,
    Dialogue,
    DialogueTurn,
    DimensionRating,
    FinishReason,
)
from evalcore.models import TurnRole


@pytest.fixture(scope="module")
def reference():
    run = read_run(reference_run())
    return sorted(run.dialogues, key=Dialogue.sort_key), run.task_oriented


def test_summary_equals_the_published_files(reference):
    dialogues, task_oriented = reference
    figures = stats.summary(dialogues, task_oriented)
    assert list(figures) == list(stats.SUMMARY_KEYS)
    assert_same(figures, published_summary())
    assert figures["num_dialogues"] == 10 and figures["total_breakdown_count"] == 5  # not vacuous


def test_every_run_statistic_equals_the_published_ones(reference):
    dialogues, task_oriented = reference
    files = published()
    assert_same(stats.run_chat_statistics(dialogues), files["simulation_run_info"]["chat_statistics"])
    kept = files["breakdown_detection_stats"]["stats"]
    computed = stats.run_breakdown_stats(dialogues, task_oriented)
    assert_same(computed, {k: kept[k] for k in computed})
    ratings = files["evaluation_stats"]["stats"]["rating_stats"]
    assert_same(stats.rating_stats(dialogues), ratings)


def test_every_dialogue_statistic_equals_its_file(reference):
    dialogues, task_oriented = reference
    for dialogue in dialogues:
        kept = dialogue.extra
        chat = stats.chat_statistics(dialogue)
        assert_same(chat, {k: kept["chat_statistics"][k] for k in chat}, dialogue.dialogue_id)
        breakdowns = stats.dialogue_breakdown_stats(dialogue, task_oriented)
        assert_same(breakdowns, {k: kept["breakdown_stats"][k] for k in breakdowns}, dialogue.dialogue_id)


def test_mtld_pools_the_tokens_of_every_turn_in_order(reference):
    texts = ["The cat sat.", "On the mat, the cat sat!", "A dog; ran away."]
    tokens = [t for text in texts for t in lex_div.tokenize(text)]
    assert tokens[:3] == ["the", "cat", "sat"]  # punctuation gone, lower-cased
    assert stats.mtld(texts) == lex_div.mtld(tokens)
    # The order of the dialogues changes the figure: runs are read in ChatChecker's path order.
    dialogues, _ = reference
    shuffled = dialogues[5:] + dialogues[:5]
    ordered = stats.run_chat_statistics(dialogues)["user_turn_mtld"]
    assert stats.run_chat_statistics(shuffled)["user_turn_mtld"] != pytest.approx(ordered, abs=1e-9)


# ------------------------------------------------------------------ hand-made dialogues


def bot(types: list[str], decision: str = "breakdown", score: float = 0.5, text: str = "ok") -> DialogueTurn:
    annotation = BreakdownAnnotation(reasoning="", score=score, decision=decision, breakdown_types=types)
    return DialogueTurn(role=TurnRole.assistant, content=text, breakdown=annotation)


def user(text: str = "hello there") -> DialogueTurn:
    return DialogueTurn(role=TurnRole.user, content=text)


def dialogue(name: str, turns: list[DialogueTurn], **fields) -> Dialogue:
    return Dialogue(dialogue_id=f"{name}_dialogue_1", user_name=name, turns=turns, **fields)


ENDED = {"finish_reason": FinishReason.user_ended_chat}


def test_types_match_by_lower_cased_title_and_unknown_titles_are_not_counted():
    d = dialogue(
        "a", [user(), bot(["ignore REQUEST", "Made-up type"]), user(), bot([], "no_breakdown", 1.0)], **ENDED
    )
    got = stats.dialogue_breakdown_stats(d, task_oriented=True)
    assert got["count"] == 1
    assert got["turn_ids_of_breakdowns"] == [2]
    assert got["avg_score"] == pytest.approx((0.5 + 1.0) / 2)
    assert got["counts_per_breakdown_type"]["ignore_request"] == 1
    assert sum(got["counts_per_breakdown_type"].values()) == 1  # "Made-up type" is kept, not counted
    assert d.turns[1].breakdown.breakdown_types == ["ignore REQUEST", "Made-up type"]


def test_conversational_bots_count_only_the_first_17_types():
    d = dialogue("a", [user(), bot(["Redundancy", "Repetition"])], **ENDED)
    task = stats.dialogue_breakdown_stats(d, task_oriented=True)["counts_per_breakdown_type"]
    chat = stats.dialogue_breakdown_stats(d, task_oriented=False)["counts_per_breakdown_type"]
    assert task["redundancy"] == 1 and "redundancy" not in chat
    assert len(task) == 27 and len(chat) == 18  # the types plus chatbot_crash


def test_crashes_match_the_title_exactly_and_need_a_breakdown_decision():
    crash = bot(["Chatbot Crash"], score=0.0, text="")
    lower = bot(["chatbot crash"], score=0.0)
    not_broken = bot(["Chatbot Crash"], decision="no_breakdown", score=1.0)
    d = dialogue("a", [user(), crash, user(), lower, user(), not_broken], **ENDED)
    counts = stats.dialogue_breakdown_stats(d, task_oriented=True)["counts_per_breakdown_type"]
    assert counts["chatbot_crash"] == 1


def test_run_counts_types_only_in_dialogues_with_a_breakdown():
    broken = dialogue("a", [user(), bot([], "no_breakdown", 1.0), user(), bot(["Repetition"])], **ENDED)
    # A type named on a turn judged no_breakdown counts only when its dialogue has a breakdown elsewhere.
    quiet = dialogue("b", [user(), bot(["Lack of brevity"], "no_breakdown", 0.9)], **ENDED)
    noisy = dialogue(
        "c", [user(), bot(["Lack of clarity"], "no_breakdown", 0.9), user(), bot(["Redundancy"])], **ENDED
    )
    run = stats.run_breakdown_stats([broken, quiet, noisy], task_oriented=True)
    assert run["total_breakdown_count"] == 2
    assert run["n_dialogues_with_breakdowns"] == 2
    assert run["breakdowns_per_chatbot_turn"] == pytest.approx(2 / 5)
    assert run["avg_turn_number_of_first_breakdown"] == pytest.approx((4 + 4) / 2)
    counted = {k for k, v in run["counts_per_breakdown_type"].items() if v}
    assert counted == {"repetition", "lack_of_clarity", "redundancy"}
    assert run["n_unique_breakdown_types"] == 3


def test_crashed_dialogues_carry_an_error_and_end_with_a_chatbot_error():
    crashed = dialogue(
        "a", [user(), bot(["Chatbot Crash"], score=0.0)], finish_reason="chatbot_error", error="boom"
    )
    no_error = dialogue("b", [user(), bot([])], finish_reason="chatbot_error")
    simulator = dialogue("c", [user()], finish_reason="user_simulator_error", error="timeout")
    chat = stats.run_chat_statistics([crashed, no_error, simulator])
    assert chat["num_dialogues_with_chatbot_errors"] == 1
    assert chat["dialogues_with_chatbot_errors"] == ["a_dialogue_1"]
    assert chat["num_dialogues_with_simulator_errors"] == 1
    assert chat["num_dialogues_with_errors"] == 2


def test_word_lengths_and_five_number_summaries():
    d = dialogue(
        "a", [user("one two  three\n four"), bot([], "no_breakdown", 1.0, "a b"), user("x")], **ENDED
    )
    chat = stats.chat_statistics(d)
    assert chat["avg_user_turn_length"] == 2.5
    assert chat["five_num_summary_user_turn_lengths"] == {
        "min": 1.0,
        "q1": 1.75,
        "median": 2.5,
        "q3": 3.25,
        "max": 4.0,
    }
    assert stats.five_num_summary([]) == dict.fromkeys(("min", "q1", "median", "q3", "max"))


def test_rating_std_is_the_population_one():
    rated = [
        dialogue("a", [], **ENDED, ratings={"efficiency": DimensionRating(rating=4)}),
        dialogue("b", [], **ENDED, ratings={"efficiency": DimensionRating(rating=5)}),
        dialogue("c", [], **ENDED),  # not rated: left out, as ChatChecker does
    ]
    got = stats.rating_stats(rated)["efficiency"]
    assert got["average"] == 4.5 and got["std"] == 0.5


def test_a_run_without_breakdowns_has_no_first_breakdown_turn():
    d = dialogue("a", [user(), bot([], "no_breakdown", 1.0)], **ENDED)
    figures = stats.summary([d], task_oriented=True)
    assert figures["avg_turn_number_of_first_breakdown"] is None
    assert figures["breakdowns_per_chatbot_turn"] == 0.0
    assert figures["n_unique_breakdown_types"] == 0
