"""Table 1 of seed 001 for one generation run (issue 26, item 3): the count at each stage, from the
library and at the head of `evalcore procedures report`."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.generators.procedure.funnel import STAGES, funnel, funnel_line
from evalcore.generators.procedure.job import generate
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_tests
from evalcore.store import Store

RETAIL = Path(__file__).resolve().parents[3] / "data" / "retail"


def test_the_funnel_counts_each_stage_of_one_run(sqlite_store: Store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, RETAIL).project_id
    first = generate(sqlite_store, pid, paths=2, seed=0).run.id
    second = generate(sqlite_store, pid, paths=3, seed=1).run.id
    stages = dict(funnel(sqlite_store, pid, second))
    assert list(stages) == list(STAGES)
    assert stages["procedures"] == stages["with known APIs"] == stages["valid flowgraphs"] == 6
    assert stages["conversations"] == 6 * 3  # this run's paths only, not the first run's
    tests = [t for t in list_tests(sqlite_store, pid) if t.provenance.run_id == second]
    assert stages["tests"] == len(tests) > 0
    assert dict(funnel(sqlite_store, pid, first))["conversations"] == 6 * 2
    got = CliRunner().invoke(app, ["procedures", "report", "--db", sqlite_store.url])
    assert f"Table 1, generation run {second}: {funnel_line(funnel(sqlite_store, pid, second))}" in got.output
    assert "no procedure test run yet" in got.output and "Traceback" not in got.output
