"""Real SDKs against the local server, and the offline provider through the same wrapper."""

from __future__ import annotations

import pytest
from llm_server import FAST_RETRY, PROJECT
from pydantic import BaseModel, Field

from evalcore.documents.entity_task import EXTRACT_ENTITIES
from evalcore.llm import ConfigError, Message, ModelClient, Task
from evalcore.llm.records import calls

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project

PASSAGE = "Order ORD-12345 from Acme Bank costs $12.50 and ships on 2024-03-12."


def client(store, **kw) -> ModelClient:
    return ModelClient(store, PROJECT, retry=FAST_RETRY, **kw)


def test_openai_structured_output_goes_through_the_real_sdk(project, llm_env):
    reply = {"entities": [{"text": "ORD-12345", "kind": "identifier"}, {"text": "Acme Bank", "kind": "name"}]}
    llm_env.enqueue(reply)
    result = client(project).run_task(EXTRACT_ENTITIES, {"passage": PASSAGE}, model="openai/gpt-4o-mini")
    assert result.ok and not result.offline
    assert [e.text for e in result.output.entities] == ["ORD-12345", "Acme Bank"]
    assert (result.model, result.provider, result.prompt_version) == ("openai/gpt-4o-mini", "openai", "2")
    [call] = llm_env.calls
    assert call.api == "openai" and call.body["model"] == "gpt-4o-mini"
    fmt = call.body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == EXTRACT_ENTITIES.schema
    assert call.body["messages"][0]["role"] == "system" and PASSAGE in call.body["messages"][1]["content"]
    assert (call.body["max_completion_tokens"], call.body["temperature"]) == (1024, 0.0)
    assert result.model_dump(mode="json")["output"] == reply, "the typed output survives export"


def test_reasoning_models_get_no_temperature(project, llm_env):
    client(project).run_task(EXTRACT_ENTITIES, {"passage": PASSAGE}, model="openai/gpt-5-mini")
    assert "temperature" not in llm_env.calls[0].body


def test_anthropic_uses_a_forced_tool_call(project, llm_env):
    llm_env.enqueue({"entities": [{"text": "Acme Bank", "kind": "name"}]})
    result = client(project).run_task(
        EXTRACT_ENTITIES, {"passage": PASSAGE}, model="anthropic/claude-sonnet-4-6"
    )
    assert result.ok and result.provider == "anthropic"
    assert result.output.entities[0].text == "Acme Bank"
    body = llm_env.calls[0].body
    assert body["tool_choice"] == {"type": "tool", "name": "Entities"}
    assert body["tools"][0]["input_schema"] == EXTRACT_ENTITIES.schema
    assert "extract all named entities" in body["system"] and [m["role"] for m in body["messages"]] == [
        "user"
    ]


def test_openai_compatible_server_by_base_url_with_tool_calling(project, llm_env, monkeypatch):
    monkeypatch.delenv("EVALCORE_COMPAT_BASE_URL")
    project.update_settings(
        PROJECT,
        {"providers": {"vllm": {"kind": "openai_compatible", "base_url": llm_env.openai_base_url,
                                "structured": "tools"}}},
    )  # fmt: skip
    llm_env.enqueue({"entities": []})
    result = client(project).run_task(EXTRACT_ENTITIES, {"passage": PASSAGE}, model="vllm/llama3.1:8b")
    assert result.ok and result.output.entities == [] and result.model == "vllm/llama3.1:8b"
    body = llm_env.calls[0].body
    assert body["tool_choice"]["function"]["name"] == "Entities" and "response_format" not in body
    assert body["max_tokens"] == 1024 and "max_completion_tokens" not in body


def test_free_text_completion_and_the_env_compat_provider(project, llm_env):
    llm_env.enqueue("Hello there")
    done = client(project).complete([Message("user", "Hi")], model="compat/qwen2.5")
    assert (done.text, done.provider, done.model, done.cache_hit) == (
        "Hello there",
        "compat",
        "qwen2.5",
        False,
    )


def test_offline_provider_runs_through_the_same_wrapper(project, llm_env):
    llm = client(project)
    first = llm.run_task(EXTRACT_ENTITIES, {"passage": PASSAGE})  # no role configured: offline default
    again = llm.run_task(EXTRACT_ENTITIES, {"passage": PASSAGE})
    assert first.ok and first.offline and first.model == "offline/heuristic"
    assert first.output == again.output, "offline output is deterministic"
    kinds = {(e.text, e.kind) for e in first.output.entities}
    assert {
        ("ORD-12345", "identifier"),
        ("Acme Bank", "name"),
        ("$12.50", "quantity"),
        ("2024-03-12", "date"),
    } <= kinds
    assert llm_env.calls == [], "offline needs no server"
    recorded = calls(project, project_id=PROJECT)
    assert [(c.provider, c.model, c.task, c.cost_usd) for c in recorded] == [
        ("offline", "heuristic", "extract_entities", 0.0)
    ] * 2
    assert first.provenance(["doc-1"]).producer == "offline" and first.provenance().is_offline


def test_offline_mode_forces_every_role_offline(project, llm_env, monkeypatch):
    project.update_settings(PROJECT, {"models": {"generator": "openai/gpt-4o-mini"}})
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    result = client(project).run_task(EXTRACT_ENTITIES, {"passage": PASSAGE})
    assert result.offline and llm_env.calls == []


def test_roles_come_from_settings_then_environment(project, llm_env, monkeypatch):
    monkeypatch.setenv("EVALCORE_JUDGE_MODEL", "anthropic/claude-haiku-4-5")
    monkeypatch.setenv("EVALCORE_GENERATOR_MODEL", "anthropic/claude-haiku-4-5")
    project.update_settings(PROJECT, {"models": {"generator": "openai/gpt-4o-mini"}})
    registry = client(project).registry
    assert (registry.choose("generator").model, registry.choose("generator").source) == (
        "openai/gpt-4o-mini",
        "settings",
    )
    assert (registry.choose("judge").model, registry.choose("judge").source) == (
        "anthropic/claude-haiku-4-5",
        "environment",
    )
    assert registry.choose("simulator").model == "offline/heuristic"


def test_a_missing_key_names_the_variable(project, llm_env, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        client(project).run_task(EXTRACT_ENTITIES, {"passage": PASSAGE}, model="anthropic/claude-haiku-4-5")
    with pytest.raises(ConfigError, match="unknown provider 'nope'"):
        client(project).run_task(EXTRACT_ENTITIES, {"passage": PASSAGE}, model="nope/x")


class Verdict(BaseModel):
    """A tiny judge output."""

    passed: bool = Field(description="Whether the reply passed.")
    reason: str = Field(description="Why.")


def test_a_new_task_is_a_few_lines(project, llm_env, tmp_path):
    prompt = tmp_path / "verdict.md"
    prompt.write_text(
        "---\nversion: 3\n---\n## system\nJudge.\n## user\nReply: {{ reply }}\nRules: {{ rules }}\n"
    )
    task = Task(
        "tiny_verdict",
        Verdict,
        lambda inputs, rng: Verdict(passed=rng.random() < 2, reason="offline"),
        prompt=prompt,
    )
    result = client(project).run_task(task, {"reply": "Hi", "rules": ["be nice"]})
    assert (
        result.ok and result.output == Verdict(passed=True, reason="offline") and result.prompt_version == "3"
    )
    assert '"be nice"' in task.render({"reply": "Hi", "rules": ["be nice"]})[1].content
    with pytest.raises(KeyError, match="rules"):
        task.render({"reply": "Hi"})
