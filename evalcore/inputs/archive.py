"""Importing a project uploaded as a .zip archive (the dashboard's upload)."""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from evalcore.errors import Problem, ValidationFailed
from evalcore.inputs.project import SYSTEM_CARD_NAMES, ImportResult, import_project
from evalcore.store import Store


def _project_root(extracted: Path) -> Path:
    """The folder holding the system card: the archive's top level or its single top folder."""
    if any((extracted / n).is_file() for n in SYSTEM_CARD_NAMES):
        return extracted
    folders = [p for p in extracted.iterdir() if p.is_dir() and not p.name.startswith(("__", "."))]
    return folders[0] if len(folders) == 1 else extracted


def import_archive(store: Store, data: bytes, name: str, project_id: str | None = None) -> ImportResult:
    """Validate and import a zipped project folder; unsafe or broken archives change nothing."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ValidationFailed([Problem(name, "not a .zip archive")], "upload") from None
    with archive, tempfile.TemporaryDirectory(prefix="evalcore-upload-") as tmp:
        unsafe = [
            m.filename
            for m in archive.infolist()
            if PurePosixPath(m.filename).is_absolute() or ".." in PurePosixPath(m.filename).parts
        ]
        if unsafe:
            problems = [Problem(f"{name}/{f}", "path leaves the archive; refused") for f in unsafe]
            raise ValidationFailed(problems, "upload")
        archive.extractall(tmp)
        root = _project_root(Path(tmp))
        return import_project(store, root, project_id)
