"""Errors that users see: each says what went wrong and where, in one line when printed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


class EvalcoreError(Exception):
    """Base of the errors evalcore reports to users (the CLI prints them without a traceback)."""


class NotFoundError(EvalcoreError):
    """A project, item or run that does not exist."""


class UsageError(EvalcoreError):
    """A command was given a value it cannot use (the CLI exits 2 for these, 1 for failures and gates)."""


@dataclass
class StaleVersionError(EvalcoreError):
    """A save carried a version older than the current one: someone else saved in between."""

    item_kind: str
    item_id: str
    label: str
    expected_version: int
    current_version: int
    changed_by: str
    changed_at: datetime

    def __str__(self) -> str:
        when = self.changed_at.strftime("%Y-%m-%d %H:%M:%S")
        return (
            f"{self.item_kind.capitalize()} '{self.label}' was changed by {self.changed_by} at {when} "
            f"(version {self.current_version}) after you opened version {self.expected_version}; "
            "your save was refused and nothing was lost: reload to see their change, then apply yours again."
        )


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: the file, the line (1-based, when known), the field and why."""

    file: str
    message: str
    line: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        field = f" [{self.field}]" if self.field else ""
        return f"{where}{field}: {self.message}"


class ValidationFailed(EvalcoreError):
    """An input failed validation; every problem found is listed, and nothing was written."""

    def __init__(self, problems: list[Problem], what: str = "input") -> None:
        self.problems = problems
        self.what = what
        super().__init__(str(self))

    def __str__(self) -> str:
        if len(self.problems) == 1:  # one problem is one line: `file:line [field]: message`
            return f"{self.problems[0]}; nothing was written"
        head = f"{len(self.problems)} problem(s) in the {self.what}; nothing was written:"
        return "\n".join([head, *(f"  {p}" for p in self.problems)])
