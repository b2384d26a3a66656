"""Judgments in the store: written with their turn's job unit, read back as rows for reports.

Reports read only the indexed columns (no JSON), so aggregating a run of 100,000 judged turns loads in
a fraction of a second; the bodies (reply, conversation so far, rationale) are read for the few turns a
drill-down shows. Tiers are read at report time from the read model of the current item (one query for
all items), so a report always reflects the latest human verdicts under the project's policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from evalcore.items.current import read_tiers
from evalcore.models.common import Tier
from evalcore.runs.records import JudgedTurn
from evalcore.store import Store
from evalcore.store import schema as t

ROW_COLUMNS = (
    "judgment_id",
    "conversation_id",
    "test_id",
    "turn_index",
    "score",
    "error_type",
    "spec_id",
    "n_documents",
    "query_type",
    "multi_turn",
    "item_judge_passed",
)


def judgment_values(turn: JudgedTurn) -> dict[str, Any]:
    """The row of one judged turn."""
    return {
        "run_id": turn.run_id,
        "conversation_id": turn.conversation_id,
        "test_id": turn.test_id,
        "turn_index": turn.turn_index,
        "score": turn.score,
        "error_type": turn.error_type,
        "spec_id": turn.spec_id,
        "n_documents": turn.n_documents,
        "query_type": turn.query_type,
        # NULL for a turn played alone: neither in context nor a first turn, and out of every table but
        # the pairs' (no column of its own, so the judgments table keeps its schema).
        "multi_turn": None if turn.alone else turn.multi_turn,
        "item_judge_passed": turn.item_judge_passed,
        "judge": turn.judge,
        "body": turn.model_dump(mode="json"),
        "created_at": turn.created_at,
    }


def insert_judgments(conn: sa.Connection, turns: Sequence[JudgedTurn]) -> None:
    """Insert judged turns inside the caller's transaction (a job unit's)."""
    if turns:
        conn.execute(sa.insert(t.judgments), [judgment_values(x) for x in turns])


def judgment_rows(store: Store, run_id: str) -> list[tuple[Any, ...]]:
    """The report columns of every judgment of a run, in `ROW_COLUMNS` order (judgment id first).

    Only what the tables group by: each column fetched costs 100,000 Python objects on a large run.
    """
    j = t.judgments
    columns = [j.c.id, *(j.c[name] for name in ROW_COLUMNS[1:])]
    query = sa.select(*columns).where(j.c.run_id == run_id).order_by(j.c.id)
    with store.read() as conn:
        return [tuple(row) for row in conn.execute(query)]


def played_versions(store: Store, run_ids: Sequence[str], item_ids: Sequence[str]) -> dict[int, int | None]:
    """Judgment id -> the version of the item its turn was played from, for the runs' judgments of these
    items (read out of the bodies in SQL, for the few items a report asks about)."""
    j = t.judgments
    version = j.c.body["item_version"].as_integer()
    found: dict[int, int | None] = {}
    with store.read() as conn:
        for start in range(0, len(item_ids), 500):
            chunk = list(item_ids[start : start + 500])
            rows = conn.execute(
                sa.select(j.c.id, version).where(
                    j.c.run_id.in_(list(run_ids)), j.c.conversation_id.in_(chunk) | j.c.test_id.in_(chunk)
                )
            )
            found.update({r[0]: r[1] for r in rows})
    return found


def judgment_bodies(store: Store, ids: Sequence[int]) -> dict[int, JudgedTurn]:
    """Judged turns by judgment id."""
    out: dict[int, JudgedTurn] = {}
    with store.read() as conn:
        for start in range(0, len(ids), 500):
            chunk = [int(i) for i in ids[start : start + 500]]
            rows = conn.execute(
                sa.select(t.judgments.c.id, t.judgments.c.body).where(t.judgments.c.id.in_(chunk))
            )
            out.update({row.id: JudgedTurn.model_validate(row.body) for row in rows})
    return out


def item_tiers(
    store: Store, judge_passed: dict[str, bool | None], *, project_ids: Sequence[str] = ()
) -> dict[str, Tier]:
    """The current tier of each item, from the read model (one tier rule, with the project's policy); an
    item no longer in the store keeps the judge verdict copied into its judgments."""
    known: dict[str, Tier] = {}
    for project_id in project_ids:
        known.update(read_tiers(store, project_id, list(judge_passed)))
    return {
        item_id: known.get(item_id, Tier.silver if passed else Tier.unreviewed)
        for item_id, passed in judge_passed.items()
    }
