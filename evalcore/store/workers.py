"""Who holds a claim or a budget reservation: a worker's identity, and whether its process is still alive.

An identity is `host:pid:nonce`, optionally followed by `:detail` (one job loop of the process). A claim
or reservation expires at its lease's end; one held by a process of this machine that no longer exists
is taken over at once (a killed CLI, a crashed page server), so a resume right after a crash does not
wait for the lease.
"""

from __future__ import annotations

import os
import socket
import uuid

_NONCE = uuid.uuid4().hex[:8]


def worker_id(detail: str = "") -> str:
    """This process's identity, e.g. 'build-01:4242:3f9a1c2b' (and ':detail' when given)."""
    process = f"{socket.gethostname()}:{os.getpid()}:{_NONCE}"
    return f"{process}:{detail}" if detail else process


def is_dead(worker: str | None) -> bool:
    """True when `worker` is a process of this machine that has ended (never guessed for other hosts)."""
    if not worker:
        return False
    host, pid_text, nonce = ([*worker.split(":", 3), "", ""])[:3]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    if int(pid_text) == os.getpid():  # this process, or an earlier one that had its pid
        return nonce != _NONCE
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    # A live pid may have been reused by another program after a restart: the lease covers that case.
    return _zombie(int(pid_text))


def _zombie(pid: int) -> bool:
    """A child killed but not yet reaped still answers kill(0): read its state where /proc exists."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] == "Z"
    except OSError:
        return False
