"""Targets: each adapter against a local server (or in-process), crashes on timeouts and garbage, config."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from target_endpoints import PROJECT, Endpoint, adapter, http_target

from evalcore.llm import Message, ModelClient
from evalcore.llm.records import calls
from evalcore.models import Target
from evalcore.targets import (
    TargetConfigError,
    TargetCrash,
    build_adapter,
    fill_template,
    get_target,
    list_targets,
    lookup,
    remove_target,
    save_target,
)
from evalcore.targets.demo import GOODBYE, NOT_FOUND

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
CHAT = [
    Message("user", "Hi, which stores rent e-bikes?"),
    Message("assistant", "Alder Creek."),
    Message("user", "And on Sundays?"),
]


@pytest.fixture(autouse=True)
def _online(monkeypatch):
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)  # a CI setting would turn chat targets away


# ------------------------------------------------------------------------------ OpenAI / Anthropic


def test_openai_compatible_target_sends_system_prompt_and_history(project, llm_server):
    llm_server.enqueue("Open 10:00 to 17:00.")
    config = {
        "base_url": llm_server.openai_base_url,
        "model": "llama3.1",
        "system_prompt": "You are Ridgeline Assist.",
    }
    bot = adapter(project, Target(name="bot", kind="openai", config=config))
    reply = bot.reply(CHAT)
    assert reply.text == "Open 10:00 to 17:00." and not reply.cache_hit and reply.latency_ms > 0
    [call] = llm_server.calls
    assert call.api == "openai" and call.body["model"] == "llama3.1"
    assert [(m["role"], m["content"]) for m in call.body["messages"]] == [
        ("system", "You are Ridgeline Assist."),
        *((m.role, m.content) for m in CHAT),
    ]
    [record] = calls(project, project_id=PROJECT)
    assert (
        record.role == "target" and record.model == "llama3.1" and record.provider.startswith("target-bot-")
    )


def test_chat_target_replies_are_cached_unless_turned_off(project, llm_server):
    config = {"base_url": llm_server.openai_base_url, "model": "m"}
    cached = adapter(project, Target(name="cached", kind="openai", config=config))
    assert not cached.reply(CHAT).cache_hit
    assert cached.reply(CHAT).cache_hit and len(llm_server.calls) == 1
    fresh = adapter(project, Target(name="fresh", kind="openai", config={**config, "cache": False}))
    fresh.reply(CHAT)
    fresh.reply(CHAT)
    assert len(llm_server.calls) == 3


def test_anthropic_target_with_its_key_named_by_an_environment_variable(project, llm_server, monkeypatch):
    monkeypatch.setenv("RIDGE_ANTHROPIC_KEY", "sk-ant-test-0123456789abcdef")
    llm_server.enqueue("Sundays 10:00-17:00.")
    config = {"base_url": llm_server.anthropic_base_url, "model": "claude-haiku-4-5"}
    config |= {"system_prompt": "Be brief.", "api_key_env": "RIDGE_ANTHROPIC_KEY"}
    bot = adapter(project, Target(name="claude", kind="anthropic", config=config))
    assert bot.reply(CHAT).text == "Sundays 10:00-17:00."
    body = llm_server.calls[0].body
    assert body["system"] == "Be brief." and [m["role"] for m in body["messages"]] == [
        "user",
        "assistant",
        "user",
    ]
    assert get_target(project, PROJECT, "claude").model == "anthropic/claude-haiku-4-5"


def test_a_chat_target_that_times_out_or_answers_garbage_is_a_crash(project, llm_server):
    config = {"base_url": llm_server.openai_base_url, "model": "m", "timeout_s": 0.3, "cache": False}
    bot = adapter(project, Target(name="slow", kind="openai", config=config))
    llm_server.timeout_next(1.0, count=3)
    with pytest.raises(TargetCrash) as crash:
        bot.reply(CHAT)
    assert crash.value.kind == "timeout"
    llm_server.malformed_next(count=3)
    with pytest.raises(TargetCrash) as crash:
        bot.reply(CHAT)
    assert crash.value.kind == "error" and "malformed" in crash.value.message
    llm_server.enqueue("   ")
    with pytest.raises(TargetCrash, match="empty reply"):
        bot.reply(CHAT)
    llm_server.enqueue("fine")
    assert bot.reply(CHAT).text == "fine", "the adapter still works after crashes"


def test_offline_mode_refuses_a_real_endpoint_instead_of_faking_it(project, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    with pytest.raises(TargetConfigError, match="EVALCORE_OFFLINE"):
        adapter(
            project,
            Target(name="bot", kind="openai", config={"base_url": "http://127.0.0.1:9/v1", "model": "m"}),
        )


# ----------------------------------------------------------------------------------- generic HTTP


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    served = Endpoint()
    yield served
    served.server.shutdown()
    served.server.server_close()


def test_http_target_fills_the_template_sends_env_headers_and_reads_the_path(project, endpoint, monkeypatch):
    monkeypatch.setenv("RIDGE_BOT_TOKEN", "tok-123456789")
    endpoint.script = [("json", {"reply": {"text": "Alder Creek opens at 10:00."}})]
    bot = adapter(project, http_target(endpoint))
    assert bot.reply(CHAT).text == "Alder Creek opens at 10:00."
    [request] = endpoint.requests
    assert request["body"] == {
        "session": "eval",
        "input": "And on Sundays?",
        "history": [{"role": m.role, "content": m.content} for m in CHAT[:-1]],
        "prompt": "Context: bikes",
    }
    assert request["headers"]["Authorization"] == "Bearer tok-123456789"
    assert "tok-123456789" not in json.dumps(project.project(PROJECT).settings), (
        "only the variable's name is stored"
    )


def test_http_target_retries_server_errors_and_crashes_on_timeout_and_garbage(project, endpoint, monkeypatch):
    monkeypatch.setenv("RIDGE_BOT_TOKEN", "tok")
    bot = adapter(project, http_target(endpoint))
    endpoint.script = [("status", 503), ("json", {"reply": {"text": "after a retry"}})]
    assert bot.reply(CHAT).text == "after a retry" and len(endpoint.requests) == 2
    endpoint.script = [("sleep", 1.0)] * 3
    with pytest.raises(TargetCrash) as crash:
        bot.reply(CHAT)
    assert crash.value.kind == "timeout"
    endpoint.script = [("raw", b"<html>502 Bad Gateway</html>")] * 3
    with pytest.raises(TargetCrash) as crash:
        bot.reply(CHAT)
    assert crash.value.kind == "garbage"
    endpoint.script = [("json", {"answer": "wrong place"})]
    with pytest.raises(TargetCrash, match=r"no 'reply\.text'"):
        bot.reply(CHAT)
    endpoint.script = [("status", 400)]
    with pytest.raises(TargetCrash) as crash:
        bot.reply(CHAT)
    assert crash.value.kind == "error" and "HTTP 400" in crash.value.message


def test_http_target_says_the_conversation_is_over_at_its_end_path(project, endpoint, monkeypatch):
    monkeypatch.setenv("RIDGE_BOT_TOKEN", "tok")
    endpoint.script = [
        ("json", {"reply": {"text": "Anything else?"}, "is_finished": False}),
        ("json", {"reply": {"text": "Bye!"}, "is_finished": True}),
        ("json", {"reply": {"text": "No flag at all."}}),
        ("json", {"reply": {"text": "A string is no flag."}, "is_finished": "yes"}),
    ]
    bot = adapter(project, http_target(endpoint, end_path="is_finished"))
    assert [bot.reply(CHAT).ended for _ in range(4)] == [False, True, False, False]
    endpoint.script = [("json", {"reply": {"text": "Bye!"}, "is_finished": True})]
    assert not adapter(project, http_target(endpoint)).reply(CHAT).ended, "no end_path: never ended"


def test_http_target_opens_the_dialogue_when_it_has_an_opening_path(project, endpoint, monkeypatch):
    monkeypatch.setenv("RIDGE_BOT_TOKEN", "tok")
    assert adapter(project, http_target(endpoint)).opening() is None, "no opening_path: the user starts"
    endpoint.script = [("json", {"greeting": "Welcome to Ridge Bikes!"}), ("json", {"reply": {"text": "x"}})]
    greeting = adapter(project, http_target(endpoint, opening_path="greeting")).opening()
    assert greeting is not None and greeting.text == "Welcome to Ridge Bikes!"
    assert endpoint.requests[-1]["body"]["input"] == "" and endpoint.requests[-1]["body"]["history"] == []
    with pytest.raises(TargetCrash, match="no 'greeting'"):
        adapter(project, http_target(endpoint, opening_path="greeting")).opening()


def test_http_target_needs_its_header_variables_set(project, endpoint, monkeypatch):
    monkeypatch.delenv("RIDGE_BOT_TOKEN", raising=False)
    with pytest.raises(TargetConfigError, match="RIDGE_BOT_TOKEN"):
        adapter(project, http_target(endpoint))


def test_template_and_path_helpers():
    values = {"messages": [{"role": "user", "content": "q"}], "message": "q"}
    assert fill_template({"a": "{{messages}}", "b": ["say {{ message }}!"], "c": 3}, values) == {
        "a": [{"role": "user", "content": "q"}],
        "b": ["say q!"],
        "c": 3,
    }
    assert lookup({"choices": [{"message": {"content": "x"}}]}, "$.choices.0.message.content") == "x"


# --------------------------------------------------------------------------------- Python callable


def dict_bot(messages: list[dict[str, str]]) -> dict[str, str]:
    return {"content": "from a dict"}


def closing_bot(messages: list[dict[str, str]]) -> dict[str, object]:
    return {"content": "Your return is booked. Goodbye!", "ended": True}


def failing_bot(messages: list[dict[str, str]]) -> str:
    raise RuntimeError("database unavailable")


def slow_bot(messages: list[dict[str, str]]) -> str:
    time.sleep(2)
    return "too late"


def number_bot(messages: list[dict[str, str]]) -> int:
    return 42


def python_target(fn: str, **config: Any) -> Target:
    return Target(name=f"py-{fn}", kind="python", config={"callable": f"test_targets:{fn}", **config})


def test_python_callable_target(project):
    bot = adapter(
        project,
        Target(
            name="py-echo",
            kind="python",
            config={"callable": "target_endpoints:echo_bot", "system_prompt": "Be kind."},
        ),
    )
    assert bot.reply(CHAT).text == "4: And on Sundays?", "system prompt + the three chat messages"
    from_dict = adapter(project, python_target("dict_bot")).reply(CHAT)
    assert from_dict.text == "from a dict" and not from_dict.ended
    closing = adapter(project, python_target("closing_bot")).reply(CHAT)
    assert closing.text == "Your return is booked. Goodbye!" and closing.ended
    echo = Target(name="py-echo2", kind="python", config={"callable": "target_endpoints:echo_bot"})
    assert not adapter(project, echo).reply(CHAT).ended
    for fn, kind in (("failing_bot", "error"), ("number_bot", "garbage")):
        with pytest.raises(TargetCrash) as crash:
            adapter(project, python_target(fn)).reply(CHAT)
        assert crash.value.kind == kind
    started = time.monotonic()
    with pytest.raises(TargetCrash) as crash:
        adapter(project, python_target("slow_bot", timeout_s=0.2)).reply(CHAT)
    assert crash.value.kind == "timeout" and time.monotonic() - started < 1.5
    with pytest.raises(TargetConfigError, match="cannot load"):
        adapter(project, python_target("no_such_function"))


# ------------------------------------------------------------------------------------------ demo


def test_demo_target_answers_from_the_best_passage_and_only_reads_the_last_message(sqlite_store):
    from evalcore.cli.main import SAMPLE_PROJECT
    from evalcore.inputs import import_project

    pid = import_project(sqlite_store, SAMPLE_PROJECT).project_id
    demo = get_target(sqlite_store, pid, "demo")
    bot = build_adapter(sqlite_store, pid, demo, ModelClient(sqlite_store, pid))
    late = bot.reply([Message("user", "What is the late fee for an e-bike rental?")])
    assert "$15 per hour" in late.text and late.details["document"] == "rental-policy"
    assert bot.reply([Message("user", "zebra quantum violin")]).text == NOT_FOUND
    alone = bot.reply([Message("user", "And what about on Sundays?")]).text
    with_history = bot.reply([*CHAT[:2], Message("user", "And what about on Sundays?")]).text
    assert alone == with_history, "it ignores the history: its coreference weakness is real, not staged"
    assert not late.ended
    farewell = bot.reply([*CHAT, Message("user", "Great, that's all. Bye!")])
    assert farewell.ended and farewell.text == GOODBYE
    assert not bot.reply([Message("user", "Thanks! One more: is that all I need to bring?")]).ended
    quiet = Target(name="quiet", kind="demo", config={"end_on_farewell": False})
    quiet_bot = build_adapter(sqlite_store, pid, quiet, ModelClient(sqlite_store, pid))
    assert not quiet_bot.reply([Message("user", "Bye!")]).ended


# ---------------------------------------------------------------------------------------- config


def test_targets_are_project_settings_and_never_hold_secrets(project):
    assert [t.name for t in list_targets(project, PROJECT)] == ["demo", "demo-flows"], (
        "the demo targets are built in"
    )
    save_target(project, PROJECT, Target(name="bot", kind="openai", config={"model": "gpt-4o-mini"}))
    assert [t.name for t in list_targets(project, PROJECT)] == ["demo", "demo-flows", "bot"]
    assert get_target(project, PROJECT, "bot").config["cache"] is True, "defaults filled in"
    bad = [
        Target(
            name="k1", kind="openai", config={"model": "m", "api_key_env": "sk-live-0123456789abcdef0123"}
        ),
        Target(
            name="k2",
            kind="openai",
            config={"model": "m", "system_prompt": "key sk-proj-abcdefghijklmnop1234"},
        ),
        Target(name="k3", kind="http", config={"url": "http://x", "headers": {"X-Api-Key": "abc123"}}),
        Target(name="k4", kind="openai", config={"model": "m", "api_key": "x"}),
        Target(name="bad name!", kind="demo"),
        Target(name="k5", kind="python", config={"callable": "no-colon"}),
    ]
    for target in bad:
        with pytest.raises(TargetConfigError):
            save_target(project, PROJECT, target)
    assert "sk-" not in json.dumps(project.project(PROJECT).settings)
    remove_target(project, PROJECT, "bot")
    assert [t.name for t in list_targets(project, PROJECT)] == ["demo", "demo-flows"]


def test_http_and_rasa_targets_share_the_url_and_credential_header_checks():
    from evalcore.targets.config import ChatConfig, HTTPConfig, RasaConfig, config_as, parse_config

    for kind in ("http", "rasa", "http_events"):
        with pytest.raises(TargetConfigError, match=r"url: .*must start with http:// or https://"):
            parse_config(Target(name="t", kind=kind, config={"url": "ftp://x"}))
        with pytest.raises(TargetConfigError, match=r"headers: .*'Authorization' carries a credential"):
            parse_config(
                Target(name="t", kind=kind, config={"url": "http://x", "headers": {"Authorization": "abc"}})
            )
        fine = parse_config(
            Target(
                name="t", kind=kind, config={"url": "https://x", "headers": {"Authorization": "Bearer ${T}"}}
            )
        )
        assert fine.url == "https://x" and fine.headers == {"Authorization": "Bearer ${T}"}
    rasa = parse_config(Target(name="t", kind="rasa", config={"url": "http://x"}))
    assert config_as(rasa, RasaConfig) is rasa
    with pytest.raises(TypeError, match="a HTTPConfig was expected, not a RasaConfig"):
        config_as(rasa, HTTPConfig)
    with pytest.raises(TypeError, match="a ChatConfig was expected"):
        config_as(rasa, ChatConfig)
