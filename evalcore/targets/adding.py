"""Adding a target from a face (the CLI's `targets add`, the Procedures page's form): the record built
from the fields a person gave, empty ones dropped, and saved once the actor may set targets."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from evalcore.auth.audit import authorized
from evalcore.auth.roles import Actor, Permission
from evalcore.errors import EvalcoreError
from evalcore.models import Target
from evalcore.store import Store
from evalcore.targets.config import save_target


def new_target(name: str, kind: str, config: dict[str, Any], *, model: str | None = None) -> Target:
    """A target record from what a person typed: fields left empty (None, '', {}) are dropped, so the
    configuration's own defaults apply; a bad field is a one-line EvalcoreError naming it."""
    clean = {k: v for k, v in config.items() if v is not None and v != "" and v != {}}
    try:
        return Target(name=name.strip(), kind=kind, model=(model or "").strip() or None, config=clean)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "target"
        raise EvalcoreError(f"target {name!r}: {field}: {first['msg']}") from None


def add_target(store: Store, project_id: str, target: Target, *, actor: Actor | None = None) -> Target:
    """Validate and save `target` (replacing one of its name) once `actor` may set targets (a lead's);
    the save is kept in the audit trail, a refusal too. Returns the target as stored."""
    with authorized(
        store, actor, Permission.set_targets, "targets.save", project_id=project_id, target=target.name
    ):
        return save_target(store, project_id, target)
