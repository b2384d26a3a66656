"""The generative assertions scored by a model (issue 30, item 3): online, the judge model reads each
response through the task `score_generative` (groundedness: the share of its statements the ground truth
supports; relevance: a 1-5 rating read as (rating - 1) / 4) against the threshold of the file; offline,
the embedding scorer stands in and says so; a judge that cannot answer leaves the assertion unscored."""

from __future__ import annotations

from evalcore.generators.scenario.checks import check
from evalcore.generators.scenario.records import GenerativeGroundedAssertion, GenerativeRelevantAssertion
from evalcore.generators.scenario.scoring import SCORE_GENERATIVE, scenario_scorer
from evalcore.llm import ModelClient
from evalcore.llm.retry import RetryPolicy
from evalcore.targets.events import BotUttered, UserUttered

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
PROJECT = "p1"
TRUTH = "Store purchases have a receipt number starting with POS-. Online orders start with WEB-."
HISTORY = [
    UserUttered(text="How do I know if my order is from the store?"),
    BotUttered(
        text="Store receipts start with POS-. Refunds take one day.",
        source="EnterpriseSearchPolicy",
        metadata={"search_results": [TRUTH]},
    ),
]


def test_a_judge_model_scores_groundedness_and_relevance_against_the_files_threshold(project, llm_env):
    llm_env.enqueue(
        {"rationale": "One of two statements is in the ground truth.",
         "statements": [{"statement": "Store receipts start with POS-", "supported": True},
                        {"statement": "Refunds take one day", "supported": False}]},
        {"rationale": "It answers in part.", "relevance": 3},
        {"rationale": "Mostly off topic.", "relevance": 2},
    )  # fmt: skip
    client = ModelClient(project, PROJECT, retry=RetryPolicy(0))
    scorer = scenario_scorer(client, judge="openai/gpt-4o-mini")
    grounded = check(GenerativeGroundedAssertion(threshold=0.6), HISTORY, scorer)
    assert grounded.passed is False and grounded.score == 0.5
    assert grounded.details[0]["rationale"].startswith("openai/gpt-4o-mini: One of two statements")
    prompt = "\n".join(m["content"] for m in llm_env.calls[0].body["messages"])
    assert "Metric: groundedness" in prompt and TRUTH in prompt and "Refunds take one day" in prompt
    assert check(GenerativeRelevantAssertion(threshold=0.5), HISTORY, scorer).passed  # rating 3: 0.5
    other = [UserUttered(text="Can I pay with a gift card?"), HISTORY[1]]  # a new request: not cached
    low = check(GenerativeRelevantAssertion(threshold=0.5), other, scorer)
    assert low.passed is False and low.score == 0.25
    assert SCORE_GENERATIVE.prompt_version == "1"


def test_an_unreadable_judge_leaves_the_assertion_unscored(project, llm_env):
    llm_env.enqueue("fine", "fine", "fine")
    client = ModelClient(project, PROJECT, retry=RetryPolicy(0))
    outcome = check(
        GenerativeGroundedAssertion(), HISTORY, scenario_scorer(client, judge="openai/gpt-4o-mini")
    )
    assert outcome.passed is None


def test_offline_the_embedding_scorer_stands_in_and_says_so(project, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    outcome = check(GenerativeGroundedAssertion(), HISTORY, scenario_scorer(ModelClient(project, PROJECT)))
    assert outcome.passed is not None
    assert outcome.details[0]["rationale"].startswith("offline (embedding): mean best cosine similarity")
