"""Targets that act: a procedure test's context and the tool schemas in, the next action out (seed 001,
Section 4.3; issue 17, item 8). The action is a reply, or a call of one tool with arguments.

- `openai` / `anthropic` targets act through the model layer (`ModelClient.complete(..., tools=...)`):
  the tools go out in the API's own shape (OpenAI's tools API, Anthropic's tool use), the context's tool
  turns as the API's own call and result messages; cache, retries, accounting and the run's budget apply.
  With `tool_mode: prompt` they act as seed 001's prompt-based agent (Section 4.3, A.8) instead: one
  uniform prompt (evalcore/prompts/targets/act_with_procedure.md) holds the test's procedure, the tools
  and the conversation as text, no tools go out, and the action is read from the reply's JSON
  (`{"reply": ...}` or `{"api": ..., "arguments": {...}}`; a reply that is no such JSON is taken as said).
- `http` targets get one POST per test. The request is the target's `request_template` filled as for
  chat, where `{{messages}}` now holds every turn, `{"role", "content"}` plus `"tool_name"` and
  `"arguments"` for tool turns (roles user, assistant, tool_call, tool_result), and `{{tools}}` the tool
  schemas `[{"name", "description", "parameters"}]` (added as `"tools"` when the template, an object, does
  not place them). The response is JSON holding either an action at `action_path` (default `action`),
  `{"name": "lookup_order", "arguments": {"order_id": "WEB-1"}}`, or a reply text at `response_path`
  (default `reply`). Anything else is a crash of that test.
- `agent` targets are the built-in offline agents (registered in targets/agents.py by
  generators/procedure/agents.py): `demo` follows the
  project's procedures with seeded mistakes, `oracle` answers with the project's procedure tests' expected
  actions, `null` always replies "OK".

Other kinds (a python callable, the retrieval demo) only chat: `build_acting_adapter` says so.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.llm.client import ModelClient
from evalcore.llm.parsing import load_json
from evalcore.llm.retry import with_retries
from evalcore.llm.tasks import PROMPTS_DIR, PromptTemplate
from evalcore.llm.types import Message, ModelCallError
from evalcore.models import Procedure, Target, TargetKind, Tool, Turn, TurnRole
from evalcore.models.items import Action
from evalcore.store import Store
from evalcore.store.secrets import redact
from evalcore.targets.adapters import (
    ChatTarget,
    HTTPTarget,
    TargetCrash,
    fill_template,
    lookup,
)
from evalcore.targets.agents import Agent, AgentSetting, build_agent
from evalcore.targets.config import (
    AgentConfig,
    ChatConfig,
    HTTPConfig,
    TargetConfigError,
    config_as,
    parse_config,
)

ACTING_KINDS = (TargetKind.openai, TargetKind.anthropic, TargetKind.http, TargetKind.agent)


@dataclass(frozen=True)
class TargetAction:
    """What the target did next, and how it was obtained."""

    action: Action
    latency_ms: float
    cache_hit: bool = False
    details: dict[str, Any] | None = None  # e.g. a call's arguments as sent when they were not JSON


class ActingAdapter:
    """The interface of every acting target: the context and the tools in, the next action out."""

    target: Target

    def act(
        self, context: Sequence[Turn], tools: Sequence[Tool], procedure: Procedure | None = None
    ) -> TargetAction:
        """The target's next action after `context`, offered `tools`; `procedure` is the one the test was
        written from (only the prompt-based mode shows it to the model)."""
        raise NotImplementedError


def tool_schema(tool: Tool) -> dict[str, Any]:
    """A tool as offered to a model: name, description and the JSON schema of its parameters."""
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


def context_messages(context: Sequence[Turn]) -> list[Message]:
    """The context as model-layer messages: tool calls as JSON {"name", "arguments"}, results as they are."""
    messages = []
    for turn in context:
        if turn.role == TurnRole.tool_call:
            call = {"name": turn.tool_name, "arguments": turn.arguments or {}}
            messages.append(Message("tool_call", json.dumps(call, ensure_ascii=False)))
        else:
            # A TurnRole's value is one of Message's roles; the checker cannot see an enum's values as one.
            messages.append(Message(turn.role.value, turn.content))  # type: ignore[arg-type]
    return messages


def action_of(call: dict[str, Any] | None, text: str) -> tuple[Action, dict[str, Any] | None]:
    """A tool call (arguments a JSON object, else kept as sent in the details) or a reply as an Action."""
    if call is None:
        return Action(kind="reply", text=text), None
    arguments = call.get("arguments")
    if isinstance(arguments, str):  # a model's arguments that were not JSON: an empty call, as sent kept
        with contextlib.suppress(json.JSONDecodeError):
            arguments = json.loads(arguments)
    details = None if isinstance(arguments, dict) else {"arguments_sent": arguments}
    arguments = arguments if isinstance(arguments, dict) else {}
    return Action(kind="api", tool_name=str(call.get("name") or ""), arguments=arguments, text=text), details


class ChatActor(ChatTarget, ActingAdapter):
    """An OpenAI-compatible or Anthropic model offered the tools through the model layer: natively, or in
    the prompt with the procedure (`tool_mode`, module docstring)."""

    def act(
        self, context: Sequence[Turn], tools: Sequence[Tool], procedure: Procedure | None = None
    ) -> TargetAction:
        """One completion; model-layer failures become crashes, a spent budget propagates."""
        started = time.perf_counter()
        prompted = self.config.tool_mode == "prompt"
        if prompted:
            messages = list(procedure_prompt(context, tools, procedure, self.config.system_prompt))
        else:
            messages = context_messages(context)
            if self.config.system_prompt:
                messages.insert(0, Message("system", self.config.system_prompt))
        try:
            done = self.client.complete(
                messages,
                role="target",
                model=self.model,
                temperature=self.config.temperature,
                max_tokens=self.config.max_tokens,
                tools=None if prompted else [tool_schema(t) for t in tools],
            )
        except ModelCallError as e:
            raise TargetCrash("timeout" if e.status == "timeout" else "error", str(e)) from None
        call = None if prompted else done.response.tool_call
        if call is None and not done.text.strip():
            raise TargetCrash("garbage", "the target returned neither a reply nor a tool call")
        action, details = action_from_text(done.text) if prompted else action_of(call, done.text)
        return TargetAction(action, (time.perf_counter() - started) * 1000, done.cache_hit, details)


PROCEDURE_PROMPT = PromptTemplate.load(PROMPTS_DIR / "targets" / "act_with_procedure.md")
_SPEAKERS = {TurnRole.user: "Customer", TurnRole.assistant: "Agent"}


def procedure_text(procedure: Procedure | None) -> str:
    """A procedure as numbered steps, an API step with the API it calls and what to do on each outcome."""
    if procedure is None:
        return "(no procedure was given: help the customer with the tools below)"
    lines = []
    for k, step in enumerate(procedure.steps, 1):
        text = step.text.strip()
        if step.kind == "api":
            outcomes = "; ".join(f"if '{name}': {what}" for name, what in step.outcomes.items())
            text = f"Call the API {step.api}. {text}" + (f" Then, {outcomes}" if outcomes else "")
        lines.append(f"{k}. {text}")
    return f"{procedure.description or procedure.intent}\n" + "\n".join(lines)


def transcript(context: Sequence[Turn]) -> str:
    """The conversation as text: who said what, each API call with its arguments and each API output."""
    lines = []
    for turn in context:
        if turn.role == TurnRole.tool_call:
            call = json.dumps({"api": turn.tool_name, "arguments": turn.arguments or {}}, ensure_ascii=False)
            lines.append(f"Agent calls an API: {call}")
        elif turn.role == TurnRole.tool_result:
            lines.append(f"API output of {turn.tool_name}: {turn.content}")
        else:
            lines.append(f"{_SPEAKERS.get(turn.role, turn.role.value)}: {turn.content}")
    return "\n".join(lines)


def procedure_prompt(
    context: Sequence[Turn], tools: Sequence[Tool], procedure: Procedure | None, system_prompt: str = ""
) -> tuple[Message, ...]:
    """Seed 001's uniform prompt (A.8): the procedure, the tools and the conversation in the text."""
    apis = [tool_schema(t) for t in tools if procedure is None or t.name in procedure.apis] or [
        tool_schema(t) for t in tools
    ]
    return PROCEDURE_PROMPT.render(
        {
            "system_prompt": system_prompt,
            "procedure": procedure_text(procedure),
            "apis": apis,
            "conversation": transcript(context),
        }
    )


def action_from_text(text: str) -> tuple[Action, dict[str, Any] | None]:
    """The action a prompt-based agent wrote: `{"api", "arguments"}` (or `{"name", ...}`) is a call,
    `{"reply"}` a reply; a reply that is no such JSON is taken as what the agent said."""
    try:
        data, _ = load_json(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("api") or data.get("name"), str):
        return action_of(
            {"name": data.get("api") or data.get("name"), "arguments": data.get("arguments")}, ""
        )
    if isinstance(data, dict) and isinstance(data.get("reply"), str) and data["reply"].strip():
        return Action(kind="reply", text=data["reply"]), None
    return Action(kind="reply", text=text.strip()), {"not_an_action": True}


class HTTPActor(HTTPTarget, ActingAdapter):
    """A JSON endpoint answering a reply or an action (module docstring)."""

    def act(
        self, context: Sequence[Turn], tools: Sequence[Tool], procedure: Procedure | None = None
    ) -> TargetAction:
        """POST the filled template; an action at `action_path`, else a reply at `response_path`."""
        turns = [
            {"role": t.role.value, "content": t.content}
            | ({"tool_name": t.tool_name} if t.tool_name else {})
            | ({"arguments": t.arguments or {}} if t.role == TurnRole.tool_call else {})
            for t in context
        ]
        last_user = next((t.content for t in reversed(context) if t.role == TurnRole.user), "")
        schemas = [tool_schema(t) for t in tools]
        values = {
            "messages": turns,
            "message": last_user,
            "history": turns[:-1],
            "tools": schemas,
            "system_prompt": self.config.system_prompt,
        }
        body = fill_template(self.config.request_template, values)
        if isinstance(body, dict) and "{{tools}}" not in json.dumps(self.config.request_template):
            body.setdefault("tools", schemas)
        started = time.perf_counter()
        encoded = json.dumps(body).encode()
        try:
            data, _ = with_retries(lambda: self._call(encoded), self.client.retry, self.target.name, "http")
        except ModelCallError as e:
            kind = {"timeout": "timeout", "malformed response": "garbage"}.get(e.status, "error")
            raise TargetCrash(kind, str(e)) from None
        latency = (time.perf_counter() - started) * 1000
        call = _at(data, self.config.action_path)
        if call is not None:
            if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
                raise TargetCrash(
                    "garbage",
                    f"'{self.config.action_path}' is not {{name, arguments}}: {redact(str(call))[:200]}",
                )
            action, details = action_of(call, "")
            return TargetAction(action, latency, details=details)
        text = _at(data, self.config.response_path)
        if not isinstance(text, str) or not text.strip():
            raise TargetCrash(
                "garbage",
                f"neither an action at '{self.config.action_path}' nor a reply at "
                f"'{self.config.response_path}': {redact(json.dumps(data))[:200]}",
            )
        return TargetAction(Action(kind="reply", text=text), latency)


def _at(data: Any, path: str) -> Any:
    """The value at a path of the response, None when it is not there."""
    try:
        return lookup(data, path)
    except (KeyError, IndexError, TypeError):
        return None


class AgentActor(ActingAdapter):
    """A built-in offline agent (module docstring)."""

    def __init__(self, target: Target, agent: Agent) -> None:
        self.target, self.agent = target, agent

    def act(
        self, context: Sequence[Turn], tools: Sequence[Tool], procedure: Procedure | None = None
    ) -> TargetAction:
        """The agent's action (the built-in agents find their procedure themselves)."""
        started = time.perf_counter()
        action = self.agent.act(context, tools)
        return TargetAction(action, (time.perf_counter() - started) * 1000)


def build_acting_adapter(store: Store, project_id: str, target: Target, client: ModelClient) -> ActingAdapter:
    """The acting adapter for `target`; TargetConfigError when the kind cannot act or cannot be reached."""
    config = parse_config(target)
    if target.kind in (TargetKind.openai, TargetKind.anthropic):
        return ChatActor(target, config_as(config, ChatConfig), client)
    if target.kind == TargetKind.http:
        return HTTPActor(target, config_as(config, HTTPConfig), client)
    if target.kind == TargetKind.agent:
        agent = config_as(config, AgentConfig)
        return AgentActor(target, build_agent(agent.agent, AgentSetting(store, project_id, agent.seed)))
    raise TargetConfigError(
        f"target '{target.name}' ({target.kind.value}) only chats: procedure tests need a target that can "
        f"call tools ({', '.join(k.value for k in ACTING_KINDS)})"
    )
