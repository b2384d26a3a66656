"""Rasa E2E test files in (Rasa Pro's `rasa test e2e`; issue 30): scripted tests whose user turns are played
as written against an event-reporting target, checked as Rasa checks them.

A file holds `test_cases:` (each a `test_case:` name and `steps:`), and optionally `fixtures:` (named
lists of slot values a test case starts with) and `metadata:`. A step is one of `user:` (a message, with
optional `assertions:`, `assertion_order_enabled:` and `metadata:`), `bot:` (the bot's text), `utter:`
(a response name), `slot_was_set:` and `slot_was_not_set:` (slot names, or `name: value` pairs).

Checking follows Rasa's test runner:
- a test case with assertions is checked by its assertions only (Rasa: "once a test case contains an
  assertion, the test runner will ignore the pre-existing step types"); each user step's assertions are
  checked on the events of that user turn alone (what the message caused), and with
  `assertion_order_enabled` each one on the events after the previous one's match;
- a test case without assertions is checked step by step: the `bot` and `utter` steps after a user
  step must be the bot's messages of that turn in that order (`bot` by its exact text, `utter` by the
  response name), `slot_was_set` / `slot_was_not_set` against the slots that turn set (a name alone:
  set to anything but null / not set; a value: set to it / not set to it). Steps before the first user
  step are checked on what the session start and the fixtures caused.

`as_scenario` writes a seed-003 scenario from a test case (`scenarios import-e2e --as-scenarios`): the user
steps become the simulated user's briefing, the fixtures its initial slots, the assertions (and the bot,
utter and slot steps, as `bot_uttered` and slot assertions) its goals.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, JsonValue

from evalcore.errors import Problem
from evalcore.generators.scenario.checks import Outcome, Scorer, check, same_value
from evalcore.generators.scenario.format import (
    Loc,
    Reader,
    assertion_value,
    did_you_mean,
    kind_of,
    scenario_paths,
)
from evalcore.generators.scenario.records import (
    Assertion,
    BotUtteredAssertion,
    Scenario,
    ScenarioGoals,
    ScenarioSetup,
    SlotCheck,
    SlotWasNotSetAssertion,
    SlotWasSetAssertion,
)
from evalcore.inputs.sources import parse_yaml, read_text
from evalcore.models.common import Record
from evalcore.targets.events import BotUttered, Event, SlotSet

STEP_KINDS = ("user", "bot", "utter", "slot_was_set", "slot_was_not_set")
USER_OPTIONS = {"assertions", "assertion_order_enabled", "metadata"}
ROOT_FIELDS = {"fixtures", "metadata", "stub_custom_actions"}  # besides test_cases


class E2EStep(Record):
    """One step of a Rasa E2E test case."""

    kind: Literal["user", "bot", "utter", "slot_was_set", "slot_was_not_set"] = Field(
        description="user, bot, utter, slot_was_set or slot_was_not_set."
    )
    text: str | None = Field(default=None, description="The user's message, or the bot's expected text.")
    name: str | None = Field(default=None, description="The response name of an utter step.")
    slots: list[SlotCheck] = Field(default_factory=list, description="The slots of a slot step.")
    assertions: list[Assertion] = Field(default_factory=list, description="A user step's assertions.")
    ordered: bool = Field(default=False, description="assertion_order_enabled of a user step.")
    line: int | None = Field(default=None, description="Line of the step in its file.")


class E2ETestCase(Record):
    """One Rasa E2E test case."""

    name: str = Field(description="Its `test_case` name.")
    file: str = Field(description="The file it came from.")
    line: int | None = Field(default=None, description="Line of its `test_case` in the file.")
    fixtures: list[str] = Field(default_factory=list, description="Names of the fixtures it starts with.")
    initial_slots: dict[str, JsonValue] = Field(default_factory=dict, description="The fixtures' slots.")
    steps: list[E2EStep] = Field(description="Its steps, in order.")

    @property
    def with_assertions(self) -> bool:
        """Whether any user step has assertions (then only the assertions are checked, as in Rasa)."""
        return any(step.assertions for step in self.steps)

    @property
    def user_messages(self) -> list[str]:
        """The user's messages, in order."""
        return [step.text or "" for step in self.steps if step.kind == "user"]


# ----------------------------------------------------------------------------------------------- reading


class _E2EReader(Reader):
    """Checks one parsed E2E file, recording every problem instead of stopping (assertions are read as
    scenario assertions: Rasa's and the seed's are one format)."""

    def cases(self) -> list[E2ETestCase]:
        root = self.mapping(self.located.data, (), {"test_cases"}, ROOT_FIELDS)
        if root is None or "test_cases" not in root:
            return []
        fixtures = self.fixtures(root.get("fixtures"), ("fixtures",)) if "fixtures" in root else {}
        items = root["test_cases"]
        if not isinstance(items, list) or not items:
            self.problem(("test_cases",), f"expected a list of test cases, got {kind_of(items)}")
            return []
        out = []
        for i, item in enumerate(items):
            case = self.case(item, ("test_cases", i), fixtures)
            if case is not None:
                out.append(case)
        return out

    def fixtures(self, value: Any, loc: Loc) -> dict[str, dict[str, Any]]:
        """`fixtures:`: a list of `- name: [ {slot: value}, ... ]`."""
        if not isinstance(value, list):
            self.problem(loc, f"expected a list of fixtures, got {kind_of(value)}")
            return {}
        out: dict[str, dict[str, Any]] = {}
        for i, entry in enumerate(value):
            if not isinstance(entry, dict) or len(entry) != 1:
                self.problem((*loc, i), "a fixture is a mapping of its name to a list of slot values")
                continue
            name, slots = next(iter(entry.items()))
            values: dict[str, Any] = {}
            if not isinstance(slots, list):
                self.problem((*loc, i, name), f"expected a list of slot: value, got {kind_of(slots)}")
                continue
            for j, pair in enumerate(slots):
                if not isinstance(pair, dict) or len(pair) != 1:
                    self.problem((*loc, i, name, j), "expected one slot: value")
                    continue
                slot, slot_value = next(iter(pair.items()))
                if self.json_value(slot_value, (*loc, i, name, j, slot)):
                    values[str(slot)] = slot_value
            out[str(name)] = values
        return out

    def case(self, value: Any, loc: Loc, fixtures: dict[str, dict[str, Any]]) -> E2ETestCase | None:
        body = self.mapping(value, loc, {"test_case", "steps"}, {"fixtures", "metadata"})
        if body is None or "test_case" not in body or "steps" not in body:
            return None
        name = self.text(body["test_case"], (*loc, "test_case"))
        used = body.get("fixtures") or []
        slots: dict[str, Any] = {}
        if not isinstance(used, list):
            self.problem((*loc, "fixtures"), f"expected a list of fixture names, got {kind_of(used)}")
            used = []
        for i, fixture in enumerate(used):
            if fixture not in fixtures:
                hint = did_you_mean(fixture, fixtures)
                self.problem((*loc, "fixtures", i), f"no fixture '{fixture}' in this file{hint}")
            else:
                slots |= fixtures[fixture]
        raw_steps = body["steps"]
        if not isinstance(raw_steps, list) or not raw_steps:
            self.problem((*loc, "steps"), f"expected a list of steps, got {kind_of(raw_steps)}")
            return None
        steps = [self.step(s, (*loc, "steps", i)) for i, s in enumerate(raw_steps)]
        if name is None or None in steps:
            return None
        if not any(s.kind == "user" for s in steps if s is not None):
            self.problem((*loc, "steps"), "a test case needs at least one user step")
            return None
        line = self.located.line_of((*loc, "test_case"))
        return E2ETestCase(
            name=name,
            file=self.shown,
            line=line,
            fixtures=[str(f) for f in used],
            initial_slots=slots,
            steps=[s for s in steps if s is not None],
        )

    def step(self, value: Any, loc: Loc) -> E2EStep | None:
        if not isinstance(value, dict):
            self.problem(loc, f"a step is a mapping such as '- user: ...', got {kind_of(value)}")
            return None
        kinds = [k for k in value if k in STEP_KINDS]
        if len(kinds) != 1:
            keys = ", ".join(map(str, value))
            hint = did_you_mean(next(iter(value), ""), STEP_KINDS) if not kinds else ""
            self.problem(loc, f"a step has exactly one of {', '.join(STEP_KINDS)}, got {keys}{hint}")
            return None
        kind = kinds[0]
        allowed = {kind} | (USER_OPTIONS if kind == "user" else set())
        for key in value:
            if key not in allowed:
                self.problem((*loc, key), f"unknown field of a {kind} step{did_you_mean(key, allowed)}")
        at, line = (*loc, kind), self.located.line_of((*loc, kind))
        if kind in ("user", "bot", "utter"):
            text = self.text(value[kind], at)
            if text is None:
                return None
            if kind == "utter":
                return E2EStep(kind=kind, name=text, line=line)
            if kind == "bot":
                return E2EStep(kind=kind, text=text, line=line)
            assertions = self.user_assertions(value.get("assertions"), (*loc, "assertions"))
            if assertions is None:
                return None
            ordered = value.get("assertion_order_enabled", False)
            if not isinstance(ordered, bool):
                self.problem((*loc, "assertion_order_enabled"), "expected true or false")
                return None
            return E2EStep(kind=kind, text=text, assertions=assertions, ordered=ordered, line=line)
        slots = self.step_slots(value[kind], at)
        return E2EStep(kind=kind, slots=slots, line=line) if slots is not None else None

    def user_assertions(self, value: Any, loc: Loc) -> list[Assertion] | None:
        if value is None:
            return []
        if not isinstance(value, list):
            self.problem(loc, f"expected a list of assertions, got {kind_of(value)}")
            return None
        read = [self.assertion(a, (*loc, i)) for i, a in enumerate(value)]
        return None if None in read else [a for a in read if a is not None]

    def step_slots(self, value: Any, loc: Loc) -> list[SlotCheck] | None:
        """A slot step's slots: names, or `name: value` pairs."""
        items = value if isinstance(value, list) else [value]
        out = []
        for i, item in enumerate(items):
            at = (*loc, i) if isinstance(value, list) else loc
            if isinstance(item, str) and item.strip():
                out.append(SlotCheck(name=item, value=None, has_value=False))
            elif isinstance(item, dict) and len(item) == 1:
                name, slot_value = next(iter(item.items()))
                if not self.json_value(slot_value, (*at, name)):
                    return None
                out.append(SlotCheck(name=str(name), value=slot_value, has_value=True))
            else:
                self.problem(at, f"expected a slot name or 'slot: value', got {kind_of(item)}")
                return None
        return out


def is_e2e_file(data: Any) -> bool:
    """Whether parsed YAML is a Rasa E2E test file (it has `test_cases:`)."""
    return isinstance(data, dict) and "test_cases" in data


def parse_e2e(text: str, shown: str, problems: list[Problem]) -> list[E2ETestCase]:
    """The test cases in `text` (the content of the file `shown`); none, after recording every problem
    of the file, when it has any."""
    located = parse_yaml(text, shown, problems, yaml12_bools=True)
    if located is None:
        return []
    if isinstance(located.data, dict) and "scenario" in located.data:
        problems.append(
            Problem(shown, "this file is a scenario: import it with `evalcore scenarios import`", 1)
        )
        return []
    reader = _E2EReader(located, shown, problems)
    cases = reader.cases()
    return cases if reader.clean else []


def read_e2e(
    paths: Iterable[Path], skipped: list[str] | None = None
) -> tuple[list[E2ETestCase], list[Problem]]:
    """Every test case in the files and folders named (a folder's YAML files that are not E2E test files
    are left out, with a line in `skipped`), and every problem found; a test case name given twice is a
    problem (it is the test's identity in the store)."""
    paths = list(paths)
    named = {p.resolve() for p in paths if p.is_file()}
    problems: list[Problem] = []
    cases: list[E2ETestCase] = []
    for path in scenario_paths(paths, problems):
        shown = str(path)
        text = read_text(path, shown, problems)
        if text is None:
            continue
        if path.resolve() not in named:
            located = parse_yaml(text, shown, [], yaml12_bools=True)
            if located is not None and not is_e2e_file(located.data):
                if skipped is not None:
                    skipped.append(f"skipped {shown}: not a Rasa E2E test file (no test_cases:)")
                continue
        cases += parse_e2e(text, shown, problems)
    first: dict[str, E2ETestCase] = {}
    for case in cases:
        if case.name in first:
            other = first[case.name]
            problems.append(
                Problem(case.file, f"test case '{case.name}' is also in {other.file}:{other.line}", case.line)
            )
        first.setdefault(case.name, case)
    return cases, problems


# ----------------------------------------------------------------------------------------------- checking


@dataclass(frozen=True)
class PlayedTurn:
    """One user step played: the message and the events it caused (the bot's messages among them)."""

    user: str
    events: list[Event]

    @property
    def bot_text(self) -> str:
        """What the bot said in reply, its messages joined by new lines."""
        return "\n".join(e.text for e in self.events if isinstance(e, BotUttered) and e.text)


def _at(step: E2EStep, turn: int | None) -> str:
    where = f"line {step.line}" if step.line else "a step"
    return f"{where} (before the first user message)" if turn is None else f"{where} (user turn {turn + 1})"


def _check_slots(step: E2EStep, events: Sequence[Event]) -> tuple[bool, str, list[Event]]:
    sets = [e for e in events if isinstance(e, SlotSet)]
    for slot in step.slots:
        mine = [e for e in sets if e.name == slot.name]
        if step.kind == "slot_was_set":
            hit = [
                e
                for e in mine
                if (same_value(e.value, slot.value) if slot.has_value else e.value is not None)
            ]
            if not hit:
                got = ", ".join(repr(e.value) for e in mine) or "not set"
                want = f" to {slot.value!r}" if slot.has_value else ""
                return False, f"slot {slot.name} was not set{want} ({got})", mine
        else:
            hit = [
                e
                for e in mine
                if (same_value(e.value, slot.value) if slot.has_value else e.value is not None)
            ]
            if hit:
                return False, f"slot {slot.name} was set to {hit[-1].value!r}", hit
    names = ", ".join(s.name for s in step.slots)
    return True, f"slot(s) {names} {'set' if step.kind == 'slot_was_set' else 'not set'} as expected", []


def _check_steps(steps: Sequence[E2EStep], events: Sequence[Event], turn: int | None) -> list[Outcome]:
    """The bot, utter and slot steps of one turn, against the events of that turn (see the docstring)."""
    out: list[Outcome] = []
    bot = [e for e in events if isinstance(e, BotUttered)]
    position = 0
    for step in steps:
        where = _at(step, turn)
        if step.kind in ("bot", "utter"):
            if step.kind == "bot":
                wanted = lambda e, text=step.text: e.text == text  # noqa: E731
            else:
                wanted = lambda e, name=step.name: e.utter_name == name  # noqa: E731
            found = next((k for k in range(position, len(bot)) if wanted(bot[k])), None)
            label = f"the text {step.text!r}" if step.kind == "bot" else f"the response {step.name}"
            if found is None:
                said = "; ".join(repr(e.text) for e in bot[position:]) or "nothing more"
                out.append(
                    Outcome(
                        kind=step.kind,
                        passed=False,
                        message=f"{where}: the bot did not send {label} (it sent {said})",
                        events=list(bot[position:]),
                    )
                )
            else:
                out.append(
                    Outcome(
                        kind=step.kind,
                        passed=True,
                        message=f"{where}: the bot sent {label}",
                        events=[bot[found]],
                    )
                )
                position = found + 1
        else:
            passed, message, used = _check_slots(step, events)
            out.append(Outcome(kind=step.kind, passed=passed, message=f"{where}: {message}", events=used))
    return out


def _check_assertions(
    step: E2EStep, events: Sequence[Event], turn: int, scorer: Scorer | None
) -> list[Outcome]:
    """A user step's assertions on the events of its turn (in order when `assertion_order_enabled`)."""
    out, rest = [], list(events)
    for assertion in step.assertions:
        outcome = check(assertion, rest if step.ordered else events, scorer)
        where = _at(step, turn)
        out.append(outcome.model_copy(update={"message": f"{where}: {outcome.message}"}))
        if step.ordered and outcome.passed and outcome.events:
            matched = [rest.index(e) for e in outcome.events if e in rest]
            rest = rest[max(matched) + 1 :] if matched else rest
    return out


def check_case(
    case: E2ETestCase, setup: Sequence[Event], turns: Sequence[PlayedTurn], scorer: Scorer | None = None
) -> list[Outcome]:
    """Every check of a test case on what was played: the assertions when it has any, else its steps."""
    out: list[Outcome] = []
    turn: int | None = None
    pending: list[E2EStep] = []

    def flush() -> None:
        if pending and not case.with_assertions:
            events = setup if turn is None else (turns[turn].events if turn < len(turns) else [])
            out.extend(_check_steps(pending, events, turn))
        pending.clear()

    for step in case.steps:
        if step.kind != "user":
            pending.append(step)
            continue
        flush()
        turn = 0 if turn is None else turn + 1
        if turn >= len(turns):
            out.append(
                Outcome(
                    kind="user", passed=False, message=f"{_at(step, turn)}: not played (the target stopped)"
                )
            )
            break
        if case.with_assertions:
            out.extend(_check_assertions(step, turns[turn].events, turn, scorer))
    flush()
    return out


def case_yaml(case: E2ETestCase) -> str:
    """The test case as the YAML of an E2E file's `test_cases:` entry (its fixtures' slots as a comment)."""
    steps: list[dict[str, Any]] = []
    for step in case.steps:
        if step.kind == "user":
            body: dict[str, Any] = {"user": step.text}
            if step.ordered:
                body["assertion_order_enabled"] = True
            if step.assertions:
                body["assertions"] = [{a.kind: assertion_value(a)} for a in step.assertions]
            steps.append(body)
        elif step.kind in ("bot", "utter"):
            steps.append({step.kind: step.text if step.kind == "bot" else step.name})
        else:
            steps.append({step.kind: [{s.name: s.value} if s.has_value else s.name for s in step.slots]})
    text = yaml.safe_dump([{"test_case": case.name, "steps": steps}], sort_keys=False, allow_unicode=True)
    slots = f"# starts with the slots {json.dumps(case.initial_slots)}\n" if case.initial_slots else ""
    return slots + text


# --------------------------------------------------------------------------------------- as a scenario

_SLOT_ASSERTIONS = {"slot_was_set": SlotWasSetAssertion, "slot_was_not_set": SlotWasNotSetAssertion}


def as_scenario(case: E2ETestCase) -> Scenario:
    """A seed-003 scenario from a test case (see the module docstring)."""
    said = [f'{i}. "{m}"' for i, m in enumerate(case.user_messages, start=1)]
    context = (
        f"You are a user of the assistant, as in the scripted test '{case.name}'. Say these messages in "
        "this order, in your own words if the assistant's replies call for it, and end the conversation "
        "after the last one:\n" + "\n".join(said)
    )
    assertions: list[Any] = []
    for step in case.steps:
        assertions += step.assertions
        if step.kind == "utter" and step.name:
            assertions.append(BotUtteredAssertion(utter_name=step.name))
        elif step.kind == "bot" and step.text:
            assertions.append(BotUtteredAssertion(text_matches=f"^{re.escape(step.text)}$"))
        elif step.kind in _SLOT_ASSERTIONS:
            assertions.append(_SLOT_ASSERTIONS[step.kind](slots=step.slots))
    setup = ScenarioSetup(initial_slots=dict(case.initial_slots)) if case.initial_slots else None
    goals = ScenarioGoals(assertions=assertions) if assertions else None
    return Scenario(name=case.name, simulation_context=context, setup=setup, goals=goals)
