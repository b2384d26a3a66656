"""The criteria judge (seed 003, goals.criteria): one pass/fail verdict with a rationale per criterion over
the whole transcript; an offline heuristic that can fail; unscored, never failed, when the judge cannot
answer."""

from __future__ import annotations

import random

from evalcore.generators.scenario.criteria import (
    JUDGE_CRITERION,
    judge_criteria,
    key_terms,
    offline_criterion,
    transcript,
)
from evalcore.llm import ModelClient
from evalcore.llm.retry import RetryPolicy
from evalcore.models import Turn

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
PROJECT = "p1"

TURNS = [
    Turn(index=2, role="assistant", content="Your order ORD-9981 is delayed: the carrier missed the pickup."),
    Turn(index=0, role="user", content="Where is my order ORD-9981?"),
    Turn(index=1, role="tool_call", tool_name="check_order"),
    Turn(index=3, role="user", content="Why?"),
]
DELAY = "Agent communicates the delay reason clearly and empathetically"
REPEAT = "Agent does not ask the user to repeat information already provided"


def offline(criterion: str, assistant_text: str) -> tuple[bool, str]:
    verdict = offline_criterion({"criterion": criterion, "assistant_text": assistant_text}, random.Random(0))
    return verdict.passed, verdict.rationale


def test_key_terms_leave_out_the_parties_function_words_and_adverbs():
    assert key_terms(DELAY) == ["communicates", "delay", "reason"]
    assert key_terms(REPEAT) == ["repeat", "information", "provided"]


def test_the_offline_heuristic_passes_and_fails():
    said = "Your order is delayed. The reason: the carrier missed the pickup."
    assert offline(DELAY, said) == (
        True,
        "Offline check of key terms in the assistant's turns: 2 of 3 found (delay, reason); "
        "passes when half or more are.",
    )
    assert offline(DELAY, "Hello! How can I help?")[0] is False
    assert offline(REPEAT, "Your order is delayed.")[0] is True  # a prohibition nobody broke
    assert offline(REPEAT, "Please repeat the information you provided: your order id.")[0] is False
    assert offline("Agent is polite", "anything")[0] is False  # no checkable term: no evidence, no pass


def test_the_transcript_shows_user_and_assistant_turns_in_order():
    assert transcript(TURNS) == (
        "User: Where is my order ORD-9981?\n\n"
        "Assistant: Your order ORD-9981 is delayed: the carrier missed the pickup.\n\n"
        "User: Why?"
    )


def test_each_criterion_is_judged_offline_by_default(project, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    results = judge_criteria(ModelClient(project, PROJECT), [DELAY, REPEAT], TURNS)
    assert [(r.criterion, r.passed, r.offline) for r in results] == [
        (DELAY, False, True),
        (REPEAT, True, True),
    ]
    assert results[0].rationale.endswith("1 of 3 found (delay); passes when half or more are.")
    assert results[0].model.startswith("offline/")


def test_the_llm_judge_reads_the_whole_transcript_and_an_unparseable_verdict_is_unscored(project, llm_env):
    llm_env.enqueue(
        {"rationale": "It gives the reason: the carrier missed the pickup.", "passed": True},
        "I would say it passes", "pass", "yes",
    )  # fmt: skip
    client = ModelClient(project, PROJECT, retry=RetryPolicy(0))
    results = judge_criteria(client, [DELAY, REPEAT], TURNS, judge="openai/gpt-4o-mini")
    assert results[0].passed is True and results[0].model == "openai/gpt-4o-mini" and not results[0].offline
    prompt = "\n".join(m["content"] for m in llm_env.calls[0].body["messages"])
    assert (
        DELAY in prompt and "Assistant: Your order ORD-9981 is delayed" in prompt and "User: Why?" in prompt
    )
    assert results[1].passed is None and results[1].raw == "yes", "unscored after two re-asks, never failed"
    assert JUDGE_CRITERION.prompt_version == "2"


def test_the_judge_sees_the_flows_actions_and_slots_behind_each_turn():
    from evalcore.targets.events import ActionExecuted, FlowStarted, SlotSet, with_events

    turns = [
        Turn(index=0, role="user", content="Where is WEB-1?"),
        with_events(
            Turn(index=1, role="assistant", content="Found it."),
            [FlowStarted(flow_id="track_order"), SlotSet(name="order_id", value="WEB-1"),
             ActionExecuted(action_name="action_lookup_order"), ActionExecuted(action_name="action_listen")],
        ),
    ]  # fmt: skip
    assert transcript(turns) == (
        "User: Where is WEB-1?\n\nAssistant: Found it.\n[flow started: track_order]\n"
        '[slot order_id = "WEB-1"]\n[action: action_lookup_order]'
    )
