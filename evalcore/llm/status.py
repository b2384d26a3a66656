"""What the Settings page shows and changes: providers, role models, spend, cache hit rate, budget, prices,
how often each model's replies needed repairs (`repair_rates`, from evalcore.llm.repairs), and the model
profiles (evalcore.llm.profiles: structured mode, token limit, temperature; probed or set by hand).

Reads never reveal a key (only whether its environment variable is set); writes refuse anything that
would store one. All settings live in the project's settings, under `models`, `providers`, `prices`,
`budget`, `judge_candidates` and `llm` (see registry and accounting for their shapes).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import sqlalchemy as sa

from evalcore.auth.audit import authorized
from evalcore.auth.roles import Actor, Permission, require
from evalcore.llm.accounting import Budget, PriceTable
from evalcore.llm.client import ModelClient
from evalcore.llm.profiles import SETTING as PROFILES_SETTING
from evalcore.llm.profiles import ModelProfile, probe, profile_for
from evalcore.llm.registry import (
    EMBEDDING_ROLE,
    Registry,
    RoleChoice,
    forced_offline,
    provider_config,
    split_model,
)
from evalcore.llm.repairs import ModelRepairs
from evalcore.llm.retry import RetryPolicy
from evalcore.llm.types import ROLES, ConfigError
from evalcore.models.common import OFFLINE as OFFLINE_PROVIDER
from evalcore.store import Store
from evalcore.store import schema as t


@dataclass(frozen=True)
class ProviderStatus:
    """One provider as the page lists it. `key_present` is all that is ever said about its key."""

    name: str
    kind: str
    base_url: str | None
    api_key_env: str | None
    key_present: bool
    structured: str


@dataclass(frozen=True)
class RunSpend:
    """What one run's model calls cost."""

    run_id: str | None
    kind: str | None
    status: str | None
    stopped_reason: str | None
    calls: int
    cache_hits: int
    tokens_in: int
    tokens_out: int
    cost_usd: float
    offline_calls: int = 0
    offline_tokens: int = 0


@dataclass(frozen=True)
class SpendSummary:
    """A project's model calls in total and per run; `hit_rate` is cache hits / calls (0 when none).

    Tokens are what models used; the offline provider's calls are counted apart (`offline_calls`), and
    the token counts it records (`offline_tokens`, in + out: text length / 4, for budgets in tests) are
    estimates, not usage anyone pays for."""

    calls: int
    cache_hits: int
    hit_rate: float
    tokens_in: int
    tokens_out: int
    cost_usd: float
    runs: list[RunSpend]
    offline_calls: int = 0
    offline_tokens: int = 0


def _settings(store: Store, project_id: str | None) -> dict[str, Any]:
    return store.project(project_id).settings if project_id else {}


def _public_url(url: str | None) -> str | None:
    """A base URL without any user:password part."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def providers(store: Store, project_id: str | None = None) -> list[ProviderStatus]:
    """Every configured provider and whether its key is present (never the key)."""
    registry = Registry(_settings(store, project_id))
    return [
        ProviderStatus(c.name, c.kind, _public_url(c.base_url), c.api_key_env, c.key_present, c.structured)
        for c in registry.configs.values()
    ]


def role_models(store: Store, project_id: str | None = None) -> list[RoleChoice]:
    """The model for each role (and embeddings), with where the choice came from."""
    registry = Registry(_settings(store, project_id))
    return [registry.choose(role) for role in (*ROLES, EMBEDDING_ROLE)]


def offline_mode() -> bool:
    """True when EVALCORE_OFFLINE forces every role offline."""
    return forced_offline()


def spend(store: Store, project_id: str) -> SpendSummary:
    """Spend, tokens and cache hits of a project's model calls, in total and per run (newest run first)."""
    c = t.model_calls
    offline = c.c.provider == OFFLINE_PROVIDER
    query = (
        sa.select(
            c.c.run_id,
            sa.func.count(),
            sa.func.sum(sa.case((c.c.cache_hit.is_(True), 1), else_=0)),
            sa.func.coalesce(sa.func.sum(sa.case((offline, 0), else_=c.c.tokens_in)), 0),
            sa.func.coalesce(sa.func.sum(sa.case((offline, 0), else_=c.c.tokens_out)), 0),
            sa.func.coalesce(sa.func.sum(c.c.cost_usd), 0.0),
            sa.func.max(c.c.id),
            sa.func.sum(sa.case((offline, 1), else_=0)),
            sa.func.sum(sa.case((offline, c.c.tokens_in + c.c.tokens_out), else_=0)),
        )
        .where(c.c.project_id == project_id)
        .group_by(c.c.run_id)
    )
    with store.read() as conn:
        rows = conn.execute(query).all()
    runs = {r.id: r for r in store.runs(project_id)}
    per_run = []
    for run_id, calls, hits, tin, tout, cost, _, off_calls, off_tokens in sorted(rows, key=lambda r: -r[6]):
        run = runs.get(run_id)
        per_run.append(
            RunSpend(
                run_id,
                run.kind if run else None,
                run.status.value if run else None,
                run.stopped_reason if run else None,
                calls,
                int(hits or 0),
                int(tin),
                int(tout),
                float(cost),
                int(off_calls or 0),
                int(off_tokens or 0),
            )
        )
    calls = sum(r.calls for r in per_run)
    hits = sum(r.cache_hits for r in per_run)
    return SpendSummary(
        calls=calls,
        cache_hits=hits,
        hit_rate=hits / calls if calls else 0.0,
        tokens_in=sum(r.tokens_in for r in per_run),
        tokens_out=sum(r.tokens_out for r in per_run),
        cost_usd=sum(r.cost_usd for r in per_run),
        runs=per_run,
        offline_calls=sum(r.offline_calls for r in per_run),
        offline_tokens=sum(r.offline_tokens for r in per_run),
    )


def repair_rates(store: Store, project_id: str) -> list[ModelRepairs]:
    """Per model (most replies first): task replies, repaired, invalid, and the count of each repair."""
    calls, rows = t.model_calls, t.call_repairs
    replies_query = (
        sa.select(calls.c.provider, calls.c.model, sa.func.count())
        .where(calls.c.project_id == project_id, calls.c.task.is_not(None), calls.c.status == "ok")
        .group_by(calls.c.provider, calls.c.model)
    )
    repairs_query = sa.select(rows.c.provider, rows.c.model, rows.c.outcome, rows.c.repairs).where(
        rows.c.project_id == project_id
    )
    with store.read() as conn:
        replies = {(p, m): n for p, m, n in conn.execute(replies_query)}
        found = conn.execute(repairs_query).all()
    outcomes: dict[tuple[str, str], Counter[str]] = {}
    kinds: dict[tuple[str, str], Counter[str]] = {}
    for provider, model, outcome, names in found:
        key = (provider, model)
        outcomes.setdefault(key, Counter())[outcome] += 1
        kinds.setdefault(key, Counter()).update(n for n in names.split(",") if n)
    result = []
    for key in replies.keys() | outcomes.keys():
        counted = outcomes.get(key, Counter())
        # max(): a reply recorded here is a reply, even if its call row was written elsewhere.
        total = max(replies.get(key, 0), counted.total())
        kinds_seen = dict(kinds.get(key, Counter()).most_common())
        result.append(ModelRepairs(*key, total, counted["repaired"], counted["invalid"], kinds_seen))
    return sorted(result, key=lambda r: (-r.replies, r.provider, r.model))


def budget(store: Store, project_id: str) -> Budget | None:
    """The project's default budget for runs (a run's own budget takes precedence)."""
    return Budget.parse(_settings(store, project_id).get("budget"))


def prices(store: Store, project_id: str | None = None) -> dict[str, tuple[float, float]]:
    """USD per million tokens (input, output) per model: built-in list with the project's overrides."""
    return PriceTable(_settings(store, project_id).get("prices")).prices


# ------------------------------------------------------------------ changes


def _update(store: Store, project_id: str, key: str, change: Any, actor: Actor | None) -> dict[str, Any]:
    store.project(project_id)  # NotFoundError for an unknown project
    with authorized(store, actor, Permission.set_models, f"settings.{key}", project_id=project_id):
        return store.update_settings(project_id, {key: change or None})


def set_role_model(
    store: Store, project_id: str, role: str, model: str | None, *, actor: Actor | None = None
) -> None:
    """Choose the model for a role ('provider/model'); None goes back to the environment/default."""
    if role not in (*ROLES, EMBEDDING_ROLE):
        raise ConfigError(f"unknown role '{role}'")
    models = dict(_settings(store, project_id).get("models") or {})
    if model:
        provider, _ = split_model(model)
        if provider not in Registry(_settings(store, project_id)).configs:
            raise ConfigError(f"unknown provider '{provider}' in '{model}'")
        models[role] = model
    else:
        models.pop(role, None)
    _update(store, project_id, "models", models, actor)


def set_budget(
    store: Store,
    project_id: str,
    usd: float | None = None,
    tokens: int | None = None,
    *,
    actor: Actor | None = None,
) -> None:
    """Set (or clear, with both None) the project's default budget for runs."""
    value = {k: v for k, v in {"usd": usd, "tokens": tokens}.items() if v is not None}
    if any(v < 0 for v in value.values()):
        raise ConfigError("a budget cannot be negative")
    _update(store, project_id, "budget", value, actor)


def set_price(
    store: Store,
    project_id: str,
    model: str,
    input_usd: float | None,
    output_usd: float = 0.0,
    *,
    actor: Actor | None = None,
) -> None:
    """Set a model's price in USD per million tokens; input_usd None removes the override."""
    table = dict(_settings(store, project_id).get("prices") or {})
    if input_usd is None:
        table.pop(model, None)
    else:
        table[model] = {"input": float(input_usd), "output": float(output_usd)}
    _update(store, project_id, "prices", table, actor)


def set_provider(
    store: Store, project_id: str, name: str, config: dict[str, Any] | None, *, actor: Actor | None = None
) -> None:
    """Add, change or (config None) remove a provider entry; refuses keys (name their env var instead)."""
    table = dict(_settings(store, project_id).get("providers") or {})
    if config is None:
        table.pop(name, None)
    else:
        provider_config(name, config)  # validates: known fields only, api_key_env must be a variable name
        table[name] = config
    _update(store, project_id, "providers", table, actor)


def set_judge_candidates(
    store: Store, project_id: str, models: list[str], *, actor: Actor | None = None
) -> None:
    """Models the guard may judge with when the judge role's model is the target's own."""
    for model in models:
        split_model(model)
    _update(store, project_id, "judge_candidates", list(models), actor)


def set_llm_options(
    store: Store,
    project_id: str,
    concurrency: int | None = None,
    max_retries: int | None = None,
    *,
    actor: Actor | None = None,
):
    """Calls in flight per batch, and retries per call, for the project's jobs."""
    options = dict(_settings(store, project_id).get("llm") or {})
    for key, value in (("concurrency", concurrency), ("max_retries", max_retries)):
        if value is not None:
            if value < (1 if key == "concurrency" else 0):
                raise ConfigError(f"{key} must be at least {1 if key == 'concurrency' else 0}")
            options[key] = int(value)
    _update(store, project_id, "llm", options, actor)


def model_profiles(store: Store, project_id: str) -> dict[str, ModelProfile]:
    """The kept model profiles, by 'provider/model'."""
    settings = _settings(store, project_id)
    return {model: profile_for(settings, model) for model in sorted(settings.get(PROFILES_SETTING) or {})}


def set_model_profile(
    store: Store, project_id: str, model: str, profile: ModelProfile | None, *, actor: Actor | None = None
) -> None:
    """Keep (or, with None, forget) a model's profile; its calls follow it from then on."""
    split_model(model)
    if profile is not None and profile.max_tokens is not None and profile.max_tokens < 1:
        raise ConfigError("a model's token limit must be at least 1")
    table = dict(_settings(store, project_id).get(PROFILES_SETTING) or {})
    if profile is None:
        table.pop(model, None)
    else:
        table[model] = profile.to_setting()
    _update(store, project_id, PROFILES_SETTING, table, actor)


def probe_model(store: Store, project_id: str, model: str, *, actor: Actor | None = None) -> ModelProfile:
    """Probe a model behind an OpenAI-compatible server with one call, and keep what it showed."""
    require(actor, Permission.set_models)  # before the call it pays for
    # No retries: a server that refuses the request answers 4xx or 5xx alike, and the refusal is the answer.
    learned = probe(ModelClient(store, project_id, retry=RetryPolicy(max_retries=0)), model)
    set_model_profile(store, project_id, model, learned, actor=actor)
    return learned
