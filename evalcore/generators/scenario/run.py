"""Running scenarios against a target (seed 003; issue 19, items 5 and 6): a job of evalcore.jobs.

A scenario run (run kind `scenario`) records the scenarios (their content, so an edit later does not
change what the run ran), the target, `run_count` (1-10 repetitions of each scenario) and the models.
One unit per repetition of a scenario: claimed, then committed with its conversation (generator
`scenario`, every turn carrying the events the target reported) and its ScenarioVerdict, so a killed run
resumes at the repetitions not committed. `load_scenario_results` reads a run's results back.
"""

from __future__ import annotations

from pydantic import Field

from evalcore.generators.scenario.verdict import ScenarioVerdict
from evalcore.models.common import Record
from evalcore.store import Store

RUN_KIND = "scenario"
GENERATOR = "scenario"


class ScenarioResult(Record):
    """One repetition of one scenario in a run: its conversation and its verdict."""

    scenario: str = Field(description="The scenario's name.")
    repetition: int = Field(description="Which repetition (1..run_count).")
    conversation_id: str = Field(description="The conversation played, with its events per turn.")
    verdict: ScenarioVerdict = Field(description="Every assertion and criterion on that conversation.")


def unit_key(index: int, repetition: int) -> str:
    """The unit of the `repetition`-th run of the run's `index`-th scenario."""
    return f"{index:03d}#{repetition}"


def load_scenario_results(store: Store, run_id: str) -> list[ScenarioResult]:
    """The results of a scenario run committed so far, in the run's scenario order, then by repetition
    (a unit not done yet, or failed, has none)."""
    out: list[tuple[str, ScenarioResult]] = []
    for key, unit in store.finished_units(run_id).items():
        result = unit.get("result") or {}
        if unit.get("status") != "done" or "verdict" not in result:
            continue
        record = ScenarioResult(
            scenario=result["scenario"],
            repetition=int(result["repetition"]),
            conversation_id=result["conversation"],
            verdict=ScenarioVerdict.model_validate(result["verdict"]),
        )
        out.append((key, record))
    out.sort(key=lambda pair: (pair[0].split("#")[0], pair[1].repetition))
    return [record for _, record in out]
