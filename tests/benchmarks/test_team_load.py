"""A team's load, small, in the browser (issue 16): benchmarks/team_load.py with 3 annotators in their own
headless Chromium on the dashboard, 2 conversations each, while two workers run a doc-QA job and a run, on
SQLite and PostgreSQL: no save lost, no unit done twice, no model call repeated (the script checks them
and exits 1 otherwise; its figures are read back here too)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser import chromium_path

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def test_annotators_in_browsers_lose_no_save_while_two_workers_run_jobs(db_url: str) -> None:
    if chromium_path() is None:
        pytest.skip("Debian chromium and chromium-driver are needed: run scripts/setup.sh --test")
    command = [
        sys.executable, "benchmarks/team_load.py", "--db", db_url, "--annotators", "3",
        "--conversations", "3", "--overlap", "2", "--unassigned", "10", "--per-spec", "2",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "saves: 6 of 6 in the store (0 lost)" in out, out
    assert "run finished: 39 turns judged, 0 twice; 39 model calls, 0 repeated" in out, out
    assert ", 0 made twice" in out, out
    assert "errors, 0 unanswered" in out and "server-side save latency, arrival to commit: p50" in out, out
