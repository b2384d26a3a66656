"""The code base stays `ruff check` and `ruff format` clean."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_check_is_clean():
    result = _ruff("check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean():
    result = _ruff("format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_library_never_imports_streamlit():
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "evalcore").rglob("*.py")
        if any(
            line.strip().startswith(("import streamlit", "from streamlit"))
            for line in path.read_text(encoding="utf-8").splitlines()
        )
    ]
    assert offenders == []


def test_the_model_layer_imports_no_pipeline_stage():
    """llm is the layer every stage calls; a task lives with the stage that needs it (DESIGN.md, Layout)."""
    stages = "inputs|documents|specs|generators|items|review|runs|reports"
    stage = re.compile(rf"^\s*(from|import) evalcore\.({stages})\b")
    offenders = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in (ROOT / "evalcore" / "llm").rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if stage.match(line)
    ]
    assert offenders == []
