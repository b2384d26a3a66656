"""pass^k over repetitions: `evalcore run --repeat 3` makes three linked runs of the same items, and pass^k
of a seeded set of verdicts matches the value computed by hand."""

from __future__ import annotations

import sqlalchemy as sa
from results_support import seed_scores
from runs_support import sample_project
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.reports.pass_k import item_successes, run_pass_k
from evalcore.runs.repetitions import repetitions_of
from evalcore.store import schema as t


def _items(store, run_id):
    j = t.judgments
    with store.read() as conn:
        rows = conn.execute(
            sa.select(j.c.id, sa.func.coalesce(j.c.conversation_id, j.c.test_id))
            .where(j.c.run_id == run_id, j.c.score.is_not(None))
            .order_by(j.c.id)
        ).all()
    out: dict[str, list[int]] = {}
    for jid, item in rows:
        out.setdefault(item, []).append(jid)
    return out


def test_repeat_makes_linked_runs_and_pass_k_matches_a_hand_computed_fixture(sqlite_store):
    store = sqlite_store
    pid, _ = sample_project(store)
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--db",
            store.url,
            "--target",
            "demo",
            "--judge",
            "offline",
            "--repeat",
            "3",
            "--name",
            "exp",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "over 3 repetitions: pass^1" in result.output
    runs = sorted(store.runs(pid, kind="run"), key=lambda r: r.params["repetition"]["index"])
    assert [r.params["name"] for r in runs] == ["exp #1", "exp #2", "exp #3"]
    assert len({tuple(r.params["items"]) for r in runs}) == 1  # the same items, three times
    assert [r.id for r in repetitions_of(store, runs[1])] == [r.id for r in runs]
    # The fixture: every turn of every item passes in every repetition, except item A fails in
    # repetition 2 and item B fails in repetitions 1 and 3. Items: A (c=2, n=3), B (c=1), the rest c=3.
    per_run = [_items(store, r.id) for r in runs]
    items = sorted(per_run[0])
    assert len(items) >= 3
    a, b = items[0], items[1]
    seed_scores(store, {jid: 1.0 for rows in per_run for jids in rows.values() for jid in jids})
    seed_scores(store, {per_run[1][a][0]: 0.0, per_run[0][b][-1]: 0.0, per_run[2][b][0]: 0.0})
    assert item_successes(store, pid, [r.id for r in runs])[a] == (2, 3)
    n = len(items)
    # pass^k = mean over items of C(c, k) / C(3, k): A gives 2/3, 1/3, 0; B gives 1/3, 0, 0; others 1.
    expected = {1: (n - 2 + 2 / 3 + 1 / 3) / n, 2: (n - 2 + 1 / 3) / n, 3: (n - 2) / n}
    got = run_pass_k(store, runs[0])
    assert got.keys() == expected.keys()
    for k, value in expected.items():
        assert abs(got[k] - value) < 1e-12, (k, got[k], value)
    report = CliRunner().invoke(app, ["report", "--db", store.url, "--run", runs[0].id])
    assert report.exit_code == 0, report.output
    assert f"pass^3 {expected[3]:.1%}" in report.output
