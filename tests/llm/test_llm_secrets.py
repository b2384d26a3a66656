"""A sentinel credential set in the environment appears nowhere: not in the store file, the logs, exports or
pages, whatever the name of the variable that holds it."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from llm_server import FAST_RETRY, PROJECT, SENTINEL_ANTHROPIC_KEY, SENTINEL_OPENAI_KEY
from runs_support import conversation, sample_project
from streamlit.testing.v1 import AppTest

from evalcore.documents.entity_task import EXTRACT_ENTITIES
from evalcore.items.store_ops import add_conversation, list_conversations
from evalcore.llm import ConfigError, Message, ModelCallError, ModelClient, guard_judge, status
from evalcore.llm.records import calls
from evalcore.models import Run, Target
from evalcore.runs import create_run, execute_run
from evalcore.runs.store_ops import judgment_bodies, judgment_rows
from evalcore.store import schema as t
from evalcore.store import secrets
from evalcore.targets import save_target
from evalcore.targets.adapters import TargetCrash

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


# A credential under a variable name that says nothing (no KEY, TOKEN, SECRET or PASSWORD in it).
BOT_KEY = "bot-SENTINEL-auth-4d9e1b7c2a86"
ROOT = Path(__file__).resolve().parents[2]


def evalcore_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """The real `evalcore` command in its own process (its own registry of credentials, its own logs)."""
    done = subprocess.run(
        [str(Path(sys.executable).with_name("evalcore")), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def page_text(node) -> str:
    """Everything an AppTest page holds: every element's protobuf (markdown, captions, dataframes' bytes)."""
    children = getattr(node, "children", {}) or {}
    return str(getattr(node, "proto", "")) + "".join(page_text(c) for c in children.values())


def test_a_credential_under_any_variable_name_is_redacted_from_everything_written(
    sqlite_store, llm_env, caplog, monkeypatch, tmp_path
):
    """A target's server (`BOT_AUTH`) and a provider's server echo the key in their errors: not in the
    store file, the logs (ours and the CLI's), the CLI's exports, or the Reports page."""
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("BOT_AUTH", BOT_KEY)
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    store = sqlite_store
    pid, _ = sample_project(store)
    url = llm_env.openai_base_url
    save_target(store, pid, Target(name="bot", kind="openai", config={
        "base_url": url, "model": "gpt-4o-mini", "api_key_env": "BOT_AUTH", "cache": False,
    }))  # fmt: skip
    save_target(store, pid, Target(name="hook", kind="http", config={
        "url": f"{url}/chat/completions", "headers": {"Authorization": "Bearer ${BOT_AUTH}"},
        "request_template": {"model": "m", "messages": "{{messages}}"},
        "response_path": "choices.0.message.content",
    }))  # fmt: skip
    status.set_provider(store, pid, "botllm", {"base_url": url, "api_key_env": "BOT_AUTH"})

    # In this process: a chat target whose every reply is a 401 quoting the key.
    llm_env.fail_next(401, count=100, echo_key=True)
    run = create_run(store, pid, "bot", judge="offline", limit=1)
    assert execute_run(store, run.id, retry=FAST_RETRY).crashed > 0
    bodies = judgment_bodies(store, [r[0] for r in judgment_rows(store, run.id)])
    crash = next(b.crash for b in bodies.values() if b.crash)
    assert "incorrect API key provided: Bearer ***" in crash, "the error is kept, the key is not"
    # A model that quoted the key in a reply a generator keeps: the store keeps the text without it.
    leaked = conversation("c-echo", "spec-0", ["return-policy"], [(f"My key is {BOT_KEY}?", "No.", "X", [])])
    add_conversation(store, pid, leaked)
    logging.getLogger("evalcore.test").warning("reply from %s", f"Bearer {BOT_KEY}")
    try:
        raise RuntimeError(f"server said {BOT_KEY}")
    except RuntimeError:
        logging.getLogger("evalcore.test").exception("call failed")

    # The CLI, in its own processes: an HTTP target and a judge (a configured provider) echoing the key.
    env = {**os.environ, "EVALCORE_DATABASE_URL": store.url}
    llm_env.reset()
    llm_env.fail_next(401, count=100, echo_key=True)
    outputs = [evalcore_cli("run", "--target", "hook", "--judge", "offline", "--limit", "1", env=env)]
    llm_env.reset()
    llm_env.fail_next(401, count=100, echo_key=True)
    judged = evalcore_cli("run", "--target", "demo", "--judge", "botllm/judge-1", "--limit", "1", env=env)
    outputs.append(judged)
    llm_env.reset()
    for run in store.runs(pid, kind="run"):
        if run.target != "bot":  # the CLI's runs; a report reads the store like every export
            outputs.append(evalcore_cli("report", "--run", run.id, "--format", "jsonl", env=env))
    outputs.append(evalcore_cli("export", "conversation", env=env))
    out = tmp_path / "conversations.jsonl"
    evalcore_cli("conversations", "export", "--out", str(out), env=env)
    assert "c-echo" in out.read_text(encoding="utf-8") and "My key is ***?" in out.read_text(encoding="utf-8")
    with store.read() as conn:
        errors = [row[0] for row in conn.execute(sa.select(t.model_calls.c.error)) if row[0]]
    assert any("incorrect API key provided" in e for e in errors), "the provider's error was recorded"

    # The Reports page of the CLI's HTTP-target run, drilled down to its crashed turn.
    monkeypatch.setenv("EVALCORE_DATABASE_URL", store.url)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/reports.py").run()
    [hook_run] = [r.id for r in store.runs(pid, kind="run") if r.target == "hook"]
    at.selectbox(key="report_run").set_value(hook_run).run()
    at.selectbox(key="drill:by_spec").select_index(1).run()
    assert not at.exception, at.exception
    page = page_text(at.main) + page_text(at.sidebar)
    assert "no reply" in page, "the page shows the crash"

    logs = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert "call failed" in logs and "reply from Bearer ***" in logs
    texts = [logs, page, *(o.stdout + o.stderr for o in outputs)]
    store.close()
    raw = store_bytes(store)
    assert b"incorrect API key provided" in raw, "the store file was read"
    assert BOT_KEY.encode() not in raw, "key in the store file"
    for text in texts:
        assert BOT_KEY not in text, f"key written out: {text[text.find(BOT_KEY) - 200 :][:300]}"


def test_the_store_redacts_every_text_it_writes_on_both_backends(store, snapshot, monkeypatch):
    """JSON bodies (psycopg's Jsonb on PostgreSQL), plain columns and executemany batches alike."""
    monkeypatch.setenv("BOT_AUTH", BOT_KEY)
    secrets.register("BOT_AUTH")
    store.create_project(PROJECT, f"Project {BOT_KEY}")
    for n in range(2):
        turns = [(f"key {BOT_KEY} #{n}", json.dumps({"auth": BOT_KEY}), "X", [])]
        add_conversation(store, PROJECT, conversation(f"c{n}", "s", [], turns))
    assert store.project(PROJECT).title == "Project ***"
    turns = list_conversations(store, PROJECT)[1].conversation.turns
    assert [turn.content for turn in turns] == ["key *** #1", '{"auth": "***"}']
    assert BOT_KEY not in repr(snapshot(store))


def test_redaction_catches_the_forms_servers_echo_and_leaves_short_values(monkeypatch):
    monkeypatch.setenv("BOT_AUTH", 'a/b c"d-long-enough')
    monkeypatch.setenv("BOT_PIN", "1234")
    secrets.register("BOT_AUTH", "BOT_PIN", None, "not a name")
    echoed = 'raw a/b c"d-long-enough, json "a/b c\\"d-long-enough", url a%2Fb%20c%22d-long-enough, pin 1234'
    assert secrets.redact(echoed) == 'raw ***, json "***", url ***, pin 1234'
    assert "not a name" not in secrets.registered()


def test_a_key_at_the_edge_of_a_cut_error_message_is_not_kept_in_part(project, monkeypatch):
    """Messages are cut to a few hundred characters: after redaction, else half a key would survive."""
    from target_endpoints import Endpoint, adapter, http_target

    monkeypatch.setenv("RIDGE_BOT_TOKEN", BOT_KEY)
    served = Endpoint()
    try:
        bot = adapter(project, http_target(served))
        crashes = []
        for body in [("raw", b"x" * 70 + BOT_KEY.encode()), ("json", {"pad": "x" * 180, "k": BOT_KEY})]:
            served.script = [body] * 10  # a malformed reply is retried
            with pytest.raises(TargetCrash) as caught:
                bot.reply([Message("user", "hi")])
            crashes.append(caught.value.message)
    finally:
        served.server.shutdown()
        served.server.server_close()
    assert "not JSON" in crashes[0] and "no 'reply.text'" in crashes[1]
    assert not any(BOT_KEY[:8] in c for c in crashes), crashes
