"""Scenario YAML in and out (seed 003, "Schema", "Field Reference" and the assertion table): one file per
scenario, validated whole, every problem reported with its file, line and field.

Accepted: the seed's forms, and the shorter forms Rasa's E2E assertions accept, so a file that runs in
Rasa validates here: `flow_started: <flow id>` and `pattern_clarification_contains: [<flow name>, ...]`.
`flow_completed` and `flow_cancelled` take the mapping `{flow_id, flow_step_id}` as in Rasa; a plain
flow id is a sequencing step's form only. `generative_response_is_*` with no field at all (`{}` or an
empty value) uses every default. Refused, each as its own problem: unknown keys and assertion kinds,
values of the wrong type, `operator` other than any|all, a `bot_uttered` with none of its fields, a
`text_matches` that is not a regular expression, a sequencing step with more than one key or a key the
seed's step table does not list, and, when a domain is given, slots (and flows) it does not define or
initial values of a type the slot cannot hold.

Read as Rasa reads its files, in YAML 1.2: only true/false are booleans (`title: Yes` is text, `value: no`
the string 'no'), and `operator` is lower-cased (`ANY`, `All`) before it is checked. The domain checks run on
whatever parsed, even beside format problems, so one validation reports every problem.

`pattern_clarification_contains` with `operator: all` passes when a clarification suggested every flow
listed and maybe others (a superset: the seed's "the clarification suggestions included the expected flow
IDs"); the short list form, Rasa E2E's, passes only on exactly those flows.

`to_yaml` writes a scenario back in the form it was read in, so `read(to_yaml(s)) == s`.
"""

from __future__ import annotations

import datetime
import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from evalcore.errors import Problem
from evalcore.generators.scenario.records import (
    ASSERTION_MODELS,
    STEP_KEYS,
    Assertion,
    FlowStartedAssertion,
    Scenario,
    SequencingStep,
)
from evalcore.inputs.limits import current_limits
from evalcore.inputs.sources import Located, dotted, parse_yaml, read_text
from evalcore.targets.domain import Domain

SUFFIXES = (".yml", ".yaml")
OPERATORS = ("any", "all")
NAME_FIELD: tuple[str, ...] = ("scenario", "name")
Loc = tuple[str | int, ...]

# The fields of each mapping, as the seed's "YAML value" column gives them (with Rasa's optional ones).
_FIELDS: dict[str, tuple[set[str], set[str]]] = {  # kind -> (required, optional)
    "flow_completed": ({"flow_id"}, {"flow_step_id"}),
    "flow_cancelled": ({"flow_id"}, {"flow_step_id"}),
    "bot_uttered": (set(), {"utter_name", "text_matches", "buttons"}),
    "bot_did_not_utter": (set(), {"utter_name", "text_matches", "buttons"}),
    "generative_response_is_relevant": (set(), {"threshold", "utter_name", "utter_source"}),
    "generative_response_is_grounded": (set(), {"threshold", "utter_name", "utter_source", "ground_truth"}),
}

# Top-level sections of Rasa's own files (domain, flows, NLU, stories, rules, config, endpoints).
RASA_SECTIONS = ("flows", "slots", "responses", "intents", "entities", "actions", "forms", "nlu", "stories",
                 "rules", "pipeline", "policies", "recipe", "action_endpoint")  # fmt: skip


def kind_of(value: Any) -> str:
    """How a YAML value is named in messages."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, datetime.date):
        return "a date"
    return type(value).__name__


class Reader:
    """Checks one parsed file and builds its Scenario, recording every problem instead of stopping."""

    def __init__(self, located: Located, shown: str, problems: list[Problem]) -> None:
        self.located = located
        self.shown = shown
        self.problems = problems
        self.count = len(problems)
        # what parsed, even when the file as a whole does not: the domain checks read it
        self.initial_slots: dict[str, Any] = {}
        self.assertions: list[tuple[int, Assertion]] = []

    @property
    def clean(self) -> bool:
        """Whether no problem was recorded since this reader began."""
        return len(self.problems) == self.count

    def problem(self, loc: Loc, message: str) -> None:
        """Record a problem at the field `loc`."""
        self.problems.append(Problem(self.shown, message, self.located.line_of(loc), dotted(loc) or None))

    def mapping(self, value: Any, loc: Loc, required: set[str], optional: set[str]) -> dict | None:
        """The known fields of `value` (None if it is not a mapping), after recording a problem for each
        unknown field and each missing required one: the caller goes on checking the fields present, so
        one bad key does not hide the other problems."""
        if not isinstance(value, dict):
            self.problem(loc, f"expected a mapping, got {kind_of(value)}")
            return None
        allowed = required | optional
        for key in value:
            if key not in allowed:
                self.problem((*loc, key), f"unknown field{did_you_mean(key, allowed)}")
        for key in sorted(required - set(value)):
            self.problem(loc, f"required field '{key}' is missing")
        return {key: v for key, v in value.items() if key in allowed}

    def text(self, value: Any, loc: Loc) -> str | None:
        """`value` if it is a non-empty string."""
        if not isinstance(value, str):
            self.problem(loc, f"expected a string, got {kind_of(value)}")
            return None
        if not value.strip():
            self.problem(loc, "must not be empty")
            return None
        return value

    def texts(self, value: Any, loc: Loc) -> list[str] | None:
        """`value` if it is a non-empty list of non-empty strings."""
        if not isinstance(value, list):
            self.problem(loc, f"expected a list of strings, got {kind_of(value)}")
            return None
        if not value:
            self.problem(loc, "must not be empty")
            return None
        items = [self.text(item, (*loc, i)) for i, item in enumerate(value)]
        return None if None in items else items

    def operator(self, value: Any, loc: Loc) -> str | None:
        """`value` lower-cased (Rasa lower-cases it) if it is then any or all."""
        if isinstance(value, str) and value.lower() in OPERATORS:
            return value.lower()
        if value not in OPERATORS:
            shown = f"'{value}'" if isinstance(value, str) else kind_of(value)
            self.problem(loc, f"operator must be 'any' or 'all', got {shown}")
            return None
        return value

    def json_value(self, value: Any, loc: Loc) -> bool:
        """Whether `value` is a slot value (text, number, true/false, null, lists and mappings of them);
        YAML reads an unquoted 2024-01-31 as a date, which no event can carry."""
        if value is None or isinstance(value, str | int | float | bool):
            return True
        if isinstance(value, list):
            return all([self.json_value(v, (*loc, i)) for i, v in enumerate(value)])
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return all([self.json_value(v, (*loc, k)) for k, v in value.items()])
        self.problem(loc, f"{kind_of(value)} is not a slot value: quote it to make it text")
        return False

    def pattern(self, value: Any, loc: Loc) -> None:
        """Record a problem unless `value` compiles as a regular expression."""
        if isinstance(value, str):
            try:
                re.compile(value)
            except re.error as exc:
                self.problem(loc, f"not a regular expression: {exc}")

    def model(self, kind: str, data: dict[str, Any], loc: Loc) -> Assertion | None:
        """The assertion record of `kind` from `data`, with pydantic's type errors as problems (a missing
        field was recorded by `mapping` already)."""
        try:
            return ASSERTION_MODELS[kind].model_validate({"kind": kind, **data})
        except ValidationError as exc:
            for error in exc.errors():
                if error["type"] != "missing":
                    self.problem((*loc, *error["loc"]), error["msg"])
            return None

    # ------------------------------------------------------------------ the file

    def scenario(self) -> Scenario | None:
        """The Scenario of the file, or None after recording its problems."""
        other = other_format(self.located.data)
        if other is not None:  # one line saying what the file is, not a line per field it has
            self.problems.append(Problem(self.shown, other, 1))
            return None
        root = self.mapping(self.located.data, (), {"scenario"}, set())
        if root is None or "scenario" not in root:
            return None
        loc: Loc = ("scenario",)
        body = self.mapping(root.get("scenario"), loc, {"name", "simulation_context"}, {"setup", "goals"})
        if body is None:
            return None
        name = self.text(body.get("name"), (*loc, "name")) if "name" in body else None
        context = (
            self.text(body.get("simulation_context"), (*loc, "simulation_context"))
            if "simulation_context" in body
            else None
        )
        setup = self.setup(body["setup"], (*loc, "setup")) if "setup" in body else None
        goals = self.goals(body["goals"], (*loc, "goals")) if "goals" in body else None
        if not self.clean:
            return None
        try:
            return Scenario(name=name, simulation_context=context, setup=setup, goals=goals)
        except ValidationError as exc:  # every check above passed: this is a safety net, not a path
            for error in exc.errors():
                self.problem((*loc, *error["loc"]), error["msg"])
            return None

    def setup(self, value: Any, loc: Loc) -> dict[str, Any] | None:
        body = self.mapping(value, loc, set(), {"initial_slots"})
        if body is None or "initial_slots" not in body:
            return body
        slots = body["initial_slots"]
        if not isinstance(slots, dict):
            self.problem((*loc, "initial_slots"), f"expected a mapping of slot names, got {kind_of(slots)}")
            return None
        for key, slot_value in slots.items():
            if not isinstance(key, str):
                self.problem((*loc, "initial_slots"), f"slot name {key!r} is not a string")
            elif self.json_value(slot_value, (*loc, "initial_slots", key)):
                self.initial_slots[key] = slot_value
        return body

    def goals(self, value: Any, loc: Loc) -> dict[str, Any] | None:
        body = self.mapping(value, loc, set(), {"criteria", "assertions"})
        if body is None:
            return None
        out: dict[str, Any] = {}
        if "criteria" in body:
            out["criteria"] = self.texts(body["criteria"], (*loc, "criteria"))
        if "assertions" in body:
            items = body["assertions"]
            if not isinstance(items, list):
                self.problem((*loc, "assertions"), f"expected a list of assertions, got {kind_of(items)}")
            else:
                out["assertions"] = [self.assertion(a, (*loc, "assertions", i)) for i, a in enumerate(items)]
                self.assertions = [(i, a) for i, a in enumerate(out["assertions"]) if a is not None]
        return out

    # ------------------------------------------------------------- assertions

    def assertion(self, entry: Any, loc: Loc) -> Assertion | None:
        """One item of goals.assertions: a mapping of one key, the kind, to its value."""
        if not isinstance(entry, dict) or len(entry) != 1:
            keys = ", ".join(map(str, entry)) if isinstance(entry, dict) else ""
            got = f"keys {keys}" if len(keys) else kind_of(entry)
            self.problem(loc, f"an assertion is a mapping of one key (its kind) to its value, got {got}")
            return None
        kind, value = next(iter(entry.items()))
        at = (*loc, kind)
        if kind not in ASSERTION_MODELS:
            self.problem(at, f"unknown assertion kind '{kind}'{did_you_mean(kind, ASSERTION_MODELS)}")
            return None
        return _READERS[kind](self, kind, value, at)

    def flow_started(self, kind: str, value: Any, loc: Loc) -> Assertion | None:
        if isinstance(value, str):  # Rasa E2E's short form
            return FlowStartedAssertion(flow_id=value) if self.text(value, loc) else None
        return self.ids_and_operator(kind, value, loc)

    def ids_and_operator(self, kind: str, value: Any, loc: Loc) -> Assertion | None:
        body = self.mapping(value, loc, {"flow_ids", "operator"}, set())
        if body is None:
            return None
        ids = self.texts(body["flow_ids"], (*loc, "flow_ids")) if "flow_ids" in body else None
        operator = self.operator(body["operator"], (*loc, "operator")) if "operator" in body else None
        return self.model(kind, {"flow_ids": ids, "operator": operator}, loc) if ids and operator else None

    def clarification(self, kind: str, value: Any, loc: Loc) -> Assertion | None:
        if isinstance(value, list):  # Rasa E2E's short form: the exact list of suggested flows
            names = self.texts(value, loc)
            return self.model(kind, {"flow_names": names}, loc) if names else None
        return self.ids_and_operator(kind, value, loc)

    def action_executed(self, kind: str, value: Any, loc: Loc) -> Assertion | None:
        name = self.text(value, loc)
        return self.model(kind, {"action_name": name}, loc) if name else None

    def slots(self, kind: str, value: Any, loc: Loc) -> Assertion | None:
        if not isinstance(value, list) or not value:
            self.problem(loc, f"expected a list of {{name, value}} (value optional), got {kind_of(value)}")
            return None
        slots = []
        for i, item in enumerate(value):
            body = self.mapping(item, (*loc, i), {"name"}, {"value"})
            if (
                body is not None
                and "name" in body
                and self.text(body["name"], (*loc, i, "name"))
                and self.json_value(body.get("value"), (*loc, i, "value"))
            ):
                slots.append({"name": body["name"], "value": body.get("value"), "has_value": "value" in body})
        return self.model(kind, {"slots": slots}, loc) if len(slots) == len(value) else None

    def fields(self, kind: str, value: Any, loc: Loc) -> Assertion | None:
        if value is None and not _FIELDS[kind][0]:
            value = {}  # every field optional: an empty value means all defaults
        required, optional = _FIELDS[kind]
        if isinstance(value, str) and kind in ("flow_completed", "flow_cancelled"):
            form = f"'{kind}: <flow id>'"
            self.problem(
                loc, f"expected a mapping {{flow_id, flow_step_id}}: {form} is a sequencing step's form"
            )
            return None
        body = self.mapping(value, loc, required, optional)
        if body is None:
            return None
        if kind in ("bot_uttered", "bot_did_not_utter"):
            if not any(body.get(k) for k in optional):
                self.problem(loc, "give at least one of utter_name, text_matches, buttons")
                return None
            self.pattern(body.get("text_matches"), (*loc, "text_matches"))
        return self.model(kind, body, loc)

    def sequencing(self, kind: str, value: Any, loc: Loc) -> Assertion | None:
        if not isinstance(value, list) or not value:
            self.problem(
                loc, f"expected a list of steps such as '- flow_started: <flow id>', got {kind_of(value)}"
            )
            return None
        steps: list[SequencingStep] = []
        for i, step in enumerate(value):
            at = (*loc, i)
            if not isinstance(step, dict) or len(step) != 1:
                keys = ", ".join(map(str, step)) if isinstance(step, dict) else ""
                got = f"keys {keys}" if keys else kind_of(step)
                self.problem(at, f"a sequencing step has exactly one key, got {got}")
                continue
            key, name = next(iter(step.items()))
            if key not in STEP_KEYS:
                hint = did_you_mean(key, STEP_KEYS) or f" (allowed: {', '.join(STEP_KEYS)})"
                self.problem((*at, key), f"'{key}' is not a sequencing step{hint}")
                continue
            if self.text(name, (*at, key)):
                steps.append(SequencingStep(key=key, value=name))
        return self.model(kind, {"steps": steps}, loc) if len(steps) == len(value) else None


_READERS: dict[str, Callable[[Reader, str, Any, Loc], Assertion | None]] = {
    "flow_started": Reader.flow_started,
    "flow_completed": Reader.fields,
    "flow_cancelled": Reader.fields,
    "action_executed": Reader.action_executed,
    "slot_was_set": Reader.slots,
    "slot_was_not_set": Reader.slots,
    "bot_uttered": Reader.fields,
    "bot_did_not_utter": Reader.fields,
    "pattern_clarification_contains": Reader.clarification,
    "generative_response_is_relevant": Reader.fields,
    "generative_response_is_grounded": Reader.fields,
    "sequencing": Reader.sequencing,
}


def other_format(data: Any) -> str | None:
    """Why a parsed file is not a scenario file, when it is plainly something else (a Rasa E2E test file,
    a domain or flows file, another tool's scenario), else None."""
    if not isinstance(data, dict) or "scenario" in data:
        return None
    keys = [str(k) for k in data]
    if "test_cases" in data:
        return (
            "this file is a Rasa E2E test file (test_cases:): import it with `evalcore scenarios import-e2e`"
        )
    rasa = [k for k in keys if k in RASA_SECTIONS]
    if rasa:
        return f"this file is a Rasa {', '.join(rasa)} file, not a scenario (a scenario file has 'scenario:')"
    shown = ", ".join(keys[:6]) + (", ..." if len(keys) > 6 else "")
    return (
        f"this file is not in the scenario format (it has {shown}; a scenario file has one key, 'scenario')"
    )


def did_you_mean(word: Any, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' when a choice is close to `word`, else ''."""
    close = difflib.get_close_matches(str(word), list(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


# ---------------------------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class ScenarioFile:
    """A scenario read from a file."""

    path: str
    scenario: Scenario
    located: Located | None = field(default=None, compare=False, repr=False)  # the lines of its fields
    text: str | None = field(default=None, compare=False, repr=False)  # the file as written (comments)

    def line_of(self, loc: Loc) -> int | None:
        """The line of the field at `loc` in the file (None when the file's lines are not known)."""
        return self.located.line_of(loc) if self.located is not None else None

    def problem(self, loc: Loc, message: str) -> Problem:
        """A problem at the field `loc` of this file: `file:line [field]: message`."""
        return Problem(self.path, message, self.line_of(loc), dotted(loc) or None)


def _parse(
    text: str, shown: str, problems: list[Problem], domain: Domain | None
) -> tuple[Scenario | None, Located | None]:
    located = parse_yaml(text, shown, problems, yaml12_bools=True)
    if located is None:
        return None, None
    reader = Reader(located, shown, problems)
    scenario = reader.scenario()
    if domain is not None:
        for loc, message in domain.check(reader.initial_slots, reader.assertions):
            reader.problem(loc, message)
    return (scenario if reader.clean else None), located


def parse_scenario(
    text: str, shown: str, problems: list[Problem], domain: Domain | None = None
) -> Scenario | None:
    """The scenario in `text` (the content of the file `shown`), or None after recording every problem;
    with a domain, what it does not define is a problem too, checked on the parts that parsed even when
    others did not."""
    return _parse(text, shown, problems, domain)[0]


def _quiet_yaml(text: str, shown: str) -> Any:
    """The file's data, None when it does not parse (its problems are reported when it is read as a
    scenario); read by the same strict loader, so no alias bomb expands here either."""
    located = parse_yaml(text, shown, [], yaml12_bools=True)
    return located.data if located is not None else None


def scenario_paths(paths: Iterable[Path], problems: list[Problem]) -> list[Path]:
    """The scenario files named, folders expanded to their .yml/.yaml files (recursively, sorted)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())
            if not found:
                problems.append(Problem(str(path), "no .yml or .yaml file in this folder"))
            out += found
        elif path.is_file():
            out.append(path)
        else:
            problems.append(Problem(str(path), "no such file or folder"))
    limit = current_limits().max_files
    if len(out) > limit:
        problems.append(
            Problem(str(out[limit]), f"more than {limit} files in one import (set EVALCORE_MAX_FILES)")
        )
        return out[:limit]
    return out


def read_scenarios(
    paths: Iterable[Path], domain: Domain | None = None, skipped: list[str] | None = None
) -> tuple[list[ScenarioFile], list[Problem]]:
    """Every scenario in the files and folders named, and every problem found in any of them (a
    scenario name given twice is one too: it is the scenario's identity in the store).

    A YAML file found in a folder that is plainly not a scenario (a domain, flows or E2E test file) is
    left out with a line in `skipped` (when given) instead of failing the import; a file named on its own
    is always read as a scenario."""
    paths = list(paths)
    named = {p.resolve() for p in paths if p.is_file()}
    problems: list[Problem] = []
    found: list[ScenarioFile] = []
    for path in scenario_paths(paths, problems):
        shown = str(path)
        text = read_text(path, shown, problems)
        if skipped is not None and text is not None and path.resolve() not in named:
            why = other_format(_quiet_yaml(text, shown))
            if why is not None:
                skipped.append(f"skipped {shown}: {why}")
                continue
        scenario, located = _parse(text, shown, problems, domain) if text is not None else (None, None)
        if scenario is not None and located is not None:
            found.append(ScenarioFile(shown, scenario, located, text))
    first: dict[str, ScenarioFile] = {}
    for item in found:
        if item.scenario.name in first:
            other = first[item.scenario.name]
            line = other.line_of(NAME_FIELD)
            where = f"{other.path}:{line}" if line is not None else other.path
            problems.append(
                item.problem(NAME_FIELD, f"scenario name '{item.scenario.name}' is also used by {where}")
            )
        first.setdefault(item.scenario.name, item)
    return found, problems


# ---------------------------------------------------------------------------------------------- writing


def assertion_value(assertion: Assertion) -> Any:
    """The YAML value of an assertion, in the form it was read in."""
    kind = assertion.kind
    if kind == "flow_started" and assertion.flow_id is not None:
        return assertion.flow_id
    if kind == "pattern_clarification_contains" and assertion.flow_names is not None:
        return list(assertion.flow_names)
    if kind == "action_executed":
        return assertion.action_name
    if kind in ("slot_was_set", "slot_was_not_set"):
        return [{"name": s.name, **({"value": s.value} if s.has_value else {})} for s in assertion.slots]
    if kind == "sequencing":
        return [{step.key: step.value} for step in assertion.steps]
    value = assertion.model_dump(mode="json", exclude={"kind"}, exclude_none=True)
    if kind in ("flow_started", "pattern_clarification_contains"):
        value["flow_ids"] = _Inline(value["flow_ids"])
    return value


def to_data(scenario: Scenario) -> dict[str, Any]:
    """The scenario as the YAML document's data: `{"scenario": {...}}`, optional parts only when given."""
    body: dict[str, Any] = {"name": scenario.name, "simulation_context": scenario.simulation_context}
    if scenario.setup is not None:
        body["setup"] = scenario.setup.model_dump(mode="json", exclude_none=True)
    if scenario.goals is not None:
        goals: dict[str, Any] = {}
        if scenario.goals.criteria is not None:
            goals["criteria"] = list(scenario.goals.criteria)
        if scenario.goals.assertions is not None:
            goals["assertions"] = [{a.kind: assertion_value(a)} for a in scenario.goals.assertions]
        body["goals"] = goals
    return {"scenario": body}


class _Dumper(yaml.SafeDumper):
    """Block style, list items indented under their key (as the seed's files are written)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


class _Inline(list):
    """A list of flow ids, written inline as the seed writes them: `flow_ids: [a, b]`."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # a briefing stays readable: folded (>) as the seed writes it, literal (|) when it has line breaks
    style = None
    if "\n" in value.rstrip("\n"):
        style = "|"
    elif value.endswith("\n"):
        style = ">"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _inline(dumper: yaml.SafeDumper, value: _Inline) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)


_Dumper.add_representer(str, _text)
_Dumper.add_representer(_Inline, _inline)


def to_yaml(scenario: Scenario) -> str:
    """The scenario as a YAML file's text."""
    return yaml.dump(to_data(scenario), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def file_name(scenario: Scenario) -> str:
    """A file name for the scenario: its name in lower case, words joined by '_', '.yml'."""
    slug = re.sub(r"[^a-z0-9]+", "_", scenario.name.lower()).strip("_")[:80] or "scenario"
    return f"{slug}.yml"
