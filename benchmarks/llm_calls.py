"""Throughput, cache replay and per-call overhead of the model layer against the local fake API server.

Run: .venv/bin/python benchmarks/llm_calls.py

1. 320 distinct calls at concurrency 16 against a server answering in 200 ms: the limit is 16 / 0.2 s =
   80 calls/s; prints the achieved rate and its ratio to the limit (goal >= 0.8).
2. The same batch again: every call is served from the store's cache; prints server calls (must be 0).
3. Server latency 0: time per call through ModelClient vs the bare OpenAI SDK; the difference is the
   layer's own overhead (prompt rendering, cache lookup, accounting and cache writes, parsing).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from llm_server import LLMServer  # noqa: E402

from evalcore.documents.entity_task import EXTRACT_ENTITIES  # noqa: E402
from evalcore.llm import ModelClient  # noqa: E402
from evalcore.store import Store  # noqa: E402

CALLS, CONCURRENCY, LATENCY = 320, 16, 0.2
MODEL = "openai/gpt-4o-mini"


def inputs(n: int, tag: str) -> list[dict[str, str]]:
    return [{"passage": f"{tag} passage {i}: Acme Bank ships order ORD-{i} on 2024-03-12."} for i in range(n)]


def main() -> None:
    """Print the three measurements."""
    server = LLMServer(latency=LATENCY).start()
    os.environ.update(OPENAI_API_KEY="sk-benchmark", OPENAI_BASE_URL=server.openai_base_url)
    os.environ.pop("EVALCORE_OFFLINE", None)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/bench.db")
        store.create_project("bench", "Benchmark")
        llm = ModelClient(store, "bench")
        batch = inputs(CALLS, "throughput")

        # One-off start-up (SDK import, client construction, first connection) is measured on its own.
        started = time.perf_counter()
        llm.run_task(EXTRACT_ENTITIES, inputs(1, "warm-up")[0], model=MODEL)
        warm = (time.perf_counter() - started) * 1000
        print(f"warm-up: first call {warm:.0f} ms (SDK import and client set-up, once per process)")
        server.calls.clear()

        started = time.perf_counter()
        results = llm.run_batch(EXTRACT_ENTITIES, batch, model=MODEL, concurrency=CONCURRENCY)
        elapsed = time.perf_counter() - started
        assert all(r.ok for r in results) and len(server.calls) == CALLS
        limit = CONCURRENCY / LATENCY
        rate = CALLS / elapsed
        latency_ms = LATENCY * 1000
        print(f"throughput: {CALLS} distinct calls, concurrency {CONCURRENCY}, latency {latency_ms:.0f} ms")
        print(f"  {elapsed:.2f} s, {rate:.1f} calls/s vs limit {limit:.0f} calls/s: ratio {rate / limit:.2f}")
        print("  (goal: ratio >= 0.8)")
        print(f"  server saw at most {server.max_in_flight} calls in flight")

        before = len(server.calls)
        started = time.perf_counter()
        again = llm.run_batch(EXTRACT_ENTITIES, batch, model=MODEL, concurrency=CONCURRENCY)
        elapsed = time.perf_counter() - started
        assert all(r.ok and r.cache_hit for r in again)
        print(f"same batch again: {len(server.calls) - before} server calls, {elapsed:.2f} s "
              f"({elapsed / CALLS * 1000:.2f} ms per call)")  # fmt: skip

        server.latency = 0.0
        n = 200
        overhead_inputs = inputs(n, "overhead")
        started = time.perf_counter()
        for item in overhead_inputs:
            llm.run_task(EXTRACT_ENTITIES, item, model=MODEL)
        through_layer = (time.perf_counter() - started) / n * 1000

        import openai

        sdk = openai.OpenAI(api_key="sk-benchmark", base_url=server.openai_base_url, max_retries=0)
        started = time.perf_counter()
        for item in inputs(n, "bare-sdk"):
            sdk.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": m.role, "content": m.content} for m in EXTRACT_ENTITIES.render(item)],
                response_format={"type": "json_schema",
                                 "json_schema": {"name": "Entities", "schema": EXTRACT_ENTITIES.schema}},
            )  # fmt: skip
        bare = (time.perf_counter() - started) / n * 1000

        started = time.perf_counter()
        for item in inputs(n, "offline"):
            llm.run_task(EXTRACT_ENTITIES, item)
        offline = (time.perf_counter() - started) / n * 1000
        print(f"per-call overhead (server latency 0, {n} sequential calls):")
        print(f"  through ModelClient {through_layer:.2f} ms, bare OpenAI SDK {bare:.2f} ms: "
              f"layer overhead {through_layer - bare:.2f} ms per call")  # fmt: skip
        print(f"  offline provider through ModelClient (no HTTP): {offline:.2f} ms per call")
        store.close()
    server.stop()


if __name__ == "__main__":
    main()
