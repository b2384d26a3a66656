"""Names from files and models that become file names on export: checked on the way in and again on the
way out, so no id can place a file outside the folder the user chose."""

from __future__ import annotations

from pathlib import Path

from evalcore.errors import UsageError
from evalcore.models.common import file_name_problem


def safe_file_name(name: str, what: str) -> str:
    """`name` itself when it is a plain file name; a one-line UsageError naming `what` otherwise."""
    problem = file_name_problem(name)
    if problem:
        raise UsageError(f"{what} {problem}; nothing was written")
    return name


def path_inside(folder: Path, name: str, what: str) -> Path:
    """`folder / name`, refused (UsageError naming `what`) unless it resolves inside `folder`."""
    safe_file_name(name, what)
    base = folder.resolve()
    path = (base / name).resolve()
    if path.parent != base:
        raise UsageError(f"{what} {name!r} would be written outside {folder}; nothing was written")
    return path
