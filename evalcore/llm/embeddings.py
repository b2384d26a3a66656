"""Embeddings, same pattern as completions: a local model, API embeddings, and an offline fallback.

Models: "wordllama/l2_supercat_256" (a static model shipped inside the wordllama wheel, loaded with
downloads disabled), "openai/text-embedding-3-small" (or any OpenAI-compatible provider), and
"offline/hash-256" (hashed character n-grams: needs nothing, deterministic). The `embedding` role picks
one (see registry); by default wordllama when it loads, else the offline fallback. Vectors are unit
length, and cached in the store (table `embeddings`) by model and content hash, so texts embedded once
are never embedded again. Use `ModelClient.embed(texts)`, or `embed_texts(client, texts, model)`.
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING

import numpy as np
import sqlalchemy as sa

from evalcore.llm.cache import insert_ignore
from evalcore.llm.records import CallRecord, record_call
from evalcore.llm.retry import with_retries
from evalcore.models.common import now_utc
from evalcore.store import Store
from evalcore.store import schema as t

if TYPE_CHECKING:
    from evalcore.llm.client import ModelClient

BATCH = 256  # texts per API request


def text_hash(text: str) -> str:
    """The content hash under which a text's vector is cached."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embed_texts(client: ModelClient, texts: list[str], model: str | None = None) -> np.ndarray:
    """A (len(texts), dim) float32 matrix of unit vectors for `texts`, from the cache where possible."""
    provider, name, full = client.registry.resolve("embedding", model)
    hashes = [text_hash(text) for text in texts]
    unique = dict(zip(hashes, texts, strict=True))
    vectors = load_vectors(client.store, full, list(unique)) if provider.cacheable else {}
    missing = [h for h in unique if h not in vectors]
    for start in range(0, len(missing), BATCH):
        batch = missing[start : start + BATCH]
        started = time.perf_counter()
        chunk = [unique[h] for h in batch]
        reservation = client.reserve(provider, name, sum(len(text) for text in chunk) // 3 + len(chunk), 0)
        try:
            (matrix, tokens), attempts = with_retries(
                lambda chunk=chunk: provider.embed(name, chunk),
                client.retry,
                provider.name,
                name,
                client.sleep,
            )
        except BaseException:
            client.settle(reservation, 0.0, 0)
            raise
        matrix = _unit_rows(np.asarray(matrix, dtype=np.float32))
        cost = client.prices.cost(name, tokens, 0) if provider.priced else 0.0
        client.settle(reservation, cost, tokens if provider.priced else 0)
        fresh = dict(zip(batch, matrix, strict=True))
        vectors.update(fresh)
        latency = (time.perf_counter() - started) * 1000
        with client.writing() as conn:
            if provider.cacheable:
                save_vectors(conn, full, fresh)
            record = CallRecord(
                client.project_id,
                client.run_id,
                "embed",
                "embedding",
                provider.name,
                name,
                tokens,
                0,
                cost,
                latency,
                False,
                attempts,
                "ok",
            )
            record_call(conn, record)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([vectors[h] for h in hashes]).astype(np.float32)


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def load_vectors(store: Store, model: str, hashes: list[str]) -> dict[str, np.ndarray]:
    """Cached vectors of `model` for the given content hashes (those present)."""
    found: dict[str, np.ndarray] = {}
    table = t.embeddings
    with store.read() as conn:
        for start in range(0, len(hashes), 500):  # stay under SQL parameter limits
            rows = conn.execute(
                sa.select(table.c.content_hash, table.c.vector).where(
                    table.c.model == model, table.c.content_hash.in_(hashes[start : start + 500])
                )
            )
            for content_hash, blob in rows:
                found[content_hash] = np.frombuffer(blob, dtype="<f4").copy()
    return found


def save_vectors(conn: sa.Connection, model: str, vectors: dict[str, np.ndarray]) -> None:
    """Store vectors (float32, little-endian) under their content hashes."""
    stamp = now_utc()
    rows = [
        {
            "model": model,
            "content_hash": h,
            "dim": int(v.shape[0]),
            "vector": v.astype("<f4").tobytes(),
            "created_at": stamp,
        }
        for h, v in vectors.items()
    ]
    if rows:
        insert_ignore(conn, t.embeddings, rows)
