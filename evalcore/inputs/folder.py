"""Listing a project folder before reading it: which files there are, and which may be read.

Every file is checked before any is read: a link out of the folder is refused (`documents/leak.txt ->
/etc/passwd` must not import the password file), and the file count, each file's size and the total size
are held to the import limits (evalcore.inputs.limits); over the count or total nothing is read at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evalcore.errors import Problem, ValidationFailed
from evalcore.inputs.limits import (
    MAX_FILE_MB_ENV,
    MAX_FILES_ENV,
    MAX_UNPACKED_MB_ENV,
    current_limits,
    megabytes,
)

SYSTEM_CARD_NAMES = ("system.yaml", "system.yml", "system_card.yaml")
FOLDERS = ("documents", "policies", "tables", "tools", "procedures")


@dataclass
class ProjectFiles:
    """The readable files of a project folder, each named in messages as `label/relative/path`."""

    root: Path
    label: str
    card: Path | None = None
    card_refused: bool = False
    folders: dict[str, list[Path]] = field(default_factory=lambda: {sub: [] for sub in FOLDERS})

    def shown(self, path: Path) -> str:
        """How a file is named in problems and in the store, e.g. 'sample/documents/a.md'."""
        return f"{self.label}/{path.relative_to(self.root).as_posix()}"


def _candidates(root: Path, label: str, max_files: int) -> list[tuple[str, Path]]:
    """(sub-folder, path) of every visible file, the system card under ''; too many files is an error."""
    card = next((root / n for n in SYSTEM_CARD_NAMES if (root / n).is_file()), None)
    found = [("", card)] if card else []
    count = 0
    for sub in FOLDERS:
        if not (root / sub).is_dir():
            continue
        for path in (root / sub).iterdir():  # counted while listing: a million entries stop at the limit
            count += 1
            if count > max_files:
                problem = Problem(label, f"more than {max_files} files (set {MAX_FILES_ENV})")
                raise ValidationFailed([problem], f"project folder {label}")
            if path.is_file() and not path.name.startswith("."):
                found.append((sub, path))
    return sorted(found, key=lambda c: (c[0], c[1].name))


def list_project_files(root: Path, label: str, problems: list[Problem]) -> ProjectFiles:
    """The files of the resolved folder `root` that may be read; each refused file is a problem."""
    limits = current_limits()
    files = ProjectFiles(root, label)
    total = 0
    for sub, path in _candidates(root, label, limits.max_files):
        shown = files.shown(path)
        if not path.resolve().is_relative_to(root):
            problems.append(Problem(shown, "a link to a file outside the project folder; refused"))
            files.card_refused |= not sub
            continue
        size = path.stat().st_size
        if size > limits.max_file_bytes:
            limit = megabytes(limits.max_file_bytes)
            problems.append(
                Problem(
                    shown, f"{megabytes(size)} is over the {limit} limit of one file (set {MAX_FILE_MB_ENV})"
                )
            )
            files.card_refused |= not sub
            continue
        total += size
        if sub:
            files.folders[sub].append(path)
        else:
            files.card = path
    if total > limits.max_unpacked_bytes:
        limit = megabytes(limits.max_unpacked_bytes)
        message = f"{megabytes(total)} of files is over the {limit} limit of one import"
        problem = Problem(label, f"{message} (set {MAX_UNPACKED_MB_ENV})")
        raise ValidationFailed([problem], f"project folder {label}")
    return files
