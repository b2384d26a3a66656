"""Smoke test of benchmarks/scenarios.py, run small: every probe passes on the clean flow assistant and
every injected defect is caught by its assertion (the benchmark exits 1 otherwise)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_scenario_benchmark_small_catches_every_defect() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scenarios.py"), "--scenarios", "3", "--run-count", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "EVALCORE_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "every defect caught by its assertion, every probe passing without it: yes" in done.stdout
