"""Seed 000's judge template (Prometheus' absolute grading, 0/1) as a run's option beside ours, with the
same outputs (score, error type, rationale); through the fake OpenAI server."""

from __future__ import annotations

import pytest
from runs_support import sample_project

from evalcore.errors import EvalcoreError
from evalcore.llm import ModelClient
from evalcore.llm.retry import RetryPolicy
from evalcore.models import RunStatus, Target
from evalcore.runs import create_run, execute_run
from evalcore.runs.judges import JUDGE_TURN, JUDGE_TURN_PROMETHEUS, JudgeInputs, LLMJudge
from evalcore.runs.store_ops import judgment_bodies, judgment_rows
from evalcore.targets import save_target

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
PROJECT = "p1"
MODEL = "openai/gpt-4o-mini"
RETURNS = "E-bikes: 14 days, and the display must show fewer than 25 km ridden."


@pytest.fixture(autouse=True)
def _online(monkeypatch):
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)


def _inputs(reply: str) -> JudgeInputs:
    return JudgeInputs(
        spec="Scenario: Return windows\nGiven a customer\nWhen they ask\nThen answer from the policy",
        history=[],
        question="How long can I return an e-bike?",
        expected="Within 14 days, with fewer than 25 km on the display.",
        reply=reply,
        grounding=[("return-policy", "Returns and Refunds Policy", RETURNS)],
    )


def _judge(store) -> LLMJudge:
    return LLMJudge(ModelClient(store, PROJECT, retry=RetryPolicy(0)), MODEL, "prometheus")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Feedback: Misses the 25 km limit. Error type: incomplete [RESULT] 0", (0.0, "incomplete")),
        ("Feedback: Says 30 days. [RESULT] 0", (0.0, "other")),  # a 0 always has an error type
        ("Feedback: Gives both limits. [RESULT] 1", (1.0, None)),
        ('{"rationale": "Says 30 days.", "score": 0, "error_type": "wrong_fact"}', (0.0, "wrong_fact")),
    ],
    ids=["with-type", "no-type", "pass", "json"],
)
def test_the_prometheus_template_gives_our_outputs(project, llm_env, reply, expected):
    llm_env.enqueue(reply)
    verdict = _judge(project).judge(_inputs("Within 14 days."))
    assert (verdict.score, verdict.error_type) == expected
    assert verdict.prompt_version == JUDGE_TURN_PROMETHEUS.prompt_version != JUDGE_TURN.prompt_version
    (call,) = llm_env.calls
    user = call.body["messages"][-1]["content"]
    for part in ("###Task Description:", "###Reference Answer (Score 1):", "###Score Rubrics:", "[RESULT]"):
        assert part in user
    assert "Within 14 days, with fewer than 25 km" in user and "[return-policy]" in user


def test_a_run_judges_with_the_template_it_was_given(sqlite_store, llm_env, monkeypatch):
    monkeypatch.setenv("EC8_BOT_DELAY", "0")
    pid, _ = sample_project(sqlite_store)
    save_target(
        sqlite_store, pid, Target(name="py", kind="python", config={"callable": "runs_support:slow_bot"})
    )

    def grade(api: str, body: dict) -> str:
        prometheus = "###Reference Answer" in body["messages"][-1]["content"]
        return "Feedback: It repeats the question. Error type: off_topic [RESULT] 0" if prometheus else "?"

    llm_env.responder = grade
    with pytest.raises(EvalcoreError, match="judge template must be one of ours, prometheus"):
        create_run(sqlite_store, pid, "py", judge=MODEL, judge_template="g-eval", limit=1)
    run = create_run(sqlite_store, pid, "py", judge=MODEL, judge_template="prometheus", limit=1)
    assert run.params["judge_template"] == "prometheus"
    outcome = execute_run(sqlite_store, run.id)
    assert outcome.run.status == RunStatus.finished and outcome.done > 0
    rows = judgment_rows(sqlite_store, run.id)
    turns = judgment_bodies(sqlite_store, [r[0] for r in rows]).values()
    assert {(t.score, t.error_type, t.judge) for t in turns} == {(0.0, "off_topic", MODEL)}
    assert len(llm_env.completed()) == outcome.done, "one judge call per turn, every one Prometheus'"
