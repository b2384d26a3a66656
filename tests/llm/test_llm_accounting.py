"""Accounting per call (tokens, cost, latency, cache hit, run) and budgets that stop before exceeding."""

from __future__ import annotations

import pytest
from llm_server import FAST_RETRY, PROJECT

from evalcore.documents.entity_task import EXTRACT_ENTITIES
from evalcore.llm import ModelClient, PriceTable
from evalcore.llm.records import calls, run_spend
from evalcore.models import Run, RunStatus

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project

MODEL = "openai/gpt-4o-mini"
PRICE = {"gpt-4o-mini": {"input": 1000.0, "output": 2000.0}}  # $ per million tokens: big, to hit budgets


def inputs(n: int) -> list[dict[str, str]]:
    return [{"passage": f"Passage number {i} about Acme."} for i in range(n)]


def test_every_call_records_tokens_cost_latency_cache_hit_and_run(project, llm_env):
    llm_env.latency = 0.05
    project.start_run(PROJECT, Run(id="run-a", kind="test"))
    llm = ModelClient(project, PROJECT, run_id="run-a", retry=FAST_RETRY)
    result = llm.run_task(EXTRACT_ENTITIES, inputs(1)[0], model=MODEL)
    llm.run_task(EXTRACT_ENTITIES, inputs(1)[0], model=MODEL)
    first, hit = calls(project, run_id="run-a")
    usage = llm_env.calls[0]
    assert first.tokens_in > 0 and first.tokens_out > 0
    assert (first.tokens_in, first.tokens_out) == (result.tokens_in, result.tokens_out)
    assert first.cost_usd == pytest.approx((first.tokens_in * 0.15 + first.tokens_out * 0.60) / 1e6)
    assert first.latency_ms >= 50 and first.attempts == 1 and first.status == "ok"
    assert (first.project_id, first.run_id, first.task, first.role) == (
        PROJECT,
        "run-a",
        "extract_entities",
        "generator",
    )
    assert hit.cache_hit and hit.cost_usd == 0 and hit.latency_ms < first.latency_ms
    assert usage.outcome == "completed"
    assert run_spend(project, "run-a") == (pytest.approx(first.cost_usd), first.tokens_in + first.tokens_out)


def test_prices_are_overridable_in_settings_and_matched_by_prefix():
    table = PriceTable(PRICE)
    assert table.lookup("gpt-4o-mini-2024-07-18") == (1000.0, 2000.0)
    assert table.lookup("gpt-4o-2024-08-06") == (2.5, 10.0)
    assert table.lookup("my-local-llama") is None and table.cost("my-local-llama", 10, 10) == 0.0


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_money_budget_stops_the_run_before_the_call_that_would_exceed_it(project, llm_env, concurrency):
    project.update_settings(PROJECT, {"prices": PRICE})
    project.start_run(PROJECT, Run(id="run-b", kind="test", budget={"usd": 6.0}))
    llm = ModelClient(project, PROJECT, run_id="run-b", retry=FAST_RETRY)
    results = llm.run_batch(EXTRACT_ENTITIES, inputs(30), model=MODEL, concurrency=concurrency)
    statuses = [r.status for r in results]
    done = statuses.count("ok")
    assert 0 < done < 30 and set(statuses) == {"ok", "stopped"}
    assert len(llm_env.calls) == done, "no call was made once the budget could not take it"
    spent, _ = run_spend(project, "run-b")
    assert 0 < spent <= 6.0
    run = project.run("run-b")
    assert run.stopped_reason == "budget" and run.status == RunStatus.stopped and run.finished_at
    assert any("budget of $6.00" in w for w in run.warnings)

    # Resumed later (a new process): what was spent counts, so it stops again at once.
    resumed = ModelClient(project, PROJECT, run_id="run-b", retry=FAST_RETRY)
    assert resumed.budget.spent_usd == pytest.approx(spent)
    todo = [item for item, r in zip(inputs(30), results, strict=True) if r.status == "stopped"]
    again = resumed.run_batch(EXTRACT_ENTITIES, todo, model=MODEL, concurrency=concurrency)
    assert len(llm_env.calls) == done and {r.status for r in again} == {"stopped"}


def test_a_token_budget_and_an_explicit_budget(project, llm_env):
    llm = ModelClient(project, PROJECT, budget={"tokens": 2000}, retry=FAST_RETRY)
    results = llm.run_batch(EXTRACT_ENTITIES, inputs(10), model=MODEL, concurrency=1)
    used = sum(c.tokens_in + c.tokens_out for c in calls(project, project_id=PROJECT))
    assert used <= 2000 and results[-1].status == "stopped" and results[0].ok
    assert llm.stopped_reason == "budget"


def test_offline_calls_are_free_and_ignore_budgets(project, llm_env):
    llm = ModelClient(project, PROJECT, budget={"usd": 0.0, "tokens": 0})
    assert all(r.ok for r in llm.run_batch(EXTRACT_ENTITIES, inputs(3)))
    assert {c.cost_usd for c in calls(project, project_id=PROJECT)} == {0.0}
