"""Other tools' test data in as items: read a file in one of their formats (`evalcore.inputs.formats`),
then check it against the project and store it as the JSONL import does (`add_checked`): validated
whole, every problem as `file:line [field]`, and a file with any problem changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evalcore.auth.audit import importing
from evalcore.auth.roles import Actor
from evalcore.errors import Problem, UsageError, ValidationFailed
from evalcore.inputs.formats import READERS
from evalcore.inputs.limits import MAX_UNPACKED_MB_ENV, current_limits
from evalcore.inputs.sources import decode_text, read_bounded
from evalcore.items.jsonl import ImportResult, add_checked
from evalcore.store import Store


@dataclass(frozen=True)
class FormatImport:
    """What an import of another tool's file wrote, and one line per kind of thing kept as metadata."""

    result: ImportResult
    notes: list[str]


def check_format(fmt: str) -> None:
    """A usage error naming the formats read, for any other name."""
    if fmt not in READERS:
        raise UsageError(f"cannot import format '{fmt}': one of {', '.join(READERS)}")


def import_text(
    store: Store, project_id: str, fmt: str, text: str | bytes, shown: str, *, actor: Actor | None = None
) -> FormatImport:
    """Import the text of a file in format `fmt` (named `shown` in problems) into a project; the actor must
    hold the import permission."""
    check_format(fmt)
    store.project(project_id)
    with importing(store, actor, f"import.{fmt}", project_id=project_id, target=shown):
        return _import_text(store, project_id, fmt, text, shown)


def _import_text(store: Store, project_id: str, fmt: str, text: str | bytes, shown: str) -> FormatImport:
    problems: list[Problem] = []
    decoded = decode_text(text, shown, problems)
    if decoded is None:
        raise ValidationFailed(problems, f"{fmt} file {shown}")
    read = READERS[fmt](decoded, shown)
    result = add_checked(store, project_id, shown, read.items, f"{fmt} file {shown}")
    return FormatImport(result, read.notes())


def import_file(
    store: Store, project_id: str, fmt: str, path: Path | str, *, actor: Actor | None = None
) -> FormatImport:
    """Import a file in format `fmt` into a project (bounded like a JSONL import: it is a whole import)."""
    check_format(fmt)
    path = Path(path)
    problems: list[Problem] = []
    limit = current_limits().max_unpacked_bytes
    raw = read_bounded(path, path.name, problems, limit, MAX_UNPACKED_MB_ENV)
    if raw is None:
        raise ValidationFailed(problems, f"{fmt} file {path.name}")
    return import_text(store, project_id, fmt, raw, path.name, actor=actor)
