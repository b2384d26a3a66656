"""Summaries of current items kept in the store: what a reader of thousands (a page's table) computes from
each item, read back as one small row per item instead of decoding and validating every item again.

A summary is kept under the item's head version, which moves with every save (new content, an edit, an
annotation), so a kept summary is never stale: an item saved since is read whole and summarized again, and
its row replaced. Kept in the store, not in a process, so every server of a team (and a restarted one)
reads what any of them computed. A summary must depend only on the item at that version (no tier: it
moves with the project's policy; read it with `read_tiers`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from evalcore.items.current import CurrentItem, read_items
from evalcore.items.sql import chunks, upsert
from evalcore.store import Store
from evalcore.store import schema as t


def summaries(
    store: Store, versions: dict[str, int], name: str, summarize: Callable[[CurrentItem], dict[str, Any]]
) -> dict[str, tuple[int, dict[str, Any]]]:
    """Per item of `versions` (id -> head version, as `head_versions` gives): the version summarized and
    `summarize`'s JSON-able summary of the item, the one kept under `name` when it is of that version, else
    made from the item read now and kept. `name` says which summary (and its format: a new format is a new
    name). Items not in the store are left out; the order is that of `versions`."""
    s = t.item_summaries
    found: dict[str, tuple[int, dict[str, Any]]] = {}
    with store.read() as conn:
        for batch in chunks(list(versions)):
            rows = conn.execute(
                sa.select(s.c.item_id, s.c.version, s.c.body).where(s.c.name == name, s.c.item_id.in_(batch))
            )
            found.update({r.item_id: (r.version, r.body) for r in rows if r.version == versions[r.item_id]})
    missing = [i for i in versions if i not in found]
    for batch in chunks(missing):
        made = {item.id: (item.version, summarize(item)) for item in read_items(store, batch).values()}
        rows = [{"item_id": i, "name": name, "version": v, "body": body} for i, (v, body) in made.items()]
        with store.write() as conn:
            # A server that summarized a later version meanwhile keeps its row.
            upsert(conn, s, rows, ["item_id", "name"], only_if_newer="version")
        found.update(made)
    return {i: found[i] for i in versions if i in found}
