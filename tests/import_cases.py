"""Shared by the import safety and fuzz tests: running the CLI in process or in a measured subprocess,
a store whose bytes can be compared, and hand-built zip archives (bombs included) in a fraction of a
second."""

from __future__ import annotations

import resource
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

from typer.testing import CliRunner, Result

from evalcore.cli.main import SAMPLE_PROJECT, app
from evalcore.inputs import import_project
from evalcore.store import Store

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()
MB = 1024 * 1024


def cli(*args: str, env: dict[str, str] | None = None) -> Result:
    """`evalcore ARGS` in this process."""
    return runner.invoke(app, list(args), env=env)


def sample_store(folder: Path) -> str:
    """A SQLite store holding the sample project, closed so its file alone holds everything."""
    url = f"sqlite:///{folder / 'store.db'}"
    store = Store(url)
    import_project(store, SAMPLE_PROJECT)
    store.close()
    return url


def store_bytes(url: str) -> bytes:
    """The store file and its write-ahead log, byte for byte."""
    path = Path(url.removeprefix("sqlite:///"))
    wal = path.with_name(path.name + "-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def copy_sample(into: Path) -> Path:
    """A copy of the sample project folder to break."""
    return Path(shutil.copytree(SAMPLE_PROJECT, into))


def error_lines(result: Result) -> list[str]:
    """The problem lines of a refused command (after the `error: ...` head line), with no traceback."""
    assert "Traceback" not in result.output, result.output
    lines = result.output.strip().splitlines()
    assert lines and lines[0].startswith("error: "), result.output
    # One problem is one line, ending with what was kept: the problem itself is what tests compare.
    return [line.strip() for line in lines[1:]] or [
        lines[0].removeprefix("error: ").removesuffix("; nothing was written")
    ]


# ------------------------------------------------------------------------------------------ zip archives


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush()


def _filler_stream(megabytes: int) -> tuple[bytes, int]:
    """A raw deflate stream of `megabytes` MB of the letter 'a' and its CRC, built from one compressed
    megabyte repeated (a full flush makes each copy independent), so a 900 MB member costs a second."""
    one = b"a" * MB
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = packer.compress(one) + packer.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(megabytes):
        crc = zlib.crc32(one, crc)
    return block * megabytes + b"\x03\x00", crc  # \x03\x00: an empty final block


def write_zip(path: Path, members: dict[str, bytes], *, filler: dict[str, int] | None = None,
              links: dict[str, str] | None = None) -> Path:  # fmt: skip
    """A zip with `members` (deflated), `filler` members of N MB of one letter, and symbolic links; written by
    hand so names such as '../x' or '/etc/x' are kept exactly as given."""
    entries: list[tuple[str, bytes, int, int, int, int]] = []  # name, data, crc, size, method, mode
    for name, data in members.items():
        entries.append((name, _raw_deflate(data), zlib.crc32(data), len(data), 8, 0o100644))
    for name, megabytes in (filler or {}).items():
        stream, crc = _filler_stream(megabytes)
        entries.append((name, stream, crc, megabytes * MB, 8, 0o100644))
    for name, target in (links or {}).items():
        data = target.encode()
        entries.append((name, data, zlib.crc32(data), len(data), 0, 0o120777))
    body, central = b"", b""
    for name, data, crc, size, method, mode in entries:
        encoded = name.encode()
        offset = len(body)
        body += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0, crc, len(data), size,
                            len(encoded), 0) + encoded + data  # fmt: skip
        central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 0x0314, 20, 0, method, 0, 0, crc, len(data),
                               size, len(encoded), 0, 0, 0, 0, mode << 16, offset) + encoded  # fmt: skip
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(body), 0)
    path.write_bytes(body + central + end)
    return path


def sample_members(prefix: str = "") -> dict[str, bytes]:
    """The sample project's files as archive members."""
    return {
        prefix + p.relative_to(SAMPLE_PROJECT).as_posix(): p.read_bytes()
        for p in sorted(SAMPLE_PROJECT.rglob("*"))
        if p.is_file()
    }


# ------------------------------------------------------------------------------- measured subprocesses

# The peak is VmHWM of this process's own memory: ru_maxrss carries the forking parent's resident size
# across exec on Linux, so under a large pytest process it reported the parent (425 MB), not the import.
_MEASURED = """
import sys
from evalcore.cli.main import app
try:
    app(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
print(f"maxrss_kb={peak}", file=sys.stderr)
sys.exit(code)
"""
ADDRESS_SPACE_CAP = 4 << 30  # a regression fails fast instead of taking the shared machine's memory


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_CAP, ADDRESS_SPACE_CAP))


def measured(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, int]:
    """`evalcore ARGS` in a fresh process: exit code, its output, and its peak resident memory in MB."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        preexec_fn=_cap_memory,
        timeout=300,
    )
    head, _, peak = done.stderr.rpartition("maxrss_kb=")
    return done.returncode, done.stdout + head, int(peak) // 1024
