"""How often each model's task replies needed repairs or a re-ask (table `call_repairs`, issue 14).

`ModelClient.run_task` writes one row per reply that needed a repair (outcome `repaired`) or did not
validate even after repairs (outcome `invalid`, so it was re-asked); clean replies write nothing. The
Settings page shows the rates per model (evalcore.llm.status.repair_rates), with the task calls of
`model_calls` as the denominator, so a team sees which local model needs a stricter structured-output
mode or a larger one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlalchemy as sa

from evalcore.models.common import now_utc
from evalcore.store import schema as t


@dataclass(frozen=True)
class ModelRepairs:
    """One model's task replies: how many, how many needed repairs, how many were re-asked, and which."""

    provider: str
    model: str
    replies: int
    repaired: int
    invalid: int
    kinds: dict[str, int] = field(default_factory=dict)  # repair name -> replies that needed it

    @property
    def repair_rate(self) -> float:
        """Share of replies that validated only after repairs."""
        return self.repaired / self.replies if self.replies else 0.0

    @property
    def invalid_rate(self) -> float:
        """Share of replies that did not validate even after repairs (each costs a re-ask)."""
        return self.invalid / self.replies if self.replies else 0.0


def record_repairs(
    conn: sa.Connection,
    *,
    project_id: str | None,
    run_id: str | None,
    task: str,
    provider: str,
    model: str,
    attempt: int,
    valid: bool,
    repairs: tuple[str, ...],
) -> None:
    """Append the row of a reply that needed repairs or did not validate (clean replies need none)."""
    conn.execute(
        sa.insert(t.call_repairs).values(
            project_id=project_id,
            run_id=run_id,
            task=task,
            provider=provider,
            model=model,
            attempt=attempt,
            outcome="repaired" if valid else "invalid",
            repairs=",".join(repairs),
            created_at=now_utc(),
        )
    )
