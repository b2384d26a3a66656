"""Targets (systems under test) configured per project, kept in the project setting `targets`.

Each kind has its own validated configuration:

- `openai`: any OpenAI-compatible chat endpoint (OpenAI itself, vLLM, Ollama, llama.cpp): `base_url`
  (empty = OpenAI, or $OPENAI_BASE_URL), `model`, `system_prompt`, `api_key_env`;
- `anthropic`: Anthropic's messages API: `model`, `system_prompt`, optional `base_url`, `api_key_env`;
- `http`: a generic JSON endpoint: `url`, `headers` (values may use `${ENV_NAME}`), a `request_template`
  (any JSON with placeholders, see `evalcore.targets.http`) and a `response_path` ("reply.text",
  "choices.0.message.content");
- `python`: a callable `module:function` taking the chat messages (list of {role, content}) and returning
  the reply text;
- `agent`: a built-in offline agent for procedure tests, `agent` demo, oracle or null (the openai,
  anthropic and http kinds act with tools too: `evalcore.targets.acting`);
- `demo`: the built-in offline retrieval bot over the project's documents (`evalcore.targets.demo`);
- targets that report events, for scenario tests: `rasa` (a Rasa assistant's REST channel and tracker,
  `evalcore.targets.rasa`), `http_events` (an `http` target whose response also lists events,
  mapped by `event_types` / `event_fields`, `evalcore.targets.http_events`) and `demo_flows` (the
  built-in flow assistant over the project's procedures, with seeded defects,
  `evalcore.targets.demo_flows`; built in as `demo-flows`).

Secrets are never stored: keys are named by environment variable (`api_key_env`, `${NAME}` in header
values), and a header that carries credentials without a `${NAME}` reference is refused.
"""

from __future__ import annotations

import re
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evalcore.errors import EvalcoreError, NotFoundError
from evalcore.models import Target, TargetKind, now_utc
from evalcore.store import Store

SETTING = "targets"
DEMO_NAME = "demo"
DEMO_FLOWS_NAME = "demo-flows"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_SENSITIVE_HEADER = re.compile(r"(auth|key|token|secret|cookie|password|signature)", re.IGNORECASE)
_KEY_LIKE = re.compile(r"\b(sk-[A-Za-z0-9_-]{12,}|sk-ant-[A-Za-z0-9_-]{12,}|xox[abp]-[A-Za-z0-9-]{10,})")


class TargetConfigError(EvalcoreError):
    """A target's configuration is invalid (unknown field, a secret where an env var name belongs ...)."""


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(default=60.0, gt=0, description="Seconds to wait for one reply.")


class ChatConfig(_Config):
    """An LLM chat endpoint reached through the model layer (cache, retries, accounting apply)."""

    base_url: str | None = Field(default=None, description="API base URL; empty for the provider's own.")
    model: str = Field(description="Model name as the endpoint knows it, e.g. 'gpt-4o-mini'.")
    system_prompt: str = Field(default="", description="System prompt sent before the conversation.")
    api_key_env: str | None = Field(default=None, description="Environment variable holding the API key.")
    temperature: float = Field(default=0.0, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int = Field(default=1024, gt=0, description="Longest reply, in tokens.")
    cache: bool = Field(
        default=True,
        description="Serve identical requests from the response cache (reproducible, free re-runs); "
        "turn off to get fresh replies from a system that changed behind the same model name.",
    )
    tool_mode: Literal["native", "prompt"] = Field(
        default="native",
        description="How a procedure test offers the tools: 'native', the API's own tool calling; or "
        "'prompt', seed 001's uniform prompt (A.8): the test's procedure and the tools written into the "
        "prompt, the action read from the reply's JSON.",
    )

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value and not _ENV_NAME.match(value):
            raise ValueError("must name an environment variable (e.g. OPENAI_API_KEY), never hold the key")
        return value or None


class HTTPConfig(_Config):
    """A generic JSON endpoint."""

    url: str = Field(description="Endpoint URL (http or https).")
    method: str = Field(default="POST", description="HTTP method.")
    headers: dict[str, str] = Field(default_factory=dict, description="Headers; use ${ENV} for secrets.")
    request_template: Any = Field(
        default_factory=lambda: {"messages": "{{messages}}"},
        description="JSON body with placeholders {{messages}}, {{message}}, {{history}}, {{system_prompt}}.",
    )
    response_path: str = Field(default="reply", description="Where the reply text is in the response JSON.")
    action_path: str = Field(
        default="action", description="Where a tool call {name, arguments} is in the response (tests)."
    )
    end_path: str | None = Field(
        default=None,
        description="Where the response JSON says the conversation is over (true ends it), e.g. "
        "'is_finished'; absent or false: it goes on.",
    )
    opening_path: str | None = Field(
        default=None,
        description="Set: the target opens the dialogue (ChatChecker lets it greet first): before the user "
        "speaks it is sent the template with no messages, and its greeting is read at this path; absent: "
        "the user speaks first.",
    )
    system_prompt: str = Field(default="", description="Value of {{system_prompt}} in the template.")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value)

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        return _no_credentials(value)


def _http_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    return value


def _no_credentials(headers: dict[str, str]) -> dict[str, str]:
    for name, text in headers.items():
        if _SENSITIVE_HEADER.search(name) and not ENV_REF.search(text):
            raise ValueError(
                f"header {name!r} carries a credential: put it in an environment variable and write "
                f"its name, e.g. 'Bearer ${{MY_TOKEN}}'"
            )
    return headers


class PythonConfig(_Config):
    """A Python callable `module:function`."""

    callable: str = Field(description="'package.module:function', importable from the working directory.")
    system_prompt: str = Field(default="", description="Sent as the first (system) message.")
    opening: bool = Field(
        default=False,
        description="The target opens the dialogue (ChatChecker lets it greet first): before the user speaks "
        "the function is called with no user or assistant message, and its reply is the first turn.",
    )

    @field_validator("callable")
    @classmethod
    def _callable(cls, value: str) -> str:
        module, sep, name = value.partition(":")
        if not sep or not module or not name.isidentifier():
            raise ValueError("must be written 'module:function', e.g. 'mybot.app:answer'")
        return value


class DemoConfig(_Config):
    """The built-in retrieval bot."""

    min_score: float = Field(default=1.5, ge=0, description="Below this BM25 score it says it cannot answer.")
    sentences: int = Field(
        default=2, ge=1, le=6, description="Sentences of the best passage it answers with."
    )
    end_on_farewell: bool = Field(
        default=True,
        description="Answer a user's leave-taking ('thanks, bye') with a goodbye and end the conversation.",
    )
    greeting: str = Field(
        default="", description="What the bot says before the user speaks; empty: the user speaks first."
    )


class RasaConfig(_Config):
    """A Rasa (or Rasa-compatible) assistant: REST channel and tracker (evalcore.targets.rasa)."""

    url: str = Field(description="Base URL of the assistant's server, e.g. http://localhost:5005.")
    headers: dict[str, str] = Field(default_factory=dict, description="Headers; use ${ENV} for secrets.")
    token_env: str | None = Field(
        default=None, description="Environment variable holding the server's auth token (?token=)."
    )
    domain: list[str] = Field(
        default_factory=list, description="The assistant's domain and flow files or folders (slots, flows)."
    )

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value)

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        return _no_credentials(value)

    @field_validator("token_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value and not _ENV_NAME.match(value):
            raise ValueError("must name an environment variable, never hold the token")
        return value or None


class HTTPEventsConfig(HTTPConfig):
    """A JSON endpoint whose response also lists events (evalcore.targets.http_events)."""

    events_path: str = Field(default="events", description="Where the events list is in the response JSON.")
    events_cumulative: bool = Field(
        default=False, description="True when the list is the whole history (only its new tail is taken)."
    )
    type_field: str = Field(default="event", description="The key of an event that names its kind.")
    event_types: dict[str, str] = Field(
        default_factory=dict, description="Their event name -> our kind (flow_started, slot_set, ...)."
    )
    event_fields: dict[str, str] = Field(
        default_factory=dict, description="Our field (flow_id, name, value, ...) -> their key."
    )


class DemoFlowsConfig(_Config):
    """The built-in flow assistant over the project's procedures (evalcore.targets.demo_flows)."""

    defect_rate: float = Field(
        default=0.03, ge=0, le=1, description="Chance that a defect fires at each opportunity for it."
    )
    inject: list[str] = Field(
        default_factory=list, description="Defect kinds (assertion kinds) that fire at every opportunity."
    )
    seed: int = Field(default=0, description="Seed of the defects.")


class AgentConfig(_Config):
    """A built-in offline agent for procedure tests (evalcore.targets.acting)."""

    agent: Literal["demo", "oracle", "null"] = Field(
        default="demo",
        description="demo: follows the project's procedures with seeded mistakes; oracle: the tests' "
        "expected actions; null: always replies 'OK'.",
    )
    seed: int = Field(default=0, description="Seed of the demo agent's mistakes.")


CONFIGS: dict[TargetKind, type[_Config]] = {
    TargetKind.openai: ChatConfig,
    TargetKind.anthropic: ChatConfig,
    TargetKind.http: HTTPConfig,
    TargetKind.python: PythonConfig,
    TargetKind.demo: DemoConfig,
    TargetKind.agent: AgentConfig,
    TargetKind.rasa: RasaConfig,
    TargetKind.http_events: HTTPEventsConfig,
    TargetKind.demo_flows: DemoFlowsConfig,
}


C = TypeVar("C", bound=_Config)


def config_as(config: _Config, kind: type[C]) -> C:
    """`config` typed as the class its target kind parses to (CONFIGS); a mismatch is a bug, so it raises."""
    if not isinstance(config, kind):
        raise TypeError(f"a {kind.__name__} was expected, not a {type(config).__name__}")
    return config


def parse_config(target: Target) -> _Config:
    """The target's configuration validated for its kind; TargetConfigError lists every problem."""
    try:
        return CONFIGS[target.kind].model_validate(target.config)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(config)'}: {err['msg']}" for err in e.errors()
        )
        raise TargetConfigError(f"target '{target.name}' ({target.kind.value}): {problems}") from None


def _refuse_key_values(target: Target) -> None:
    """Refuse anything that looks like an API key anywhere in the configuration."""
    found = _KEY_LIKE.search(str(target.model_dump(mode="json")))
    if found:
        raise TargetConfigError(
            f"target '{target.name}' contains what looks like an API key ({found.group(0)[:6]}...); "
            "store keys in environment variables and give their names (api_key_env, ${NAME})"
        )


def validate_target(target: Target) -> Target:
    """The target with its configuration normalised (defaults filled in); raises TargetConfigError."""
    if not _NAME.match(target.name):
        raise TargetConfigError(
            f"target name {target.name!r}: use letters, digits, '-', '_' or '.', at most 63 characters"
        )
    _refuse_key_values(target)
    config = parse_config(target)
    model = target.model
    if model is None and isinstance(config, ChatConfig):
        model = f"{target.kind.value}/{config.model}"  # what the judge guard compares with
    return target.model_copy(update={"config": config.model_dump(mode="json"), "model": model})


def demo_target() -> Target:
    """The built-in offline demo target (always available)."""
    return Target(name=DEMO_NAME, kind=TargetKind.demo, model=None, config=DemoConfig().model_dump())


def demo_flows_target() -> Target:
    """The built-in offline flow assistant, which reports events (always available)."""
    config = DemoFlowsConfig().model_dump()
    return Target(name=DEMO_FLOWS_NAME, kind=TargetKind.demo_flows, model=None, config=config)


def list_targets(store: Store, project_id: str) -> list[Target]:
    """The project's targets by name, the built-in demo targets first unless saved ones take their names."""
    saved = store.project(project_id).settings.get(SETTING) or {}
    targets = [Target.model_validate(body) for _, body in sorted(saved.items())]
    built_in = [t for t in (demo_target(), demo_flows_target()) if t.name not in saved]
    return built_in + targets


def get_target(store: Store, project_id: str, name: str) -> Target:
    """One target by name; NotFoundError names the ones that exist."""
    for target in list_targets(store, project_id):
        if target.name == name:
            return target
    known = ", ".join(t.name for t in list_targets(store, project_id))
    raise NotFoundError(f"no target '{name}' in project '{project_id}' (targets: {known})")


def save_target(store: Store, project_id: str, target: Target) -> Target:
    """Validate and store a target (replacing one of the same name); return it as stored."""
    target = validate_target(target)
    saved = dict(store.project(project_id).settings.get(SETTING) or {})
    saved[target.name] = target.model_dump(mode="json")
    store.update_settings(project_id, {SETTING: saved})
    return target


def remove_target(store: Store, project_id: str, name: str) -> None:
    """Delete a saved target (the built-in demo target cannot be removed)."""
    saved = dict(store.project(project_id).settings.get(SETTING) or {})
    if name not in saved:
        raise NotFoundError(f"no saved target '{name}' in project '{project_id}'")
    del saved[name]
    store.update_settings(project_id, {SETTING: saved or None})


def describe(target: Target) -> str:
    """One line for lists: kind, and where it is reached."""
    config = target.config
    where = {
        TargetKind.openai: lambda: f"{config.get('model')} at {config.get('base_url') or 'OpenAI'}",
        TargetKind.anthropic: lambda: f"{config.get('model')} at {config.get('base_url') or 'Anthropic'}",
        TargetKind.http: lambda: f"{config.get('method', 'POST')} {config.get('url')}",
        TargetKind.python: lambda: str(config.get("callable")),
        TargetKind.demo: lambda: "built-in retrieval bot over the project's documents (offline)",
        TargetKind.agent: lambda: f"built-in {config.get('agent')} agent for procedure tests (offline)",
        TargetKind.rasa: lambda: f"Rasa assistant at {config.get('url')}",
        TargetKind.http_events: lambda: f"{config.get('method', 'POST')} {config.get('url')}, with events",
        TargetKind.demo_flows: lambda: "built-in flow assistant over the project's procedures (offline)",
    }[target.kind]()
    if target.kind in (TargetKind.openai, TargetKind.anthropic) and config.get("tool_mode") == "prompt":
        where += ", tools and procedure in the prompt (seed 001, A.8)"
    return f"{target.kind.value}: {where}"


def default_run_name(target: Target) -> str:
    """A run's name when none is given: target, model (or kind) and today's date."""
    kind = target.kind.value.replace("_", " ")  # a name is read, not typed: 'demo flows'
    return f"{target.name} · {target.model or kind} · {now_utc():%Y-%m-%d}"


def run_naming(target: Target, name: str | None = None, notes: str = "") -> dict[str, str]:
    """What a run of `target` records of itself as an experiment (issue 27): the name given, else
    `default_run_name`, and notes (what changed, why it was run). Every kind of run against a target
    records them, so the Runs and Results pages name every run alike."""
    return {"name": (name or "").strip() or default_run_name(target), "notes": (notes or "").strip()}
