"""A sentinel API key set in the environment appears nowhere: not in the store file, the logs, or exports."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from llm_server import FAST_RETRY, PROJECT, SENTINEL_ANTHROPIC_KEY, SENTINEL_OPENAI_KEY

from evalcore.documents.entity_task import EXTRACT_ENTITIES
from evalcore.llm import ConfigError, Message, ModelCallError, ModelClient, guard_judge, status
from evalcore.llm.records import calls
from evalcore.models import Run

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project

SENTINELS = (SENTINEL_OPENAI_KEY, SENTINEL_ANTHROPIC_KEY)


def store_bytes(store) -> bytes:
    path = Path(store.engine.url.database)
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def test_the_key_never_leaves_the_environment(project, llm_env, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)  # everything, the SDKs' and httpx's debug logs included
    monkeypatch.setenv("EVALCORE_SIMULATOR_MODEL", "openai/gpt-4o-mini")
    project.update_settings(PROJECT, {"models": {"generator": "openai/gpt-4o", "judge": "openai/gpt-4o"}})
    project.start_run(PROJECT, Run(id="run-s", kind="run"))
    llm = ModelClient(project, PROJECT, run_id="run-s", retry=FAST_RETRY)
    exported: list[str] = []

    # Successful calls on both providers, a retried 429 whose message quotes the key, embeddings.
    llm_env.fail_next(429, retry_after=0, echo_key=True)
    exported.append(llm.run_task(EXTRACT_ENTITIES, {"passage": "Acme"}).model_dump_json())
    exported.append(
        llm.run_task(
            EXTRACT_ENTITIES, {"passage": "Acme"}, model="anthropic/claude-haiku-4-5"
        ).model_dump_json()
    )
    llm.embed(["some text"], model="openai/text-embedding-3-small")
    # A wrong key: real APIs quote it back; the error we keep and show must not.
    llm_env.fail_next(401, echo_key=True)
    with pytest.raises(ModelCallError) as caught:
        llm.complete([Message("user", "hi")], model="openai/gpt-4o-mini")
    assert "***" in str(caught.value)
    exported.append(str(caught.value))
    llm_env.fail_next(401, echo_key=True)
    failed = llm.run_task(EXTRACT_ENTITIES, {"passage": "Other"}, model="anthropic/claude-haiku-4-5")
    exported.append(failed.model_dump_json())
    guard_judge(llm, "openai/gpt-4o")

    # What the Settings page shows.
    exported += [
        repr(status.providers(project, PROJECT)),
        repr(status.role_models(project, PROJECT)),
        repr(status.spend(project, PROJECT)),
        project.run("run-s").model_dump_json(),
        repr(calls(project, project_id=PROJECT)),
        repr(project.project(PROJECT).settings),
    ]
    assert any(p.name == "openai" and p.key_present for p in status.providers(project, PROJECT))

    logs = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert "retry 1" in logs, "the 429 retry was logged"
    project.close()
    raw = store_bytes(project)
    assert b"run-s" in raw and b"extract_entities" in raw, "the store file was read"
    for secret in SENTINELS:
        assert secret.encode() not in raw, "key in the store file"
        assert secret not in logs, "key in the logs"
        for text in exported:
            assert secret not in text, f"key in an export: {text[:200]}"


def test_settings_refuse_to_hold_a_key(project):
    with pytest.raises(ConfigError, match="keys belong in the environment"):
        status.set_provider(
            project, PROJECT, "vllm", {"base_url": "http://x/v1", "api_key": SENTINEL_OPENAI_KEY}
        )
    with pytest.raises(ConfigError, match="must name an environment variable"):
        status.set_provider(
            project, PROJECT, "vllm", {"base_url": "http://x/v1", "api_key_env": SENTINEL_OPENAI_KEY}
        )
    status.set_provider(
        project, PROJECT, "vllm", {"base_url": "http://u:pw@gpu:8000/v1", "api_key_env": "VLLM_KEY"}
    )
    [vllm] = [p for p in status.providers(project, PROJECT) if p.name == "vllm"]
    assert vllm.base_url == "http://gpu:8000/v1" and not vllm.key_present
