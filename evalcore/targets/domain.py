"""What a target defines, against which a scenario is checked before any simulation runs (seed 003,
"setup.initial_slots": "Slot names must exist in your domain with compatible types. validate_scenario
checks this before any simulation runs").

A Domain names the target's slots (with Rasa's slot types: text, bool, float, categorical with its
values, list, any) and, when known, its flows, actions and responses. A target that publishes one builds
it directly; a Rasa assistant's `domain.yml` (its `slots:`, `actions:` and `responses:`) and `flows.yml`
(its `flows:`, with the slots each flow's `collect` steps ask for) are read by `read_domain`.
Flows named `pattern_*` are Rasa's built-in conversation patterns and are never reported as unknown.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.errors import Problem
from evalcore.inputs.sources import parse_yaml, read_text

Loc = tuple[str | int, ...]
BUILTIN_FLOW_PREFIX = "pattern_"


@dataclass(frozen=True)
class SlotType:
    """A slot's type, as Rasa declares it, and the values of a categorical slot."""

    type: str | None = None
    values: tuple[str, ...] = ()

    def refuses(self, value: Any) -> str | None:
        """Why the slot cannot hold `value`, or None (null resets any slot; unknown types hold anything)."""
        if value is None:
            return None
        kind = self.type
        if kind == "text" and not isinstance(value, str):
            return "a text slot holds a string"
        if kind == "bool" and not isinstance(value, bool):
            return "a bool slot holds true or false"
        if kind == "float" and (isinstance(value, bool) or not isinstance(value, int | float)):
            return "a float slot holds a number"
        if kind == "list" and not isinstance(value, list):
            return "a list slot holds a list"
        # Rasa compares categorical values case-insensitively
        known = {v.lower() for v in self.values}
        if kind == "categorical" and known and (not isinstance(value, str) or value.lower() not in known):
            return f"a categorical slot holds one of: {', '.join(self.values)}"
        return None


@dataclass(frozen=True)
class Domain:
    """The slots, flows, actions and responses a target defines; None where it does not say (nothing is
    checked there)."""

    slots: dict[str, SlotType] | None = None
    flows: frozenset[str] | None = None
    actions: frozenset[str] | None = None
    responses: frozenset[str] | None = None
    # flow id -> the slots its collect steps ask the user for (a slot no collect step asks for is never set
    # from what the user says, so a scenario cannot expect it set)
    collects: Mapping[str, frozenset[str]] | None = None
    # flow id -> the flow's name (`name:` in flows.yml), so a name written where an id belongs is recognised
    flow_names: Mapping[str, str] | None = None

    def collected(self, flow_ids: Iterable[str] = ()) -> frozenset[str] | None:
        """The slots the given flows collect (every flow's, when none is given); None when unknown."""
        if self.collects is None:
            return None
        chosen = list(flow_ids) or list(self.collects)
        return frozenset(slot for f in chosen for slot in self.collects.get(f, ()))

    def check(
        self, initial_slots: Mapping[str, Any], assertions: Iterable[tuple[int, Any]]
    ) -> list[tuple[Loc, str]]:
        """(field location, why) of each slot or flow a scenario names that this domain lacks, and of each
        initial slot value of a type the slot cannot hold, from the scenario's parts: its initial slots and
        its assertions with their index in the file (those that parsed, when others did not)."""
        out: list[tuple[Loc, str]] = []
        for name, value in initial_slots.items():
            loc: Loc = ("scenario", "setup", "initial_slots", name)
            if not self.has_slot(name):
                out.append((loc, f"slot '{name}' is not in the domain{self._near(name, 'slot')}"))
            elif self.slots is not None and (reason := self.slots[name].refuses(value)):
                out.append((loc, f"slot '{name}' cannot hold {value!r}: {reason}"))
        for i, assertion in assertions:
            at: Loc = ("scenario", "goals", "assertions", i, assertion.kind)
            for sub, what, name in _names(assertion):
                if what == "slot" and not self.has_slot(name):
                    out.append(((*at, *sub), f"slot '{name}' is not in the domain{self._near(name, 'slot')}"))
                if what == "flow" and not self.has_flow(name):
                    out.append(((*at, *sub), f"flow '{name}' is not in the domain{self._near(name, 'flow')}"))
        return out

    def _near(self, name: str, what: str) -> str:
        """' (did you mean ...?)': the flow whose name this is, else the closest slot or flow id."""
        if what == "flow":
            named = [f for f, n in (self.flow_names or {}).items() if n.casefold() == name.casefold()]
            if named:
                return f" ('{name}' is the name of flow '{named[0]}': assertions name flows by id)"
        choices = list(self.slots or {}) if what == "slot" else list(self.flows or ())
        close = difflib.get_close_matches(name, choices, n=1)
        return f" (did you mean '{close[0]}'?)" if close else ""

    def has_slot(self, name: str) -> bool:
        """Whether the slot exists (always, when the slots are not known)."""
        return self.slots is None or name in self.slots

    def has_flow(self, flow_id: str) -> bool:
        """Whether the flow exists (always, when the flows are not known)."""
        return self.flows is None or flow_id in self.flows or flow_id.startswith(BUILTIN_FLOW_PREFIX)


def _names(assertion: Any) -> Iterable[tuple[Loc, str, str]]:
    """(location within the assertion, 'slot' or 'flow', name) of the slots and flows it names."""
    kind = assertion.kind
    if kind in ("slot_was_set", "slot_was_not_set"):
        yield from (((i, "name"), "slot", s.name) for i, s in enumerate(assertion.slots))
    elif kind == "flow_started":
        if assertion.flow_id is not None:
            yield (), "flow", assertion.flow_id
        yield from ((("flow_ids", i), "flow", f) for i, f in enumerate(assertion.flow_ids))
    elif kind in ("flow_completed", "flow_cancelled"):
        yield ("flow_id",), "flow", assertion.flow_id
    elif kind == "pattern_clarification_contains":
        yield from ((("flow_ids", i), "flow", f) for i, f in enumerate(assertion.flow_ids))
    elif kind == "sequencing":
        for i, step in enumerate(assertion.steps):
            if step.key == "slot_was_set":
                yield (i, step.key), "slot", step.value
            elif step.key.startswith("flow_"):
                yield (i, step.key), "flow", step.value


def _files(paths: Iterable[Path]) -> list[Path]:
    """The files named, a folder standing for its .yml/.yaml files (Rasa splits a domain into domain/)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out += sorted(p for p in path.rglob("*") if p.suffix.lower() in (".yml", ".yaml") and p.is_file())
        else:
            out.append(path)
    return out


def read_domain(paths: Iterable[Path]) -> tuple[Domain, list[Problem]]:
    """The domain in Rasa domain and flow files, or folders of them (`slots:` with `type:` and `values:`;
    `flows:` keyed by flow id, with their `collect` steps); slots or flows stay unknown when no file has
    their section."""
    problems: list[Problem] = []
    slots: dict[str, SlotType] | None = None
    flows: set[str] | None = None
    actions: set[str] | None = None
    responses: set[str] | None = None
    collects: dict[str, frozenset[str]] | None = None
    flow_names: dict[str, str] = {}
    for path in _files(paths):
        shown = str(path)
        text = read_text(path, shown, problems)
        located = parse_yaml(text, shown, problems) if text is not None else None
        if located is None:
            continue
        data = located.data if isinstance(located.data, dict) else {}
        if not isinstance(located.data, dict):
            problems.append(Problem(shown, "a domain file is a mapping (slots:, flows:, ...)", 1))
        raw_slots = data.get("slots") or {}
        if not isinstance(raw_slots, dict):
            line = located.line_of(("slots",))
            problems.append(Problem(shown, "expected a mapping of slot names", line, "slots"))
            raw_slots = {}
        if "slots" in data and slots is None:
            slots = {}
        for name, spec in raw_slots.items():
            spec = spec if isinstance(spec, dict) else {}
            values = spec.get("values") if isinstance(spec.get("values"), list) else []
            slots[str(name)] = SlotType(spec.get("type"), tuple(str(v) for v in values))
        if "flows" in data:
            if not isinstance(data["flows"], dict):
                problems.append(
                    Problem(shown, "expected a mapping of flow ids", located.line_of(("flows",)), "flows")
                )
            else:
                flows = (flows or set()) | {str(f) for f in data["flows"]}
                collects = {**(collects or {}), **{str(f): frozenset(_collect_steps(body))
                                                   for f, body in data["flows"].items()}}  # fmt: skip
                flow_names |= {str(f): str(body["name"]) for f, body in data["flows"].items()
                               if isinstance(body, dict) and body.get("name")}  # fmt: skip
        if isinstance(data.get("actions"), list):
            # an action is its name, or a mapping of its name to options (`- action_x: {send_domain: true}`)
            named = [a if isinstance(a, dict) else {a: None} for a in data["actions"]]
            actions = (actions or set()) | {str(name) for a in named for name in a}
        if isinstance(data.get("responses"), dict):
            responses = (responses or set()) | {str(r) for r in data["responses"]}
    frozen = [frozenset(names) if names is not None else None for names in (flows, actions, responses)]
    return Domain(slots, *frozen, collects=collects, flow_names=flow_names or None), problems


def _collect_steps(node: Any) -> Iterable[str]:
    """The slots of every `collect:` step in a flow, branches (`next:`) included."""
    if isinstance(node, dict):
        if isinstance(node.get("collect"), str):
            yield node["collect"]
        for value in node.values():
            yield from _collect_steps(value)
    elif isinstance(node, list):
        for item in node:
            yield from _collect_steps(item)
