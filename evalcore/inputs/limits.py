"""How much one import may read: every limit in one place, each changeable by an environment variable.

An import reads the whole input into memory and validates it before writing, so without bounds a small
upload (a 1 MB zip that unpacks to 1 GB, a 600-byte YAML alias bomb) can exhaust the machine and fill the
store. Over a limit the import stops with one problem naming the file and the variable to raise; nothing
is written. The defaults are generous for real projects: the bundled sample is 150 KB in 37 files.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from evalcore.errors import UsageError

MB = 1024 * 1024

# Environment variables and their defaults (megabytes, counts, ratios).
MAX_FILE_MB_ENV = "EVALCORE_MAX_FILE_MB"
MAX_UNPACKED_MB_ENV = "EVALCORE_MAX_UNPACKED_MB"
MAX_FILES_ENV = "EVALCORE_MAX_FILES"
MAX_RATIO_ENV = "EVALCORE_MAX_COMPRESSION_RATIO"
MAX_TABLE_CELLS_ENV = "EVALCORE_MAX_TABLE_CELLS"
DEFAULTS: dict[str, float] = {
    # A long policy or manual is ~100 KB of text; 10 MB is a few thousand pages, far past what retrieval
    # and generation use, and small enough to hold several copies of in memory while validating.
    MAX_FILE_MB_ENV: 10,
    # A whole project folder or archive unpacked, and a whole specs or JSONL file: 10,000 conversations of
    # ~5 KB each fit.
    MAX_UNPACKED_MB_ENV: 100,
    MAX_FILES_ENV: 1000,
    # Prose and CSV deflate 3-10x; a zip bomb deflates 1000x. Members under RATIO_EXEMPT_BYTES are not
    # held to it (a small file of repeated characters is harmless); the size limits still apply to them.
    MAX_RATIO_ENV: 100,
    # A cell costs ~300 bytes once read (its row's dict, the text rendering, the stored JSON): a 10 MB CSV
    # of one-character cells (5 million) took 1.4 GB. 200,000 cells (10,000 rows of 20 columns) take
    # ~60 MB, and are already far more than a prompt can show.
    MAX_TABLE_CELLS_ENV: 200_000,
}
RATIO_EXEMPT_BYTES = 1 * MB
# Fixed bounds of structured files, not configurable: no real card, tool or spec needs more.
MAX_NESTING = 64  # YAML/JSON depth; deeper input would hit Python's recursion limit while validating
# Values (nodes) in one YAML file: a parsed node takes ~700 bytes, so this bounds one file to ~70 MB; a
# specs file of 5,000 specs has ~95,000.
MAX_YAML_NODES = 100_000


@dataclass(frozen=True)
class Limits:
    """The limits of one import, read from the environment (or the defaults)."""

    max_file_bytes: int
    max_unpacked_bytes: int
    max_files: int
    max_ratio: float
    max_table_cells: int


def _read(name: str, integer: bool = False) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return DEFAULTS[name]
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        kind = "a whole number" if integer else "a number"
        raise UsageError(f"{name} must be {kind} above 0 (got '{raw}')")
    return value


def current_limits() -> Limits:
    """The limits now in force; a malformed environment variable is a usage error naming it."""
    return Limits(
        max_file_bytes=int(_read(MAX_FILE_MB_ENV) * MB),
        max_unpacked_bytes=int(_read(MAX_UNPACKED_MB_ENV) * MB),
        max_files=int(_read(MAX_FILES_ENV, integer=True)),
        max_ratio=_read(MAX_RATIO_ENV),
        max_table_cells=int(_read(MAX_TABLE_CELLS_ENV, integer=True)),
    )


def megabytes(size: int) -> str:
    """A size for messages: '200.0 MB', or '59 KB' under a megabyte."""
    return f"{size / MB:.1f} MB" if size >= MB else f"{size / 1024:.0f} KB"
