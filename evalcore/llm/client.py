"""ModelClient: the one wrapper every model call goes through.

It owns, for every provider alike (offline included): the response cache, retries, accounting (one
`model_calls` row per call), the budget, and bounded concurrency for batches. Typical use:

    llm = ModelClient(store, project_id, run_id=run.id)
    result = llm.run_task(EXTRACT_ENTITIES, {"passage": text}, role="generator")
    results = llm.run_batch(EXTRACT_ENTITIES, inputs, on_progress=bar, on_result=save_unit)

The single-call path (cache, budget, retries, accounting) is in calls.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

import numpy as np

from evalcore.llm.calls import CallCore
from evalcore.llm.parsing import Parsed, parse_output
from evalcore.llm.profiles import profile_for
from evalcore.llm.repairs import record_repairs
from evalcore.llm.tasks import Task, reask_messages
from evalcore.llm.types import (
    BudgetExceeded,
    Completion,
    Message,
    ModelCallError,
    Request,
    T,
    TaskResult,
    TaskStatus,
)

# Finish reasons of a reply cut at the token limit (OpenAI and compatible servers; Anthropic).
TRUNCATED = ("length", "max_tokens")


class ModelClient(CallCore):
    """Model calls for one project (and optionally one run), with cache, retries, accounting and budget.

    `ModelClient(store, project_id=None, run_id=None, budget=None, *, registry=None, retry=None,
    concurrency=None)`. `budget` ({'usd': ..., 'tokens': ...}) defaults to the run's own budget, then
    the project setting `budget`; the setting `llm` may give `concurrency` and `max_retries`.
    Safe to share across threads.
    """

    # ------------------------------------------------------------------ tasks

    def run_task(
        self,
        task: Task[T],
        inputs: dict[str, Any],
        role: str = "generator",
        *,
        model: str | None = None,
        seed: int | None = None,
    ) -> TaskResult[T]:
        """Run `task` on `inputs`: render, call, parse/repair, re-ask with the validation error if needed.

        Calls follow the model's profile (structured mode, temperature, token limit). A reply cut at the
        token limit that cannot be repaired is asked again afresh with twice the limit, within the
        model's limit (the budget reserves for it like for any call). Never raises for model failures:
        a unit that cannot be produced comes back `failed` with its raw output and error, or `stopped`
        when the budget would be exceeded. Misconfiguration raises.
        """
        provider, name, full = self.registry.resolve(role, model)
        first = messages = task.render(inputs)
        result = self._result(task, provider.name, full, seed, "failed", cache_hit=True)
        offline = lambda: task.run_offline(inputs, seed).model_dump_json()  # noqa: E731
        error = ""
        profile = profile_for(self.registry.settings, full)
        max_tokens = profile.limit(task.max_tokens, task.name)
        unusable: list[Request] = []  # requests whose replies could not be parsed
        for attempt in range(1, task.max_reasks + 2):
            request = Request(
                messages=messages,
                temperature=task.temperature,
                max_tokens=max_tokens,
                seed=seed,
                schema=task.schema,
                schema_name=task.output.__name__,
                task=task.name,
                prompt_version=task.prompt_version,
                offline=offline,
            )
            request = profile.apply(request)
            try:
                done = self._call(provider, name, request, role)
            except ModelCallError as e:
                return result.model_copy(update={"error": str(e), "cache_hit": False})
            except BudgetExceeded as e:
                return result.model_copy(update={"status": "stopped", "error": str(e), "cache_hit": False})
            result = result.model_copy(
                update={
                    "raw": done.text,
                    "attempts": result.attempts + 1,
                    "tokens_in": result.tokens_in + done.response.tokens_in,
                    "tokens_out": result.tokens_out + done.response.tokens_out,
                    "cost_usd": result.cost_usd + done.cost_usd,
                    "cache_hit": result.cache_hit and done.cache_hit,
                }
            )
            parsed = parse_output(done.text, task.output)
            self._record_parse(task, provider.name, name, attempt, parsed)
            if parsed.value is not None:
                update = {"status": "ok", "output": parsed.value, "repairs": list(parsed.repairs)}
                return result.model_copy(update=update)
            error = parsed.error or "unparseable"
            unusable.append(request)
            grown = profile.limit(2 * max_tokens, task.name)
            if done.response.finish_reason in TRUNCATED and grown > max_tokens:
                # The same limit would cut the reply again: ask afresh, with room to finish.
                max_tokens = grown
                messages = first
            else:
                messages = reask_messages(messages, done.text, error)
        self.reject(provider, name, unusable)  # a retry of this unit asks the model again
        return result.model_copy(
            update={"error": f"no valid output after {result.attempts} attempt(s): {error}"}
        )

    def run_batch(
        self,
        task: Task[T],
        inputs: Sequence[dict[str, Any]],
        role: str = "generator",
        *,
        model: str | None = None,
        seed: int | None = None,
        concurrency: int | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        on_result: Callable[[int, TaskResult[T]], None] | None = None,
    ) -> list[TaskResult[T]]:
        """Run `task` on every input, at most `concurrency` calls at a time; results in input order.

        `on_result(index, result)` and `on_progress(done, total)` are called in the caller's thread as
        units finish (persist each unit there, drive a progress bar). Failed units do not stop the
        batch; the budget does: units not started then come back `stopped`.
        """
        self.registry.resolve(role, model)  # a configuration error fails the batch before any call
        total = len(inputs)
        results: list[TaskResult[T] | None] = [None] * total
        stop = threading.Event()

        def work(i: int) -> TaskResult[T]:
            if stop.is_set():
                return self._skipped(task, role, model, seed)
            outcome = self.run_task(task, inputs[i], role, model=model, seed=seed)
            if outcome.status == "stopped":
                stop.set()
            return outcome

        workers = max(1, min(concurrency or self.concurrency, total or 1))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evalcore-llm") as pool:
            futures = {pool.submit(work, i): i for i in range(total)}
            try:
                for done, future in enumerate(as_completed(futures), start=1):
                    index = futures[future]
                    results[index] = outcome = future.result()
                    if on_result:
                        on_result(index, outcome)
                    if on_progress:
                        on_progress(done, total)
            except BaseException:
                stop.set()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
        return [r for r in results if r is not None]

    def _record_parse(self, task: Task[Any], provider: str, model: str, attempt: int, parsed: Parsed) -> None:
        """Keep the repairs a reply needed (or that it failed), for the repair rate per model."""
        if parsed.value is not None and not parsed.repairs:
            return
        with self.writing() as conn:
            record_repairs(
                conn,
                project_id=self.project_id,
                run_id=self.run_id,
                task=task.name,
                provider=provider,
                model=model,
                attempt=attempt,
                valid=parsed.value is not None,
                repairs=parsed.repairs,
            )

    def _skipped(self, task: Task[T], role: str, model: str | None, seed: int | None) -> TaskResult[T]:
        provider, _, full = self.registry.resolve(role, model)
        not_started = f"not started: {self.stopped_reason}"
        return self._result(task, provider.name, full, seed, "stopped", error=not_started)

    def _result(
        self, task: Task[T], provider: str, full: str, seed: int | None, status: TaskStatus, **more: Any
    ) -> TaskResult[T]:
        """A result of `task` with no output yet: who would produce it, under which prompt and seed."""
        return TaskResult(
            task=task.name,
            status=status,
            model=full,
            provider=provider,
            offline=provider == "offline",
            prompt_version=task.prompt_version,
            seed=seed,
            run_id=self.run_id,
            **more,
        )

    # ------------------------------------------------------------ free text

    def complete(
        self,
        messages: Sequence[Message],
        role: str = "target",
        *,
        model: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        seed: int | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
    ) -> Completion:
        """A plain chat completion (cached, retried, accounted); raises ModelCallError/BudgetExceeded.

        With `tools` ({"name", "description", "parameters"} each) the model may call one: the call is
        `Completion.response.tool_call`, else the reply is the text."""
        provider, name, full = self.registry.resolve(role, model)
        request = Request(
            tuple(messages), temperature, max_tokens, seed, tools=tuple(tools) if tools else None
        )
        request = profile_for(self.registry.settings, full).apply(request)
        return self._call(provider, name, request, role)

    def embed(self, texts: Sequence[str], model: str | None = None) -> np.ndarray:
        """One unit-length row per text, cached in the store by model and content hash."""
        from evalcore.llm.embeddings import embed_texts

        return embed_texts(self, list(texts), model)
