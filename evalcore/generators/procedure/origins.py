"""Where a project's procedures come from: its procedure files, its policy (a generation run wrote them,
each step citing its passages) or an intent a generation run made up. Light on purpose (the models and the
store only, no graph or table library), so `evalcore status` can count them and start fast."""

from __future__ import annotations

from collections.abc import Collection

from evalcore.models import Procedure, Run
from evalcore.store import Store

RUN_KIND = "procedures.generate"  # the procedure generation job
GENERATED_PREFIX = "generated_"  # the name of a procedure made up for a new intent starts so
# Where a procedure comes from, in a lead's words (the Procedures page's "source" column).
FROM_PROJECT, FROM_POLICY, GENERATED = "project file", "policy", "generated"


def generated_procedures(store: Store, runs: Collection[str | Run]) -> dict[str, Procedure]:
    """The procedures generation runs made themselves (from the policy or from new intents), by name; a
    run given as read is not read again."""
    made: dict[str, Procedure] = {}
    for run in runs:
        params = (run if isinstance(run, Run) else store.run(run)).params
        for body in params.get("generated_procedures") or []:
            procedure = Procedure.model_validate(body)
            made.setdefault(procedure.name, procedure)
    return made


def procedure_sources(store: Store, project_id: str, run_ids: Collection[str | Run]) -> dict[str, str]:
    """Where each procedure of the generation runs comes from: the project's procedure files, the
    project's policy (its steps cite passages), or generated from an intent."""
    found = {
        name: FROM_POLICY
        if any(step.sources for step in p.steps)
        else (GENERATED if name.startswith(GENERATED_PREFIX) else FROM_PROJECT)
        for name, p in generated_procedures(store, run_ids).items()
    }
    return found | {p.name: FROM_PROJECT for p in store.procedures(project_id)}
