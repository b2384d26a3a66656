"""The README's DeepEval and promptfoo round trips run as written (section "Other tools' formats"):
evalcore's lines through the CLI in this process, the DeepEval line with this interpreter (DeepEval from
.venv-interop), the promptfoo line with the promptfoo `scripts/setup.sh --test` installs."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from import_cases import cli
from test_interop_libraries import INTEROP_PYTHON
from test_interop_promptfoo import PROMPTFOO

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "README.md").read_text().split("## Other tools' formats", 1)[1].split("\n## ", 1)[0]
BLOCKS = [block.split("```", 1)[0] for block in SECTION.split("```bash\n")[1:]]


def _run(line: str, cwd: Path) -> None:
    """One line of a README block, run as a user would (the store: $EVALCORE_DATABASE_URL)."""
    for part in line.split(" && "):
        words = shlex.split(part)
        if words[0] == ".venv/bin/evalcore":
            result = cli(*words[1:])
            assert result.exit_code == 0, (part, result.output)
        elif words[0] == ".venv-interop/bin/python":
            env = {**os.environ, "DEEPEVAL_TELEMETRY_OPT_OUT": "YES"}
            subprocess.run([str(INTEROP_PYTHON), *words[1:]], cwd=cwd, env=env, check=True, timeout=300)
        elif words[0] == "npx":
            env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
                   "PROMPTFOO_CONFIG_DIR": str(cwd / "promptfoo"), "OPENAI_API_KEY": ""}  # fmt: skip
            # Exit code 100: some tests failed (the echo target is no assistant): the run itself is the check.
            subprocess.run([str(PROMPTFOO), *words[2:]], cwd=cwd, env=env, timeout=300)
            assert (cwd / "results.json").exists()
        else:
            subprocess.run(["bash", "-c", part], cwd=cwd, check=True, timeout=60)


@pytest.mark.skipif(
    not PROMPTFOO.exists() or not INTEROP_PYTHON.exists(),
    reason="promptfoo or .venv-interop is not installed: `bash scripts/setup.sh --test`",
)
def test_the_deepeval_and_promptfoo_round_trips_run_as_written(tmp_path, monkeypatch):
    assert len(BLOCKS) == 2
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "sample").symlink_to(SAMPLE_PROJECT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(DATABASE_URL_ENV, f"sqlite:///{tmp_path / 'store.db'}")
    for line in BLOCKS[0].splitlines():
        _run(line, tmp_path)
    first, copy = Store(f"sqlite:///{tmp_path / 'store.db'}"), Store(f"sqlite:///{tmp_path / 'copy.db'}")
    project_id = first.projects()[0].id
    ours = {r.item_id: r.body for r in first.list_current(project_id, "conversation")}
    assert ours and {r.item_id: r.body for r in copy.list_current(project_id, "conversation")} == ours

    for line in ("import data/sample", "specs import specs.yaml --author ana"):  # copy2.db as copy.db
        assert cli(*line.split(), "--db", f"sqlite:///{tmp_path / 'copy2.db'}").exit_code == 0
    for line in BLOCKS[1].splitlines():
        _run(line, tmp_path)
    copy2 = Store(f"sqlite:///{tmp_path / 'copy2.db'}")
    assert {r.item_id: r.body for r in copy2.list_current(project_id, "conversation")} == ours
    results = json.loads((tmp_path / "results.json").read_text())["results"]["results"]
    assert len(results) == len(ours)
