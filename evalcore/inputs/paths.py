"""File names that come from data: an id, a user name or a file name from a store or an import becomes a
file only after it is checked here, so nothing read from a file or a model writes outside its folder."""

from __future__ import annotations

from pathlib import Path

from evalcore.errors import UsageError
from evalcore.models.common import file_name_problem


def safe_file_name(name: str, what: str) -> str:
    """Return `name` when it can be one file name inside a folder (`models.common.file_name_problem`);
    otherwise raise a one-line UsageError naming `what` (the field it came from)."""
    problem = file_name_problem(name)
    if problem:
        shown = repr(name[:60] + ("..." if len(name) > 60 else "")) if isinstance(name, str) else repr(name)
        raise UsageError(f"{what} {shown}: {problem}")
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
