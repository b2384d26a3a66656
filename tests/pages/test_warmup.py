"""The dashboard's server imports what the pages import before its first visitor (issue 28): the list is
read from the pages' source, and `warm_up` leaves every module of it imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pages._warmup import page_imports

ROOT = Path(__file__).resolve().parents[2]


def test_the_pages_imports_are_read_from_their_source():
    names = page_imports()
    assert len(names) == len(set(names))
    for module in ("pages._common", "pages._auth", "evalcore.specs.charts", "plotly.express", "pandas"):
        assert module in names


def test_warm_up_imports_every_page_library_in_a_fresh_process():
    code = (
        "import json, sys; from pages._warmup import page_imports, warm_up; "
        "before = set(sys.modules); warmed = warm_up(); "
        "print(json.dumps([sorted(set(page_imports()) - set(sys.modules)), len(set(sys.modules) - before), "
        "warmed == page_imports()]))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    missing, imported, same = json.loads(done.stdout.strip().splitlines()[-1])
    assert missing == [] and same
    assert imported > 500  # streamlit, pandas, plotly and the library: not a no-op
