"""Which provider serves a name, and which model plays each role, from the environment and project settings.

Models are named "provider/model", e.g. "openai/gpt-4o-mini", "anthropic/claude-sonnet-4-6",
"compat/llama3.1" (any OpenAI-compatible server), "offline/heuristic".

Built-in providers, configured by environment variables (keys are read from the environment only):
  openai     OPENAI_API_KEY, optional OPENAI_BASE_URL
  anthropic  ANTHROPIC_API_KEY, optional ANTHROPIC_BASE_URL
  compat     EVALCORE_COMPAT_BASE_URL (e.g. http://localhost:11434/v1), optional EVALCORE_COMPAT_API_KEY
  (all three: request timeout EVALCORE_LLM_TIMEOUT seconds, default 60)
  local      llama.cpp's server started by `evalcore models serve-local` (evalcore/llm/serve_local.py):
             EVALCORE_LOCAL_BASE_URL, default http://127.0.0.1:8765/v1; no key, nothing priced
  offline    always available; no key, no network
  wordllama  local static embedding model shipped in the wordllama wheel
More providers, or overrides, come from the project setting `providers`:
  {"vllm": {"kind": "openai_compatible", "base_url": "http://gpu:8000/v1", "api_key_env": "VLLM_KEY",
            "structured": "json_schema" | "tools" | "json_object" | "none", "timeout_s": 60}}

Roles (`generator`, `judge`, `simulator`, `target`, plus `embedding`) pick a model, first match wins:
  1. EVALCORE_OFFLINE=1 forces every role to the offline provider (CI, demos);
  2. an explicit model passed by the caller;
  3. the project setting `models`, e.g. {"judge": "anthropic/claude-sonnet-4-6"};
  4. the environment: EVALCORE_GENERATOR_MODEL, EVALCORE_JUDGE_MODEL, EVALCORE_SIMULATOR_MODEL,
     EVALCORE_TARGET_MODEL, EVALCORE_EMBEDDING_MODEL;
  5. the default: offline (and the local wordllama model for embeddings, when it loads).
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import Any

from evalcore.llm.providers import Provider, ProviderConfig, make_provider
from evalcore.llm.types import ROLES, ConfigError

OFFLINE_MODEL = "offline/heuristic"
OFFLINE_EMBEDDING = "offline/hash-256"
LOCAL_EMBEDDING = "wordllama/l2_supercat_256"
EMBEDDING_ROLE = "embedding"
OFFLINE_ENV = "EVALCORE_OFFLINE"
LOCAL_URL_ENV = "EVALCORE_LOCAL_BASE_URL"
LOCAL_URL = "http://127.0.0.1:8765/v1"
# A small model on a CPU writes 4-9 tokens/s: a capped reply can take minutes, and a timeout is retried.
LOCAL_TIMEOUT = 600.0
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BUILTIN_KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def role_env(role: str) -> str:
    """The environment variable that names the model for a role."""
    return f"EVALCORE_{role.upper()}_MODEL"


def forced_offline() -> bool:
    """True when EVALCORE_OFFLINE asks for no model calls at all."""
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in ("1", "true", "yes")


def split_model(name: str) -> tuple[str, str]:
    """'provider/model' -> (provider, model); the model part may itself contain slashes."""
    provider, sep, model = name.partition("/")
    if not sep or not provider or not model:
        raise ConfigError(f"model '{name}' must be written 'provider/model', e.g. 'openai/gpt-4o-mini'")
    return provider, model


def builtin_providers() -> dict[str, ProviderConfig]:
    """The providers configured by the environment alone."""
    env = os.environ
    timeout = float(env.get("EVALCORE_LLM_TIMEOUT") or 60.0)
    configs = {
        "openai": ProviderConfig(
            "openai", "openai", env.get("OPENAI_BASE_URL"), "OPENAI_API_KEY", timeout_s=timeout
        ),
        "anthropic": ProviderConfig(
            "anthropic", "anthropic", env.get("ANTHROPIC_BASE_URL"), "ANTHROPIC_API_KEY", "tools", timeout
        ),
        "local": ProviderConfig(
            "local", "local", env.get(LOCAL_URL_ENV) or LOCAL_URL, timeout_s=LOCAL_TIMEOUT
        ),
        "offline": ProviderConfig("offline", "offline"),
        "wordllama": ProviderConfig("wordllama", "wordllama"),
    }
    if env.get("EVALCORE_COMPAT_BASE_URL"):
        configs["compat"] = ProviderConfig(
            "compat",
            "openai_compatible",
            env["EVALCORE_COMPAT_BASE_URL"],
            "EVALCORE_COMPAT_API_KEY",
            timeout_s=timeout,
        )
    return configs


def provider_config(name: str, raw: dict[str, Any], base: ProviderConfig | None = None) -> ProviderConfig:
    """A provider configuration from a settings entry, refusing anything that looks like a key."""
    allowed = {"kind", "base_url", "api_key_env", "structured", "timeout_s"}
    unknown = set(raw) - allowed
    if unknown:
        raise ConfigError(
            f"provider '{name}' has unknown setting(s) {sorted(unknown)}; keys belong in the environment, "
            f"named by 'api_key_env' (allowed: {sorted(allowed)})"
        )
    key_env = raw.get("api_key_env", base.api_key_env if base else None)
    if key_env and not _ENV_NAME.match(key_env):
        raise ConfigError(f"provider '{name}': api_key_env must name an environment variable, not hold a key")
    values = {
        "kind": raw.get("kind", base.kind if base else "openai_compatible"),
        "base_url": raw.get("base_url", base.base_url if base else None),
        "api_key_env": key_env,
        "structured": raw.get("structured", base.structured if base else "json_schema"),
        "timeout_s": float(raw.get("timeout_s", base.timeout_s if base else 60.0)),
    }
    return ProviderConfig(name, **values)


@dataclass(frozen=True)
class RoleChoice:
    """The model chosen for a role and where the choice came from."""

    role: str
    model: str
    source: str  # 'offline-mode' | 'argument' | 'settings' | 'environment' | 'default'


class Registry:
    """Provider lookup by name and model lookup by role, for one project's settings. Thread-safe."""

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = settings or {}
        configs = builtin_providers()
        for name, raw in (self.settings.get("providers") or {}).items():
            configs[name] = provider_config(name, raw, configs.get(name))
        self.configs = configs
        self._providers: dict[str, Provider] = {}
        self._lock = threading.Lock()

    def provider(self, name: str) -> Provider:
        """The provider called `name`, built on first use."""
        with self._lock:
            if name not in self._providers:
                if name not in self.configs:
                    known = ", ".join(sorted(self.configs))
                    raise ConfigError(f"unknown provider '{name}' (configured: {known})")
                self._providers[name] = make_provider(self.configs[name])
            return self._providers[name]

    def register(self, provider: Provider) -> None:
        """Add a ready-made provider (tests, plugins); it is looked up like any other."""
        with self._lock:
            self.configs[provider.name] = provider.config
            self._providers[provider.name] = provider

    def choose(self, role: str, model: str | None = None) -> RoleChoice:
        """Which model plays `role` (see the module docstring for the order)."""
        if role not in (*ROLES, EMBEDDING_ROLE):
            raise ConfigError(f"unknown role '{role}' (roles: {', '.join((*ROLES, EMBEDDING_ROLE))})")
        default = default_embedding() if role == EMBEDDING_ROLE else OFFLINE_MODEL
        if forced_offline():
            offline = default if role == EMBEDDING_ROLE else OFFLINE_MODEL
            return RoleChoice(role, offline, "offline-mode")
        if model:
            return RoleChoice(role, model, "argument")
        if chosen := (self.settings.get("models") or {}).get(role):
            return RoleChoice(role, chosen, "settings")
        if chosen := os.environ.get(role_env(role)):
            return RoleChoice(role, chosen, "environment")
        return RoleChoice(role, default, "default")

    def resolve(self, role: str, model: str | None = None) -> tuple[Provider, str, str]:
        """(provider, model name without the provider, full 'provider/model') for a role."""
        full = self.choose(role, model).model
        provider_name, model_name = split_model(full)
        return self.provider(provider_name), model_name, full

    def configured_models(self) -> list[str]:
        """Models named anywhere, no repeats: the judge's, `judge_candidates`, then the other roles'."""
        models = self.settings.get("models") or {}
        candidates = [models.get("judge"), os.environ.get(role_env("judge"))]
        candidates += list(self.settings.get("judge_candidates") or [])
        for role in ROLES:
            candidates += [models.get(role), os.environ.get(role_env(role))]
        names: list[str] = []
        for name in candidates:
            if name and name not in names:
                names.append(name)
        return names


def default_embedding() -> str:
    """The local wordllama model when it loads offline, else the hashed n-gram fallback."""
    from evalcore.llm.local import load_wordllama

    try:
        load_wordllama(LOCAL_EMBEDDING.split("/", 1)[1])
    except ConfigError:
        return OFFLINE_EMBEDDING
    return LOCAL_EMBEDDING
