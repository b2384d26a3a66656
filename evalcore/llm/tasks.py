"""Tasks: each LLM-driven step is a prompt template, an output schema and an offline implementation.

Adding a task takes about thirty lines in the module of the pipeline that needs it:

1. Write the prompt as `evalcore/prompts/<name>.md`: front matter with `version`, then `## system` and
   `## user` sections (optionally `## assistant` / `## user` pairs as examples). `{{ field }}` is
   replaced by an input (strings as they are, anything else as JSON); `{{ output_shape }}` is filled
   with the output's keys and types (see `output_shape`). Every prompt states its output shape in its
   own text: providers in `json_object` or `none` mode, and compatible servers that ignore
   `json_schema`, show the model nothing else. Change the text and bump `version`: a changed prompt is
   a different cache key, and results record the version they used.
2. Declare the output as a pydantic model (one-line `description` per field: it becomes the JSON schema
   the provider is constrained to).
3. Write the offline implementation `def offline(inputs: dict, rng: random.Random) -> Output`: a
   deterministic heuristic that gives valid, meaningful output. `rng` is seeded from the task, the inputs
   and the caller's seed, so the same inputs always give the same output.
4. Declare it: `MY_TASK = Task("my_task", Output, offline, prompt="my_task.md")`, and call it through
   `ModelClient(store, project_id).run_task(MY_TASK, {"field": ...}, role="generator")`.

See `evalcore/documents/entity_task.py` for a complete example.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Generic

from pydantic import BaseModel

from evalcore.llm.types import Message, T
from evalcore.models.common import content_hash

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
_PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")
_SECTION = re.compile(r"^##\s+(system|user|assistant)\s*$", re.MULTILINE)

OUTPUT_SHAPE = "output_shape"

TASKS: dict[str, Task[Any]] = {}


@dataclass(frozen=True)
class PromptTemplate:
    """A parsed prompt file: its version and its messages with `{{ field }}` placeholders."""

    name: str
    version: str
    messages: tuple[Message, ...]

    @classmethod
    def load(cls, path: Path) -> PromptTemplate:
        """Parse a template file (front matter, then `## role` sections)."""
        text = path.read_text(encoding="utf-8")
        meta: dict[str, str] = {}
        if text.startswith("---"):
            head, _, text = text[3:].partition("\n---")
            for line in head.strip().splitlines():
                key, _, value = line.partition(":")
                meta[key.strip()] = value.strip()
        if "version" not in meta:
            raise ValueError(f"{path}: the front matter must give a 'version'")
        parts = _SECTION.split(text)
        messages = tuple(
            Message(role, body.strip()) for role, body in zip(parts[1::2], parts[2::2], strict=True)
        )
        if not messages or messages[-1].role != "user":
            raise ValueError(f"{path}: needs '## system' / '## user' sections, ending with a user message")
        return cls(path.stem, meta["version"], messages)

    @property
    def fields(self) -> set[str]:
        """The placeholders used."""
        return {m for msg in self.messages for m in _PLACEHOLDER.findall(msg.content)}

    def render(self, inputs: dict[str, Any]) -> tuple[Message, ...]:
        """The messages with every placeholder filled; a missing input is an error naming it."""
        missing = self.fields - set(inputs)
        if missing:
            raise KeyError(f"prompt '{self.name}' needs input(s) {sorted(missing)}")

        def fill(match: re.Match[str]) -> str:
            value = inputs[match.group(1)]
            if isinstance(value, BaseModel):
                value = value.model_dump(mode="json")
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)

        return tuple(Message(m.role, _PLACEHOLDER.sub(fill, m.content)) for m in self.messages)


@dataclass(frozen=True)
class Task(Generic[T]):
    """One LLM-driven step: prompt template, typed output, offline implementation, call parameters.

    Generic in its output model: `Task("judge", Verdict, ...)` is a `Task[Verdict]`, and
    `ModelClient.run_task` on it gives a `TaskResult[Verdict]`."""

    name: str
    output: type[T]
    offline: Callable[[dict[str, Any], random.Random], BaseModel] = field(repr=False)
    prompt: str | Path | None = None  # file under evalcore/prompts, or a path; default "<name>.md"
    temperature: float = 0.0
    max_tokens: int = 1024
    max_reasks: int = 2

    def __post_init__(self) -> None:
        TASKS[self.name] = self  # later definitions win: tests may redefine a task

    @cached_property
    def template(self) -> PromptTemplate:
        """The parsed prompt file."""
        path = Path(self.prompt) if self.prompt else Path(f"{self.name}.md")
        return PromptTemplate.load(path if path.is_absolute() else PROMPTS_DIR / path)

    @property
    def prompt_version(self) -> str:
        """The declared version of the prompt template."""
        return self.template.version

    @cached_property
    def schema(self) -> dict[str, Any]:
        """The JSON schema the output must follow."""
        return self.output.model_json_schema()

    def render(self, inputs: dict[str, Any]) -> tuple[Message, ...]:
        """The messages for these inputs (and the output's shape, where the template asks for it)."""
        if OUTPUT_SHAPE in self.template.fields:
            inputs = {**inputs, OUTPUT_SHAPE: output_shape(self.output)}
        return self.template.render(inputs)

    def run_offline(self, inputs: dict[str, Any], seed: int | None = None) -> T:
        """The offline output: deterministic in (task, inputs, seed)."""
        digest = content_hash({"task": self.name, "inputs": _plain(inputs), "seed": seed})
        result = self.offline(inputs, random.Random(int(digest[:16], 16)))
        return self.output.model_validate(result.model_dump())


def output_shape(model: type[BaseModel]) -> str:
    """The output's keys with their types, one key per line, as a prompt shows them to the model.

    E.g. `"query_type": "SINGLE-DOC" | "MULTI-DOC"` or `"bridging_entity": string or null`: enough for a
    model that never sees the JSON schema to write the right keys and values.
    """
    return _shape(model.model_json_schema(), model.model_json_schema().get("$defs", {}), 0)


def _shape(schema: dict[str, Any], defs: dict[str, Any], depth: int) -> str:
    if "$ref" in schema:
        return _shape(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, depth)
    options = schema.get("anyOf")
    if options:
        kinds = [_shape(o, defs, depth) for o in options if o.get("type") != "null"]
        nullable = len(kinds) < len(options)
        return " | ".join(kinds) + (" or null" if nullable else "")
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return "[" + _shape(schema.get("items", {}), defs, depth) + ", ...]"
    if kind == "object" and "properties" in schema:
        pad = "  " * (depth + 1)
        keys = [f'{pad}"{k}": {_shape(v, defs, depth + 1)}' for k, v in schema["properties"].items()]
        return "{\n" + ",\n".join(keys) + "\n" + "  " * depth + "}"
    return {"integer": "integer", "number": "number", "boolean": "true | false"}.get(kind or "", "string")


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


REASK = (
    "Your previous reply could not be used: {error}\n"
    "Reply again with only the corrected JSON object, matching the schema exactly."
)


def reask_messages(messages: tuple[Message, ...], raw: str, error: str) -> tuple[Message, ...]:
    """The conversation extended by the failed reply and a request to fix it."""
    return (*messages, Message("assistant", raw or "(empty)"), Message("user", REASK.format(error=error)))
