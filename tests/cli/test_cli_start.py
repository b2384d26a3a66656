"""The CLI starts fast (issue 15, item 6): `evalcore --help` and `evalcore status` load none of the heavy
libraries (pandas, numpy, networkx, alembic, rich's help), which took seconds to import; timed by
benchmarks/cli_start.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("pandas", "numpy", "networkx", "alembic", "umap", "bm25s", "rich")
PROBE = """
import json, sys
from evalcore.cli.main import app
sys.argv = ["evalcore", *sys.argv[1:]]
try:
    app()
except SystemExit:
    pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.stdin.readline())))))
"""


def loaded(args: list[str], env: dict[str, str]) -> list[str]:
    """Which of HEAVY a fresh interpreter has imported after `evalcore *args` (its last line of output)."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *args], input=json.dumps(HEAVY) + "\n", env=env,
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return json.loads(out.strip().splitlines()[-1])


def test_help_and_status_import_no_heavy_library(tmp_path: Path):
    env = {**os.environ, "EVALCORE_DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}"}
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-m", "evalcore.cli.main", "import", str(root / "data" / "sample")],
                   env=env, check=True, capture_output=True)  # fmt: skip
    assert loaded(["--help"], env) == []
    assert loaded(["status"], env) == []
    assert loaded(["specs", "select", "--help"], env) == []
