"""Targets that act (issue 17, item 8): tool calling through the OpenAI tools API and Anthropic tool use
(the real SDKs against the local fake server, through the model layer: cache and accounting apply), an
HTTP endpoint answering a reply or an action, and the built-in offline agents."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_server import ToolCallReply
from target_endpoints import Endpoint

from evalcore.generators.procedure import agents as _registers_the_built_in_agents  # noqa: F401
from evalcore.llm import ModelClient
from evalcore.llm.records import calls
from evalcore.llm.retry import RetryPolicy
from evalcore.models import Target, Tool, Turn
from evalcore.targets import TargetConfigError, TargetCrash, save_target
from evalcore.targets.acting import build_acting_adapter

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
PROJECT = "p1"
FAST = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.02)
TOOLS = [
    Tool(
        name="lookup_order",
        description="Find an order.",
        parameters={
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "email": {"type": "string"}},
            "required": ["order_id", "email"],
        },
    )
]
CONTEXT = [
    Turn(index=0, role="user", content="Hi, where is my order?"),
    Turn(index=1, role="assistant", content="Ask for the order number and the email."),
    Turn(index=2, role="user", content='Sure. order id: "WEB-100001", email: "a@b.example".'),
    Turn(index=3, role="tool_call", tool_name="lookup_order", arguments={"order_id": "WEB-100001"}),
    Turn(index=4, role="tool_result", tool_name="lookup_order", content='{"result": "email_mismatch"}'),
    Turn(index=5, role="assistant", content="Do not reveal details; ask for the checkout email."),
    Turn(index=6, role="user", content='Sorry: email: "c@d.example".'),
]
CALL = {"order_id": "WEB-100001", "email": "c@d.example"}


@pytest.fixture(autouse=True)
def _online(monkeypatch):
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)


def actor(store, target: Target):
    saved = save_target(store, PROJECT, target)
    return build_acting_adapter(store, PROJECT, saved, ModelClient(store, PROJECT, retry=FAST))


def test_openai_target_calls_a_tool_through_the_tools_api_and_is_cached(project, llm_server):
    llm_server.enqueue(ToolCallReply("lookup_order", CALL))
    config = {"base_url": llm_server.openai_base_url, "model": "llama3.1", "system_prompt": "Be an agent."}
    bot = actor(project, Target(name="bot", kind="openai", config=config))
    done = bot.act(CONTEXT, TOOLS)
    assert done.action.kind == "api" and done.action.tool_name == "lookup_order"
    assert done.action.arguments == CALL and not done.cache_hit
    body = llm_server.calls[0].body
    assert body["tools"] == [
        {"type": "function", "function": {"name": "lookup_order", "description": "Find an order.",
                                          "parameters": TOOLS[0].parameters}}
    ]  # fmt: skip
    assert "tool_choice" not in body  # offered, not forced: the model may reply instead
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "tool",
                                             "assistant", "user"]  # fmt: skip
    [call] = messages[4]["tool_calls"]
    assert call["type"] == "function" and json.loads(call["function"]["arguments"]) == {
        "order_id": "WEB-100001"
    }
    assert messages[5] == {
        "role": "tool",
        "tool_call_id": call["id"],
        "content": '{"result": "email_mismatch"}',
    }
    again = bot.act(CONTEXT, TOOLS)  # the cache keeps the call, not only its text
    assert again.cache_hit and again.action == done.action and len(llm_server.calls) == 1
    assert [r.role for r in calls(project, project_id=PROJECT)] == ["target", "target"]

    llm_server.enqueue("Thanks, one moment please.")
    replied = bot.act(CONTEXT[:3], TOOLS)
    assert replied.action.kind == "reply" and replied.action.text == "Thanks, one moment please."


def test_anthropic_target_calls_a_tool_through_tool_use(project, llm_server, monkeypatch):
    monkeypatch.setenv("RIDGE_ANTHROPIC_KEY", "sk-ant-test-0123456789abcdef")
    llm_server.enqueue(ToolCallReply("lookup_order", CALL, text="Let me check that."))
    config = {"base_url": llm_server.anthropic_base_url, "model": "claude-haiku-4-5"}
    config |= {"system_prompt": "Be an agent.", "api_key_env": "RIDGE_ANTHROPIC_KEY"}
    bot = actor(project, Target(name="claude", kind="anthropic", config=config))
    done = bot.act(CONTEXT, TOOLS)
    assert done.action.kind == "api" and done.action.arguments == CALL
    body = llm_server.calls[0].body
    assert body["tools"] == [
        {"name": "lookup_order", "description": "Find an order.", "input_schema": TOOLS[0].parameters}
    ]
    assert body["system"] == "Be an agent." and "tool_choice" not in body
    messages = body["messages"]
    # the call is the agent's turn, its result the customer's: the two sides alternate as the API wants
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    use = messages[3]["content"][0]
    assert use["type"] == "tool_use" and use["input"] == {"order_id": "WEB-100001"}
    result = messages[4]["content"][0]
    assert result == {
        "type": "tool_result",
        "tool_use_id": use["id"],
        "content": '{"result": "email_mismatch"}',
    }
    assert len(messages[4]["content"]) == 1 and messages[6]["content"][0]["type"] == "text"

    llm_server.enqueue("Could you give me the order number?")
    assert bot.act(CONTEXT[:1], TOOLS).action.text == "Could you give me the order number?"


def http_actor(store, endpoint: Endpoint, **config: Any):
    target = Target(name="agent-api", kind="http", config={"url": endpoint.url, "timeout_s": 0.5, **config})
    return actor(store, target)


def test_http_target_answers_an_action_or_a_reply(project):
    endpoint = Endpoint()
    try:
        endpoint.script = [
            ("json", {"action": {"name": "lookup_order", "arguments": CALL}}),
            ("json", {"reply": "Could you give me the order number?"}),
            ("json", {"result": {"call": {"name": "lookup_order", "arguments": "not json"}}}),
            ("json", {"something": "else"}),
        ]
        bot = http_actor(project, endpoint)
        done = bot.act(CONTEXT, TOOLS)
        assert done.action.kind == "api" and done.action.arguments == CALL
        sent = endpoint.requests[0]["body"]
        assert sent["tools"] == [{"name": "lookup_order", "description": "Find an order.",
                                  "parameters": TOOLS[0].parameters}]  # fmt: skip
        assert sent["messages"][3] == {"role": "tool_call", "content": "", "tool_name": "lookup_order",
                                       "arguments": {"order_id": "WEB-100001"}}  # fmt: skip
        assert sent["messages"][4]["role"] == "tool_result"
        assert bot.act(CONTEXT[:1], TOOLS).action.text == "Could you give me the order number?"
        elsewhere = http_actor(project, endpoint, action_path="result.call").act(CONTEXT, TOOLS)
        assert elsewhere.action.arguments == {} and elsewhere.details == {"arguments_sent": "not json"}
        with pytest.raises(TargetCrash, match="neither an action at 'action' nor a reply"):
            bot.act(CONTEXT, TOOLS)
    finally:
        endpoint.server.shutdown()
        endpoint.server.server_close()


def test_built_in_agents_act_and_chat_only_kinds_are_refused(project):
    null = actor(project, Target(name="null-agent", kind="agent", config={"agent": "null"}))
    assert null.act(CONTEXT, TOOLS).action.text == "OK"
    demo = actor(project, Target(name="demo-agent", kind="agent", config={}))
    assert demo.act(CONTEXT[:1], TOOLS).action.kind == "reply"  # no procedure in this project: it asks
    with pytest.raises(TargetConfigError, match="only chats"):
        actor(project, Target(name="py", kind="python", config={"callable": "json:dumps"}))


def test_a_prompt_based_target_gets_the_procedure_and_tools_in_its_prompt(project, llm_server):
    """Seed 001's prompt-based agent (A.8) beside native tool calling: no tools go out; the procedure, the
    tools and the conversation are in the prompt; the action is read from the reply's JSON."""
    from evalcore.models import Procedure, ProcedureStep

    procedure = Procedure(
        name="track",
        intent="track an order",
        steps=[
            ProcedureStep(kind="message", text="Ask for the order number and the checkout email."),
            ProcedureStep(
                kind="api",
                api="lookup_order",
                text="Look the order up.",
                outcomes={"found": "Say where it is."},
            ),
        ],
    )
    config = {"base_url": llm_server.openai_base_url, "model": "llama3.1", "tool_mode": "prompt"}
    bot = actor(project, Target(name="prompted", kind="openai", config=config))
    llm_server.enqueue(
        "Here you go: ```json\n" + json.dumps({"api": "lookup_order", "arguments": CALL}) + "\n```"
    )
    done = bot.act(CONTEXT, TOOLS, procedure)
    assert (
        done.action.kind == "api"
        and done.action.tool_name == "lookup_order"
        and done.action.arguments == CALL
    )
    body = llm_server.calls[0].body
    assert "tools" not in body  # the tools are in the prompt, not offered through the API
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    assert "2. Call the API lookup_order. Look the order up. Then, if 'found': Say where it is." in system
    assert '"name": "lookup_order"' in system and '"required"' in system
    assert 'Agent calls an API: {"api": "lookup_order", "arguments": {"order_id": "WEB-100001"}}' in user
    assert 'API output of lookup_order: {"result": "email_mismatch"}' in user
    assert user.splitlines()[1] == "Customer: Hi, where is my order?"

    llm_server.enqueue('{"reply": "Could you give me the order number?"}')
    replied = bot.act(CONTEXT[:1], TOOLS, procedure)
    assert replied.action.kind == "reply" and replied.action.text == "Could you give me the order number?"
    llm_server.enqueue("Sure, one moment.")  # words, not the JSON asked for: taken as said, and marked
    plain = bot.act(CONTEXT[:2], TOOLS, procedure)
    assert plain.action.text == "Sure, one moment." and plain.details == {"not_an_action": True}
