"""The content-addressed response cache, kept in the store (table `llm_cache`).

The key is a hash of canonical JSON of only what changes the output: provider (and its structured-output
mode), model, messages, sampling parameters, output schema, task and prompt version. Never the API key,
the base URL or the run: a re-run anywhere replays the same responses.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from evalcore.llm.types import Request, Response
from evalcore.models.common import content_hash, now_utc
from evalcore.store import Store
from evalcore.store import schema as t

KEY_VERSION = 1  # bump when the key's composition changes


def cache_key(provider_tag: str, model: str, request: Request) -> str:
    """The cache key of a request to `model` on the provider described by `provider_tag`."""
    return content_hash(
        {"v": KEY_VERSION, "provider": provider_tag, "model": model, **request.key_material()}
    )


def cache_get(store: Store, key: str) -> Response | None:
    """The cached response for `key`, if any."""
    with store.read() as conn:
        data = conn.scalar(sa.select(t.llm_cache.c.response).where(t.llm_cache.c.key == key))
    return Response.from_json(data) if data is not None else None


def cache_put(conn: sa.Connection, key: str, provider: str, model: str, response: Response) -> None:
    """Store a response; if another worker stored the same key first, keep theirs."""
    values = {
        "key": key,
        "provider": provider,
        "model": model,
        "response": response.to_json(),
        "created_at": now_utc(),
    }
    insert_ignore(conn, t.llm_cache, values)


def insert_ignore(
    conn: sa.Connection, table: sa.Table, values: dict[str, Any] | list[dict[str, Any]]
) -> None:
    """INSERT that skips rows whose primary key already exists (SQLite and PostgreSQL)."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    conn.execute(insert(table).on_conflict_do_nothing(), values)


def cache_stats(store: Store) -> dict[str, int]:
    """Entries in the cache, per provider."""
    with store.read() as conn:
        rows = conn.execute(
            sa.select(t.llm_cache.c.provider, sa.func.count()).group_by(t.llm_cache.c.provider)
        ).all()
    return {provider: n for provider, n in rows}
