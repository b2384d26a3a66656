"""A throwaway PostgreSQL server for tests, and fresh databases on it.

`EVALCORE_TEST_POSTGRES_URL` names an existing server to use instead (its database is only used to run
CREATE/DROP DATABASE). Otherwise a cluster is initialised in a temporary directory with the binaries of the
newest PostgreSQL under /usr/lib/postgresql/*/bin (or on PATH), listening on 127.0.0.1 on a free port with
trust authentication, and removed when the test session ends. initdb refuses to run as root, so under root
the server runs as the `postgres` system user.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import psycopg
import sqlalchemy as sa

URL_ENV = "EVALCORE_TEST_POSTGRES_URL"
SKIP_ENV = "EVALCORE_SKIP_POSTGRES"
SERVER_USER = "postgres"


def find_bin_dir() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres: the newest Debian install, else whatever is on PATH."""

    def version(path: Path) -> tuple[int, ...]:
        return tuple(int(p) for p in re.findall(r"\d+", path.parent.name)) or (0,)

    candidates = [
        p.parent
        for p in sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: version(p.parent))
    ]
    on_path = shutil.which("initdb")
    if on_path:
        candidates.insert(0, Path(on_path).resolve().parent)
    for folder in reversed(candidates):
        if (folder / "pg_ctl").exists() and (folder / "postgres").exists():
            return folder
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LocalServer:
    """A PostgreSQL cluster in a temporary directory, owned by this test session."""

    bin_dir: Path
    base: Path
    port: int
    as_user: str | None

    @property
    def data_dir(self) -> Path:
        return self.base / "data"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if self.as_user:
            command = ["runuser", "-u", self.as_user, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=self.base)
        if result.returncode != 0:
            log = self.base / "server.log"
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise RuntimeError(
                f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}\n{tail}"
            )
        return result

    @classmethod
    def start(cls, bin_dir: Path) -> LocalServer:
        as_user = SERVER_USER if os.geteuid() == 0 else None
        base = Path(tempfile.mkdtemp(prefix="evalcore-pg-"))
        if as_user:
            entry = pwd.getpwnam(as_user)
            os.chown(base, entry.pw_uid, entry.pw_gid)
        server = cls(bin_dir, base, 0, as_user)
        try:
            server._run(
                "initdb",
                "-D",
                str(server.data_dir),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            )
            # The free port can be taken between choosing and binding it: try a few.
            for attempt in range(5):
                server.port = _free_port()
                options = (
                    f"-c listen_addresses=127.0.0.1 -p {server.port} -c unix_socket_directories={base} "
                    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                    "-c max_connections=200 -c shared_buffers=32MB"
                )
                try:
                    server._run(
                        "pg_ctl",
                        *("-D", str(server.data_dir), "-l", str(base / "server.log")),
                        *("-w", "-t", "60", "-o", options, "start"),
                    )
                    break
                except RuntimeError:
                    if attempt == 4:
                        raise
                    time.sleep(0.2)
        except BaseException:
            server.stop()
            raise
        atexit.register(server.stop)  # in case the session ends without running its finalizers
        return server

    def stop(self) -> None:
        if self.data_dir.joinpath("postmaster.pid").exists():
            with contextlib.suppress(Exception):
                self._run("pg_ctl", "-D", str(self.data_dir), "-m", "immediate", "-w", "stop", timeout=60)
        shutil.rmtree(self.base, ignore_errors=True)


def _libpq_url(url: str) -> str:
    """`url` as psycopg wants it (no '+driver' suffix)."""
    return sa.make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class Databases:
    """Creates and drops uniquely named databases on one server."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = _libpq_url(admin_url)

    def _admin(self) -> psycopg.Connection:
        return psycopg.connect(self.admin_url, autocommit=True, connect_timeout=10)

    def create(self) -> str:
        """A new empty database; returns its URL."""
        name = f"evalcore_test_{uuid.uuid4().hex[:12]}"
        with self._admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return sa.make_url(self.admin_url).set(database=name).render_as_string(hide_password=False)

    def drop(self, url: str) -> None:
        name = sa.make_url(url).database
        with self._admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def connections_to(self, url: str) -> int:
        """How many sessions (other than ours) are connected to the database of `url`."""
        with self._admin() as conn:
            return conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (sa.make_url(url).database,)
            ).fetchone()[0]
