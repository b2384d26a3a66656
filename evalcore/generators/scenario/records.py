"""Typed records of a scenario file (seed 003, "Schema" and "Field Reference"): `scenario.name`,
`simulation_context`, `setup.initial_slots`, `goals.criteria` and `goals.assertions` with its twelve kinds.

Each assertion keeps the form it was written in, so an exported file reads as its source did: the
shorter forms Rasa's own E2E tests accept (`flow_started: <flow id>`, `pattern_clarification_contains:
[<flow name>, ...]`) stay short, an omitted `threshold` stays omitted, and a slot check without `value`
is told apart from one with `value: null`. Reading and writing the YAML is in format.py.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field, JsonValue

from evalcore.models.common import Record

Operator = Literal["any", "all"]
DEFAULT_THRESHOLD = 0.5  # Rasa's default for both generative assertions (seed 003: "threshold ... optional")


class FlowStartedAssertion(Record):
    """`flow_started`: a flow (any of, or all of, `flow_ids`) was started."""

    kind: Literal["flow_started"] = "flow_started"
    flow_id: str | None = Field(default=None, description="The short form: one flow id as a plain string.")
    flow_ids: list[str] = Field(default_factory=list, description="Flow ids (the mapping form).")
    operator: Operator | None = Field(default=None, description="any or all (the mapping form).")

    def ids(self) -> list[str]:
        """The flow ids checked, whichever form was written."""
        return [self.flow_id] if self.flow_id is not None else self.flow_ids


class FlowCompletedAssertion(Record):
    """`flow_completed`: a flow reached its end (at `flow_step_id` when given)."""

    kind: Literal["flow_completed"] = "flow_completed"
    flow_id: str = Field(description="Id of the flow.")
    flow_step_id: str | None = Field(default=None, description="Step it must complete at (optional).")


class FlowCancelledAssertion(Record):
    """`flow_cancelled`: a flow was cancelled (at `flow_step_id` when given)."""

    kind: Literal["flow_cancelled"] = "flow_cancelled"
    flow_id: str = Field(description="Id of the flow.")
    flow_step_id: str | None = Field(default=None, description="Step it must be cancelled at (optional).")


class ActionExecutedAssertion(Record):
    """`action_executed`: an action ran."""

    kind: Literal["action_executed"] = "action_executed"
    action_name: str = Field(description="Name of the action.")


class SlotCheck(Record):
    """One slot of `slot_was_set` / `slot_was_not_set`."""

    name: str = Field(description="Name of the slot.")
    value: JsonValue = Field(default=None, description="The value checked, when `has_value`.")
    has_value: bool = Field(default=False, description="Whether a value was given (`value: null` counts).")


class SlotWasSetAssertion(Record):
    """`slot_was_set`: every listed slot was set (to its value, when given)."""

    kind: Literal["slot_was_set"] = "slot_was_set"
    slots: list[SlotCheck] = Field(description="The slots checked.")


class SlotWasNotSetAssertion(Record):
    """`slot_was_not_set`: no listed slot was set (to its value, when given)."""

    kind: Literal["slot_was_not_set"] = "slot_was_not_set"
    slots: list[SlotCheck] = Field(description="The slots checked.")


class ButtonCheck(Record):
    """One expected (or forbidden) button."""

    title: str = Field(description="Text on the button.")
    payload: str | None = Field(
        default=None, description="Its payload; when omitted, the button must have none (as in Rasa)."
    )


class BotUtteredAssertion(Record):
    """`bot_uttered`: the agent sent a response with this name, text matching this pattern, these buttons."""

    kind: Literal["bot_uttered"] = "bot_uttered"
    utter_name: str | None = Field(default=None, description="Name of the response.")
    text_matches: str | None = Field(default=None, description="Regular expression searched in the text.")
    buttons: list[ButtonCheck] | None = Field(default=None, description="Buttons, in order.")


class BotDidNotUtterAssertion(Record):
    """`bot_did_not_utter`: no response had this name, text matching this pattern, or one of these buttons."""

    kind: Literal["bot_did_not_utter"] = "bot_did_not_utter"
    utter_name: str | None = Field(default=None, description="Name of the forbidden response.")
    text_matches: str | None = Field(default=None, description="Forbidden regular expression.")
    buttons: list[ButtonCheck] | None = Field(default=None, description="Forbidden buttons.")


class ClarificationContainsAssertion(Record):
    """`pattern_clarification_contains`: a clarification suggested the flows (any of, or all of, them)."""

    kind: Literal["pattern_clarification_contains"] = "pattern_clarification_contains"
    flow_ids: list[str] = Field(default_factory=list, description="Flow ids (the mapping form).")
    operator: Operator | None = Field(default=None, description="any or all (the mapping form).")
    flow_names: list[str] | None = Field(
        default=None, description="The short form (a plain list): exactly these flows were suggested."
    )


class GenerativeRelevantAssertion(Record):
    """`generative_response_is_relevant`: generative responses answer the user's message (LLM-scored)."""

    kind: Literal["generative_response_is_relevant"] = "generative_response_is_relevant"
    threshold: float | None = Field(default=None, ge=0, le=1, description="Lowest passing score (0.5).")
    utter_name: str | None = Field(default=None, description="Only the response of this name.")
    utter_source: str | None = Field(default=None, description="Only responses from this source.")

    def limit(self) -> float:
        """The threshold in force."""
        return DEFAULT_THRESHOLD if self.threshold is None else self.threshold


class GenerativeGroundedAssertion(Record):
    """`generative_response_is_grounded`: generative responses agree with their source (LLM-scored)."""

    kind: Literal["generative_response_is_grounded"] = "generative_response_is_grounded"
    threshold: float | None = Field(default=None, ge=0, le=1, description="Lowest passing score (0.5).")
    utter_name: str | None = Field(default=None, description="Only the response of this name.")
    utter_source: str | None = Field(default=None, description="Only responses from this source.")
    ground_truth: str | None = Field(
        default=None, description="The facts to check against (default: what the response was built from)."
    )

    def limit(self) -> float:
        """The threshold in force."""
        return DEFAULT_THRESHOLD if self.threshold is None else self.threshold


StepKey = Literal[
    "flow_started", "flow_completed", "flow_cancelled", "flow_interrupted", "action_executed", "slot_was_set"
]
STEP_KEYS: tuple[str, ...] = get_args(StepKey)  # the seed's "Step key" table, in its order


class SequencingStep(Record):
    """One step of `sequencing`: an event of this kind naming this flow, action or slot."""

    key: StepKey = Field(description="Which kind of event the step matches.")
    value: str = Field(description="The flow id, action name or slot name.")


class SequencingAssertion(Record):
    """`sequencing`: the steps matched events in this order, each strictly after the previous match."""

    kind: Literal["sequencing"] = "sequencing"
    steps: list[SequencingStep] = Field(description="The steps, in order.")


Assertion = Annotated[
    FlowStartedAssertion
    | FlowCompletedAssertion
    | FlowCancelledAssertion
    | ActionExecutedAssertion
    | SlotWasSetAssertion
    | SlotWasNotSetAssertion
    | BotUtteredAssertion
    | BotDidNotUtterAssertion
    | ClarificationContainsAssertion
    | GenerativeRelevantAssertion
    | GenerativeGroundedAssertion
    | SequencingAssertion,
    Field(discriminator="kind"),
]
ASSERTION_MODELS: dict[str, type[Record]] = {
    model.model_fields["kind"].default: model for model in get_args(get_args(Assertion)[0])
}  # kind -> record, in the order of the seed's table


class ScenarioSetup(Record):
    """`setup`: the state injected before the first user turn."""

    initial_slots: dict[str, JsonValue] | None = Field(
        default=None, description="Slot values injected after session start."
    )


class ScenarioGoals(Record):
    """`goals`: what success looks like."""

    criteria: list[str] | None = Field(default=None, description="Statements an LLM judge checks.")
    assertions: list[Assertion] | None = Field(default=None, description="Checks on the event history.")


class Scenario(Record):
    """One scenario: who the simulated user is, what they want, and what success looks like."""

    name: str = Field(description="Title of the scenario.")
    simulation_context: str = Field(description="Briefing of the simulated user.")
    setup: ScenarioSetup | None = Field(default=None, description="Initial slots.")
    goals: ScenarioGoals | None = Field(default=None, description="Criteria and assertions.")

    @property
    def criteria(self) -> list[str]:
        """The criteria (none when omitted)."""
        return (self.goals.criteria if self.goals else None) or []

    @property
    def assertions(self) -> list[Assertion]:
        """The assertions (none when omitted)."""
        return (self.goals.assertions if self.goals else None) or []

    @property
    def initial_slots(self) -> dict[str, JsonValue]:
        """The initial slots (none when omitted)."""
        return (self.setup.initial_slots if self.setup else None) or {}
