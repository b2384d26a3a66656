"""The dashboard's server imports what the pages import before its first visitor (issue 28): the list is
read from the pages' source, and `warm_up` leaves every module of it imported, and what it loaded frozen out
of the garbage collector's reach (Streamlit collects after every script run)."""

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
    for module in ("pages._common", "pages._auth", "evalcore.specs.charts", "streamlit", "pandas"):
        assert module in names


def test_warm_up_imports_every_page_library_in_a_fresh_process():
    code = (
        "import gc, json, sys, time; from pages._warmup import page_imports, warm_up; "
        "before = set(sys.modules); warmed = warm_up(); "
        "start = time.process_time(); gc.collect(); collect = time.process_time() - start; "
        "from evalcore.llm.local import WordLlamaProvider; "
        "print(json.dumps([sorted(set(page_imports()) - set(sys.modules)), len(set(sys.modules) - before), "
        "warmed == page_imports(), gc.get_freeze_count(), len(gc.get_objects()), collect, "
        "sorted(WordLlamaProvider._models)]))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = json.loads(done.stdout.strip().splitlines()[-1])
    missing, imported, same, frozen, tracked, collect, models = printed
    assert missing == [] and same
    assert models == ["l2_supercat_256"]  # the local embedding model Settings names, loaded before a visit
    assert imported > 500  # streamlit, pandas, pyarrow and the library: not a no-op
    # What was loaded is frozen: a full collection no longer walks it (0.1 s and more before, per rerun).
    assert frozen > 100_000 and tracked < frozen / 10, (frozen, tracked)
    assert collect < 0.05, collect
