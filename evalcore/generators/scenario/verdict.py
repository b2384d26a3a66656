"""A scenario's verdict on one conversation (seed 003, "goals"): every assertion checked on the full event
history, every criterion judged on the whole transcript; "A run is marked failed if any criterion
fails", and likewise any assertion. A conversation passes only when everything passed; it fails when
anything failed; otherwise (something unscored, nothing failed) it has no verdict. With neither
assertions nor criteria there is nothing to fail, and it passes.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from evalcore.generators.scenario.checks import Outcome, Scorer, check_all
from evalcore.generators.scenario.criteria import CriterionResult, judge_criteria
from evalcore.generators.scenario.records import Scenario
from evalcore.generators.scenario.scoring import scenario_scorer
from evalcore.llm.client import ModelClient
from evalcore.models import Turn
from evalcore.models.common import Record
from evalcore.targets.events import history


class ScenarioVerdict(Record):
    """The outcome of one scenario on one conversation."""

    scenario: str = Field(description="The scenario's name.")
    passed: bool | None = Field(description="True, False, or None when something was unscored.")
    assertions: list[Outcome] = Field(
        default_factory=list, description="One outcome per assertion, in order."
    )
    criteria: list[CriterionResult] = Field(default_factory=list, description="One verdict per criterion.")


def combine(results: Sequence[bool | None]) -> bool | None:
    """False if any failed, else None if any is unscored, else True."""
    if any(r is False for r in results):
        return False
    return None if any(r is None for r in results) else True


def judge_conversation(
    client: ModelClient,
    scenario: Scenario,
    turns: Sequence[Turn],
    *,
    scorer: Scorer | None = None,
    judge: str | None = None,
    target_model: str | None = None,
) -> ScenarioVerdict:
    """The scenario's verdict on a conversation whose turns carry their events (events.with_events):
    assertions on the events, criteria by the judge (`judge`, never `target_model` when another model is
    configured); the generative assertions are scored by `scorer`, else by the same judge (by embedding
    similarity, marked offline, when the judge is the offline provider)."""
    scorer = scorer or scenario_scorer(client, judge, target_model)
    outcomes = check_all(scenario.assertions, history(turns), scorer)
    criteria = judge_criteria(client, scenario.criteria, turns, judge=judge, target_model=target_model)
    passed = combine([o.passed for o in outcomes] + [c.passed for c in criteria])
    return ScenarioVerdict(scenario=scenario.name, passed=passed, assertions=outcomes, criteria=criteria)
