"""The derived annotation state of each item (tier, judge fields, who decided), kept where SQL can filter.

The tier of an item is derived from its appended annotations (`evalcore.items.tiers.derive_tier`) and the LLM
judge's verdict in the item's metadata (``judge_passed``, ``judge_score`` in [0, 1]). Deriving it for
every item on every page view would read every annotation, so it is materialised in
``annotation_states`` (one row per item) and ``annotation_verdicts`` (each annotator's effective
verdict), both rebuilt from the source rows at any time:

- a save through `evalcore.review` updates them in the same transaction as the annotations, so a
  committed annotation and its derived state never disagree;
- `refresh_states` catches up on anything written another way: items without a row, rows whose
  ``version`` is behind the item's head revision (a new content revision, or annotations written straight
  through `Store.annotate`), and rows derived under another project policy.

The project policy is two settings: ``required_agreement`` (distinct accepting annotators for gold,
default 1) and ``judge_threshold`` (when set, the judge passes an item whose ``judge_score`` reaches it,
which is how a threshold calibrated on gold, seed 004, defines silver; when unset, ``judge_passed``).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from evalcore.auth.audit import authorize, record
from evalcore.auth.roles import Actor, Permission
from evalcore.errors import EvalcoreError
from evalcore.items.sql import BATCH, annotations_of, body_field, chunks, heads, upsert
from evalcore.items.tiers import TierState, conversation_verdicts, derive_tier
from evalcore.models import Annotation, Tier, now_utc
from evalcore.store import Store
from evalcore.store import schema as t

REQUIRED_AGREEMENT = "required_agreement"
JUDGE_THRESHOLD = "judge_threshold"
# Item kinds people review turn by turn and that get a tier (specs have their own review).
REVIEWED_KINDS = ("conversation", "test")


@dataclass(frozen=True)
class Policy:
    """The project settings a tier depends on."""

    required_agreement: int = 1
    judge_threshold: float | None = None

    @property
    def key(self) -> str:
        """A short text that changes whenever the policy does (stored with each derived row)."""
        threshold = "none" if self.judge_threshold is None else repr(float(self.judge_threshold))
        return f"agree={self.required_agreement};threshold={threshold}"


def policy_of(settings: dict[str, Any]) -> Policy:
    """The policy in a project's settings; bad values are reported, never guessed at."""
    required = settings.get(REQUIRED_AGREEMENT, 1)
    if not isinstance(required, int) or isinstance(required, bool) or required < 1:
        raise EvalcoreError(
            f"project setting {REQUIRED_AGREEMENT} must be a whole number >= 1, got {required!r}"
        )
    threshold = settings.get(JUDGE_THRESHOLD)
    if threshold is not None and not (isinstance(threshold, int | float) and 0.0 <= threshold <= 1.0):
        raise EvalcoreError(f"project setting {JUDGE_THRESHOLD} must be in [0, 1], got {threshold!r}")
    return Policy(required, None if threshold is None else float(threshold))


def project_policy(store: Store, project_id: str) -> Policy:
    """The current policy of a project."""
    return policy_of(store.project(project_id).settings)


def judge_fields(metadata: dict[str, Any] | None) -> tuple[bool | None, float | None]:
    """The judge's verdict and score from an item's metadata; a missing or malformed value is None."""
    metadata = metadata or {}
    passed = metadata.get("judge_passed")
    score = metadata.get("judge_score")
    passed = passed if isinstance(passed, bool) else None
    valid = isinstance(score, int | float) and not isinstance(score, bool) and 0.0 <= score <= 1.0
    return passed, (float(score) if valid and not math.isnan(score) else None)


def judge_passes(passed: bool | None, score: float | None, policy: Policy) -> bool | None:
    """Whether the judge passes an item under the policy: the calibrated threshold when one is set."""
    if policy.judge_threshold is not None and score is not None:
        return score >= policy.judge_threshold
    return passed


def human_label(state: TierState) -> str | None:
    """'accept' or 'reject' when people decided the item (gold or rejected), else None."""
    return {Tier.gold: "accept", Tier.rejected: "reject"}.get(state.tier)


def derive(
    annotations: Sequence[Annotation], passed: bool | None, score: float | None, policy: Policy
) -> TierState:
    """The tier state of one item from its history, its judge fields and the project policy."""
    return derive_tier(annotations, judge_passes(passed, score, policy), policy.required_agreement)


def update_states(conn: sa.Connection, item_ids: Sequence[str]) -> dict[str, TierState]:
    """Re-derive the state of these items from their rows, through `conn` (inside the caller's
    transaction, so it sees the annotations just written); return each item's TierState."""
    ids = sorted(set(item_ids))
    if not ids:
        return {}
    # On PostgreSQL, lock the items: a refresh and a save of the same item derive one after the other.
    info = {
        r.id: r
        for r in conn.execute(
            sa.select(t.items.c.id, t.items.c.project_id, t.items.c.kind, t.projects.c.settings)
            .join(t.projects, t.projects.c.id == t.items.c.project_id)
            .where(t.items.c.id.in_(ids))
            .order_by(t.items.c.id)
            .with_for_update(of=t.items)
        )
    }
    versions = heads(conn, ids)
    metadata = body_field(conn, {i: v[1] for i, v in versions.items() if v[1] is not None}, "metadata")
    history = annotations_of(conn, ids)
    policies: dict[str, Policy] = {}
    states: dict[str, TierState] = {}
    state_rows, verdict_rows = [], []
    stamp = now_utc()
    for item_id in ids:
        row = info.get(item_id)
        if row is None or item_id not in versions:
            continue
        policy = policies.setdefault(row.project_id, policy_of(row.settings))
        passed, score = judge_fields(metadata.get(item_id))
        state = derive(history[item_id], passed, score, policy)
        states[item_id] = state
        state_rows.append(
            {
                "item_id": item_id,
                "project_id": row.project_id,
                "kind": row.kind,
                "version": versions[item_id][0],
                "policy": policy.key,
                "tier": state.tier.value,
                "human_label": human_label(state),
                "needs_adjudication": state.needs_adjudication,
                "judge_passed": passed,
                "judge_score": score,
                "n_annotations": len(history[item_id]),
                "detail": {
                    "accepted_by": list(state.accepted_by),
                    "rejected_by": list(state.rejected_by),
                    "reasons": list(state.reasons),
                    "adjudicated_by": state.adjudicated_by,
                    "inconsistent": list(state.inconsistent),
                },
                "updated_at": stamp,
            }
        )
        verdict_rows += [
            {"item_id": item_id, "author": author, "project_id": row.project_id, "label": str(label)}
            for author, label in conversation_verdicts(history[item_id]).items()
        ]
    upsert(conn, t.annotation_states, state_rows, ["item_id"], only_if_newer="version")
    conn.execute(sa.delete(t.annotation_verdicts).where(t.annotation_verdicts.c.item_id.in_(list(states))))
    if verdict_rows:
        conn.execute(sa.insert(t.annotation_verdicts), verdict_rows)
    return states


def _out_of_date(conn: sa.Connection, project_id: str, kind: str | None, policy: Policy) -> list[str]:
    """Items of the project whose derived row is missing, behind the head revision, or of another
    policy (rows with no annotation and only a policy change are caught up in SQL instead)."""
    i, s, r = t.items, t.annotation_states, t.revisions
    kinds = [i.c.kind.in_([kind] if kind else REVIEWED_KINDS)]
    missing = (
        sa.select(i.c.id)
        .outerjoin(s, s.c.item_id == i.c.id)
        .where(i.c.project_id == project_id, s.c.item_id.is_(None), *kinds)
    )
    newer = sa.exists().where(r.c.item_id == s.c.item_id, r.c.version > s.c.version)
    stale = sa.select(s.c.item_id).where(
        s.c.project_id == project_id,
        s.c.kind.in_([kind] if kind else REVIEWED_KINDS),
        newer | ((s.c.policy != policy.key) & (s.c.n_annotations > 0)),
    )
    return sorted(set(conn.scalars(missing)) | set(conn.scalars(stale)))


def _repolicy_unannotated(conn: sa.Connection, project_id: str, policy: Policy) -> None:
    """An item nobody annotated has the judge's tier: re-tier such rows in one statement."""
    s = t.annotation_states
    passes = s.c.judge_passed.is_(True)
    if policy.judge_threshold is not None:
        passes = sa.case(
            (s.c.judge_score.is_not(None), s.c.judge_score >= policy.judge_threshold), else_=passes
        )
    tier = sa.case((passes, Tier.silver.value), else_=Tier.unreviewed.value)
    conn.execute(
        sa.update(s)
        .where(s.c.project_id == project_id, s.c.policy != policy.key, s.c.n_annotations == 0)
        .values(tier=tier, policy=policy.key, updated_at=now_utc())
    )


# Per open store, then project and kind: the policy and the store's revisions (Store.revisions_stamp) when
# refresh_states last found every derived row up to date. What a derived row follows changes only with a
# revision (an item added, edited or annotated) or the policy, so a call that finds the same has nothing
# to do, and skips looking through every item of the project (156 ms at 100,000 items, on each page read).
# Kept by Store object, not URL: a store opened again (a database restored or replaced) starts afresh.
_UP_TO_DATE: weakref.WeakKeyDictionary[Store, dict[tuple[str, str | None], tuple]] = (
    weakref.WeakKeyDictionary()
)


def refresh_states(store: Store, project_id: str, kind: str | None = None) -> int:
    """Bring the project's derived rows up to date (items of `kind`, else of every REVIEWED_KINDS);
    return how many items were re-derived.

    Cheap when nothing changed (two indexed queries, none when no revision was made since the last call
    found everything up to date), so pages call it before each queue read.
    """
    policy = project_policy(store, project_id)
    # Read before looking: a revision made while this call works is seen by the next.
    stamp = (policy.key, store.revisions_stamp())
    key = (project_id, kind)
    if _UP_TO_DATE.get(store, {}).get(key) == stamp:
        return 0
    with store.read() as conn:
        todo = _out_of_date(conn, project_id, kind, policy)
        repolicy = conn.scalar(
            sa.select(sa.func.count())
            .select_from(t.annotation_states)
            .where(t.annotation_states.c.project_id == project_id, t.annotation_states.c.policy != policy.key)
        )
    if repolicy:
        with store.write() as conn:
            _repolicy_unannotated(conn, project_id, policy)
    for batch in chunks(todo, BATCH * 4):
        with store.write() as conn:
            update_states(conn, batch)
    _UP_TO_DATE.setdefault(store, {})[key] = stamp
    return len(todo)


def set_policy(
    store: Store,
    project_id: str,
    *,
    required_agreement: int | None = None,
    judge_threshold: float | None = None,
    clear_threshold: bool = False,
    actor: Actor | None = None,
) -> Policy:
    """Change the project's tier policy and re-derive what it changes; return the new policy. A lead's."""
    who = authorize(store, actor, Permission.manage_review, "review.policy", project_id=project_id)
    settings = store.project(project_id).settings
    changes: dict[str, Any] = {}
    if required_agreement is not None:
        changes[REQUIRED_AGREEMENT] = required_agreement
    if judge_threshold is not None:
        changes[JUDGE_THRESHOLD] = judge_threshold
    policy = policy_of({**settings, **changes, **({JUDGE_THRESHOLD: None} if clear_threshold else {})})
    if clear_threshold:
        changes[JUDGE_THRESHOLD] = None
    store.update_settings(project_id, changes)
    refresh_states(store, project_id)
    record(store, who, "review.policy", project_id=project_id, target=project_id, detail=str(changes))
    return policy
