"""Run against run: two runs of the demo target with a seeded change between them; the compare lists
exactly the turns that flipped, its paired test is McNemar's, and the CI gate exits as it should."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from runs_support import sample_project
from scipy.stats import binomtest
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.errors import UsageError
from evalcore.models import Run, RunStatus
from evalcore.reports import compare
from evalcore.reports.compare import BROKEN, FIXED, compare_to_baseline, summary_markdown
from evalcore.reports.compare import _fetch_all as fetch_all
from evalcore.reports.results import run_name
from evalcore.runs import run_target
from evalcore.store import Store
from evalcore.store import schema as t


def _seed(store: Store, run_id: str, flips: dict[int, float]) -> None:
    """The seeded change: set the score of some judgments of the second run."""
    j = t.judgments
    with store.write() as conn:
        for jid, score in flips.items():
            conn.execute(
                sa.update(j)
                .where(j.c.id == jid)
                .values(score=score, error_type=None if score else "wrong_fact")
            )


def _scored(store: Store, run_id: str) -> list[tuple[int, str, int, float]]:
    j = t.judgments
    with store.read() as conn:
        rows = conn.execute(
            sa.select(j.c.id, j.c.conversation_id, j.c.turn_index, j.c.score)
            .where(j.c.run_id == run_id, j.c.score.is_not(None), j.c.multi_turn.is_not(None))
            .order_by(j.c.id)
        ).all()
    return [tuple(r) for r in rows]


@pytest.fixture
def two_runs(sqlite_store: Store):
    """Two demo runs over the sample; in the second, three passing turns fail and one failing one passes."""
    store = sqlite_store
    pid, _ = sample_project(store)
    base = run_target(store, pid, "demo", judge="offline").run.id
    now = run_target(store, pid, "demo", judge="offline").run.id
    rows = _scored(store, now)
    passing = [r for r in rows if r[3] == 1][:3]
    failing = [r for r in rows if r[3] == 0][:1]
    assert len(passing) == 3 and len(failing) == 1, "the demo run should hold passes and failures"
    _seed(store, now, {r[0]: 0.0 for r in passing} | {r[0]: 1.0 for r in failing})
    broken = {(r[1], r[2]) for r in passing}
    fixed = {(r[1], r[2]) for r in failing}
    return store, pid, base, now, broken, fixed


def test_the_compare_lists_exactly_the_turns_that_flipped(two_runs):
    store, _, base, now, broken, fixed = two_runs
    cmp = compare_to_baseline(store, now, base)
    flipped = cmp.flipped()
    assert {(r.item_id, r.turn_index) for r in flipped.itertuples() if r.change == BROKEN} == broken
    assert {(r.item_id, r.turn_index) for r in flipped.itertuples() if r.change == FIXED} == fixed
    assert list(cmp.items["change"][:3]) == [BROKEN] * 3  # regressions first
    assert (cmp.overall.broken, cmp.overall.fixed) == (3, 1)
    assert cmp.overall.p_value == pytest.approx(binomtest(3, 4, 0.5).pvalue)
    assert sum(ch.broken for ch in cmp.by_spec.values()) == 3
    assert cmp.overall.failures - cmp.overall.baseline_failures == 2
    assert not cmp.overall.worse(0.05)  # 3 against 1 is within chance
    assert "all tiers but rejected" in summary_markdown(cmp, 0.05)


def test_a_run_against_itself_changes_nothing(two_runs):
    store, _, base, _, _, _ = two_runs
    cmp = compare_to_baseline(store, base, base)
    assert cmp.flipped().empty and cmp.overall.p_value == 1.0


def test_a_compare_sees_what_a_run_holds_now_not_what_it_held_at_the_last_compare(two_runs):
    store, _, base, now, _, fixed = two_runs
    assert compare_to_baseline(store, now, base).overall.broken == 3
    # A turn passing in both judged again, failing: its last judgment is the one compared.
    j = t.judgments
    again = next(r for r in _scored(store, now) if r[3] == 1 and (r[1], r[2]) not in fixed)
    with store.write() as conn:
        row = conn.execute(sa.select(j).where(j.c.id == again[0])).mappings().one()
        conn.execute(sa.insert(j).values({**row, "id": None, "score": 0.0, "error_type": "wrong_fact"}))
    cmp = compare_to_baseline(store, now, base)
    assert cmp.overall.broken == 4
    assert (again[1], again[2]) in {(r.item_id, r.turn_index) for r in cmp.flipped().itertuples()}
    assert compare_to_baseline(store, base, now).overall.fixed == 4  # either way round


def test_runs_read_ahead_are_read_once_and_compared_the_same(two_runs, monkeypatch):
    store, _, base, now, broken, fixed = two_runs
    reads = []

    def counted(conn, query):
        reads.append(query)
        return fetch_all(conn, query)

    def finish_reading_ahead():
        for thread in threading.enumerate():
            if thread.name.startswith("read-ahead"):
                thread.join()

    monkeypatch.setattr(compare, "_fetch_all", counted)
    compare._SIDES.clear()
    compare.read_ahead(store, [now])  # as the page does while a baseline is picked
    finish_reading_ahead()
    assert len(reads) == 1  # the run, read in the background
    cmp = compare_to_baseline(store, now, base)
    assert len(reads) == 2  # the compare read only the baseline
    assert {(r.item_id, r.turn_index) for r in cmp.flipped().itertuples()} == broken | fixed
    compare.read_ahead(store, [now, base])  # both already read: nothing more
    compare.read_ahead(store, ["no-such-run"])
    assert len(reads) == 2 and not [t for t in threading.enumerate() if t.name.startswith("read-ahead")]
    # Both runs read ahead (the run and its likely baseline): the compare reads neither.
    compare._SIDES.clear()
    compare.read_ahead(store, [now, base, "no-such-run", now])
    finish_reading_ahead()
    assert len(reads) == 4
    assert compare_to_baseline(store, now, base).flipped().equals(cmp.flipped())
    assert len(reads) == 4


def test_the_likely_baseline_is_the_latest_run_before_else_the_latest():
    at = [datetime(2026, 11, day, tzinfo=UTC) for day in (1, 2, 3, 4)]
    first, second, third, fourth = (Run(id=f"r{i}", kind="run", started_at=a) for i, a in enumerate(at))
    assert compare.likely_baseline(third, [fourth, first, second]) == second.id
    assert compare.likely_baseline(first, [third, fourth]) == fourth.id  # none before: the latest
    assert compare.likely_baseline(first, []) is None


def test_a_baseline_that_cannot_be_compared_is_refused_saying_why(two_runs):
    store, pid, _, now, _, _ = two_runs
    store.start_run(pid, Run(id="live", kind="run", status=RunStatus.running, params={"project_id": pid}))
    with pytest.raises(UsageError, match="baseline live is still running"):
        compare_to_baseline(store, now, "live")
    store.create_project("other", "Other")
    store.start_run(
        "other", Run(id="far", kind="run", status=RunStatus.finished, params={"project_id": "other"})
    )
    store.finish_run("far", RunStatus.finished)
    with pytest.raises(UsageError, match="baseline far is from project other"):
        compare_to_baseline(store, now, "far")
    store.start_run(pid, Run(id="empty", kind="run", status=RunStatus.finished, params={"project_id": pid}))
    store.finish_run("empty", RunStatus.finished)
    with pytest.raises(UsageError, match="no scored item in common"):
        compare_to_baseline(store, now, "empty")
    store.start_run(
        pid, Run(id="sims", kind="simulation", status=RunStatus.finished, params={"project_id": pid})
    )
    store.finish_run("sims", RunStatus.finished)
    with pytest.raises(UsageError, match=r"baseline sims is a simulation run and run .* a run run"):
        compare_to_baseline(store, now, "sims")


def _cli(store: Store, *args: str):
    return CliRunner().invoke(app, ["report", "--db", store.url, *args])


def test_the_gate_exits_1_on_a_regression_prints_what_broke_and_writes_a_summary(sqlite_store, tmp_path):
    store = sqlite_store
    pid, _ = sample_project(store)
    base = run_target(store, pid, "demo", judge="offline").run.id
    now = run_target(store, pid, "demo", judge="offline").run.id
    passing = [r for r in _scored(store, now) if r[3] == 1]
    assert len(passing) >= 6, "the gate test needs six passing turns to break (p < 0.05)"
    _seed(store, now, {r[0]: 0.0 for r in passing})
    summary = tmp_path / "gate.md"
    result = _cli(store, "--run", now, "--baseline", base, "--fail-on-regression", "--summary", str(summary))
    p = binomtest(len(passing), len(passing), 0.5).pvalue
    assert p < 0.05 and result.exit_code == 1, result.output
    assert f"broke: {passing[0][1]} turn {passing[0][2]}" in result.output
    text = summary.read_text()
    named = {r: f"{run_name(store.run(r))} (`{r}`)" for r in (now, base)}
    assert text.startswith(f"## {named[now]} vs baseline {named[base]}: worse")
    assert named[now].startswith("demo · demo · "), "the run's name, then its id"
    assert f"### Broken ({len(passing)})" in text
    # At a level the p-value does not reach, the same run passes the gate.
    lenient = _cli(store, "--run", now, "--baseline", base, "--fail-on-regression", "--alpha", f"{p / 2}")
    assert lenient.exit_code == 0, lenient.output
    # Against itself nothing broke: exit 0, and the report is the one without --baseline plus the compare.
    same = _cli(store, "--run", now, "--baseline", now, "--fail-on-regression")
    plain = _cli(store, "--run", now)
    assert same.exit_code == 0 and plain.exit_code == 0
    assert same.stdout == plain.stdout


def test_a_baseline_still_running_is_exit_2_and_writes_nothing(two_runs, tmp_path):
    store, pid, _, now, _, _ = two_runs
    store.start_run(pid, Run(id="live", kind="run", status=RunStatus.running, params={"project_id": pid}))
    out, summary = tmp_path / "tables.md", tmp_path / "gate.md"
    result = _cli(store, "--run", now, "--baseline", "live", "--summary", str(summary), "-o", str(out))
    assert result.exit_code == 2
    assert "baseline live is still running" in result.output
    assert not out.exists() and not summary.exists()
