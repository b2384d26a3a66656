"""Judges: the offline comparison's verdicts, the LLM judge through the model layer, unscored, assertions."""

from __future__ import annotations

import json

import pytest

from evalcore.llm import ModelClient
from evalcore.llm.retry import RetryPolicy
from evalcore.runs.assertions import AssertionResult, check_assertions, combine
from evalcore.runs.judges import JUDGE_TURN, JudgeInputs, LLMJudge, OfflineJudge, make_judge
from evalcore.runs.offline_judge import compare_reply, says_cannot_answer
from evalcore.runs.records import ERROR_TYPES, JUDGE_ERROR_TYPES

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
PROJECT = "p1"
RETURNS = (
    "E-bikes (Voltra Metro E8): 14 days, and the display must show fewer than 25 km ridden. "
    "An opened battery is accepted within 30 days with a 15% restocking fee."
)


# ------------------------------------------------------------------------------- offline comparison


def verdict(question, expected, reply, grounding=(RETURNS,), multi_turn=False):
    result = compare_reply(question, expected, reply, list(grounding), multi_turn=multi_turn)
    return result.score, result.error_type


def test_offline_judge_passes_a_reply_with_every_key_fact():
    expected = "Within 14 days, with fewer than 25 km on the display."
    assert verdict(
        "How long can I return an e-bike?", expected, "You have 14 days if it shows under 25 km."
    ) == (1, None)


def test_offline_judge_error_types():
    q = "How long can I return an e-bike?"
    expected = "Within 14 days, with fewer than 25 km on the display."
    assert verdict(q, expected, "Within 14 days.") == (0, "incomplete"), "one of two key facts"
    assert verdict(q, expected, "You have 30 days and it must show under 50 km.") == (0, "wrong_fact")
    assert verdict(q, expected, "I'm sorry, I couldn't find that in our documentation.") == (
        0,
        "refused_wrongly",
    )
    assert verdict(
        "Do you buy used batteries?", "CANNOTANSWER", "We don't have any information on that."
    ) == (1, None)
    assert verdict("Do you buy used batteries?", "CANNOTANSWER", "Yes, for $50 each.") == (
        0,
        "failed_to_say_cannot_answer",
    )
    follow_up = verdict(
        "And what if it shows more than that?",
        "Beyond 25 km only an exchange for a different size is possible.",
        "Our workshop opens at 9:00 and books appointments online.",
        multi_turn=True,
    )
    assert follow_up == (0, "coreference")
    invented = verdict(
        "What does the restocking fee apply to?",
        "It applies to opened spare batteries.",
        "It costs RC-99 members $70 extra on weekends.",
    )
    assert invented == (0, "hallucinated")
    # An answer about something else is not a wrong fact about what was asked (issue 13, item 6).
    assert verdict(q, expected, "Our stores are open from nine until six and sell helmets.") == (
        0,
        "off_topic",
    )


def test_offline_judge_fails_a_reply_that_does_not_answer_the_question():
    q = "How long can I return an e-bike?"
    expected = "Within 14 days, with fewer than 25 km on the display."
    # Restating the question, or saying nothing, answers nothing: it cannot pass, and it is no wrong fact.
    assert verdict(q, expected, "You want to know how long you can return an e-bike.") == (0, "off_topic")
    assert verdict(q, expected, "Thanks for your message!") == (0, "off_topic")
    assert verdict(q, expected, "Within 14 days, with fewer than 25 km on the display.") == (1, None)


def test_a_bracketed_code_is_a_reference_and_a_price_without_its_sign_the_same_price():
    products = "Products: sku RC-HYB-300, model Ridgeline Commuter 300, price usd 749."
    q = "How much is the Ridgeline Commuter 300?"
    expected = "The Ridgeline Commuter 300 (RC-HYB-300) costs $749."
    assert verdict(q, expected, "The Ridgeline Commuter 300 costs $749.", [products]) == (1, None)
    assert verdict(q, expected, "The Ridgeline Commuter 300 costs 749 USD.", [products]) == (1, None)
    assert verdict(q, expected, "The Ridgeline Commuter 300 costs $1,749.", [products])[0] == 0
    assert verdict(q, expected, "The Ridgeline Commuter 300 costs 7490 USD.", [products])[0] == 0
    # More than a code in the brackets: the code is part of the answer.
    cover = "Spare batteries have the same cover (warranty code WBAT-500)."
    assert (
        verdict("Which warranty covers spare batteries?", cover, "Spare batteries have the same cover.")[0]
        == 0
    )


def test_offline_judge_names_a_multi_document_retrieval_failure():
    warranty = "New e-bikes: motor and battery are covered for 2 years or 500 charge cycles."
    stores = "E-bike motor and battery claims are assessed at Alder Creek or Harbor Point only."
    expected = f"{warranty} {stores}"
    q = "Putting it all together, what does this mean for my e-bike battery?"
    # The reply has what the warranty document holds and nothing of the stores document.
    one_side = "Your battery is covered for 2 years or 500 charge cycles."
    assert verdict(q, expected, one_side, grounding=(warranty, stores)) == (0, "multi_doc_retrieval")
    # With a single grounding document, the same gap is only incomplete.
    assert verdict(q, expected, one_side, grounding=(expected,)) == (0, "incomplete")
    assert verdict(q, expected, f"{one_side} Claims go to Alder Creek or Harbor Point.",
                   grounding=(warranty, stores)) == (1, None)  # fmt: skip
    # A key fact both documents hold (the store id) does not count as reading the second one.
    about = "Harbor Point (RC-02), 88 Quayside Avenue, (360) 555-0152."
    inventory = "store_id,sku,in_stock\nRC-02,AW-GRAV-RAMBLE,2\nRC-02,RC-HYB-300,5"
    answer = f"{about} Inventory: for store id RC-02 and sku AW-GRAV-RAMBLE, in stock is 2."
    reply = "Harbor Point is store RC-02 at 88 Quayside Avenue, phone (360) 555-0152."
    assert verdict("What about the Harbor Point store?", answer, reply, grounding=(about, inventory)) == (
        0, "multi_doc_retrieval"
    )  # fmt: skip


def test_error_types_follow_the_seeds_table_10():
    from evalcore.runs.judges import JudgeVerdict
    from evalcore.runs.records import ERROR_CLASSES, JUDGE_ERROR_TYPES, error_class

    assert {"coreference", "multi_doc_retrieval", "wrong_tool_order", "multi_correct"} <= set(
        JUDGE_ERROR_TYPES
    )
    assert "ignored_context" not in JUDGE_ERROR_TYPES  # the older name is read, never given
    assert error_class("ignored_context") == error_class("coreference") == "coreference"
    assert error_class("multi_correct") == error_class("wrong_tool_order") == "fact_retrieval"
    assert error_class("crash") == "other"
    assert list(ERROR_CLASSES.values())[:3] == [
        "Multi-document retrieval failures", "Coreference errors", "LLM fact retrieval errors"
    ]  # fmt: skip
    assert JudgeVerdict.model_validate({"score": 0, "error_type": "coreference"}).error_type == "coreference"


def test_cannot_answer_phrasing():
    assert says_cannot_answer("I'm sorry, I couldn't find anything about that in our documentation.")
    assert says_cannot_answer("That is not mentioned in our policies.")
    assert not says_cannot_answer("You do not have to bring a receipt.")
    assert not says_cannot_answer("We don't have that bike in stock at Westbrook.")


def inputs(
    reply: str, expected: str = "Within 14 days, with fewer than 25 km on the display."
) -> JudgeInputs:
    return JudgeInputs(
        spec="Scenario: Return windows\nGiven a customer\nWhen they ask\nThen answer from the policy",
        history=[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}],
        question="How long can I return an e-bike?",
        expected=expected,
        reply=reply,
        grounding=[("return-policy", "Returns and Refunds Policy", RETURNS)],
    )


def test_offline_judge_is_the_task_offline_implementation():
    verdict = OfflineJudge().judge(inputs("Within 14 days."))
    assert (verdict.score, verdict.error_type, verdict.judge) == (0.0, "incomplete", "offline")
    assert "missing: 25 km" in verdict.rationale
    task = JUDGE_TURN.run_offline(inputs("Within 14 days.").as_task_inputs())
    assert (task.score, task.error_type) == (0, "incomplete")


# ------------------------------------------------------------------------------------ LLM judge


def llm_judge(store) -> LLMJudge:
    return LLMJudge(ModelClient(store, PROJECT, retry=RetryPolicy(0)), "openai/gpt-4o-mini")


def test_llm_judge_prompt_carries_spec_history_reference_documents_and_error_types(project, llm_env):
    llm_env.enqueue({"rationale": "Misses the 25 km limit.", "score": 0, "error_type": "incomplete"})
    verdict = llm_judge(project).judge(inputs("Within 14 days."))
    assert (verdict.score, verdict.error_type, verdict.rationale) == (
        0.0,
        "incomplete",
        "Misses the 25 km limit.",
    )
    assert verdict.judge == "openai/gpt-4o-mini" and verdict.prompt_version == JUDGE_TURN.prompt_version
    body = llm_env.calls[0].body
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert all(kind in system for kind in JUDGE_ERROR_TYPES) and "crash" not in JUDGE_ERROR_TYPES
    for part in (
        "Scenario: Return windows",
        "assistant: Hello!",
        "fewer than 25 km",
        "[return-policy]",
        "Within 14 days.",
    ):
        assert part in user
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["error_type"]["anyOf"][0]["enum"] == list(JUDGE_ERROR_TYPES)


def test_a_pass_has_no_error_type(project, llm_env):
    llm_env.enqueue({"rationale": "All there.", "score": 1, "error_type": "other"})
    verdict = llm_judge(project).judge(inputs("14 days, under 25 km."))
    assert (verdict.score, verdict.error_type) == (1.0, None)


@pytest.mark.parametrize(
    "replies",
    [
        ["I think it is fine.", "Score: 1", "definitely a pass"],
        [{"rationale": "x", "score": 0.5}] * 3,
    ],
    ids=["prose", "half-point"],
)
def test_unparseable_judge_output_is_unscored_never_zero(project, llm_env, replies):
    llm_env.enqueue(*replies)
    verdict = llm_judge(project).judge(inputs("Within 14 days."))
    assert verdict.score is None and verdict.error_type is None
    assert verdict.raw == (replies[-1] if isinstance(replies[-1], str) else json.dumps(replies[-1]))
    assert "unscored" in verdict.rationale and len(llm_env.calls) == 3, "re-asked twice first"


@pytest.mark.parametrize(
    ("reply", "expected", "repairs"),
    [
        (
            '{"rationale": "Rude.", "score": 0, "error_type": "rude"}',
            (0.0, "other", "Rude."),
            ("enum_other",),
        ),
        (
            '{"rationale": "Off.", "score": 0, "error_type": "Wrong Fact"}',
            (0.0, "wrong_fact", "Off."),
            ("enum_spelling",),
        ),
        ('{"score": 0, "error_type": "incomplete"}', (0.0, "incomplete", ""), ()),
        (
            '{"rationale": "Fine.", "score": "PASS", "error_type": "none"}',
            (1.0, None, "Fine."),
            ("score_word", "empty_as_null"),
        ),
        (
            "Feedback: Gives both limits. [RESULT] 1",
            (1.0, None, "Gives both limits."),
            ("prometheus_result", "key_alias"),
        ),
    ],
    ids=["unknown-error-type", "error-type-spelling", "no-rationale", "pass-word", "prometheus"],
)
def test_a_valid_score_survives_secondary_fields_with_the_raw_text_kept(
    project, llm_env, reply, expected, repairs
):
    llm_env.enqueue(reply)
    verdict = llm_judge(project).judge(inputs("Within 14 days."))
    assert (verdict.score, verdict.error_type, verdict.rationale) == expected
    assert verdict.repairs == repairs and len(llm_env.calls) == 1, "no re-ask"
    assert verdict.raw == (reply if repairs else None)


def test_make_judge_never_picks_the_targets_own_model_when_another_exists(project, llm_env):
    project.update_settings(
        PROJECT, {"models": {"judge": "openai/gpt-4o", "generator": "anthropic/claude-haiku-4-5"}}
    )
    judge = make_judge(ModelClient(project, PROJECT), None, "openai/gpt-4o-2024-08-06")
    assert isinstance(judge, LLMJudge) and judge.name == "anthropic/claude-haiku-4-5"
    assert isinstance(make_judge(ModelClient(project, PROJECT), "offline", "openai/gpt-4o"), OfflineJudge)


# ----------------------------------------------------------------------------------- assertions


def test_assertions_each_kind_and_malformed_ones():
    reply = "Late fees are $15 per hour for e-bikes, after a 15-minute grace period."
    specs = [
        {"kind": "contains", "text": "$15 PER HOUR"},
        {"kind": "not_contains", "text": "refund guaranteed"},
        {"kind": "contains_any", "texts": ["Alder Creek", "grace period"]},
        {"kind": "contains_all", "texts": ["$15", "$10"]},
        {"kind": "regex", "pattern": r"\b15-minute\b"},
        {"kind": "not_regex", "pattern": r"\$\d+ per day"},
        {"kind": "bot_uttered", "text": "grace"},
        {"kind": "bot_did_not_utter", "pattern": "sorry"},
        {"kind": "max_words", "value": 5},
        {"kind": "cannot_answer"},
        {"kind": "answers"},
        {"kind": "flow_started", "flow_ids": ["x"]},
        {"kind": "regex"},
        {"kind": "regex", "pattern": "("},
    ]
    results = [r.passed for r in check_assertions(reply, specs)]
    assert results == [True, True, True, False, True, True, True, True, False, False, True, None, None, None]


def test_combining_judge_and_assertions():
    failed = [AssertionResult("contains", False, "failed: contains {'text': '14 days'}")]
    passed = [AssertionResult("contains", True, "passed")]
    assert combine(1.0, None, "ok", failed)[:2] == (0.0, "assertion_failed")
    assert combine(0.0, "incomplete", "no", failed)[:2] == (0.0, "incomplete")
    assert combine(None, None, "unscored", passed)[:2] == (None, None), "assertions alone never make a pass"
    assert combine(None, None, "unscored", failed)[:2] == (0.0, "assertion_failed")
    assert set(JUDGE_ERROR_TYPES) < set(ERROR_TYPES)
