"""Roles and what each may do, checked in the library: a page that hides a button is not the guard.

Roles are ordered: each holds what the ones below it hold. `require(actor, permission)` raises a one-line
error naming the role needed and the actor's own. An actor of None is the default actor: the local user,
who holds every role, unless this process serves signed-in people (`require_signed_in_actors`), where a
call that names no actor is refused instead of running with every role.
"""

from __future__ import annotations

import getpass
from enum import IntEnum, StrEnum

from pydantic import BaseModel, ConfigDict, Field

from evalcore.errors import EvalcoreError


class Role(IntEnum):
    """A person's role; a higher one holds every permission of the lower ones."""

    viewer = 0
    annotator = 1
    analyst = 2
    lead = 3
    admin = 4


class Permission(StrEnum):
    """What an action needs; each is granted from one role up (ROLE_FOR)."""

    annotate = "annotate"
    review_specs = "review_specs"
    start_generation = "start_generation"
    stop_generation = "stop_generation"
    start_run = "start_run"
    stop_run = "stop_run"
    adjudicate = "adjudicate"
    set_models = "set_models"
    set_targets = "set_targets"
    import_inputs = "import_inputs"
    manage_users = "manage_users"
    manage_review = "manage_review"
    read_audit = "read_audit"


# The lowest role that may do each thing (DESIGN.md: annotators annotate; analysts review specs and start
# generation; leads start paid runs, set models, budgets and targets, import and manage users).
ROLE_FOR: dict[Permission, Role] = {
    Permission.annotate: Role.annotator,
    Permission.review_specs: Role.analyst,
    Permission.start_generation: Role.analyst,
    Permission.stop_generation: Role.analyst,
    Permission.start_run: Role.lead,
    Permission.stop_run: Role.lead,
    Permission.adjudicate: Role.lead,
    Permission.set_models: Role.lead,
    Permission.set_targets: Role.lead,
    Permission.import_inputs: Role.lead,
    Permission.manage_users: Role.lead,
    Permission.manage_review: Role.lead,
    Permission.read_audit: Role.lead,
}

# How a refusal names the action ("starting a run needs the lead role").
DOING: dict[Permission, str] = {
    Permission.annotate: "saving a review",
    Permission.review_specs: "changing a spec",
    Permission.start_generation: "starting a generation job",
    Permission.stop_generation: "stopping a generation job",
    Permission.start_run: "starting a run against a target",
    Permission.stop_run: "stopping a run against a target",
    Permission.adjudicate: "adjudicating an item",
    Permission.set_models: "changing models, budgets or prices",
    Permission.set_targets: "changing targets",
    Permission.import_inputs: "importing",
    Permission.manage_users: "managing accounts",
    Permission.manage_review: "assigning work, naming leads or setting the tier policy",
    Permission.read_audit: "reading the audit trail",
}

# Jobs that play items against a target: they pay for the target's and the judge's calls, so they are a
# lead's (a "paid run"); every other job generates data and is an analyst's.
TARGET_JOB_KINDS = frozenset({"run", "procedure_tests", "rubric_scoring", "scenario", "simulation"})


class PermissionDenied(EvalcoreError):
    """An actor tried something its role does not allow (nothing was changed)."""


class Actor(BaseModel):
    """Who acts: a name and a role; `local` marks the one person of an unsigned local dashboard or CLI."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1, description="the name saved as author of what this actor does")
    role: Role = Field(description="what this actor may do")
    local: bool = Field(default=False, description="the local user: may save under any name it types")

    def may(self, permission: Permission) -> bool:
        """True when this actor's role grants `permission`."""
        return self.role >= ROLE_FOR[permission]


def _local_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (a container's numeric uid)
        return "local"


LOCAL = Actor(name=_local_name(), role=Role.admin, local=True)

_signed_in_only = False


def require_signed_in_actors(on: bool = True) -> None:
    """In a process that serves signed-in people, refuse every checked call that names no actor (a page
    that forgot to pass one fails closed, instead of acting with the local user's every role)."""
    global _signed_in_only
    _signed_in_only = on


def resolve(actor: Actor | None) -> Actor:
    """`actor`, or the default actor when None (the local user; refused where sign-in is required)."""
    if actor is not None:
        return actor
    if _signed_in_only:
        raise PermissionDenied("nobody is signed in: sign in first")
    return LOCAL


def job_permission(kind: str, *, stop: bool = False) -> Permission:
    """What starting (or stopping) a job of `kind` needs: a run against a target is a lead's."""
    if kind in TARGET_JOB_KINDS:
        return Permission.stop_run if stop else Permission.start_run
    return Permission.stop_generation if stop else Permission.start_generation


def require(actor: Actor | None, permission: Permission) -> Actor:
    """The acting actor, if its role grants `permission`; else PermissionDenied naming the role needed."""
    who = resolve(actor)
    if not who.may(permission):
        needed = ROLE_FOR[permission].name
        raise PermissionDenied(
            f"{DOING[permission]} needs the {needed} role; {who.name} is {_article(who.role.name)}"
        )
    return who


def author_for(actor: Actor | None, author: str) -> str:
    """The name to save as author: a signed-in actor is always itself (saving as someone else is
    refused); the local user's `author` is kept as given (one laptop, one person: as before sign-in)."""
    who = resolve(actor)
    if who.local:
        return author
    typed = author.strip()
    if typed and typed != who.name:
        raise PermissionDenied(f"{who.name} cannot save as {typed}: a signed-in user saves as themself")
    return who.name


def _article(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word
