"""Importing a project uploaded as a .zip archive (the dashboard's upload and `evalcore import x.zip`).

The archive is checked whole before anything is unpacked: members that leave the archive (an absolute
path, `..`), links, encrypted members, names given twice, and sizes or compression ratios over the import
limits (evalcore.inputs.limits) are refused. Unpacking then counts the bytes it really writes, because
the sizes an archive declares can lie. Problems name the member (`project.zip/documents/a.md`), never the
temporary folder, and so do the stored document paths, so importing the same archive again is a no-op.
"""

from __future__ import annotations

import io
import re
import stat
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from evalcore.auth.roles import Actor, Permission, require
from evalcore.errors import Problem, ValidationFailed
from evalcore.inputs.folder import SYSTEM_CARD_NAMES
from evalcore.inputs.limits import (
    MAX_FILE_MB_ENV,
    MAX_FILES_ENV,
    MAX_RATIO_ENV,
    MAX_UNPACKED_MB_ENV,
    RATIO_EXEMPT_BYTES,
    Limits,
    current_limits,
    megabytes,
)
from evalcore.inputs.project import ImportResult, import_project
from evalcore.models.common import file_name_problem
from evalcore.store import Store

CHUNK = 1024 * 1024


def _project_root(extracted: Path) -> Path:
    """The folder holding the system card: the archive's top level or its single top folder."""
    if any((extracted / n).is_file() for n in SYSTEM_CARD_NAMES):
        return extracted
    folders = [p for p in extracted.iterdir() if p.is_dir() and not p.name.startswith(("__", "."))]
    return folders[0] if len(folders) == 1 else extracted


def _member_problem(info: zipfile.ZipInfo, path: str, limits: Limits) -> str | None:
    """Why one member is refused, or None."""
    parts = PurePosixPath(path).parts
    if PurePosixPath(path).is_absolute() or ".." in parts or re.match(r"[A-Za-z]:", path):
        return "path leaves the archive; refused"
    # Hidden members (.DS_Store, .git/...) are unpacked and skipped as a folder's are; any other part of
    # the path must be a file name the project folder can hold.
    named = next(
        (why for part in parts if not part.startswith(".") and (why := file_name_problem(part))), None
    )
    if named:
        return f"{named}; refused"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "a symbolic link; refused"
    if info.flag_bits & 0x1:
        return "encrypted; refused"
    if info.file_size > limits.max_file_bytes:
        limit = megabytes(limits.max_file_bytes)
        size = megabytes(info.file_size)
        return f"unpacks to {size}, over the {limit} limit of one file (set {MAX_FILE_MB_ENV})"
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > RATIO_EXEMPT_BYTES and ratio > limits.max_ratio:
        return (
            f"compressed {ratio:.0f} to 1, over the limit of {limits.max_ratio:g} to 1 "
            f"(set {MAX_RATIO_ENV}); refused as a possible zip bomb"
        )
    return None


def _checked_members(
    archive: zipfile.ZipFile, name: str, limits: Limits
) -> list[tuple[zipfile.ZipInfo, str]]:
    """The file members to unpack with their normalised paths; ValidationFailed listing every refusal."""
    files = [i for i in archive.infolist() if not i.is_dir()]
    if len(files) > limits.max_files:
        problem = Problem(
            name, f"{len(files)} files, over the limit of {limits.max_files} (set {MAX_FILES_ENV})"
        )
        raise ValidationFailed([problem], f"archive {name}")
    problems: list[Problem] = []
    members: list[tuple[zipfile.ZipInfo, str]] = []
    seen: set[str] = set()
    for info in files:
        path = info.filename.replace("\\", "/")  # archives made on Windows may use backslashes
        shown = f"{name}/{path}"
        reason = _member_problem(info, path, limits)
        if reason is None and path in seen:
            reason = "the archive holds this name twice; refused"
        if reason:
            problems.append(Problem(shown, reason))
            continue
        seen.add(path)
        members.append((info, path))
    total = sum(info.file_size for info, _ in members)
    if total > limits.max_unpacked_bytes:
        limit = megabytes(limits.max_unpacked_bytes)
        problems.append(
            Problem(
                name, f"unpacks to {megabytes(total)}, over the {limit} limit (set {MAX_UNPACKED_MB_ENV})"
            )
        )
    if problems:
        raise ValidationFailed(problems, f"archive {name}")
    return members


def _unpack(
    archive: zipfile.ZipFile,
    members: list[tuple[zipfile.ZipInfo, str]],
    into: Path,
    name: str,
    limits: Limits,
) -> None:
    """Write the members under `into`, counting real bytes: an archive whose sizes lie is stopped."""
    total = 0
    for info, path in members:
        target = into / path
        shown = f"{name}/{path}"
        written = 0
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as source, target.open("wb") as out:
                while chunk := source.read(CHUNK):
                    written += len(chunk)
                    total += len(chunk)
                    if written > limits.max_file_bytes or total > limits.max_unpacked_bytes:
                        message = "unpacks to more than its declared size and over the import limits; refused"
                        raise ValidationFailed([Problem(shown, message)], f"archive {name}")
                    out.write(chunk)
        except (
            zipfile.BadZipFile,
            zlib.error,
            EOFError,
            NotImplementedError,
            RuntimeError,
            OSError,
            ValueError,
        ) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
            raise ValidationFailed([Problem(shown, f"cannot unpack: {reason}")], f"archive {name}") from None


def import_archive(
    store: Store, data: bytes | Path, name: str, project_id: str | None = None, *, actor: Actor | None = None
) -> ImportResult:
    """Validate and import a zipped project folder (its bytes, or its path, read as needed); an unsafe,
    oversized or broken archive changes nothing. The actor must hold the import permission."""
    require(actor, Permission.import_inputs)  # before unpacking anything a refused actor sent
    limits = current_limits()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError):
        raise ValidationFailed([Problem(name, "not a .zip archive")], "upload") from None
    with archive, tempfile.TemporaryDirectory(prefix="evalcore-upload-") as tmp:
        members = _checked_members(archive, name, limits)
        _unpack(archive, members, Path(tmp), name, limits)
        root = _project_root(Path(tmp))
        label = name if root == Path(tmp) else f"{name}/{root.relative_to(tmp).as_posix()}"
        return import_project(store, root, project_id, label=label, actor=actor)
