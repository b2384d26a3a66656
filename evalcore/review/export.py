"""Gold and silver sets as JSONL: each line a conversation with its corrections applied, who accepted or
rejected what, and the judge's verdict and score. Read a page at a time, never the whole set at once.

One line: ``{"conversation": <Conversation, corrected, tier set>, "review": {...}, "judge": {...}}``.
``review`` holds the tier, ``accepted_by``/``rejected_by``/``adjudicated_by``, the reasons, each turn's
verdicts by annotator, and the full annotation trail (who, role, when, label, reason, note, correction);
``judge`` holds ``passed``, ``score`` and the project's calibrated ``threshold`` (or null).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa

from evalcore.errors import EvalcoreError
from evalcore.models import Annotation, Tier
from evalcore.review._sql import annotations_of, latest_bodies
from evalcore.review.queue import CONVERSATION
from evalcore.review.state import project_policy, refresh_states
from evalcore.review.tiers import current_edits, turn_verdicts
from evalcore.store import Store
from evalcore.store import schema as t

PAGE = 500
EXPORTABLE = (Tier.gold.value, Tier.silver.value, Tier.rejected.value, Tier.unreviewed.value)


def _corrections(history: list[Annotation]) -> dict[int, str]:
    """Who made the latest correction of each turn."""
    who: dict[int, str] = {}
    for a in history:
        if a.edited_content is not None and a.turn_index is not None:
            who[a.turn_index] = a.author
    return who


def export_record(
    body: dict[str, Any], state: sa.Row, history: list[Annotation], threshold: float | None
) -> dict[str, Any]:
    """One exported line as a dict (see the module docstring)."""
    edits = current_edits(history)
    editors = _corrections(history)
    turns = []
    for turn in body.get("turns", []):
        index = turn["index"]
        if index in edits and edits[index] != turn.get("content"):
            meta = {
                **turn.get("metadata", {}),
                "original_content": turn.get("content"),
                "corrected_by": editors.get(index),
            }
            turn = {**turn, "content": edits[index], "metadata": meta}
        turns.append(turn)
    conversation = {**body, "turns": turns, "tier": state.tier}
    detail = state.detail or {}
    return {
        "conversation": conversation,
        "review": {
            "tier": state.tier,
            "version": state.version,
            "accepted_by": detail.get("accepted_by", []),
            "rejected_by": detail.get("rejected_by", []),
            "adjudicated_by": detail.get("adjudicated_by"),
            "reasons": detail.get("reasons", []),
            "turn_verdicts": {
                str(k): {a: str(v) for a, v in d.items()} for k, d in turn_verdicts(history).items()
            },
            "annotations": [a.model_dump(mode="json", exclude={"item_kind", "item_id"}) for a in history],
        },
        "judge": {"passed": state.judge_passed, "score": state.judge_score, "threshold": threshold},
    }


def iter_tier(store: Store, project_id: str, tier: str, kind: str = CONVERSATION) -> Iterator[dict[str, Any]]:
    """The records of every item of the project currently in `tier`, oldest first."""
    if tier not in EXPORTABLE:
        raise EvalcoreError(f"unknown tier {tier!r}; choose one of: {', '.join(EXPORTABLE)}")
    refresh_states(store, project_id, kind)
    threshold = project_policy(store, project_id).judge_threshold
    s, i = t.annotation_states, t.items
    after: tuple[Any, str] | None = None
    while True:
        query = (
            sa.select(s, i.c.created_at)
            .join(i, i.c.id == s.c.item_id)
            .where(s.c.project_id == project_id, s.c.kind == kind, s.c.tier == tier)
            .order_by(i.c.created_at, i.c.id)
            .limit(PAGE)
        )
        if after is not None:
            query = query.where(
                (i.c.created_at > after[0]) | ((i.c.created_at == after[0]) & (i.c.id > after[1]))
            )
        with store.read() as conn:
            rows = conn.execute(query).all()
            ids = [r.item_id for r in rows]
            bodies = latest_bodies(conn, ids)
            histories = annotations_of(conn, ids)
        for r in rows:
            yield export_record(bodies[r.item_id][1], r, histories[r.item_id], threshold)
        if len(rows) < PAGE:
            return
        after = (rows[-1].created_at, rows[-1].item_id)


def export_jsonl(store: Store, project_id: str, tier: str, kind: str = CONVERSATION) -> Iterator[str]:
    """The tier's records as JSON lines (no trailing newline on each)."""
    for record in iter_tier(store, project_id, tier, kind):
        yield json.dumps(record, ensure_ascii=False, default=str)
