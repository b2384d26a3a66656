"""Providers: one small interface, implemented for OpenAI (and compatible servers) and Anthropic here,
and for the offline provider and the local embedding model in local.py.

A provider turns a `Request` into a `Response` (and texts into vectors) and translates its SDK's errors
into `ProviderError`. It does not retry, cache or count: the client does that for every provider alike,
so the SDKs are built with `max_retries=0`. SDKs are imported lazily, with a clear error when missing.
"""

from __future__ import annotations

import email.utils
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from evalcore.llm.types import ConfigError, Message, ProviderError, Request, Response
from evalcore.store.secrets import register

Structured = Literal["json_schema", "tools", "json_object", "none"]


ProviderKind = Literal["openai", "openai_compatible", "anthropic", "local", "offline", "wordllama"]


@dataclass(frozen=True)
class ProviderConfig:
    """How to reach one provider. Keys are named by environment variable, never stored."""

    name: str
    kind: ProviderKind
    base_url: str | None = None
    api_key_env: str | None = None
    structured: Structured = "json_schema"
    timeout_s: float = 60.0

    @property
    def key_present(self) -> bool:
        """True when the key's environment variable is set (or no key is needed)."""
        return not self.api_key_env or bool(os.environ.get(self.api_key_env))


class Provider:
    """The interface every provider implements."""

    config: ProviderConfig
    cacheable = True  # offline and local providers are cheaper to recompute than to look up
    priced = True

    @property
    def name(self) -> str:
        """Provider name as used in 'provider/model'."""
        return self.config.name

    @property
    def cache_tag(self) -> str:
        """Goes into cache keys: what about the provider changes its output."""
        return f"{self.config.name}:{self.config.structured}"

    def generate(self, model: str, request: Request) -> Response:
        """One completion."""
        raise NotImplementedError

    def embed(self, model: str, texts: list[str]) -> tuple[np.ndarray, int]:
        """Vectors (one row per text) and the tokens used."""
        raise ConfigError(f"provider '{self.name}' does not serve embeddings")


def _api_key(config: ProviderConfig, required: bool) -> str:
    register(config.api_key_env)  # its value is kept out of the store and the logs, whatever its name
    key = os.environ.get(config.api_key_env or "", "")
    if not key and required:
        raise ConfigError(
            f"provider '{config.name}' needs an API key: set the environment variable {config.api_key_env}"
        )
    return key or "not-needed"  # OpenAI-compatible local servers accept any key


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    if ms := headers.get("retry-after-ms"):
        return float(ms) / 1000
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:  # an HTTP date
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())


def _translate(error: Exception, sdk: Any) -> ProviderError:
    """An SDK exception as a ProviderError; transient ones (429, 5xx, timeouts) are retryable."""
    if isinstance(error, sdk.APITimeoutError):
        return ProviderError("timeout", "the request timed out", retryable=True)
    if isinstance(error, sdk.APIConnectionError):
        return ProviderError("connection error", str(error), retryable=True)
    if isinstance(error, sdk.APIStatusError):
        code = error.status_code
        retryable = code in (408, 409, 429) or code >= 500
        return ProviderError(f"HTTP {code}", error.message, retryable, _retry_after(error.response.headers))
    if isinstance(error, ValueError):  # a body that is not JSON (proxies, overloaded servers)
        return ProviderError("malformed response", str(error), retryable=True)
    # e.g. a response the SDK could not read
    return ProviderError(type(error).__name__, str(error), retryable=False)


_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")
TOOL_ROLES = ("tool_call", "tool_result")


def _call_of(content: str) -> tuple[str, Any]:
    """Name and arguments of a `tool_call` message (content: JSON {"name", "arguments"})."""
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        return "", {}
    return str(data.get("name") or ""), data.get("arguments") or {}


def _arguments(text: str) -> Any:
    """A call's arguments: the JSON object, else the raw text (a model's mistake, scored as such)."""
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return text
    return value if isinstance(value, dict) else text


def openai_messages(messages: tuple[Message, ...] | list[Message]) -> list[dict[str, Any]]:
    """Messages in OpenAI's chat shape: a tool call is an assistant message with `tool_calls`, its result
    a `tool` message naming the call's id (ids numbered in order, results matched to calls in order)."""
    out: list[dict[str, Any]] = []
    waiting: list[str] = []
    for m in messages:
        if m.role == "tool_call":
            name, arguments = _call_of(m.content)
            call_id = f"call_{sum(len(o.get('tool_calls') or ()) for o in out) + 1}"
            waiting.append(call_id)
            function = {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}
            out.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function", "function": function}
            ]})  # fmt: skip
        elif m.role == "tool_result":
            out.append({"role": "tool", "tool_call_id": waiting.pop(0) if waiting else "call_0",
                        "content": m.content})  # fmt: skip
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages in Anthropic's shape. Without tool turns, text contents as they were; with them, content
    blocks: a call is a `tool_use` block of the assistant, its result a `tool_result` block of the user,
    and consecutive blocks of one side share a message (the API wants the two sides to alternate)."""
    if not any(m.role in TOOL_ROLES for m in messages):
        return [{"role": m.role, "content": m.content} for m in messages]
    out: list[dict[str, Any]] = []
    waiting: list[str] = []
    calls = 0

    def add(role: str, block: dict[str, Any]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].append(block)
        else:
            out.append({"role": role, "content": [block]})

    for m in messages:
        if m.role == "tool_call":
            name, arguments = _call_of(m.content)
            calls += 1
            waiting.append(f"toolu_{calls}")
            add("assistant", {"type": "tool_use", "id": waiting[-1], "name": name, "input": arguments})
        elif m.role == "tool_result":
            block = {"type": "tool_result", "tool_use_id": waiting.pop(0) if waiting else "toolu_0"}
            add("user", {**block, "content": m.content})
        elif m.content.strip():  # the API refuses empty text blocks
            add(m.role, {"type": "text", "text": m.content})
    return out


class OpenAIProvider(Provider):
    """OpenAI's chat completions and embeddings, or any server that speaks them (vLLM, Ollama, llama.cpp)."""

    def __init__(self, config: ProviderConfig) -> None:
        try:
            import openai
        except ImportError as e:  # pragma: no cover - openai is a dependency
            raise ConfigError("the 'openai' package is not installed: pip install openai") from e
        self._sdk = openai
        self.config = config
        key = _api_key(config, required=config.kind == "openai")
        self._client = openai.OpenAI(
            api_key=key, base_url=config.base_url, max_retries=0, timeout=config.timeout_s
        )

    def generate(self, model: str, request: Request) -> Response:
        """Chat completion; schema-constrained via response_format or a forced tool call."""
        args: dict[str, Any] = {
            "model": model,
            "messages": openai_messages(request.messages),
        }
        if request.tools:
            args["tools"] = [{"type": "function", "function": tool} for tool in request.tools]
        if self.config.kind == "openai":
            # OpenAI's current models take max_completion_tokens; reasoning models refuse a temperature.
            args["max_completion_tokens"] = request.max_tokens
            if not model.startswith(_REASONING_PREFIXES) and request.temperature is not None:
                args["temperature"] = request.temperature
        else:  # compatible servers (vLLM, Ollama, llama.cpp) all know max_tokens
            args["max_tokens"] = request.max_tokens
            if request.temperature is not None:  # None: the model's profile says it takes none
                args["temperature"] = request.temperature
        if request.seed is not None:
            args["seed"] = request.seed
        mode = (request.structured or self.config.structured) if request.schema is not None else "none"
        name = (request.schema_name or "output")[:64]
        if mode == "json_schema":
            spec = {"name": name, "schema": request.schema, "strict": False}
            args["response_format"] = {"type": "json_schema", "json_schema": spec}
        elif mode == "json_object":
            args["response_format"] = {"type": "json_object"}
        elif mode == "tools":
            function = {"name": name, "description": "Return the result.", "parameters": request.schema}
            args["tools"] = [{"type": "function", "function": function}]
            args["tool_choice"] = {"type": "function", "function": {"name": name}}
        try:
            reply = self._client.chat.completions.create(**args)
        except (self._sdk.APIError, ValueError) as e:  # anything else is a bug: let it surface
            raise _translate(e, self._sdk) from None
        choice = reply.choices[0]
        text, call = choice.message.content or "", None
        if choice.message.tool_calls:
            function = choice.message.tool_calls[0].function
            if request.tools and request.schema is None:  # the model chose to act
                call = {"name": function.name, "arguments": _arguments(function.arguments)}
            else:  # structured output through a forced call
                text = function.arguments
        usage = reply.usage
        return Response(
            text,
            usage.prompt_tokens if usage else 0,
            usage.completion_tokens if usage else 0,
            choice.finish_reason,
            call,
        )

    def embed(self, model: str, texts: list[str]) -> tuple[np.ndarray, int]:
        """OpenAI embeddings."""
        try:
            reply = self._client.embeddings.create(model=model, input=texts)
        except (self._sdk.APIError, ValueError) as e:  # anything else is a bug: let it surface
            raise _translate(e, self._sdk) from None
        rows = sorted(reply.data, key=lambda d: d.index)
        tokens = reply.usage.prompt_tokens if reply.usage else 0
        return np.asarray([r.embedding for r in rows], dtype=np.float32), tokens


class AnthropicProvider(Provider):
    """Anthropic's messages API; structured output through a forced tool call."""

    def __init__(self, config: ProviderConfig) -> None:
        try:
            import anthropic
        except ImportError as e:  # pragma: no cover - anthropic is a dependency
            raise ConfigError("the 'anthropic' package is not installed: pip install anthropic") from e
        self._sdk = anthropic
        self.config = config
        self._client = anthropic.Anthropic(
            api_key=_api_key(config, required=True),
            base_url=config.base_url,
            max_retries=0,
            timeout=config.timeout_s,
        )

    @property
    def cache_tag(self) -> str:
        """Anthropic always uses tools for structured output."""
        return self.config.name

    def generate(self, model: str, request: Request) -> Response:
        """One message; with a schema, the model must call a tool whose input is the output."""
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        args: dict[str, Any] = {
            "model": model,
            "max_tokens": request.max_tokens,
            # No temperature: this SDK generation no longer takes it (newer models fix their own sampling).
            "messages": anthropic_messages([m for m in request.messages if m.role != "system"]),
        }
        if system:
            args["system"] = system
        if request.tools:
            args["tools"] = [
                {"name": t["name"], "description": t.get("description", ""), "input_schema": t["parameters"]}
                for t in request.tools
            ]
        if request.schema is not None:
            name = (request.schema_name or "output")[:64]
            args["tools"] = [
                {"name": name, "description": "Return the result.", "input_schema": request.schema}
            ]
            args["tool_choice"] = {"type": "tool", "name": name}
        try:
            reply = self._client.messages.create(**args)
        except (self._sdk.APIError, ValueError) as e:  # anything else is a bug: let it surface
            raise _translate(e, self._sdk) from None
        text, call = "", None
        acting = bool(request.tools) and request.schema is None
        for block in reply.content:
            if block.type == "tool_use" and acting:
                call = call or {"name": block.name, "arguments": block.input}
            elif block.type == "tool_use":
                text = json.dumps(block.input)
                break
            elif block.type == "text":
                text += block.text
        usage = reply.usage
        return Response(text, usage.input_tokens, usage.output_tokens, reply.stop_reason, call)


def kinds() -> dict[str, type[Provider]]:
    """Provider classes by kind."""
    from evalcore.llm.local import LocalProvider, OfflineProvider, WordLlamaProvider

    return {
        "openai": OpenAIProvider,
        "openai_compatible": OpenAIProvider,
        "anthropic": AnthropicProvider,
        "local": LocalProvider,
        "offline": OfflineProvider,
        "wordllama": WordLlamaProvider,
    }


def make_provider(config: ProviderConfig) -> Provider:
    """A provider instance for a configuration."""
    known = kinds()
    if config.kind not in known:
        raise ConfigError(
            f"provider '{config.name}' has unknown kind '{config.kind}' (known: {sorted(known)})"
        )
    return known[config.kind](config)
