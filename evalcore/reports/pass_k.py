"""pass^k over the repetitions of a run (issue 27, item 3), as tau-bench defines it: an item (a task) is
passed in a repetition when every turn of it that was scored passed; pass^k is the mean over items of
C(c, k) / C(n, k), with c the repetitions it passed in and n those that scored it
(`evalcore.stats.paired.pass_hat_k`). Items annotators rejected are left out unless asked for, and an item
scored in fewer than k repetitions has no pass^k of that k and is left out of it."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from evalcore.items.state import refresh_states
from evalcore.models import Run
from evalcore.runs.repetitions import repetitions_of
from evalcore.stats.paired import pass_hat_k
from evalcore.store import Store
from evalcore.store import schema as t


def item_successes(
    store: Store, project_id: str, run_ids: Sequence[str], *, include_rejected: bool = False
) -> dict[str, tuple[int, int]]:
    """Item -> (repetitions it passed in, repetitions that scored it) over the runs."""
    j, s = t.judgments, t.annotation_states
    item = t.JUDGMENT_ITEM
    query = (
        sa.select(j.c.run_id, item, sa.func.min(j.c.score))
        .where(j.c.run_id.in_(list(run_ids)), j.c.score.is_not(None))
        .group_by(j.c.run_id, item)
    )
    rejected: set[str] = set()
    if not include_rejected:
        refresh_states(store, project_id)
        with store.read() as conn:
            rejected = set(
                conn.scalars(
                    sa.select(s.c.item_id).where(s.c.project_id == project_id, s.c.tier == "rejected")
                )
            )
    counts: dict[str, list[int]] = {}
    with store.read() as conn:
        for _, item_id, lowest in conn.execute(query):
            if item_id in rejected:
                continue
            c = counts.setdefault(item_id, [0, 0])
            c[0] += lowest >= 1
            c[1] += 1
    return {k: (c, n) for k, (c, n) in counts.items()}


def pass_k(successes: dict[str, tuple[int, int]], k: int) -> float | None:
    """pass^k over the items scored in at least k repetitions; None when there is none."""
    kept = [cn for cn in successes.values() if cn[1] >= k]
    return pass_hat_k(kept, k) if kept else None


def run_pass_k(store: Store, run: Run, *, include_rejected: bool = False) -> dict[int, float | None]:
    """k -> pass^k for k = 1 .. the number of repetitions of the run's group that hold judgments."""
    group = repetitions_of(store, run)
    successes = item_successes(
        store, run.params["project_id"], [r.id for r in group], include_rejected=include_rejected
    )
    trials = max((n for _, n in successes.values()), default=0)
    return {k: pass_k(successes, k) for k in range(1, trials + 1)}


def pass_k_line(values: dict[int, float | None]) -> str:
    """'pass^1 62.5% · pass^2 50.0% · pass^3 41.7%' (empty when no item was scored)."""
    return " · ".join(f"pass^{k} {'-' if v is None else f'{v:.1%}'}" for k, v in values.items())
