"""The team setup of deploy/ (issue 16): PostgreSQL, two dashboard replicas and two workers as processes on
127.0.0.1, started by deploy/start.sh and stopped by deploy/stop.sh, as a lead would."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from pg import SKIP_ENV, find_bin_dir
from runs_support import sample_project

from evalcore.jobs.queue import enqueue
from evalcore.models import RunStatus
from evalcore.runs import create_run
from evalcore.store import Store

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.postgres  # deploy/start.sh starts its own PostgreSQL server


@pytest.fixture(autouse=True)
def _postgres_binaries() -> None:
    if find_bin_dir() is None:
        if os.environ.get(SKIP_ENV) == "1":
            pytest.skip("no PostgreSQL binaries")
        pytest.fail(f"deploy/start.sh needs PostgreSQL's binaries (or set {SKIP_ENV}=1 to skip this test)")


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _bash(script: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)


def _answers(port: int, timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as reply:
                return reply.status == 200
        except OSError:
            time.sleep(0.5)
    return False


def test_the_team_setup_starts_serves_runs_a_queued_job_and_stops():
    folder = Path(tempfile.mkdtemp(prefix="evalcore-deploy-"))  # under /tmp: the postgres user reaches it
    folder.chmod(0o755)
    pg_port, *dashboards = _free_ports(3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALCORE_")}
    env.update(DEPLOY_DIR=str(folder), PG_PORT=str(pg_port), DASHBOARD_PORTS=" ".join(map(str, dashboards)),
               EVALCORE_OFFLINE="1")  # fmt: skip
    try:
        started = _bash("deploy/start.sh", env)
        assert started.returncode == 0, started.stderr
        url = f"postgresql://postgres@127.0.0.1:{pg_port}/evalcore"
        assert url in started.stdout
        assert all(_answers(port) for port in dashboards), "both dashboard replicas answer"
        again = _bash("deploy/start.sh", env)
        assert again.returncode == 1 and "already running" in again.stderr, "a second start starts nothing"
        store = Store(url)
        try:
            pid, _ = sample_project(store)
            run = create_run(store, pid, "demo", judge="offline")
            enqueue(store, run.id)  # what either dashboard's Start does
            deadline = time.monotonic() + 120
            while store.run(run.id).status != RunStatus.finished:
                assert time.monotonic() < deadline, (
                    f"the workers left run {run.id} {store.run(run.id).status}"
                )
                time.sleep(0.3)
        finally:
            store.close()
    finally:
        stopped = _bash("deploy/stop.sh", env)
        shutil.rmtree(folder, ignore_errors=True)
    assert stopped.returncode == 0, stopped.stderr
    assert not any(_answers(port, timeout=0.1) for port in dashboards), "no dashboard left behind"
