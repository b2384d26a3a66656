"""The process saving reviews (the dashboard's server) killed mid-save, on SQLite and PostgreSQL (issue 25,
finding 6): every save that returned is in the store, and the save in hand when the process died is there
whole or not at all (its turn and conversation verdicts together), never half."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from evalcore.inputs import import_project
from evalcore.store import Store
from tests.annotation_data import add_conversations

ROOT = Path(__file__).resolve().parents[2]
SAVER = """
import sys
sys.path[:0] = ['.']
from evalcore.review import ItemVerdict, TurnVerdict, open_item, save_review
from evalcore.store import Store
store = Store(sys.argv[1])
for item in sys.argv[2:]:
    version = open_item(store, item).version
    turns = [TurnVerdict(turn_index=i, label='reject', reason='unsafe') for i in (1, 3, 5)]
    save_review(store, item, 'ann', version, turns, ItemVerdict(label='reject', reason='unsafe'))
    print(item, flush=True)  # the page would now say "Saved"
"""


def test_a_saver_killed_mid_save_loses_no_saved_review_and_leaves_none_half(db_url):
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    items = add_conversations(store, pid, 40)
    store.close()
    saver = subprocess.Popen(
        [sys.executable, "-c", SAVER, db_url, *items], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    saved: list[str] = []
    deadline = time.monotonic() + 120
    while len(saved) < 5 and time.monotonic() < deadline:  # some saves done, more in hand
        line = saver.stdout.readline()
        if not line:
            break
        saved.append(line.strip())
    saver.send_signal(signal.SIGKILL)  # no cleanup of any kind, as a killed server
    saver.wait()
    saved += [line.strip() for line in saver.stdout.read().splitlines() if line.strip()]
    assert 5 <= len(saved) < len(items), "killed with saves done and saves left"

    store = Store(db_url)
    for item in items:
        mine = [a for a in store.annotations(item) if a.author == "ann"]
        whole = {a.turn_index for a in mine} == {1, 3, 5, None}
        assert whole or not mine, f"{item}: half a save ({sorted(map(str, (a.turn_index for a in mine)))})"
        if item in saved:
            assert whole, f"{item}: saved, then lost"
    store.close()
