"""The content-addressed response cache, kept in the store (table `llm_cache`).

The key is a hash of canonical JSON of only what changes the output: provider (and its structured-output
mode), model, messages, sampling parameters, output schema, task and prompt version. Never the API key,
the base URL or the run: a re-run anywhere replays the same responses. A response its task could not
parse is marked rejected: never replayed, so retrying a failed unit asks the model again.
"""

from __future__ import annotations

import sqlalchemy as sa

from evalcore.llm.types import Request, Response
from evalcore.models.common import content_hash, now_utc
from evalcore.store import Store
from evalcore.store import schema as t
from evalcore.store.sql import insert_ignore

KEY_VERSION = 1  # bump when the key's composition changes


def cache_key(provider_tag: str, model: str, request: Request) -> str:
    """The cache key of a request to `model` on the provider described by `provider_tag`."""
    return content_hash(
        {"v": KEY_VERSION, "provider": provider_tag, "model": model, **request.key_material()}
    )


def cache_get(store: Store, key: str) -> Response | None:
    """The cached response for `key`, if any."""
    with store.read() as conn:
        data = conn.scalar(
            sa.select(t.llm_cache.c.response).where(
                t.llm_cache.c.key == key, t.llm_cache.c.rejected_at.is_(None)
            )
        )
    return Response.from_json(data) if data is not None else None


def cache_put(conn: sa.Connection, key: str, provider: str, model: str, response: Response) -> None:
    """Store a response; if another worker stored the same key first, keep theirs (unless it was rejected)."""
    values = {
        "key": key,
        "provider": provider,
        "model": model,
        "response": response.to_json(),
        "created_at": now_utc(),
    }
    conn.execute(
        sa.delete(t.llm_cache).where(t.llm_cache.c.key == key, t.llm_cache.c.rejected_at.is_not(None))
    )
    insert_ignore(conn, t.llm_cache, values)


def reject_cached(store: Store, key: str) -> None:
    """Mark a cached response as one its task could not use: it is kept, and never replayed."""
    with store.write() as conn:
        conn.execute(
            sa.update(t.llm_cache)
            .where(t.llm_cache.c.key == key, t.llm_cache.c.rejected_at.is_(None))
            .values(rejected_at=now_utc())
        )


def cache_stats(store: Store) -> dict[str, int]:
    """Entries in the cache, per provider."""
    with store.read() as conn:
        rows = conn.execute(
            sa.select(t.llm_cache.c.provider, sa.func.count()).group_by(t.llm_cache.c.provider)
        ).all()
    return {provider: n for provider, n in rows}
