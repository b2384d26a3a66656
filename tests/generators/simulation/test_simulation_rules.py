"""Offline breakdown rules (seed 002's detector output, without a model): each rule on a hand-made dialogue,
the output's shape, and the detector's annotations kept when present."""

from __future__ import annotations

import pytest
from chatchecker_reference import reference_run

from evalcore.generators.simulation.breakdown_rules import (
    SCORES,
    annotate_offline,
    detect_offline,
    judge_turn,
)
from evalcore.generators.simulation.chatchecker import read_run
from evalcore.generators.simulation.records import (
    BreakdownAnnotation,
    Dialogue,
    DialogueTurn,
    FinishReason,
)
from evalcore.generators.simulation.taxonomy import known_title
from evalcore.models import TurnRole


def talk(*lines: str, **fields) -> Dialogue:
    """A dialogue whose turns alternate user, assistant, user, ... ("" is an empty turn)."""
    roles = (TurnRole.user, TurnRole.assistant)
    turns = [DialogueTurn(role=roles[i % 2], content=text) for i, text in enumerate(lines)]
    fields.setdefault("finish_reason", FinishReason.user_ended_chat)
    return Dialogue(dialogue_id="u_dialogue_1", user_name="u", turns=turns, **fields)


def verdict(dialogue: Dialogue, turn_id: int) -> BreakdownAnnotation:
    annotation = detect_offline(dialogue)[turn_id - 1]
    assert annotation is not None
    return annotation


def test_a_good_answer_is_no_breakdown():
    d = talk("What time do you open on Saturday?", "We open at nine on Saturday mornings.")
    got = verdict(d, 2)
    assert (got.decision, got.score, got.breakdown_types) == ("no_breakdown", 1.0, [])
    assert detect_offline(d)[0] is None  # user turns are not judged


def test_a_crash_ends_the_dialogue_with_score_zero():
    d = talk("Book a repair for Monday.", "", finish_reason=FinishReason.chatbot_error, error="HTTP 500")
    got = verdict(d, 2)
    assert got.breakdown_types == ["Chatbot Crash"] and got.score == 0.0 and "HTTP 500" in got.reasoning


def test_an_empty_reply_is_uninterpretable():
    got = verdict(talk("Hello, can you help me?", "   "), 2)
    assert got.breakdown_types == ["Uninterpretable"] and got.score == SCORES["Uninterpretable"]


def test_a_sentence_said_again_is_a_repetition_even_reworded():
    d = talk(
        "I need a hotel.",
        "Could you please tell me which area of the city you would like to stay in?",
        "Somewhere nice.",
        "Sure! Could you please tell me which area of the city you'd like to stay in?",
    )
    assert verdict(d, 2).decision == "no_breakdown"
    got = verdict(d, 4)
    assert got.breakdown_types == ["Repetition"] and "turn 2" in got.reasoning


def test_short_replies_may_recur():
    d = talk("Thanks!", "You are welcome!", "Thanks again!", "You are welcome!")
    assert verdict(d, 4).decision == "no_breakdown"


@pytest.mark.parametrize(
    ("reply", "ignored"),
    [
        ("Our bikes come in many colours.", True),
        ("The workshop opens at nine.", False),  # takes up the question's words
        ("Do you mean the shop or the online service?", False),  # asks back
    ],
)
def test_an_unanswered_question_is_ignored(reply, ignored):
    got = verdict(talk("When does the workshop open?", reply), 2)
    assert ("Ignore question" in got.breakdown_types) is ignored


def test_saying_the_opposite_of_itself_or_of_the_user():
    own = talk(
        "Is the shop open on Sunday?",
        "The shop is open on Sunday.",
        "Are you sure the shop is open on Sunday?",
        "The shop is not open on Sunday.",
    )
    got = verdict(own, 4)
    assert got.breakdown_types == ["Self-contradiction"] and "turn 2" in got.reasoning
    user = talk("I don't own the red bike.", "Since you own the red bike, we can repair it for free.")
    # A sentence with more content words is another claim: the rules rather miss than raise false alarms.
    assert verdict(user, 2).breakdown_types == []
    user = talk("I don't own the red bike.", "You own the red bike. We can repair it.")
    got = verdict(user, 2)
    assert got.breakdown_types == ["Contradiction"] and got.score == SCORES["Contradiction"]


def test_several_findings_keep_the_lowest_score():
    d = talk(
        "Which helmet sizes do you stock?",
        "We repair bicycles of every brand in our workshop.",
        "And helmets?",
        "We repair bicycles of every brand in our workshop.",
    )
    got = verdict(d, 4)
    assert set(got.breakdown_types) == {"Repetition", "Ignore question"}
    assert got.score == min(SCORES["Repetition"], SCORES["Ignore question"])


def test_annotate_fills_only_missing_annotations():
    crash = BreakdownAnnotation(
        reasoning="timeout", score=0.0, decision="breakdown", breakdown_types=["Chatbot Crash"]
    )
    d = talk("Hi?", "Hello!", "Book me in.", "")
    d.turns[3] = d.turns[3].model_copy(update={"breakdown": crash})
    done = annotate_offline(d)
    assert done.turns[3].breakdown == crash
    assert done.turns[1].breakdown is not None and done.turns[0].breakdown is None


def test_every_rule_output_is_a_valid_annotation_with_known_titles():
    run = read_run(reference_run())
    for dialogue in run.dialogues:
        for turn, annotation in zip(dialogue.turns, detect_offline(dialogue), strict=True):
            assert (annotation is None) == (turn.role == TurnRole.user)
            if annotation is not None:
                BreakdownAnnotation.model_validate(annotation.model_dump())
                assert all(known_title(t) for t in annotation.breakdown_types)
                assert (annotation.decision == "breakdown") == bool(annotation.breakdown_types)


def test_judge_turn_reads_only_the_turns_before():
    d = talk(
        "Is the repair free?", "The repair is free.", "Is the repair really free?", "The repair is not free."
    )
    assert judge_turn(d, 1).decision == "no_breakdown"  # turn 4 does not reach back to turn 2's verdict
    assert judge_turn(d, 3).breakdown_types == ["Self-contradiction"]


INFO = "name: Ridgeline Assist\ndescription: Customer support of a bicycle shop: orders, returns, repairs."


@pytest.mark.parametrize(
    ("lines", "kwargs", "title"),
    [
        (("Where is my order?", "Your order leaves our Portland warehouse today.", "And the return?",
          "Your order leaves our Portland warehouse today."), {}, "Repetition"),
        (("When does the workshop open?", "Our bikes come in many colours."), {}, "Ignore question"),
        (("Can you help me?", ""), {}, "Uninterpretable"),
        (("Is the shop open on Sunday?", "The shop is open on Sunday.", "Sure?",
          "The shop is not open on Sunday."), {}, "Self-contradiction"),
        (("I don't own the red bike.", "You own the red bike. We can repair it."), {}, "Contradiction"),
        (("Book a repair.", "x"), {"finish_reason": FinishReason.chatbot_error, "error": "HTTP 500"},
         "Chatbot Crash"),
        (("Cancel my order for me.", "Our bikes come in many colours."), {}, "Ignore request"),
        (("I want a repair. Actually, forget the repair, I want a refund instead.", "Repairs take two days."),
         {"task_oriented": True}, "Information update failure"),
        (("No wait, it was the other one.", "Repairs take two days."), {}, "Ignore expectation"),
        (("wait the returns", "Returns are free within 30 days."), {"task_oriented": True},
         "Clarification failure"),
        (("What's the weather tomorrow in Paris?", "Sealant dries out faster in hot weather."),
         {"task_oriented": True, "domain": INFO}, "Failure to recognize out-of-domain request"),
    ],
)  # fmt: skip
def test_each_offline_rule_fires_on_a_dialogue_made_for_it(lines, kwargs, title):
    options = {k: kwargs.pop(k) for k in ("task_oriented", "domain") if k in kwargs}
    d = talk(*lines, **kwargs)
    got = detect_offline(d, **options)[len(lines) - 1]
    assert got is not None and title in got.breakdown_types, got
    assert got.decision == "breakdown" and got.score <= SCORES[title]


def test_an_answered_change_an_asked_back_fragment_and_a_declined_request_are_no_breakdown():
    changed = talk("Actually, forget the repair. I want a refund instead.", "Refunds take five days.")
    assert verdict(changed, 2).decision == "no_breakdown"
    asked = talk("wait the returns", "Do you want to return something, or ask about our policy?")
    assert detect_offline(asked, task_oriented=True)[1].decision == "no_breakdown"
    declined = talk("Just take a payment for me.", "Sorry, I cannot take payments in chat.")
    assert verdict(declined, 2).decision == "no_breakdown"
    shouted = talk("WHO WON THE FOOTBALL LAST NIGHT?", "The shop was last painted in May.")
    assert "Ignore question" in verdict(shouted, 2).breakdown_types
