"""The assertion engine (seed 003, "goals.assertions" and "sequencing"): each of the twelve assertion kinds
is a pure function of the assertion and the conversation's full event history, returning an Outcome that
records the events that satisfied it or broke it.

Semantics, read from the seed's table and, where the seed is silent, from Rasa's E2E assertions (whose
types the seed reuses), over the whole history rather than one user turn:
- flow_started: `any` passes when one listed flow started, `all` when every one did; the short form
  names one flow.
- flow_completed / flow_cancelled: an event of that flow (at `flow_step_id`, when given) exists.
- action_executed: the action ran.
- slot_was_set: every listed slot was set (to `value`, when given). slot_was_not_set, as Rasa's
  `SlotWasNotSetAssertion` decides it: a listed slot's LAST value is what counts (set, then reset to
  null, passes; set to `value`, then changed, passes); without `value` it fails when the last value is
  not null, with `value` when the last value is that value. Values compare as JSON does: true is not 1,
  "12345" is not 12345.
- bot_uttered: each field given is matched by some bot message, each on its own, as Rasa's
  `BotUtteredAssertion` does (so two fields may be met by two different messages): `utter_name` by the
  response name, `text_matches` by re.search on the text (case-sensitive, as Python's re and Rasa),
  `buttons` by the message's buttons paired in order with the expected ones, title and payload both
  equal (an expected button without a payload matches only a button without one, as in Rasa).
  bot_did_not_utter: no bot message has the name, matches the pattern, or shows a forbidden button
  (title and payload equal).
- pattern_clarification_contains: a clarification suggested one of (`any`) or all of (`all`: "the
  clarification suggestions included the expected flow IDs") the flows; the short list form passes
  when a clarification suggested exactly those flows (its names, or its ids when it reports none).
- generative_response_is_relevant / _is_grounded: the responses from `utter_source` (default: the
  sources Rasa calls generative), narrowed to `utter_name` when given, are each scored alone against
  the user message before it (relevance) or the ground truth (groundedness: the assertion's, else what
  the response was built from); every one must score at least the threshold (0.5 by default). The
  scorer is a callable, so the model layer plugs in an LLM judge; a scorer that cannot score returns
  None and the outcome is unscored (passed None), never a failure.
- sequencing: each step matches an event strictly after the previous step's match (the earliest such
  event, so repeated events are used in order and a later step never reuses an earlier match).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, JsonValue

from evalcore.generators.scenario.records import (
    ActionExecutedAssertion,
    Assertion,
    BotDidNotUtterAssertion,
    BotUtteredAssertion,
    ButtonCheck,
    ClarificationContainsAssertion,
    FlowCancelledAssertion,
    FlowCompletedAssertion,
    FlowStartedAssertion,
    GenerativeGroundedAssertion,
    GenerativeRelevantAssertion,
    SequencingAssertion,
    SequencingStep,
    SlotWasNotSetAssertion,
    SlotWasSetAssertion,
)
from evalcore.generators.scenario.wording import step_words
from evalcore.models.common import Record
from evalcore.targets.events import (
    ActionExecuted,
    BotUttered,
    ClarificationRequested,
    Event,
    FlowCancelled,
    FlowCompleted,
    FlowInterrupted,
    FlowStarted,
    SlotSet,
    UserUttered,
)

# Rasa's generative sources (rasa/e2e_test: ELIGIBLE_UTTER_SOURCE_METADATA): the responses the generative
# assertions score when no utter_source is given; templated responses are not generative.
GENERATIVE_SOURCES = ("EnterpriseSearchPolicy", "ContextualResponseRephraser", "IntentlessPolicy")
# Where a response records what it was built from (Rasa: search_results, then domain_ground_truth).
GROUND_TRUTH_KEYS = ("search_results", "domain_ground_truth")


class Outcome(Record):
    """The result of one assertion on one event history."""

    kind: str = Field(description="The assertion's kind.")
    passed: bool | None = Field(description="True, False, or None when a scorer could not score.")
    message: str = Field(description="Why it passed or failed, in one sentence.")
    events: list[Event] = Field(default_factory=list, description="Events that satisfied or broke it.")
    score: float | None = Field(default=None, description="The score, for the generative assertions.")
    details: list[dict[str, JsonValue]] = Field(
        default_factory=list, description="Per-response scores and rationales, for the generative ones."
    )


@dataclass(frozen=True)
class ScoreRequest:
    """One response to score, in isolation (seed 003: "They assess a single turn in isolation")."""

    metric: Literal["relevance", "groundedness"]
    response: str
    question: str
    ground_truth: str


@dataclass(frozen=True)
class Score:
    """A score in 0..1 and why."""

    value: float
    rationale: str = ""


Scorer = Callable[[ScoreRequest], Score | None]


def _passed(kind: str, message: str, events: Sequence[Event] = ()) -> Outcome:
    return Outcome(kind=kind, passed=True, message=message, events=list(events))


def _failed(kind: str, message: str, events: Sequence[Event] = ()) -> Outcome:
    return Outcome(kind=kind, passed=False, message=message, events=list(events))


def _first(events: Sequence[Event], match: Callable[[Event], bool]) -> Event | None:
    return next((e for e in events if match(e)), None)


def same_value(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: true is not 1 (Python says it is), 1 is 1.0, containers compare deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


# ------------------------------------------------------------------------------------------------ flows


def check_flow_started(assertion: FlowStartedAssertion, events: Sequence[Event]) -> Outcome:
    """`flow_started`: any (or all) of the flows started."""
    kind, ids = assertion.kind, assertion.ids()
    if assertion.operator == "all":
        found = {i: _first(events, lambda e, i=i: isinstance(e, FlowStarted) and e.flow_id == i) for i in ids}
        started = [e for e in found.values() if e is not None]
        missing = [i for i, e in found.items() if e is None]
        if missing:
            return _failed(kind, f"flow(s) {', '.join(missing)} did not start", started)
        return _passed(kind, f"all of {', '.join(ids)} started", started)
    first = _first(events, lambda e: isinstance(e, FlowStarted) and e.flow_id in ids)
    if first is None:
        return _failed(kind, f"none of the flows {', '.join(ids)} started")
    return _passed(kind, f"flow {first.flow_id} started", [first])


def _check_flow_end(
    assertion: FlowCompletedAssertion | FlowCancelledAssertion,
    events: Sequence[Event],
    event_type: type[FlowCompleted] | type[FlowCancelled],
    verb: str,
) -> Outcome:
    kind, flow, step = assertion.kind, assertion.flow_id, assertion.flow_step_id
    of_flow = [e for e in events if isinstance(e, event_type) and e.flow_id == flow]
    match = _first(of_flow, lambda e: step is None or e.step_id == step)
    if match is not None:
        at = f" at step {step}" if step else ""
        return _passed(kind, f"flow {flow} {verb}{at}", [match])
    if of_flow:  # it ended, but elsewhere: those events broke the assertion
        steps = ", ".join(str(e.step_id) for e in of_flow)
        return _failed(kind, f"flow {flow} {verb} at step {steps}, not at {step}", of_flow)
    return _failed(kind, f"flow {flow} was not {verb}")


def check_flow_completed(assertion: FlowCompletedAssertion, events: Sequence[Event]) -> Outcome:
    """`flow_completed`: the flow completed (at the step, when given)."""
    return _check_flow_end(assertion, events, FlowCompleted, "completed")


def check_flow_cancelled(assertion: FlowCancelledAssertion, events: Sequence[Event]) -> Outcome:
    """`flow_cancelled`: the flow was cancelled (at the step, when given)."""
    return _check_flow_end(assertion, events, FlowCancelled, "cancelled")


def check_action_executed(assertion: ActionExecutedAssertion, events: Sequence[Event]) -> Outcome:
    """`action_executed`: the action ran."""
    name = assertion.action_name
    match = _first(events, lambda e: isinstance(e, ActionExecuted) and e.action_name == name)
    if match is None:
        return _failed(assertion.kind, f"action {name} did not run")
    return _passed(assertion.kind, f"action {name} ran", [match])


# ------------------------------------------------------------------------------------------------ slots


def check_slot_was_set(assertion: SlotWasSetAssertion, events: Sequence[Event]) -> Outcome:
    """`slot_was_set`: every listed slot was set (to its value, when given)."""
    kind, used = assertion.kind, []
    for slot in assertion.slots:
        sets = [e for e in events if isinstance(e, SlotSet) and e.name == slot.name]
        if not sets:
            return _failed(kind, f"slot {slot.name} was not set", used)
        if not slot.has_value:
            used.append(sets[0])
            continue
        match = _first(sets, lambda e, v=slot.value: same_value(e.value, v))
        if match is None:
            values = ", ".join(repr(e.value) for e in sets)
            return _failed(kind, f"slot {slot.name} was set to {values}, not to {slot.value!r}", sets)
        used.append(match)
    return _passed(kind, f"slot(s) {', '.join(s.name for s in assertion.slots)} set as expected", used)


def check_slot_was_not_set(assertion: SlotWasNotSetAssertion, events: Sequence[Event]) -> Outcome:
    """`slot_was_not_set`: no listed slot's last value is set (or is its value, when given)."""
    kind, broken = assertion.kind, []
    for slot in assertion.slots:
        sets = [e for e in events if isinstance(e, SlotSet) and e.name == slot.name]
        last = sets[-1] if sets else None  # the slot's value in the tracker once the events are applied
        if last is None:
            continue
        if same_value(last.value, slot.value) if slot.has_value else last.value is not None:
            broken.append(last)
    if broken:
        what = ", ".join(f"{e.name}={e.value!r}" for e in broken)
        return _failed(kind, f"set although it should not have been: {what}", broken)
    return _passed(kind, f"slot(s) {', '.join(s.name for s in assertion.slots)} not set")


# -------------------------------------------------------------------------------------- bot messages


def _buttons_start_with(event: BotUttered, expected: list[ButtonCheck]) -> bool:
    # Rasa pairs the message's buttons with the expected ones (zip: the shorter list sets how many)
    if not event.buttons:
        return False
    return all(
        b.title == want.title and b.payload == want.payload
        for b, want in zip(event.buttons, expected, strict=False)
    )


def _has_button(event: BotUttered, forbidden: list[ButtonCheck]) -> bool:
    return any(b.title == f.title and b.payload == f.payload for b in event.buttons for f in forbidden)


def check_bot_uttered(assertion: BotUtteredAssertion, events: Sequence[Event]) -> Outcome:
    """`bot_uttered`: each field given (response name, text pattern, buttons) matches a bot message."""
    kind = assertion.kind
    bot = [e for e in events if isinstance(e, BotUttered)]
    tests: list[tuple[str, Callable[[BotUttered], bool]]] = []
    if assertion.utter_name is not None:
        tests.append((f"response {assertion.utter_name}", lambda e: e.utter_name == assertion.utter_name))
    if assertion.text_matches is not None:
        pattern = re.compile(assertion.text_matches)
        tests.append((f"text matching /{assertion.text_matches}/", lambda e: bool(pattern.search(e.text))))
    if assertion.buttons:
        titles = ", ".join(b.title for b in assertion.buttons)
        tests.append((f"buttons {titles}", lambda e: _buttons_start_with(e, assertion.buttons)))
    used: list[Event] = []
    for label, test in tests:
        match = _first(bot, test)
        if match is None:
            return _failed(kind, f"the bot sent no message with {label}", used)
        if match not in used:
            used.append(match)
    return _passed(kind, "the bot sent " + "; ".join(label for label, _ in tests), used)


def check_bot_did_not_utter(assertion: BotDidNotUtterAssertion, events: Sequence[Event]) -> Outcome:
    """`bot_did_not_utter`: no bot message has the name, matches the text pattern or shows a button."""
    kind = assertion.kind
    pattern = re.compile(assertion.text_matches) if assertion.text_matches is not None else None
    broken = [
        e
        for e in events
        if isinstance(e, BotUttered)
        and (
            (assertion.utter_name is not None and e.utter_name == assertion.utter_name)
            or (pattern is not None and pattern.search(e.text))
            or (assertion.buttons and _has_button(e, assertion.buttons))
        )
    ]
    if broken:
        return _failed(kind, f"the bot sent {len(broken)} forbidden message(s)", broken)
    return _passed(kind, "the bot sent no forbidden message")


def check_clarification_contains(
    assertion: ClarificationContainsAssertion, events: Sequence[Event]
) -> Outcome:
    """`pattern_clarification_contains`: a clarification suggested any (or all) of the flows."""
    kind = assertion.kind
    asked = [e for e in events if isinstance(e, ClarificationRequested)]
    if not asked:
        return _failed(kind, "no clarification was asked")
    if assertion.flow_names is not None:
        want = set(assertion.flow_names)
        match = _first(asked, lambda e: set(e.flow_names or e.flow_ids) == want)
        label = f"exactly {', '.join(assertion.flow_names)}"
    elif assertion.operator == "all":
        want = set(assertion.flow_ids)
        match = _first(asked, lambda e: want <= set(e.flow_ids))
        label = f"all of {', '.join(assertion.flow_ids)}"
    else:
        want = set(assertion.flow_ids)
        match = _first(asked, lambda e: bool(want & set(e.flow_ids)))
        label = f"any of {', '.join(assertion.flow_ids)}"
    if match is None:
        return _failed(kind, f"no clarification suggested {label}", asked)
    return _passed(kind, f"a clarification suggested {label}", [match])


# ---------------------------------------------------------------------------------------- generative


def _ground_truth(event: BotUttered, given: str | None) -> str:
    if given is not None:
        return given
    for key in GROUND_TRUTH_KEYS:
        value = event.metadata.get(key)
        if isinstance(value, list):
            value = "\n".join(str(v) for v in value)
        if value:
            return str(value)
    return ""


def check_generative(
    assertion: GenerativeRelevantAssertion | GenerativeGroundedAssertion,
    events: Sequence[Event],
    scorer: Scorer,
) -> Outcome:
    """`generative_response_is_relevant` / `_is_grounded`: every selected response scores at least the
    threshold, each scored alone (relevance: against the user message before it)."""
    kind, limit = assertion.kind, assertion.limit()
    grounded = isinstance(assertion, GenerativeGroundedAssertion)
    sources = (assertion.utter_source,) if assertion.utter_source else GENERATIVE_SOURCES
    question, picked = "", []
    for event in events:
        if isinstance(event, UserUttered):
            question = event.text
        elif (
            isinstance(event, BotUttered)
            and event.source in sources
            and assertion.utter_name in (None, event.utter_name)
        ):
            picked.append((event, question))
    if not picked:
        name = f" named {assertion.utter_name}" if assertion.utter_name else ""
        return _failed(kind, f"no generative response{name} from {' or '.join(sources)} to score")
    scored, unscored, details = [], [], []
    for event, asked in picked:
        truth = _ground_truth(event, assertion.ground_truth if grounded else None)
        if grounded and not truth:
            why = "no ground truth: give ground_truth, or have the target report search_results"
            return _failed(kind, why, [event])
        metric = "groundedness" if grounded else "relevance"
        score = scorer(ScoreRequest(metric, event.text, asked, truth))
        if score is None:
            unscored.append(event)
            details.append({"text": event.text, "score": None, "rationale": "unscored"})
            continue
        scored.append((score.value, event))
        details.append({"text": event.text, "score": score.value, "rationale": score.rationale})
    low = [(value, e) for value, e in scored if value < limit]
    lowest = min((value for value, _ in scored), default=None)
    adjective = "grounded" if grounded else "relevant"
    if low:
        message = f"{len(low)} of {len(picked)} response(s) scored under {limit} (lowest {lowest:.2f})"
        low_events = [e for _, e in low]
        return Outcome(
            kind=kind, passed=False, message=message, events=low_events, score=lowest, details=details
        )
    if unscored:
        message = f"{len(unscored)} of {len(picked)} response(s) could not be scored"
        return Outcome(
            kind=kind, passed=None, message=message, events=unscored, score=lowest, details=details
        )
    message = f"{len(picked)} response(s) {adjective}: every score at least {limit} (lowest {lowest:.2f})"
    scored_events = [e for _, e in scored]
    return Outcome(
        kind=kind, passed=True, message=message, events=scored_events, score=lowest, details=details
    )


# ---------------------------------------------------------------------------------------- sequencing

_STEP_EVENTS: dict[str, tuple[type, str]] = {  # step key -> (event type, the field holding its name)
    "flow_started": (FlowStarted, "flow_id"),
    "flow_completed": (FlowCompleted, "flow_id"),
    "flow_cancelled": (FlowCancelled, "flow_id"),
    "flow_interrupted": (FlowInterrupted, "flow_id"),
    "action_executed": (ActionExecuted, "action_name"),
    "slot_was_set": (SlotSet, "name"),
}


def _step_matches(step: SequencingStep, event: Event) -> bool:
    event_type, attribute = _STEP_EVENTS[step.key]
    return isinstance(event, event_type) and getattr(event, attribute) == step.value


def check_sequencing(assertion: SequencingAssertion, events: Sequence[Event]) -> Outcome:
    """`sequencing`: each step matches an event strictly after the previous step's match."""
    kind, position, used = assertion.kind, -1, []
    for number, step in enumerate(assertion.steps, start=1):
        match = next((i for i in range(position + 1, len(events)) if _step_matches(step, events[i])), None)
        if match is None:
            after = f" after step {number - 1} (event {position + 1})" if used else ""
            anywhere = any(_step_matches(step, e) for e in events)
            why = " (it happened, but too early)" if anywhere else ""
            message = f"step {number} ({step_words(step.key, step.value)}) did not happen{after}{why}"
            return _failed(kind, message, used)
        position = match
        used.append(events[match])
    return _passed(kind, f"all {len(assertion.steps)} steps happened in order", used)


# -------------------------------------------------------------------------------------------- dispatch

_CHECKS: dict[str, Callable[[Any, Sequence[Event]], Outcome]] = {
    "flow_started": check_flow_started,
    "flow_completed": check_flow_completed,
    "flow_cancelled": check_flow_cancelled,
    "action_executed": check_action_executed,
    "slot_was_set": check_slot_was_set,
    "slot_was_not_set": check_slot_was_not_set,
    "bot_uttered": check_bot_uttered,
    "bot_did_not_utter": check_bot_did_not_utter,
    "pattern_clarification_contains": check_clarification_contains,
    "sequencing": check_sequencing,
}


def check(assertion: Assertion, events: Sequence[Event], scorer: Scorer | None = None) -> Outcome:
    """The outcome of one assertion on an event history; the generative kinds need a scorer."""
    if assertion.kind in _CHECKS:
        return _CHECKS[assertion.kind](assertion, events)
    if scorer is None:
        raise ValueError(f"{assertion.kind} needs a scorer (an LLM judge, or the offline embedding scorer)")
    return check_generative(assertion, events, scorer)


def check_all(
    assertions: Sequence[Assertion], events: Sequence[Event], scorer: Scorer | None = None
) -> list[Outcome]:
    """The outcome of each assertion, in order."""
    return [check(assertion, events, scorer) for assertion in assertions]
