"""Reaching a target: one `reply(messages)` per kind, and `build_adapter` to make the right one.

Chat targets (OpenAI-compatible, Anthropic) go through the model layer (`ModelClient.complete`), so the
response cache, retries with backoff, accounting and the run's budget apply to them as to any model call.
The HTTP target retries transient failures with the same policy. Whatever goes wrong with one reply (an
error status, a timeout, a body that is not JSON, a missing field, an empty reply) raises `TargetCrash`:
the run records a crash for that turn and goes on. Only a spent budget (`BudgetExceeded`) stops a run.

A target may say the conversation is over (ChatChecker's chatbot clients return `is_finished`):
`TargetReply.ended`. An HTTP target says it at `end_path` of its response (a true value), a Python
callable by returning {"content": ..., "ended": true}, the demo target when the user takes leave; a
simulated dialogue then ends with `chatbot_ended_chat`. Chat endpoints (OpenAI, Anthropic) never do.

A target may also open the dialogue (ChatChecker lets it greet first): `opening()` gives its greeting
before the user speaks, or None when the user speaks first. An HTTP target opens when its config has an
`opening_path` (the template sent with no messages, the greeting read there), a Python callable when its
config says `opening: true` (called with no user or assistant message), the demo target when it has a
`greeting`. Chat endpoints never do. An opening that fails raises `TargetCrash`, as a reply does.
"""

from __future__ import annotations

import importlib
import json
import os
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.llm.client import ModelClient
from evalcore.llm.providers import ProviderConfig, ProviderKind, make_provider
from evalcore.llm.registry import forced_offline
from evalcore.llm.retry import with_retries
from evalcore.llm.types import ConfigError, Message, ModelCallError, ProviderError
from evalcore.models import Target, TargetKind
from evalcore.models.common import content_hash
from evalcore.store import Store
from evalcore.store.secrets import redact, register
from evalcore.targets.config import (
    ENV_REF,
    ChatConfig,
    HTTPConfig,
    PythonConfig,
    TargetConfigError,
    config_as,
    parse_config,
)


class TargetCrash(EvalcoreError):
    """One reply could not be obtained; `kind` is 'timeout', 'error' or 'garbage'."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        self.message = redact(message)[:500]
        super().__init__(f"{kind}: {self.message}")


@dataclass(frozen=True)
class TargetReply:
    """What the target said, and how it was obtained."""

    text: str
    latency_ms: float
    cache_hit: bool = False
    details: dict[str, Any] | None = None  # e.g. the demo bot's retrieved passage
    ended: bool = False  # the target says the conversation is over (see the module docstring)


class TargetAdapter:
    """The interface of every target: the chat so far in, the next assistant reply out."""

    target: Target

    def reply(self, messages: list[Message]) -> TargetReply:
        """The target's reply to the conversation `messages` (user/assistant turns, oldest first)."""
        raise NotImplementedError

    def opening(self) -> TargetReply | None:
        """The target's greeting before the user speaks; None (the default) when the user speaks first."""
        return None


def _with_system(system_prompt: str, messages: list[Message]) -> list[Message]:
    return [Message("system", system_prompt), *messages] if system_prompt else list(messages)


class ChatTarget(TargetAdapter):
    """An OpenAI-compatible or Anthropic chat endpoint, through the model layer."""

    def __init__(self, target: Target, config: ChatConfig, client: ModelClient) -> None:
        if forced_offline():
            raise TargetConfigError(
                f"EVALCORE_OFFLINE=1 is set, so target '{target.name}' ({target.kind.value}) cannot be "
                "reached; unset it, or run the offline demo target"
            )
        anthropic = target.kind == TargetKind.anthropic
        kind: ProviderKind = (
            "anthropic" if anthropic else ("openai_compatible" if config.base_url else "openai")
        )
        default_key = "ANTHROPIC_API_KEY" if anthropic else (None if config.base_url else "OPENAI_API_KEY")
        # The provider's name carries a hash of where it points, so cached replies of an edited target
        # (another URL under the same name) are never served for the new one.
        where = content_hash([kind, config.base_url, config.api_key_env])[:8]
        provider_config = ProviderConfig(
            f"target-{target.name[:40]}-{where}",
            kind,
            config.base_url,
            config.api_key_env or default_key,
            "none",
            config.timeout_s,
        )
        try:
            provider = make_provider(provider_config)
        except ConfigError as e:
            raise TargetConfigError(f"target '{target.name}': {e}") from None
        if not config.cache:
            provider.cacheable = False  # this instance only
        client.registry.register(provider)
        self.target, self.config, self.client = target, config, client
        self.model = f"{provider.name}/{config.model}"

    def reply(self, messages: list[Message]) -> TargetReply:
        """One completion; model-layer failures become crashes, a spent budget propagates."""
        started = time.perf_counter()
        try:
            done = self.client.complete(
                _with_system(self.config.system_prompt, messages),
                role="target",
                model=self.model,
                temperature=self.config.temperature,
                max_tokens=self.config.max_tokens,
            )
        except ModelCallError as e:
            raise TargetCrash("timeout" if e.status == "timeout" else "error", str(e)) from None
        if not done.text.strip():
            raise TargetCrash("garbage", "the target returned an empty reply")
        return TargetReply(done.text, (time.perf_counter() - started) * 1000, done.cache_hit)


def lookup(data: Any, path: str) -> Any:
    """The value at a dotted path ('choices.0.message.content'; a leading '$.' is allowed)."""
    value = data
    for part in [p for p in path.removeprefix("$").strip(".").split(".") if p]:
        if isinstance(value, list) and part.lstrip("-").isdigit():
            value = value[int(part)]
        elif isinstance(value, dict):
            value = value[part]
        else:
            raise KeyError(part)
    return value


def fill_template(template: Any, values: dict[str, Any]) -> Any:
    """The template with placeholders filled: a string that is just '{{name}}' takes the value itself
    (a list stays a list), placeholders inside longer strings are replaced by text."""
    if isinstance(template, dict):
        return {k: fill_template(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill_template(v, values) for v in template]
    if not isinstance(template, str):
        return template
    stripped = template.strip()
    if stripped.startswith("{{") and stripped.endswith("}}") and stripped[2:-2].strip() in values:
        return values[stripped[2:-2].strip()]
    for name, value in values.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        for form in ("{{" + name + "}}", "{{ " + name + " }}"):
            template = template.replace(form, text)
    return template


class HTTPTarget(TargetAdapter):
    """A generic JSON endpoint: the request built from a template, the reply read at a path."""

    def __init__(self, target: Target, config: HTTPConfig, client: ModelClient) -> None:
        names = {m for value in config.headers.values() for m in ENV_REF.findall(value)}
        register(*names)  # whatever their names, the values these headers carry are credentials
        missing = sorted(n for n in names if not os.environ.get(n))
        if missing:
            raise TargetConfigError(
                f"target '{target.name}' needs the environment variable(s) {', '.join(missing)}"
            )
        self.target, self.config, self.client = target, config, client

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        for name, value in self.config.headers.items():
            headers[name] = ENV_REF.sub(lambda m: os.environ.get(m.group(1), ""), value)
        return headers

    def _call(self, body: bytes) -> Any:
        request = urllib.request.Request(
            self.config.url, data=body, headers=self._headers(), method=self.config.method.upper()
        )
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            code = e.code
            detail = redact(e.read(65536).decode(errors="replace"))[:300]  # cut after: no half a key
            raise ProviderError(f"HTTP {code}", detail, code in (408, 409, 429) or code >= 500) from None
        except TimeoutError:  # socket.timeout is TimeoutError since Python 3.10
            raise ProviderError("timeout", f"no reply within {self.config.timeout_s:g} s", True) from None
        except (urllib.error.URLError, ConnectionError) as e:
            reason = getattr(e, "reason", e)
            if isinstance(reason, TimeoutError):
                raise ProviderError("timeout", f"no reply within {self.config.timeout_s:g} s", True) from None
            raise ProviderError("connection error", str(reason), True) from None
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            text = redact(raw[:65536].decode(errors="replace"))
            raise ProviderError("malformed response", f"not JSON: {text[:80]!r}", True) from None

    def reply(self, messages: list[Message]) -> TargetReply:
        """POST the filled template; the reply text is at `response_path`."""
        as_dicts = [{"role": m.role, "content": m.content} for m in messages]
        last_user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        return self._ask(as_dicts, last_user, self.config.response_path)

    def opening(self) -> TargetReply | None:
        """With an `opening_path`: POST the template with no messages; the greeting is at that path."""
        if not self.config.opening_path:
            return None
        return self._ask([], "", self.config.opening_path)

    def _ask(self, as_dicts: list[dict[str, str]], message: str, path: str) -> TargetReply:
        """POST the template filled with the conversation; the text at `path` of the response."""
        values = {
            "messages": as_dicts,
            "message": message,
            "history": as_dicts[:-1],
            "system_prompt": self.config.system_prompt,
        }
        body = json.dumps(fill_template(self.config.request_template, values)).encode()
        started = time.perf_counter()
        try:
            data, _ = with_retries(lambda: self._call(body), self.client.retry, self.target.name, "http")
        except ModelCallError as e:
            kind = {"timeout": "timeout", "malformed response": "garbage"}.get(e.status, "error")
            raise TargetCrash(kind, str(e)) from None
        try:
            text = lookup(data, path)
        except (KeyError, IndexError, TypeError):
            raise TargetCrash(
                "garbage", f"no '{path}' in the response: {redact(json.dumps(data))[:200]}"
            ) from None
        if not isinstance(text, str) or not text.strip():
            raise TargetCrash("garbage", f"'{path}' is not a non-empty text: {text!r}")
        return TargetReply(text, (time.perf_counter() - started) * 1000, ended=self._ended(data))

    def _ended(self, data: Any) -> bool:
        """Whether the response says the conversation is over: a true value at `end_path` (absent: no)."""
        if not self.config.end_path:
            return False
        try:
            return lookup(data, self.config.end_path) is True
        except (KeyError, IndexError, TypeError):
            return False


class PythonTarget(TargetAdapter):
    """A Python function `fn(messages) -> str` (messages: list of {'role', 'content'} dicts); it may return
    {'content': str, 'ended': bool} instead, to say the conversation is over. With `opening: true` it is
    first called with no user or assistant message for the target's greeting."""

    def __init__(self, target: Target, config: PythonConfig) -> None:
        module_name, _, name = config.callable.partition(":")
        try:
            self.fn = getattr(importlib.import_module(module_name), name)
        except (ImportError, AttributeError) as e:
            raise TargetConfigError(f"target '{target.name}': cannot load {config.callable}: {e}") from None
        self.target, self.config = target, config

    def reply(self, messages: list[Message]) -> TargetReply:
        """The function's reply to the conversation."""
        return self._ask(messages)

    def opening(self) -> TargetReply | None:
        """With `opening: true`: the function's reply to a conversation with no turns yet."""
        return self._ask([]) if self.config.opening else None

    def _ask(self, messages: list[Message]) -> TargetReply:
        """Call the function in a helper thread, so a hung function is a timeout rather than a hung run."""
        payload = [
            {"role": m.role, "content": m.content} for m in _with_system(self.config.system_prompt, messages)
        ]
        outcome: dict[str, Any] = {}

        def call() -> None:
            try:
                outcome["value"] = self.fn(payload)
            except Exception as e:  # the system under test failing is data, not a bug of ours
                outcome["error"] = f"{type(e).__name__}: {e}"

        started = time.perf_counter()
        worker = threading.Thread(target=call, daemon=True, name=f"target-{self.target.name}")
        worker.start()
        worker.join(self.config.timeout_s)
        latency = (time.perf_counter() - started) * 1000
        if worker.is_alive():
            raise TargetCrash(
                "timeout", f"{self.config.callable} did not return within {self.config.timeout_s:g} s"
            )
        if "error" in outcome:
            raise TargetCrash("error", outcome["error"])
        value = outcome.get("value")
        ended = False
        if isinstance(value, dict):
            ended = value.get("ended") is True
            value = value.get("content", value.get("reply"))
        if not isinstance(value, str) or not value.strip():
            raise TargetCrash(
                "garbage", f"{self.config.callable} returned {type(value).__name__}, not a text"
            )
        return TargetReply(value, latency, ended=ended)


def build_adapter(store: Store, project_id: str, target: Target, client: ModelClient) -> TargetAdapter:
    """The adapter for `target`; raises TargetConfigError when it cannot be reached as configured."""
    config = parse_config(target)
    if target.kind in (TargetKind.openai, TargetKind.anthropic):
        return ChatTarget(target, config_as(config, ChatConfig), client)
    if target.kind == TargetKind.http:
        return HTTPTarget(target, config_as(config, HTTPConfig), client)
    if target.kind == TargetKind.python:
        return PythonTarget(target, config_as(config, PythonConfig))
    if target.kind in (TargetKind.rasa, TargetKind.http_events, TargetKind.demo_flows):
        return _event_target(store, project_id, target, config, client)
    from evalcore.targets.demo import DemoTarget

    # Not config_as(config, DemoConfig): an agent target's AgentConfig reaches this line too (agents act,
    # they do not chat), and a check here would change what building one does today.
    return DemoTarget(target, config, store.documents(project_id))  # type: ignore[arg-type]


def _event_target(
    store: Store, project_id: str, target: Target, config: Any, client: ModelClient
) -> TargetAdapter:
    """The targets that report events (each in its own module, imported when used)."""
    if target.kind == TargetKind.rasa:
        from evalcore.targets.rasa import RasaTarget

        return RasaTarget(target, config, client)
    if target.kind == TargetKind.http_events:
        from evalcore.targets.http_events import HTTPEventsTarget

        return HTTPEventsTarget(target, config, client)
    from evalcore.targets.demo_flows import DemoFlowsTarget

    inputs = (store.procedures(project_id), store.tools(project_id), store.documents(project_id))
    return DemoFlowsTarget(target, config, *inputs)
