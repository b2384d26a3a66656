"""A batch killed with SIGKILL half way and started again repeats no completed call and loses no unit."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from llm_server import SENTINEL_OPENAI_KEY

from evalcore.store import Store

UNITS = 12
HOLD_AFTER = 6
JOB = """
import sys
from evalcore.documents.entity_task import EXTRACT_ENTITIES
from evalcore.llm import ModelClient
from evalcore.models import Run, RunStatus
from evalcore.store import Store

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project

url, run_id, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = Store(url)
store.create_project("p1", "Resume project")
run = store.start_run("p1", Run(id=run_id, kind="test.entities"))
finished = store.finished_units(run_id)
todo = [i for i in range(n) if f"unit-{i}" not in finished]
print(f"todo {len(todo)}", flush=True)

def save(index, result):
    key = f"unit-{todo[index]}"
    with store.unit(run_id, key) as unit:
        unit.result = result.output.model_dump() if result.ok else None
        if not result.ok:
            unit.fail(result.error or "failed", {"raw": result.raw})
    print(f"done {key}", flush=True)

llm = ModelClient(store, "p1", run_id=run_id)
inputs = [{"passage": f"unit-{i}: Acme ships order ORD-{1000 + i}."} for i in todo]
llm.run_batch(EXTRACT_ENTITIES, inputs, model="openai/gpt-4o-mini", concurrency=3, on_result=save)
store.update_run(store.run(run_id).model_copy(update={"status": RunStatus.finished}))
print("finished", flush=True)
"""


def start_job(tmp_path: Path, url: str, server) -> tuple[subprocess.Popen, queue.Queue]:
    script = tmp_path / "job.py"
    script.write_text(JOB)
    env = {**os.environ, "OPENAI_API_KEY": SENTINEL_OPENAI_KEY, "OPENAI_BASE_URL": server.openai_base_url}
    env.pop("EVALCORE_OFFLINE", None)
    proc = subprocess.Popen(
        [sys.executable, str(script), url, "run-k", str(UNITS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line.strip()) for line in proc.stdout], daemon=True).start()
    return proc, lines


def read_until(lines: queue.Queue, predicate, timeout: float = 60.0) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while not predicate(seen):
        seen.append(lines.get(timeout=max(0.1, deadline - time.monotonic())))
    return seen


def test_a_killed_batch_resumes_without_repeating_completed_calls(tmp_path, llm_server):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    llm_server.latency = 0.05
    llm_server.hold_after = HOLD_AFTER  # later requests wait unanswered: nothing is in transit at the kill

    proc, lines = start_job(tmp_path, url, llm_server)
    out = read_until(lines, lambda seen: sum(s.startswith("done") for s in seen) == HOLD_AFTER)
    deadline = time.monotonic() + 10
    while llm_server.held < 3 and time.monotonic() < deadline:  # every worker waits on a held request
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    finished_before_kill = {line.split()[1] for line in out if line.startswith("done")}
    store = Store(url)
    try:
        assert finished_before_kill <= set(store.finished_units("run-k")), "a finished unit was lost"
        assert store.run("run-k").status.value == "running"
    finally:
        store.close()

    llm_server.release_held()  # the held requests are dropped unanswered (the client is dead anyway)
    deadline = time.monotonic() + 10
    while llm_server.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    completed_before = len(llm_server.completed())
    assert completed_before == HOLD_AFTER

    proc, lines = start_job(tmp_path, url, llm_server)
    rest = read_until(lines, lambda seen: bool(seen) and seen[-1] == "finished")
    assert proc.wait(timeout=30) == 0, proc.stderr.read()
    assert rest[0] == f"todo {UNITS - len(finished_before_kill)}"

    keys = [call.key for call in llm_server.completed()]
    assert len(keys) == UNITS and len(set(keys)) == UNITS, "a completed call was repeated"
    store = Store(url)
    try:
        units = store.finished_units("run-k")
        assert sorted(units) == sorted(f"unit-{i}" for i in range(UNITS))
        assert {u["status"] for u in units.values()} == {"done"}
        assert store.run("run-k").status.value == "finished"
    finally:
        store.close()
