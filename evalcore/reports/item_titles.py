"""What the results view calls an item and a run on screen, never by its id (issue 27's review, issue 28).

- An item (a conversation, a test, a simulated dialogue) is called by what its user first asks, on one
  line and cut short; an item with no user turn by its spec's title; an item the store does not hold (a
  scenario, named by its file) by the name the run gave it.
- A run is called by its name; a run recorded before runs had names by its target, start and judge
  (`reports.results.run_name`).

Titles are read for the rows a page shows (a page, or the flips of a compare), not for a whole run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evalcore.items.sql import BATCH, chunks, latest_bodies
from evalcore.store import Store

TITLE_CHARS = 90  # an item's title in a table cell: about one line of the column


def _first_question(body: Mapping[str, Any]) -> str:
    """The text of the first user turn of a conversation's turns or a test's context ('' when none)."""
    for turn in [*(body.get("turns") or []), *(body.get("context") or [])]:
        if isinstance(turn, Mapping) and turn.get("role") == "user":
            return " ".join(str(turn.get("content") or "").split())
    return ""


def _cut(text: str) -> str:
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1].rstrip() + "…"


def item_titles(store: Store, item_ids: Iterable[str], spec_titles: Mapping[str, str]) -> dict[str, str]:
    """Item id -> its title (see the module docstring); an id the store does not hold maps to itself
    (a scenario's name, a procedure test's name)."""
    wanted = sorted(set(item_ids))
    found: dict[str, tuple[int, dict[str, Any]]] = {}
    with store.read() as conn:
        for batch in chunks(wanted, BATCH):
            found |= latest_bodies(conn, batch)
    titles = {}
    for item_id in wanted:
        body = found.get(item_id, (0, {}))[1]
        spec = spec_titles.get(str(body.get("spec_id") or ""), "")
        titles[item_id] = _cut(_first_question(body) or spec) or (
            item_id if not body else "(no question asked)"
        )
    return titles
