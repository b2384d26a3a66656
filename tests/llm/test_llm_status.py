"""What the Settings page reads and writes through evalcore.llm.status."""

from __future__ import annotations

import pytest
from llm_server import FAST_RETRY, PROJECT

from evalcore.documents.entity_task import EXTRACT_ENTITIES
from evalcore.llm import Budget, ConfigError, ModelClient, status
from evalcore.models import Run

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project


def test_providers_and_roles(project, llm_env, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    by_name = {p.name: p for p in status.providers(project, PROJECT)}
    assert by_name["openai"].key_present and not by_name["anthropic"].key_present
    assert by_name["offline"].key_present and by_name["compat"].base_url == llm_env.openai_base_url
    status.set_role_model(project, PROJECT, "judge", "anthropic/claude-sonnet-4-6")
    roles = {r.role: r for r in status.role_models(project, PROJECT)}
    assert (roles["judge"].model, roles["judge"].source) == ("anthropic/claude-sonnet-4-6", "settings")
    assert (roles["generator"].model, roles["generator"].source) == ("offline/heuristic", "default")
    assert set(roles) == {"generator", "judge", "simulator", "target", "embedding"}
    status.set_role_model(project, PROJECT, "judge", None)
    assert status.role_models(project, PROJECT)[1].source == "default"
    with pytest.raises(ConfigError, match="unknown provider"):
        status.set_role_model(project, PROJECT, "judge", "acme/model")
    with pytest.raises(ConfigError, match="provider/model"):
        status.set_role_model(project, PROJECT, "judge", "gpt-4o")


def test_spend_per_run_and_total_with_cache_hit_rate(project, llm_env):
    for run_id in ("run-1", "run-2"):
        project.start_run(PROJECT, Run(id=run_id, kind="specs.generate"))
        llm = ModelClient(project, PROJECT, run_id=run_id, retry=FAST_RETRY)
        llm.run_batch(EXTRACT_ENTITIES, [{"passage": "a"}, {"passage": "b"}], model="openai/gpt-4o-mini")
    summary = status.spend(project, PROJECT)
    assert (summary.calls, summary.cache_hits, summary.hit_rate) == (4, 2, 0.5)
    assert [r.run_id for r in summary.runs] == ["run-2", "run-1"]
    first, second = summary.runs[1], summary.runs[0]
    assert first.cost_usd > 0 and second.cost_usd == 0 and second.cache_hits == 2
    assert summary.cost_usd == pytest.approx(first.cost_usd) and first.kind == "specs.generate"
    assert summary.tokens_in == 2 * first.tokens_in


def test_budget_prices_and_options(project):
    assert status.budget(project, PROJECT) is None
    status.set_budget(project, PROJECT, usd=5.0)
    assert status.budget(project, PROJECT) == Budget(usd=5.0)
    status.set_budget(project, PROJECT)
    assert status.budget(project, PROJECT) is None
    with pytest.raises(ConfigError):
        status.set_budget(project, PROJECT, tokens=-1)
    status.set_price(project, PROJECT, "my-llama", 0.2, 0.4)
    assert status.prices(project, PROJECT)["my-llama"] == (0.2, 0.4)
    status.set_llm_options(project, PROJECT, concurrency=4, max_retries=2)
    llm = ModelClient(project, PROJECT)
    assert (llm.concurrency, llm.retry.max_retries) == (4, 2)
    assert llm.prices.lookup("my-llama-3b") == (0.2, 0.4)
