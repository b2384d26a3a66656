"""The records the model layer passes around: requests, responses, task results, and its errors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from evalcore.errors import EvalcoreError
from evalcore.models.common import OFFLINE, Provenance
from evalcore.store.secrets import redact

ROLES = ("generator", "judge", "simulator", "target")

# The output model of a task: `Task[T]` runs to a `TaskResult[T]`, so a read of `.output` is typed.
T = TypeVar("T", bound=BaseModel)
TaskStatus = Literal["ok", "failed", "stopped"]


@dataclass(frozen=True)
class Message:
    """One chat message. A `tool_call` message's content is JSON {"name", "arguments"} (the agent called
    a tool); a `tool_result` message's content is the tool's output; providers put both in their API's
    own shape."""

    role: Literal["system", "user", "assistant", "tool_call", "tool_result"]
    content: str


@dataclass(frozen=True)
class Request:
    """Everything a provider needs for one call; only what changes the output goes into the cache key."""

    messages: tuple[Message, ...]
    temperature: float | None = 0.0  # None: the model takes no temperature (its profile says so)
    max_tokens: int = 1024
    seed: int | None = None
    schema: dict[str, Any] | None = None
    schema_name: str | None = None
    task: str | None = None
    prompt_version: str | None = None
    structured: str | None = None  # how to ask for the schema, from the model's profile; None: the provider's
    # Tools the model may call ({"name", "description", "parameters"}): the reply is then a text or a call.
    tools: tuple[dict[str, Any], ...] | None = None
    # For the offline provider: produces the reply text from the task's inputs. Not part of the key.
    offline: Callable[[], str] | None = field(default=None, compare=False, repr=False)

    def key_material(self) -> dict[str, Any]:
        """The canonical, output-determining part of the request."""
        return {
            "messages": [[m.role, m.content] for m in self.messages],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "schema": self.schema,
            "schema_name": self.schema_name,
            "task": self.task,
            "prompt_version": self.prompt_version,
            # Only when a profile sets it, so the keys of earlier cache entries stay as they were.
            **({"structured": self.structured} if self.structured else {}),
            **({"tools": list(self.tools)} if self.tools else {}),
        }


@dataclass(frozen=True)
class Response:
    """What a provider answered: the text (JSON text for structured calls), token usage, and, when the
    request offered tools and the model called one, the call: {"name", "arguments"} (arguments a dict,
    or the raw text when the model's arguments were not a JSON object)."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    finish_reason: str | None = None
    tool_call: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The cacheable form."""
        return {
            "text": self.text,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "finish_reason": self.finish_reason,
            **({"tool_call": self.tool_call} if self.tool_call is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Response:
        """Inverse of to_json."""
        return cls(
            data["text"],
            data.get("tokens_in", 0),
            data.get("tokens_out", 0),
            data.get("finish_reason"),
            data.get("tool_call"),
        )


@dataclass(frozen=True)
class Completion:
    """A response together with how it was obtained (which model, from cache or not, at what cost)."""

    response: Response
    provider: str
    model: str
    cache_hit: bool
    cost_usd: float
    latency_ms: float
    attempts: int

    @property
    def text(self) -> str:
        """The reply text."""
        return self.response.text

    @property
    def offline(self) -> bool:
        """True when the offline provider produced it."""
        return self.provider == OFFLINE


class TaskResult(BaseModel, Generic[T]):
    """The outcome of one task on one set of inputs; failed units keep the raw model output.

    Generic in the task's output model (`TaskResult[Verdict]`); the results of `run_task` are built
    unparametrised, the type is the checker's."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    task: str = Field(description="Task name.")
    status: TaskStatus = Field(description="ok, failed (kept), or stopped (budget).")
    output: SerializeAsAny[T] | None = Field(default=None, description="The validated output, when ok.")
    raw: str | None = Field(default=None, description="The last raw model output.")
    model: str = Field(description="'provider/model' that produced it.")
    provider: str = Field(description="Provider name, 'offline' for the offline provider.")
    offline: bool = Field(description="True when produced offline (show it in the UI).")
    cache_hit: bool = Field(default=False, description="True when every call was served from the cache.")
    error: str | None = Field(default=None, description="Why it failed or stopped.")
    attempts: int = Field(default=0, description="Model calls made, re-asks included.")
    repairs: list[str] = Field(
        default_factory=list, description="Repairs the accepted reply needed (names: evalcore.llm.parsing)."
    )
    tokens_in: int = Field(default=0, description="Prompt tokens over all attempts.")
    tokens_out: int = Field(default=0, description="Completion tokens over all attempts.")
    cost_usd: float = Field(default=0.0, description="Money spent (0 for cache hits and offline).")
    prompt_version: str | None = Field(default=None, description="Version of the prompt template.")
    seed: int | None = Field(default=None, description="Seed passed to the task.")
    run_id: str | None = Field(default=None, description="Run the calls were accounted to.")

    @property
    def ok(self) -> bool:
        """True when the output validated."""
        return self.status == "ok"

    def provenance(self, inputs: list[str] | None = None) -> Provenance:
        """Provenance for an item made from this result."""
        return Provenance(
            producer=OFFLINE if self.offline else self.model,
            provider=self.provider,
            task=self.task,
            prompt_version=self.prompt_version,
            inputs=inputs or [],
            seed=self.seed,
            run_id=self.run_id,
        )


class ProviderError(Exception):
    """A provider call failed; `retryable` says whether trying again may help."""

    def __init__(self, status: str, message: str, retryable: bool, retry_after: float | None = None):
        self.status = status
        self.message = redact(message)
        self.retryable = retryable
        self.retry_after = retry_after
        super().__init__(f"{status}: {self.message}")


class ModelCallError(EvalcoreError):
    """A model call failed for good: names the provider, model, status and message."""

    def __init__(self, provider: str, model: str, status: str, message: str, attempts: int) -> None:
        self.provider, self.model, self.status, self.attempts = provider, model, status, attempts
        self.message = redact(message)
        super().__init__(
            f"{provider}/{model} failed with {status} after {attempts} attempt(s): {self.message}"
        )


class BudgetExceeded(EvalcoreError):
    """The next call would take the run past its budget; it was not made."""


class ConfigError(EvalcoreError):
    """A model, provider or role is misconfigured (unknown name, missing key, missing SDK)."""
