"""Two runs of the demo target over the sample with a seeded change between them (the results view's and
the compare's tests): in the second run three passing turns fail and one failing turn passes."""

from __future__ import annotations

import sqlalchemy as sa
from runs_support import sample_project

from evalcore.runs import run_target
from evalcore.store import Store
from evalcore.store import schema as t


def seed_scores(store: Store, flips: dict[int, float]) -> None:
    """The seeded change: set the score (and error type) of some judgments."""
    j = t.judgments
    with store.write() as conn:
        for jid, score in flips.items():
            values = {"score": score, "error_type": None if score else "wrong_fact"}
            conn.execute(sa.update(j).where(j.c.id == jid).values(**values))


def two_demo_runs(store: Store) -> tuple[str, str, str, set[tuple[str, int]], set[tuple[str, int]]]:
    """(project, baseline run, run, broken (item, turn), fixed (item, turn))."""
    pid, _ = sample_project(store)
    base = run_target(store, pid, "demo", judge="offline", name="baseline").run.id
    now = run_target(store, pid, "demo", judge="offline", name="candidate").run.id
    j = t.judgments
    with store.read() as conn:
        rows = conn.execute(
            sa.select(j.c.id, j.c.conversation_id, j.c.turn_index, j.c.score)
            .where(j.c.run_id == now, j.c.score.is_not(None), j.c.multi_turn.is_not(None))
            .order_by(j.c.id)
        ).all()
    passing = [r for r in rows if r[3] == 1][:3]
    failing = [r for r in rows if r[3] == 0][:1]
    assert len(passing) == 3 and len(failing) == 1, "the demo run should hold passes and failures"
    seed_scores(store, {r[0]: 0.0 for r in passing} | {r[0]: 1.0 for r in failing})
    return pid, base, now, {(r[1], r[2]) for r in passing}, {(r[1], r[2]) for r in failing}
