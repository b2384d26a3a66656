"""Importing a project sent as a set of files (the dashboard's upload of loose files, not a zip): each
file is placed in the folder of a project its kind belongs to, then the folder is imported as any other.

    system.yaml (system.yml, system_card.yaml)   the system card
    *.md, *.txt                                  documents/ (policies/ when sent as policies)
    *.csv                                        tables/
    *.json                                       tools/
    other *.yaml, *.yml                          procedures/

Everything is checked before a byte is written, and every problem is reported with the file's name: a
name that cannot be one file name (`models.common.file_name_problem`: a path, `..`, a hidden file, a
control character), a name sent twice for one folder, a kind of file no project folder reads, a file or a
whole upload over the import limits (evalcore.inputs.limits), no system card. A refused upload changes
nothing; a re-sent one writes nothing new (as a folder imported again).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePath

from evalcore.auth.roles import Actor, Permission, require
from evalcore.errors import Problem, ValidationFailed
from evalcore.inputs.documents import PROSE_SUFFIXES, TABLE_SUFFIXES
from evalcore.inputs.folder import SYSTEM_CARD_NAMES
from evalcore.inputs.limits import (
    MAX_FILE_MB_ENV,
    MAX_FILES_ENV,
    MAX_UNPACKED_MB_ENV,
    current_limits,
    megabytes,
)
from evalcore.inputs.project import ImportResult, import_project
from evalcore.models.common import file_name_problem
from evalcore.store import Store

LABEL = "upload"  # how the files are named in problems and stored paths: upload/documents/a.md
WHAT = "uploaded files"


def folder_for(name: str, *, policy: bool = False) -> str | None:
    """The project folder a file of this name goes to ('' for the system card), or None when no folder
    of a project reads it."""
    suffix = PurePath(name).suffix.lower()
    if name.lower() in SYSTEM_CARD_NAMES:
        return ""
    if suffix in PROSE_SUFFIXES:
        return "policies" if policy else "documents"
    if suffix in TABLE_SUFFIXES:
        return "tables"
    if suffix == ".json":
        return "tools"
    if suffix in (".yaml", ".yml"):
        return "procedures"
    return None


def _placed(
    files: Sequence[tuple[str, bytes]], policies: Sequence[tuple[str, bytes]]
) -> list[tuple[str, str, bytes]]:
    """(folder, name, content) of every file; ValidationFailed listing every file refused."""
    limits = current_limits()
    sent = [(name, data, False) for name, data in files] + [(name, data, True) for name, data in policies]
    if len(sent) > limits.max_files:
        problem = Problem(
            LABEL, f"{len(sent)} files, over the limit of {limits.max_files} (set {MAX_FILES_ENV})"
        )
        raise ValidationFailed([problem], WHAT)
    problems: list[Problem] = []
    placed: list[tuple[str, str, bytes]] = []
    seen: set[tuple[str, str]] = set()
    for name, data, policy in sent:
        shown = name if isinstance(name, str) else repr(name)
        if why := file_name_problem(name):
            problems.append(Problem(shown, f"{why}; refused"))
            continue
        if (folder := folder_for(name, policy=policy)) is None:
            problems.append(
                Problem(shown, "no project folder reads this kind of file (.md .txt .csv .json .yaml)")
            )
        elif (folder, name.lower()) in seen:
            problems.append(Problem(shown, "sent twice; refused"))
        elif len(data) > limits.max_file_bytes:
            limit = megabytes(limits.max_file_bytes)
            problems.append(
                Problem(
                    shown,
                    f"{megabytes(len(data))} is over the {limit} limit of one file (set {MAX_FILE_MB_ENV})",
                )
            )
        else:
            seen.add((folder, name.lower()))
            placed.append((folder, name, data))
    total = sum(len(data) for _, _, data in placed)
    if total > limits.max_unpacked_bytes:
        limit = megabytes(limits.max_unpacked_bytes)
        problems.append(
            Problem(
                LABEL,
                f"{megabytes(total)} of files is over the {limit} limit of one import "
                f"(set {MAX_UNPACKED_MB_ENV})",
            )
        )
    if sent and not any(folder == "" for folder, _, _ in placed) and not problems:
        problems.append(Problem(LABEL, f"no system card among the files: send {SYSTEM_CARD_NAMES[0]} too"))
    if not sent:
        problems.append(Problem(LABEL, "no file sent"))
    if problems:
        raise ValidationFailed(problems, WHAT)
    return placed


def import_files(
    store: Store,
    files: Sequence[tuple[str, bytes]],
    *,
    policies: Sequence[tuple[str, bytes]] = (),
    project_id: str | None = None,
    actor: Actor | None = None,
) -> ImportResult:
    """Validate and import a project sent as (file name, content) pairs (module docstring); `policies`
    are prose files of kind policy. A refused actor or upload changes nothing."""
    require(actor, Permission.import_inputs)  # before anything a refused actor sent is written
    placed = _placed(files, policies)
    with tempfile.TemporaryDirectory(prefix="evalcore-upload-") as tmp:
        root = Path(tmp)
        for folder, name, data in placed:
            (root / folder).mkdir(exist_ok=True)
            (root / folder / name).write_bytes(data)
        return import_project(store, root, project_id, label=LABEL, actor=actor)
