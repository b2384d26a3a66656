"""Pieces shared by every record: tiers, provenance of generated items, timestamps."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

OFFLINE = "offline"


def now_utc() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


# Long enough for any id a person types or a generator makes, short enough that a file name stays under
# the 255-byte limit of common filesystems once a suffix and a `_<tag>` are added.
MAX_FILE_NAME = 200
_DRIVE = re.compile(r"^[A-Za-z]:")


def file_name_problem(name: object) -> str | None:
    """Why `name` cannot be one file name inside a folder, or None when it can: empty, a path separator,
    `..`, a drive letter, NUL or another control character, a leading dot (a hidden file, or `.`), or over
    MAX_FILE_NAME characters. Ids that become file names are checked with it on import and on export."""
    if not isinstance(name, str) or not name.strip():
        return "a file name cannot be empty"
    if len(name) > MAX_FILE_NAME:
        return f"a file name is at most {MAX_FILE_NAME} characters ({len(name)})"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "a file name cannot hold NUL or other control characters"
    if "/" in name or "\\" in name:
        return "a file name cannot hold a path separator ('/' or '\\')"
    if ".." in name:
        return "a file name cannot hold '..'"
    if _DRIVE.match(name):
        return "a file name cannot start with a drive letter"
    if name.startswith("."):
        return "a file name cannot start with a dot"
    return None


# OWASP's CSV injection guidance: a cell starting with one of these is read as a formula by Excel,
# LibreOffice or Google Sheets (tab and carriage return too, which some of them strip first).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: object) -> object:
    """`value` as a CSV cell that no spreadsheet runs: text starting with = + - @ tab or carriage return
    gets a leading apostrophe (OWASP), so it shows as the text it is. Numbers stay numbers (a negative
    number is no formula). Every CSV the product writes passes its header and cells through here."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def content_hash(value: Any) -> str:
    """A stable hash of a JSON-serialisable value (canonical JSON, sorted keys)."""
    blob = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Tier(StrEnum):
    """How far a generated item has been verified."""

    unreviewed = "unreviewed"
    silver = "silver"
    gold = "gold"
    rejected = "rejected"


class Record(BaseModel):
    """Base for records: unknown fields are errors, so a typo in an input file is reported."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Provenance(Record):
    """Who or what produced an item, and from which inputs."""

    producer: str = Field(description="Model name, 'offline' for the offline provider, or 'human:<name>'.")
    provider: str = Field(
        default=OFFLINE, description="Provider that served the model, or 'offline'/'human'."
    )
    task: str | None = Field(default=None, description="Name of the task (pipeline step) that produced it.")
    prompt_version: str | None = Field(default=None, description="Version of the prompt template used.")
    inputs: list[str] = Field(default_factory=list, description="Ids of the records the item was made from.")
    seed: int | None = Field(default=None, description="Random seed of the step, when it has one.")
    run_id: str | None = Field(default=None, description="Job or run that produced the item.")
    created_at: datetime = Field(default_factory=now_utc, description="When it was produced.")

    @property
    def is_offline(self) -> bool:
        """True when the offline provider produced the item."""
        return self.provider == OFFLINE

    @property
    def is_human(self) -> bool:
        """True when a person wrote the item."""
        return self.provider == "human"

    @classmethod
    def human(cls, author: str, inputs: list[str] | None = None) -> Provenance:
        """Provenance of an item written by a person."""
        return cls(producer=f"human:{author}", provider="human", inputs=inputs or [])
