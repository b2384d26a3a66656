"""Retries on 429 (honouring Retry-After), 5xx, timeouts and garbled replies; then a clear error."""

from __future__ import annotations

import pytest
from llm_server import FAST_RETRY, PROJECT

from evalcore.documents.entity_task import EXTRACT_ENTITIES
from evalcore.llm import Message, ModelCallError, ModelClient, RetryPolicy
from evalcore.llm.records import calls

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project

PASSAGE = {"passage": "Acme Bank."}


def test_a_429_waits_as_long_as_retry_after_says(project, llm_env):
    llm_env.fail_next(429, retry_after=1)
    result = ModelClient(project, PROJECT, retry=FAST_RETRY).run_task(
        EXTRACT_ENTITIES, PASSAGE, model="openai/gpt-4o-mini"
    )
    assert result.ok and result.attempts == 1
    refused, served = llm_env.calls
    assert refused.status == 429 and served.status == 200
    assert served.started - refused.finished >= 1.0, "the client retried before Retry-After elapsed"
    [row] = calls(project, project_id=PROJECT)
    assert row.attempts == 2 and row.status == "ok"


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "anthropic/claude-haiku-4-5"])
def test_server_errors_timeouts_and_garbled_bodies_are_retried(project, llm_env, model, monkeypatch):
    project.update_settings(PROJECT, {"providers": {model.split("/")[0]: {"timeout_s": 0.5}}})
    llm_env.fail_next(500)
    llm_env.timeout_next(1.5)
    llm_env.malformed_next()
    result = ModelClient(project, PROJECT, retry=FAST_RETRY).run_task(EXTRACT_ENTITIES, PASSAGE, model=model)
    assert result.ok
    statuses = [c.status for c in llm_env.calls]
    assert len(statuses) == 4 and statuses[0] == 500 and statuses[2:] == [200, 200]  # [1] timed out
    assert calls(project, project_id=PROJECT)[0].attempts == 4


def test_when_retries_are_spent_the_error_names_provider_model_status_and_message(project, llm_env):
    llm_env.fail_next(503, count=10)
    llm = ModelClient(project, PROJECT, retry=RetryPolicy(max_retries=2, base_delay=0.01))
    with pytest.raises(ModelCallError) as caught:
        llm.complete([Message("user", "hi")], model="openai/gpt-4o-mini")
    error = caught.value
    assert (error.provider, error.model, error.status, error.attempts) == (
        "openai",
        "gpt-4o-mini",
        "HTTP 503",
        3,
    )
    assert str(error).startswith("openai/gpt-4o-mini failed with HTTP 503 after 3 attempt(s): ")
    assert "Error" in error.message
    assert len(llm_env.calls) == 3
    [row] = calls(project, project_id=PROJECT)
    assert row.status == "error" and "HTTP 503" in row.error

    # In a task the failure is a failed unit, not an exception.
    result = llm.run_task(EXTRACT_ENTITIES, PASSAGE, model="openai/gpt-4o-mini")
    assert result.status == "failed" and "HTTP 503" in result.error


def test_client_errors_are_not_retried(project, llm_env):
    llm_env.fail_next(400)
    llm = ModelClient(project, PROJECT, retry=FAST_RETRY)
    with pytest.raises(ModelCallError, match="HTTP 400 after 1 attempt"):
        llm.complete([Message("user", "hi")], model="openai/gpt-4o-mini")
    assert len(llm_env.calls) == 1


def test_a_retry_after_longer_than_allowed_fails_at_once(project, llm_env):
    llm_env.fail_next(429, retry_after=3600)
    llm = ModelClient(project, PROJECT, retry=RetryPolicy(max_retry_after=60))
    with pytest.raises(ModelCallError, match="retry after 3600 s"):
        llm.complete([Message("user", "hi")], model="openai/gpt-4o-mini")


def test_backoff_grows_exponentially_with_jitter():
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0)
    delays = [[policy.delay(n, None) for n in (1, 2, 3, 4)] for _ in range(50)]
    for d1, d2, d3, d4 in delays:
        assert 0.5 <= d1 <= 1.0 and 1.0 <= d2 <= 2.0 and 2.0 <= d3 <= 4.0 and 2.5 <= d4 <= 5.0
    assert len({round(d[0], 6) for d in delays}) > 1, "jittered"
    assert 2.0 <= policy.delay(1, 2.0) <= 2.5
