"""Scenario tests (seed 003, the "Scenarios" page of Rasa Pro's simulation and evaluation docs): the
`scenario` arrow. One YAML file per scenario: a simulated user's briefing, initial slots, and goals as
LLM-judged criteria plus deterministic assertions over the conversation's events.

The records of a scenario (records), its YAML both ways with every problem located (format), the
assertion engine over an event history (checks) with an offline embedding scorer for the generative
assertions (scoring), the criteria judge over a transcript (criteria), a scenario's verdict on one
conversation (verdict), scenarios in the store (store_ops), scenarios written from specs (from_specs),
and scenario runs against a target that reports events (run: a job; `load_scenario_results` reads its
results); assertions and events said in words for a page (wording). The target's domain a scenario is
checked against and the events a target reports are the targets' records (`evalcore.targets.domain`,
`evalcore.targets.events`), below this package.
"""

from evalcore.generators.scenario.checks import Outcome, Score, Scorer, ScoreRequest, check, check_all
from evalcore.generators.scenario.criteria import CriterionResult, judge_criteria
from evalcore.generators.scenario.format import ScenarioFile, parse_scenario, read_scenarios, to_yaml
from evalcore.generators.scenario.from_specs import (
    GeneratedScenario,
    generate_scenarios,
    scenarios_from_specs,
)
from evalcore.generators.scenario.records import ASSERTION_MODELS, Assertion, Scenario
from evalcore.generators.scenario.store_ops import (
    KIND,
    ImportedScenarios,
    StoredScenario,
    WrittenScenarios,
    export_scenarios,
    import_scenarios,
    list_scenarios,
    write_from_specs,
)
from evalcore.generators.scenario.verdict import ScenarioVerdict, judge_conversation
from evalcore.targets.domain import Domain, SlotType, read_domain

__all__ = [
    "ASSERTION_MODELS",
    "KIND",
    "Assertion",
    "CriterionResult",
    "Domain",
    "GeneratedScenario",
    "ImportedScenarios",
    "Outcome",
    "Scenario",
    "ScenarioFile",
    "ScenarioVerdict",
    "Score",
    "ScoreRequest",
    "Scorer",
    "SlotType",
    "StoredScenario",
    "WrittenScenarios",
    "check",
    "check_all",
    "export_scenarios",
    "generate_scenarios",
    "import_scenarios",
    "judge_conversation",
    "judge_criteria",
    "list_scenarios",
    "parse_scenario",
    "read_domain",
    "read_scenarios",
    "scenarios_from_specs",
    "to_yaml",
    "write_from_specs",
]
