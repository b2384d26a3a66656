"""The assertion engine (seed 003): every kind passes on a history that satisfies it and fails on one that
does not, and records the events that satisfied or broke it."""

from __future__ import annotations

import numpy as np
import pytest
from scenario_examples import SEED_EXAMPLE

from evalcore.errors import Problem
from evalcore.generators.scenario.checks import Outcome, Score, ScoreRequest, check, check_all, same_value
from evalcore.generators.scenario.format import parse_scenario
from evalcore.generators.scenario.records import (
    ActionExecutedAssertion,
    BotDidNotUtterAssertion,
    BotUtteredAssertion,
    ClarificationContainsAssertion,
    FlowCancelledAssertion,
    FlowCompletedAssertion,
    FlowStartedAssertion,
    GenerativeGroundedAssertion,
    GenerativeRelevantAssertion,
    SequencingAssertion,
    SlotWasNotSetAssertion,
    SlotWasSetAssertion,
)
from evalcore.generators.scenario.scoring import client_scorer, embedding_scorer, sentences
from evalcore.llm import ModelClient
from evalcore.llm.registry import OFFLINE_EMBEDDING
from evalcore.store import Store
from evalcore.targets.events import (
    ActionExecuted,
    BotUttered,
    Button,
    ClarificationRequested,
    FlowCancelled,
    FlowCompleted,
    FlowInterrupted,
    FlowStarted,
    SlotSet,
    UserUttered,
)


def sequencing(*steps: tuple[str, str]) -> SequencingAssertion:
    return SequencingAssertion(steps=[{"key": k, "value": v} for k, v in steps])


def slots(*checks: dict) -> list[dict]:
    return [{**c, "has_value": "value" in c} for c in checks]


# ------------------------------------------------------------------------------------------------ flows


def test_flow_started_any_and_all():
    history = [FlowStarted(flow_id="b"), FlowStarted(flow_id="a")]
    any_of = FlowStartedAssertion(flow_ids=["a", "c"], operator="any")
    result = check(any_of, history)
    assert result.passed and result.events == [FlowStarted(flow_id="a")]
    first = check(FlowStartedAssertion(flow_ids=["a", "b"], operator="any"), history)
    assert first.events == [FlowStarted(flow_id="b")]  # the earliest match, not the first id listed
    assert check(FlowStartedAssertion(flow_ids=["c", "d"], operator="any"), history).passed is False
    all_of = check(FlowStartedAssertion(flow_ids=["a", "b"], operator="all"), history)
    assert all_of.passed and all_of.events == [FlowStarted(flow_id="a"), FlowStarted(flow_id="b")]
    partial = check(FlowStartedAssertion(flow_ids=["a", "c"], operator="all"), history)
    assert partial.passed is False and partial.message == "flow(s) c did not start"
    assert partial.events == [FlowStarted(flow_id="a")]
    assert check(FlowStartedAssertion(flow_id="b"), history).passed
    assert check(FlowStartedAssertion(flow_id="c"), history).passed is False
    assert check(FlowStartedAssertion(flow_id="a"), [FlowCompleted(flow_id="a")]).passed is False


def test_flow_completed_with_and_without_step():
    history = [
        FlowStarted(flow_id="f"),
        FlowCompleted(flow_id="f", step_id="s1"),
        FlowCompleted(flow_id="f", step_id="END"),
    ]
    assert check(FlowCompletedAssertion(flow_id="f"), history).events == [history[1]]
    at_end = check(FlowCompletedAssertion(flow_id="f", flow_step_id="END"), history)
    assert at_end.passed and at_end.events == [history[2]]  # a repeated flow: any completion counts
    wrong = check(FlowCompletedAssertion(flow_id="f", flow_step_id="other"), history)
    assert wrong.passed is False and wrong.events == history[1:]  # the completions that broke it
    assert wrong.message == "flow f completed at step s1, END, not at other"
    missing = check(FlowCompletedAssertion(flow_id="g"), history)
    assert missing.passed is False and missing.events == [] and missing.message == "flow g was not completed"
    assert check(FlowCompletedAssertion(flow_id="f"), [FlowCancelled(flow_id="f")]).passed is False


def test_flow_cancelled_with_and_without_step():
    history = [FlowStarted(flow_id="v"), FlowCancelled(flow_id="v", step_id="ask_pin")]
    assert check(FlowCancelledAssertion(flow_id="v"), history).passed
    assert check(FlowCancelledAssertion(flow_id="v", flow_step_id="ask_pin"), history).passed
    wrong = check(FlowCancelledAssertion(flow_id="v", flow_step_id="confirm"), history)
    assert wrong.passed is False and wrong.events == [history[1]]
    assert check(FlowCancelledAssertion(flow_id="v"), [FlowCompleted(flow_id="v")]).passed is False


def test_action_executed():
    history = [ActionExecuted(action_name="action_listen"), ActionExecuted(action_name="action_check")]
    result = check(ActionExecutedAssertion(action_name="action_check"), history)
    assert result.passed and result.events == [history[1]]
    assert check(ActionExecutedAssertion(action_name="action_refund"), history).passed is False


# ------------------------------------------------------------------------------------------------ slots


def test_slot_was_set_with_and_without_value():
    history = [SlotSet(name="order_id", value="ORD-1"), SlotSet(name="order_id", value="ORD-9981")]
    named = check(SlotWasSetAssertion(slots=slots({"name": "order_id"})), history)
    assert named.passed and named.events == [history[0]]
    valued = check(SlotWasSetAssertion(slots=slots({"name": "order_id", "value": "ORD-9981"})), history)
    assert valued.passed and valued.events == [history[1]]
    wrong = check(SlotWasSetAssertion(slots=slots({"name": "order_id", "value": "ORD-2"})), history)
    assert wrong.passed is False and wrong.events == history
    missing = check(SlotWasSetAssertion(slots=slots({"name": "order_id"}, {"name": "amount"})), history)
    assert missing.passed is False and missing.message == "slot amount was not set"


def test_slot_values_compare_as_json():
    assert (
        check(
            SlotWasSetAssertion(slots=slots({"name": "ok", "value": True})), [SlotSet(name="ok", value=1)]
        ).passed
        is False
    )
    assert (
        check(
            SlotWasSetAssertion(slots=slots({"name": "id", "value": "12345"})),
            [SlotSet(name="id", value=12345)],
        ).passed
        is False
    )
    assert check(
        SlotWasSetAssertion(slots=slots({"name": "n", "value": 2})), [SlotSet(name="n", value=2.0)]
    ).passed
    assert check(
        SlotWasSetAssertion(slots=slots({"name": "s", "value": None})), [SlotSet(name="s", value=None)]
    ).passed
    assert same_value({"a": [1, True]}, {"a": [1.0, True]}) and not same_value({"a": [1]}, {"a": [True]})


def test_slot_was_not_set():
    history = [SlotSet(name="amount", value=None), SlotSet(name="order_id", value="ORD-9981")]
    assert check(
        SlotWasNotSetAssertion(slots=slots({"name": "amount"})), history
    ).passed  # a reset is not setting
    assert check(SlotWasNotSetAssertion(slots=slots({"name": "transfer"})), history).passed
    broken = check(SlotWasNotSetAssertion(slots=slots({"name": "amount"}, {"name": "order_id"})), history)
    assert broken.passed is False and broken.events == [history[1]]
    other_value = SlotWasNotSetAssertion(slots=slots({"name": "order_id", "value": "ORD-1"}))
    assert check(other_value, history).passed
    same_value_set = SlotWasNotSetAssertion(slots=slots({"name": "order_id", "value": "ORD-9981"}))
    assert check(same_value_set, history).passed is False


# -------------------------------------------------------------------------------------- bot messages

DELAYED = BotUttered(text="Your order is delayed by 2 days.", utter_name="utter_order_delayed")
CHOICE = BotUttered(
    text="What next?",
    utter_name="utter_next",
    buttons=[Button(title="Track", payload="/track"), Button(title="Cancel", payload="/cancel")],
)


def test_bot_uttered_by_name_pattern_and_buttons():
    history = [UserUttered(text="where is it"), DELAYED, CHOICE]
    assert check(BotUtteredAssertion(utter_name="utter_order_delayed"), history).events == [DELAYED]
    assert check(BotUtteredAssertion(utter_name="utter_dont_know"), history).passed is False
    assert check(BotUtteredAssertion(text_matches=r"delayed by \d+ days"), history).passed
    assert (
        check(BotUtteredAssertion(text_matches=r"^Delayed"), history).passed is False
    )  # case-sensitive, as Rasa
    assert check(BotUtteredAssertion(buttons=[{"title": "Track", "payload": "/track"}]), history).events == [
        CHOICE
    ]
    # an expected button without a payload needs a button without one (Rasa compares payloads with ==)
    assert check(BotUtteredAssertion(buttons=[{"title": "Track"}]), history).passed is False
    assert check(BotUtteredAssertion(buttons=[{"title": "Cancel"}]), history).passed is False  # order matters
    assert check(BotUtteredAssertion(buttons=[{"title": "Track", "payload": "/x"}]), history).passed is False
    three = [{"title": "Track", "payload": "/track"}, {"title": "Cancel"}, {"title": "Help"}]
    assert check(BotUtteredAssertion(buttons=three), history).passed is False
    both = check(BotUtteredAssertion(utter_name="utter_order_delayed", text_matches="What next"), history)
    assert both.passed and both.events == [DELAYED, CHOICE]  # each field matched by some message
    half = check(BotUtteredAssertion(utter_name="utter_order_delayed", text_matches="refund"), history)
    assert half.passed is False and half.events == [DELAYED]


def test_bot_did_not_utter():
    history = [DELAYED, CHOICE]
    assert check(BotDidNotUtterAssertion(utter_name="utter_dont_know"), history).passed
    forbidden = check(BotDidNotUtterAssertion(utter_name="utter_order_delayed"), history)
    assert forbidden.passed is False and forbidden.events == [DELAYED]
    assert check(BotDidNotUtterAssertion(text_matches="refund"), history).passed
    assert check(BotDidNotUtterAssertion(text_matches="delayed"), history).events == [DELAYED]
    cancel = [{"title": "Cancel", "payload": "/cancel"}]
    assert check(BotDidNotUtterAssertion(buttons=cancel), history).events == [CHOICE]
    assert check(BotDidNotUtterAssertion(buttons=[{"title": "Cancel"}]), history).passed  # payload differs
    assert check(BotDidNotUtterAssertion(buttons=[{"title": "Help"}]), history).passed
    either = check(BotDidNotUtterAssertion(utter_name="utter_x", text_matches="next"), history)
    assert either.passed is False and either.events == [CHOICE]


def test_pattern_clarification_contains_any_all_and_the_short_form():
    asked = ClarificationRequested(
        flow_ids=["track_shipment", "check_order_status"], flow_names=["Track", "Check"]
    )
    history = [ClarificationRequested(flow_ids=["faq"]), asked]
    any_of = check(
        ClarificationContainsAssertion(flow_ids=["check_order_status", "x"], operator="any"), history
    )
    assert any_of.passed and any_of.events == [asked]
    assert check(ClarificationContainsAssertion(flow_ids=["x", "y"], operator="any"), history).passed is False
    all_of = ClarificationContainsAssertion(flow_ids=["check_order_status", "track_shipment"], operator="all")
    assert check(all_of, history).events == [asked]
    too_many = check(
        ClarificationContainsAssertion(flow_ids=["check_order_status", "faq"], operator="all"), history
    )
    assert too_many.passed is False and too_many.events == history  # no single clarification had both
    assert check(ClarificationContainsAssertion(flow_names=["Check", "Track"]), history).passed
    assert (
        check(ClarificationContainsAssertion(flow_names=["Check"]), history).passed is False
    )  # exactly these
    assert check(ClarificationContainsAssertion(flow_names=["faq"]), history).passed  # ids when no names
    none = check(ClarificationContainsAssertion(flow_ids=["a"], operator="any"), [FlowStarted(flow_id="a")])
    assert none.passed is False and none.message == "no clarification was asked"


# ---------------------------------------------------------------------------------------- generative


def fixed_scores(table: dict[str, float]):
    """A scorer that looks its score up by response text, and records what it was asked."""
    asked: list[ScoreRequest] = []

    def score(request: ScoreRequest) -> Score | None:
        asked.append(request)
        value = table.get(request.response)
        return None if value is None else Score(value, "table")

    return score, asked


GENERATED = BotUttered(
    text="Refunds take 14 days.",
    source="EnterpriseSearchPolicy",
    utter_name="utter_refund_info",
    metadata={"search_results": ["Refunds are paid within 14 days.", "Receipts are required."]},
)
OFF_TOPIC = BotUttered(text="Trains leave hourly.", source="ContextualResponseRephraser")
TEMPLATED = BotUttered(text="Hello!", utter_name="utter_greet")


def test_generative_relevance_scores_each_generative_response_against_its_user_message():
    history = [UserUttered(text="hi"), TEMPLATED, UserUttered(text="refund time?"), GENERATED,
               UserUttered(text="and trains?"), OFF_TOPIC]  # fmt: skip
    scorer, asked = fixed_scores({GENERATED.text: 0.9, OFF_TOPIC.text: 0.3})
    result = check(GenerativeRelevantAssertion(), history, scorer)
    assert [(r.response, r.question) for r in asked] == [
        (GENERATED.text, "refund time?"),
        (OFF_TOPIC.text, "and trains?"),
    ]
    assert result.passed is False and result.events == [OFF_TOPIC] and result.score == 0.3
    assert check(GenerativeRelevantAssertion(threshold=0.2), history, scorer).passed
    by_source = check(GenerativeRelevantAssertion(utter_source="EnterpriseSearchPolicy"), history, scorer)
    assert by_source.passed and by_source.events == [GENERATED] and by_source.score == 0.9
    by_name = check(GenerativeRelevantAssertion(utter_name="utter_refund_info"), history, scorer)
    assert by_name.passed and by_name.events == [GENERATED]
    none = check(GenerativeRelevantAssertion(utter_name="utter_missing"), history, scorer)
    assert none.passed is False and none.message.startswith("no generative response named utter_missing")
    templated_only = check(GenerativeRelevantAssertion(), [UserUttered(text="hi"), TEMPLATED], scorer)
    assert templated_only.passed is False  # a templated response is not generative


def test_generative_groundedness_uses_the_given_ground_truth_else_the_responses_own():
    scorer, asked = fixed_scores({GENERATED.text: 0.8})
    assert check(GenerativeGroundedAssertion(), [GENERATED], scorer).passed
    assert asked[-1].ground_truth == "Refunds are paid within 14 days.\nReceipts are required."
    check(GenerativeGroundedAssertion(ground_truth="Refunds take 30 days."), [GENERATED], scorer)
    assert asked[-1].ground_truth == "Refunds take 30 days."
    assert check(GenerativeGroundedAssertion(threshold=0.9), [GENERATED], scorer).passed is False
    bare = OFF_TOPIC
    no_truth = check(GenerativeGroundedAssertion(), [bare], scorer)
    assert no_truth.passed is False and no_truth.events == [bare] and "no ground truth" in no_truth.message


def test_an_unscorable_response_is_unscored_never_failed():
    scorer, _ = fixed_scores({})
    result = check(GenerativeRelevantAssertion(), [UserUttered(text="q"), GENERATED], scorer)
    assert result.passed is None and result.events == [GENERATED]
    with pytest.raises(ValueError, match="needs a scorer"):
        check(GenerativeRelevantAssertion(), [GENERATED])


def toy_embed(texts):
    """Bag of words over a tiny vocabulary: enough to tell related texts from unrelated ones."""
    vocabulary = ["refund", "days", "receipt", "train", "hour", "order", "delayed"]
    return np.array([[t.lower().count(w) for w in vocabulary] for t in texts], dtype=float)


def test_the_embedding_scorer():
    score = embedding_scorer(toy_embed)
    close = score(ScoreRequest("relevance", "Your refund takes 14 days.", "How many days for a refund?", ""))
    far = score(ScoreRequest("relevance", "The train leaves every hour.", "How many days for a refund?", ""))
    assert close.value == pytest.approx(1.0) and far.value == 0.0
    grounded = score(
        ScoreRequest("groundedness", "Refund in 14 days. The train is late.", "", "A refund takes 14 days.")
    )
    assert grounded.value == pytest.approx(0.5)  # one of two sentences supported
    assert score(ScoreRequest("relevance", "Refund in 14 days.", "", "")) is None  # nothing to compare with
    assert sentences("One. Two!\nThree?  ") == ["One.", "Two!", "Three?"]


# ---------------------------------------------------------------------------------------- sequencing


def test_sequencing_matches_each_step_strictly_after_the_previous():
    history = [
        FlowStarted(flow_id="verify_identity"),  # 0
        ActionExecuted(action_name="action_verify_account"),  # 1
        SlotSet(name="authenticated", value=True),  # 2
        FlowCompleted(flow_id="verify_identity"),  # 3
        FlowStarted(flow_id="check_order_status"),  # 4
        FlowInterrupted(flow_id="check_order_status"),  # 5
        FlowStarted(flow_id="verify_identity"),  # 6
        FlowCancelled(flow_id="verify_identity"),  # 7
        FlowCompleted(flow_id="check_order_status"),  # 8
    ]
    seed_steps = sequencing(
        ("flow_started", "verify_identity"), ("action_executed", "action_verify_account"),
        ("slot_was_set", "authenticated"), ("flow_completed", "verify_identity"),
        ("flow_started", "check_order_status"), ("flow_completed", "check_order_status"),
    )  # fmt: skip
    result = check(seed_steps, history)
    assert result.passed and result.events == [history[i] for i in (0, 1, 2, 3, 4, 8)]
    repeated = sequencing(("flow_started", "verify_identity"), ("flow_started", "verify_identity"),
                          ("flow_cancelled", "verify_identity"))  # fmt: skip
    assert check(repeated, history).events == [history[0], history[6], history[7]]  # each event used once
    thrice = sequencing(*[("flow_started", "verify_identity")] * 3)
    assert check(thrice, history).passed is False
    out_of_order = check(
        sequencing(("flow_completed", "check_order_status"), ("slot_was_set", "authenticated")), history
    )
    assert out_of_order.passed is False and out_of_order.events == [history[8]]
    assert out_of_order.message == (
        "step 2 (authenticated set) did not happen after step 1 (event 9) (it happened, but too early)"
    )
    interrupted = sequencing(("flow_interrupted", "check_order_status"), ("flow_started", "verify_identity"))
    assert check(interrupted, history).events == [history[5], history[6]]
    never = check(sequencing(("action_executed", "action_refund")), history)
    assert never.passed is False and never.events == [] and never.message.endswith("did not happen")


def test_the_seed_example_runs_on_a_history_that_satisfies_it():
    problems: list[Problem] = []
    scenario = parse_scenario(SEED_EXAMPLE, "order_delay.yml", problems)
    details = BotUttered(
        text="It is delayed at the depot; it ships tomorrow.",
        utter_name="utter_order_status_details",
        source="utter_order_status_details",
        metadata={"domain_ground_truth": "Delayed at the depot. Ships tomorrow."},
    )
    history = [
        SlotSet(name="authenticated", value=True), SlotSet(name="order_id", value="ORD-9981"),
        UserUttered(text="Where is my order?"),
        ClarificationRequested(flow_ids=["check_order_status", "track_shipment"]),
        FlowStarted(flow_id="verify_identity"), ActionExecuted(action_name="action_verify_account"),
        SlotSet(name="authenticated", value=True), FlowCompleted(flow_id="verify_identity"),
        FlowStarted(flow_id="check_order_status"), ActionExecuted(action_name="action_check_order_status"),
        DELAYED, details, FlowCompleted(flow_id="check_order_status"),
        FlowCancelled(flow_id="verify_identity"),
    ]  # fmt: skip
    scorer, _ = fixed_scores({details.text: 0.75})
    outcomes = check_all(scenario.assertions, history, scorer)
    assert [o.kind for o in outcomes if not o.passed] == []
    broken = [
        e for e in history if not (isinstance(e, ActionExecuted) and e.action_name == "action_verify_account")
    ]
    failed = [o.kind for o in check_all(scenario.assertions, broken, scorer) if not o.passed]
    assert failed == ["sequencing"]


def test_the_offline_scorer_uses_evalcores_embeddings(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'store.db'}")
    store.create_project("demo", "Demo", None)
    score = client_scorer(ModelClient(store, "demo"), OFFLINE_EMBEDDING)
    question = "Why is my order delayed?"
    on_topic = score(
        ScoreRequest("relevance", "Your order is delayed because the carrier missed it.", question, "")
    )
    off_topic = score(ScoreRequest("relevance", "Our office is open Monday to Friday.", question, ""))
    assert 0 <= off_topic.value < on_topic.value <= 1
    truth = "Refunds are paid within 14 days of purchase."
    supported = score(ScoreRequest("groundedness", "Refunds are paid within 14 days.", "", truth))
    unrelated = score(ScoreRequest("groundedness", "Trains leave every hour from platform 3.", "", truth))
    assert unrelated.value < supported.value


def test_outcomes_are_stored_as_json():
    outcome = check(FlowCompletedAssertion(flow_id="f"), [FlowCompleted(flow_id="f", step_id="END", turn=3)])
    assert Outcome.model_validate_json(outcome.model_dump_json()) == outcome
    assert outcome.model_dump(mode="json")["events"] == [
        {"type": "flow_completed", "flow_id": "f", "step_id": "END", "turn": 3}
    ]


# ------------------------------------------------------- the rules as Rasa's own E2E assertion code decides

# Rasa's `SlotWasNotSetAssertion.run` takes "the most recent event in the list of matching events since
# that is the final value in the tracker": a slot set and then reset to null was not set.


def test_slot_was_not_set_reads_the_slots_last_value_as_rasa_does():
    reset = [SlotSet(name="amount", value=100), SlotSet(name="amount", value=None)]
    assert check(SlotWasNotSetAssertion(slots=slots({"name": "amount"})), reset).passed
    still_set = [SlotSet(name="amount", value=None), SlotSet(name="amount", value=100)]
    assert check(SlotWasNotSetAssertion(slots=slots({"name": "amount"})), still_set).passed is False


def test_slot_was_not_set_with_a_value_reads_the_last_value_as_rasa_does():
    changed = [SlotSet(name="city", value="Paris"), SlotSet(name="city", value="Rome")]
    assert check(SlotWasNotSetAssertion(slots=slots({"name": "city", "value": "Paris"})), changed).passed
    result = check(SlotWasNotSetAssertion(slots=slots({"name": "city", "value": "Rome"})), changed)
    assert result.passed is False and result.events == [changed[1]]


# Rasa's `BotUtteredAssertion._button_matches`: `actual_button.get("payload") == expected_button.payload`,
# so a button asserted without a payload matches only a button that has none.


def test_buttons_without_a_payload_need_a_button_without_one_as_rasa_does():
    with_payload = [BotUttered(text="Pick", buttons=[Button(title="Yes", payload="/affirm")])]
    without = [BotUttered(text="Pick", buttons=[Button(title="Yes", payload=None)])]
    asserted = BotUtteredAssertion(buttons=[{"title": "Yes"}])
    assert check(asserted, with_payload).passed is False
    assert check(asserted, without).passed
    assert check(BotUtteredAssertion(buttons=[{"title": "Yes", "payload": "/affirm"}]), with_payload).passed


# Rasa's `BotUtteredAssertion.run` looks each field up with its own `next(...)` over the bot messages:
# the response name and the text pattern may be met by two different messages (we keep that rule).


def test_bot_uttered_fields_may_be_met_by_different_messages_as_in_rasa():
    history = [BotUttered(text="Hello", utter_name="utter_greet"), BotUttered(text="Bye", utter_name="x")]
    assert check(BotUtteredAssertion(utter_name="utter_greet", text_matches="Bye"), history).passed


def test_text_matches_is_case_sensitive_in_scenario_and_run_assertions_alike():
    from evalcore.runs.assertions import check_assertions

    history = [BotUttered(text="Your refund is on its way")]
    assert check(BotUtteredAssertion(text_matches="refund"), history).passed
    assert check(BotUtteredAssertion(text_matches="Refund"), history).passed is False
    reply = history[0].text
    assert check_assertions(reply, [{"kind": "bot_uttered", "pattern": "refund"}])[0].passed
    assert check_assertions(reply, [{"kind": "bot_uttered", "pattern": "Refund"}])[0].passed is False
    assert check_assertions(reply, [{"kind": "bot_uttered", "text_matches": "Refund"}])[0].passed is False
