"""File names that come from data: an id, a user name or a file name from a store or an import becomes a
file only after it is checked here, so nothing read from a file or a model writes outside its folder."""

from __future__ import annotations

import re
from pathlib import Path

from evalcore.errors import UsageError

# Long enough for any id a person types or a generator makes, short enough that a file name stays under
# the 255-byte limit of common filesystems once a suffix and a `_<tag>` are added.
MAX_NAME_CHARS = 200

_DRIVE = re.compile(r"^[A-Za-z]:")


def safe_file_name(name: str, what: str) -> str:
    """Return `name` when it can be one file name inside a folder; otherwise raise a one-line UsageError
    naming `what` (the field it came from).

    Refused: empty names, path separators (`/`, `\\`), `..`, absolute paths, drive letters (`C:`), NUL and
    other control characters, a leading dot (a hidden file, or `.`), and names over 200 characters.
    """
    shown = repr(name[:60] + ("..." if len(name) > 60 else ""))
    if not name.strip():
        raise UsageError(f"{what}: a file name cannot be empty")
    if len(name) > MAX_NAME_CHARS:
        raise UsageError(f"{what} {shown}: a file name is at most {MAX_NAME_CHARS} characters ({len(name)})")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise UsageError(f"{what} {shown}: a file name cannot hold NUL or other control characters")
    if "/" in name or "\\" in name:
        raise UsageError(f"{what} {shown}: a file name cannot hold a path separator ('/' or '\\')")
    if ".." in name:
        raise UsageError(f"{what} {shown}: a file name cannot hold '..'")
    if _DRIVE.match(name):
        raise UsageError(f"{what} {shown}: a file name cannot start with a drive letter")
    if name.startswith("."):
        raise UsageError(f"{what} {shown}: a file name cannot start with a dot")
    return name


def path_inside(folder: Path, name: str, what: str) -> Path:
    """Return `folder / name` resolved, after checking `name` with `safe_file_name` and that the result
    (symbolic links followed) stays inside `folder`; otherwise raise a one-line UsageError naming `what`."""
    safe_file_name(name, what)
    root = folder.resolve()
    path = (root / name).resolve()
    if path.parent != root:
        raise UsageError(f"{what} {name!r}: the file would land outside {folder}")
    return path
