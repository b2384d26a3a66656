"""What one model accepts: how to ask it for structured output, how many tokens, whether a temperature.

A local or small model behind an OpenAI-compatible server (vLLM, Ollama, llama.cpp) often differs from
what its provider entry assumes: the server ignores `json_schema`, refuses a temperature, or grants fewer
output tokens than a task asks for. A profile, kept in the project setting `model_profiles` under the
'provider/model' name, says so; ModelClient follows it on every call of that model (structured mode,
temperature sent or not, `max_tokens` capped, the truncation re-ask included). `probe` learns the
structured mode and the temperature support from one call; the token limit is set by hand (no server
states it in a chat reply). The Settings page shows and edits profiles (evalcore.llm.status).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from evalcore.llm.parsing import parse_output
from evalcore.llm.providers import Structured
from evalcore.llm.types import ConfigError, Message, ModelCallError, Request
from evalcore.models.common import now_utc

if TYPE_CHECKING:
    from evalcore.llm.client import ModelClient

SETTING = "model_profiles"
PROBE_TOKENS = 64  # the probe's reply is a dozen tokens; room for a think block's start


@dataclass(frozen=True)
class ModelProfile:
    """What a model accepts. None fields fall back to the provider's setting and the task's request."""

    structured: Structured | None = None
    max_tokens: int | None = None
    temperature: bool = True
    probed_at: str | None = None
    note: str = ""  # what the probe saw, in words
    # Caps per task name, under `max_tokens`: a slow local model writes a judge's verdict in 200 tokens,
    # and a cap set for the longest task would let a short task's runaway reply take minutes.
    task_max_tokens: dict[str, int] | None = None

    def to_setting(self) -> dict[str, Any]:
        """The form kept in the project settings (no empty fields)."""
        return {k: v for k, v in asdict(self).items() if v not in (None, "")}

    def with_max_tokens(self, max_tokens: int | None) -> ModelProfile:
        """This profile with another token limit (None: no limit)."""
        return replace(self, max_tokens=max_tokens)

    def limit(self, max_tokens: int, task: str | None = None) -> int:
        """`max_tokens` capped at the model's limit, and at its limit for `task` when it has one."""
        capped = min(max_tokens, self.max_tokens) if self.max_tokens else max_tokens
        task_cap = (self.task_max_tokens or {}).get(task or "")
        return min(capped, task_cap) if task_cap else capped

    def apply(self, request: Request) -> Request:
        """The request as this model takes it."""
        return replace(
            request,
            structured=self.structured or request.structured,
            temperature=request.temperature if self.temperature else None,
            max_tokens=self.limit(request.max_tokens, request.task),
        )


def profile_for(settings: dict[str, Any], model: str) -> ModelProfile:
    """The profile of a 'provider/model' in a project's settings (an empty one when none is kept)."""
    raw = (settings.get(SETTING) or {}).get(model) or {}
    known = set(ModelProfile.__dataclass_fields__)
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(f"model profile of '{model}' has unknown field(s) {sorted(unknown)}")
    return ModelProfile(**raw)


class _Probe(BaseModel):
    ok: bool
    n: int


PROBE_MESSAGES = (
    Message("system", "You answer with JSON only."),
    Message("user", 'Reply with exactly this JSON object and nothing else: {"ok": true, "n": 3}'),
)


def probe(client: ModelClient, model: str) -> ModelProfile:
    """Learn a compatible server's structured-output mode and temperature support from one call.

    The call asks for a tiny schema with `json_schema` and a temperature of 0. A refusal naming the
    temperature or the response format says which the model does not take; a reply that needed repairs
    says the server ignored the schema (mode `none`: the prompt's own statement of the shape is what the
    model follows). The call is cached and accounted like any other.
    """
    provider, name, full = client.registry.resolve("generator", model)
    if provider.config.kind not in ("openai_compatible", "local"):
        raise ConfigError(f"'{full}': only models behind an OpenAI-compatible server are probed")
    request = Request(PROBE_MESSAGES, 0.0, PROBE_TOKENS, schema=_Probe.model_json_schema(),
                      schema_name="probe", task="probe", structured="json_schema")  # fmt: skip
    kept = profile_for(client.registry.settings, full)
    stamp = now_utc().isoformat(timespec="seconds")
    try:
        done = client._call(provider, name, request, None)
    except ModelCallError as e:
        refused = e.message.lower()
        if "temperature" in refused:
            note = f"refused a temperature: {e.message}"
            return replace(kept, temperature=False, probed_at=stamp, note=note)
        if "response_format" in refused or "json_schema" in refused:
            note = f"refused json_schema: {e.message}"
            return replace(kept, structured="json_object", probed_at=stamp, note=note)
        raise
    parsed = parse_output(done.text, _Probe)
    if parsed.value is not None and not parsed.repairs:
        note = "follows json_schema"
        return replace(kept, structured="json_schema", temperature=True, probed_at=stamp, note=note)
    seen = ", ".join(parsed.repairs) if parsed.value is not None else "no usable JSON"
    note = f"ignores json_schema (reply needed: {seen}); prompts state the shape"
    return replace(kept, structured="none", temperature=True, probed_at=stamp, note=note)
