"""Specs -> scenarios (issue 19, item 1; seed 000's Scenario/Given/When/Then turned into seed 003's files).

A spec becomes one scenario: its Given and When become the simulated user's briefing
(`simulation_context`, written to the user in the second person, as a test lead briefs a tester), its
Then becomes criteria, and assertions are added only where the target's domain makes them checkable: a
flow, action, slot or response the spec names and the domain defines. Without a domain nothing is
checkable, and the scenario has criteria only.

The step is the task `scenario_from_spec` (prompt `evalcore/prompts/scenario_from_spec.md`), run through
the model layer. A model proposes names; `build_scenario` keeps only those the domain has, so a model
cannot write an assertion that no event could ever satisfy. Its offline implementation reads the spec:
- briefing: "a frustrated customer wanted to X" becomes "You are a frustrated customer. You want to X.",
  "the customer asks for Y" becomes "Ask for Y.", with a line on how that customer behaves; the
  assistant's tool names, which a user does not know, are left out;
- criteria: each clause of the Then ("the assistant should A and should not B") is one criterion;
- flows: a flow whose id words (`return_item`: return, item) all occur in the spec; completed as well
  when the spec's expectation has no negation;
- actions: the first action after "call", "calling", "with" or "using" (not an alternative after "or");
  "ask for the X before calling Y" is a sequencing of the slot X being set, then Y;
- slots: those the user "gives" ("gives the order id, email" -> order_id, email) that the flows named
  collect (any flow's, when none is named), where the domain says which flow collects which slot;
- responses: named verbatim;
- figures: each amount, percentage, quantity with its unit or code the Then states an answer holds (at
  most three) is a `bot_uttered` with `text_matches`: some message of the assistant states it. (A
  ground truth for `generative_response_is_grounded` would hold every generative response of the
  conversation to the spec's one fact, and the simulated user's follow-ups get other answers.)
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any, cast

from pydantic import BaseModel, Field

from evalcore.documents.sentences import split_sentences
from evalcore.errors import EvalcoreError, Problem, ValidationFailed
from evalcore.generators.scenario.format import parse_scenario, to_yaml
from evalcore.generators.scenario.records import (
    STEP_KEYS,
    ActionExecutedAssertion,
    Assertion,
    BotUtteredAssertion,
    FlowCompletedAssertion,
    FlowStartedAssertion,
    Scenario,
    ScenarioGoals,
    ScenarioSetup,
    SequencingAssertion,
    SequencingStep,
    SlotCheck,
    SlotWasSetAssertion,
    StepKey,
)
from evalcore.llm.client import ModelClient
from evalcore.llm.tasks import Task
from evalcore.models import Spec
from evalcore.models.common import Record
from evalcore.targets.domain import BUILTIN_FLOW_PREFIX, Domain, SlotType

STEM = 5  # letters two words must share to be one word: "rent" / "rentals", "return" / "returns"
OFFLINE_MARK = "offline (no model)"  # who wrote a scenario, when the offline implementation did
MAX_FACTS = 3  # figures checked per scenario: enough to pin an answer, few enough to stay readable


class SpecInput(BaseModel):
    """What the task reads of a spec (not its review state or provenance: they do not change the scenario)."""

    id: str = Field(description="The spec's id.")
    scenario: str = Field(description="One-line name of the behaviour.")
    given: str = Field(description="Context the system is in.")
    when: str = Field(description="What the user does.")
    then: str = Field(description="What the system must do.")
    category: str = Field(default="general", description="Behaviour category.")

    @classmethod
    def of(cls, spec: Spec) -> SpecInput:
        """The task's view of a spec."""
        return cls.model_validate(spec.model_dump(include=set(cls.model_fields)))


class SlotValue(BaseModel):
    """A slot to set before the first user turn."""

    name: str = Field(description="A slot of the domain.")
    value: str | float | bool = Field(description="Its value, of the slot's type.")


class OrderedStep(BaseModel):
    """One step of an expected order of events."""

    key: StepKey = Field(description="flow_started, flow_completed, flow_cancelled, ..., slot_was_set.")
    value: str = Field(description="The flow id, action name or slot name of the domain.")


class ScenarioDraft(BaseModel):
    """A scenario written from a spec: the briefing, criteria and the domain names it expects."""

    name: str = Field(description="Title of the scenario: the behaviour tested, in a few words.")
    simulation_context: str = Field(description="Briefing of the simulated user, in the second person.")
    initial_slots: list[SlotValue] = Field(
        default_factory=list, description="Slots the spec says are known before the conversation."
    )
    criteria: list[str] = Field(description="Statements of required assistant behaviour, one check each.")
    flows_started: list[str] = Field(default_factory=list, description="Flows that must start.")
    flows_completed: list[str] = Field(default_factory=list, description="Flows that must complete.")
    actions_executed: list[str] = Field(default_factory=list, description="Actions that must run.")
    slots_set: list[str] = Field(default_factory=list, description="Slots that must be set.")
    responses_uttered: list[str] = Field(default_factory=list, description="Responses that must be sent.")
    sequence: list[OrderedStep] = Field(
        default_factory=list, description="Events that must happen in this order (two steps or more)."
    )
    facts: list[str] = Field(
        default_factory=list,
        description="Figures the assistant must state, as the spec writes them (amounts, durations, "
        "percentages, codes), at most three; none when the spec states none.",
    )


# ------------------------------------------------------------------------------------ offline: briefing

_PERSON = re.compile(
    r"^(?P<article>an?|the)\s+(?P<who>.+?)\s+(?P<verb>had|has|wanted|wants|needed|needs|was|is)\b\s*(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
# A Given about a person ("a frustrated customer had ..."), not about a thing ("the order is late").
_PEOPLE = re.compile(
    r"\b(?:customer|user|person|someone|rider|cyclist|parent|shopper|caller|buyer|client|guest|owner|"
    r"visitor|member|tourist|student|employee|travell?er|man|woman|mother|father)s?\b",
    re.IGNORECASE,
)
_YOU_VERB = {"had": "have", "has": "have", "wanted": "want", "wants": "want", "needed": "need",
             "needs": "need", "was": "are", "is": "are"}  # fmt: skip
_ACTOR = re.compile(
    r"^(?:the\s+)?(?:customer|user|caller)\b(?:\s*,\s*(?P<aside>[^,]+?)\s*,)?\s+(?P<verb>[a-z]+)\b(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_PRONOUNS = [  # lower case only: "How to Track Them" in a document's title stays as it is
    (re.compile(r"\bthe (?:customer|user)'s\b"), "your"),
    (re.compile(r"\bthe (?:customer|user)\b"), "you"),
    (re.compile(r"\bthemselves\b"), "yourself"),
    (re.compile(r"\btheirs\b"), "yours"),
    (re.compile(r"\btheir\b"), "your"),
    (re.compile(r"\bthey\b"), "you"),
    (re.compile(r"\bthem\b"), "you"),
]
_AND_VERB = re.compile(r"\band ([a-z]{3,}?)(ies|shes|ches|sses|xes|zes|s)\b")
# How a kind of customer behaves in the conversation: what a tester is told besides who they are.
_MANNER = (
    ("hurry", "You are short on time: keep your messages brief and push for a direct answer."),
    ("frustrat", "You are already annoyed; let it show when an answer is vague or evasive."),
    ("first-time", "You have never dealt with this shop before and do not know its terms."),
    ("returning", "You have bought from this shop before."),
    ("family member", "You are asking on behalf of a family member, so you may not know every detail."),
    ("comparing", "You are weighing this against other options and ask about the differences."),
)
# How the spec says the request is made ("the customer, pushed repeatedly, asks ..."), as an instruction.
_APPROACH = {
    "asked directly": "Ask for it directly.",
    "asked indirectly": "Do not ask outright: hint at it and let the assistant work out what you want.",
    "pushed repeatedly": "If the first answer does not give you what you want, push again, more than once.",
    "mixed with a valid request": "Bring it up together with an ordinary request the assistant can handle.",
}
_CLOSING = "End the conversation once you have a clear answer or it is plain you will not get one."
_OWN_WORDS = "Use your own words."


# A user does not know the assistant's tool names: a clause about one goes ("an order that lookup_order
# has found" is "an order"), any other reads as words ("with check_stock" is "with check stock").
_TOOL_CLAUSE = re.compile(r"\s+(?:that|which)\s+[^,.;]*?\b[a-z0-9]+_[a-z0-9_]+\b[^,.;]*")
_TOOL_NAME = re.compile(r"\b([a-z0-9]+(?:_[a-z0-9]+)+)\b")


def _second_person(text: str) -> str:
    text = _TOOL_NAME.sub(lambda m: m[1].replace("_", " "), _TOOL_CLAUSE.sub("", text))
    for pattern, replacement in _PRONOUNS:
        text = pattern.sub(replacement, text)
    return text


def _base(verb: str) -> str:
    """The plain form of a third-person verb: asks -> ask, pushes -> push, tries -> try, gives -> give."""
    irregular = {"has": "have", "is": "are", "does": "do", "goes": "go"}
    if verb in irregular:
        return irregular[verb]
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if re.search(r"(sh|ch|ss|x|z)es$", verb):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") and not verb.endswith("ss") else verb


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip(" .;,")
    return text[:1].upper() + text[1:] + "." if text else ""


def briefing(spec: SpecInput) -> str:
    """The simulated user's briefing for a spec: who they are, what they want, how they ask."""
    parts: list[str] = []
    given = spec.given.strip()
    person = _PERSON.match(given)
    if person and _PEOPLE.search(person["who"]):
        who = person["who"].strip()
        parts.append(_sentence(f"you are {person['article'].lower()} {who}"))
        rest = _second_person(person["rest"].strip())
        parts.append(_sentence(f"you {_YOU_VERB[person['verb'].lower()]} {rest}"))
        parts += [manner for key, manner in _MANNER if key in who.lower()]
        if "this behaviour" in given.lower():  # the Given points at the spec's name: say what it is
            parts.append(_sentence(f"the behaviour in question: {_second_person(spec.scenario.strip())}"))
    elif given:
        parts.append(_sentence(f"the situation: {_second_person(given)}"))
    when = spec.when.strip()
    actor = _ACTOR.match(when)
    if actor:
        rest = _AND_VERB.sub(lambda m: f"and {_base(m[1] + m[2])}", actor["rest"])
        action = _base(actor["verb"].lower()) + _second_person(rest)
        # said as what the user wants when the Given has not said it: the user's opening request
        wants = person is not None and person["verb"].lower() in ("wanted", "wants", "needed", "needs")
        parts.append(_sentence(action if wants else f"you want to {action}"))
        if actor["aside"]:
            aside = actor["aside"].strip()
            parts.append(_APPROACH.get(aside.lower(), _sentence(f"do it {_second_person(aside)}")))
    elif when:
        parts.append(_sentence(f"what you do: {_second_person(when)}"))
    if "own words" not in " ".join(parts):
        parts.append(_OWN_WORDS)
    parts.append(_CLOSING)
    return " ".join(p for p in parts if p)


# ------------------------------------------------------------------------------------ offline: criteria

_SHOULD = re.compile(r"^(?:the\s+)?(?:assistant|agent|bot|system)\s+(?:should|must)\s+", re.IGNORECASE)
_CLAUSE = re.compile(r",?\s+and\s+(?=(?:should|must)\s)|,?\s+and\s+(?=not\s)", re.IGNORECASE)


def criteria_of(then: str) -> list[str]:
    """One criterion per clause of a spec's Then: 'the assistant should A and should not B. Never C.'
    gives 'The assistant should A', 'The assistant should not B', 'The assistant should never C'; a Then
    not written as what the assistant should do is one criterion as it stands."""
    sentences = split_sentences(then) or [then.strip()]
    if not _SHOULD.match(sentences[0]):
        return [_sentence(then)]
    out: list[str] = []
    for sentence in sentences:
        body = _SHOULD.sub("", sentence.strip(), count=1)
        for clause in _CLAUSE.split(body):
            clause = re.sub(r"^(?:should|must)\s+", "", clause.strip(), flags=re.IGNORECASE).rstrip(" .;,")
            if clause:
                out.append(f"The assistant should {clause[:1].lower() + clause[1:]}")
    return list(dict.fromkeys(out))


# ---------------------------------------------------------------------------------- offline: assertions


GAP = 3  # words allowed between two words of a name: "return an item", "book a bike repair"


def _stems(text: str) -> list[str]:
    """The stems of a text's words, in order (hyphens dropped: "e-bike" is "ebike")."""
    return [w[:STEM] for w in re.findall(r"[a-z0-9]+", text.lower().replace("-", ""))]


def _named(name: str, text: str) -> bool:
    """Whether a domain name (`return_item`, `action_lookup_order`) is written in the text, or its words
    (three letters or more, 'action' and 'utter' aside) occur there in order, each at most GAP words
    after the previous one ("return an item for a refund" names return_item; "How to Track Them ...
    Orders" does not name track_order)."""
    if re.search(rf"\b{re.escape(name)}\b", text, re.IGNORECASE):
        return True
    words = [w[:STEM] for w in name.lower().split("_") if len(w) >= 3 and w not in ("action", "utter")]
    stems = _stems(text)
    for start, stem in enumerate(stems):
        if not words or stem != words[0]:
            continue
        at = start
        for word in words[1:]:
            following = stems[at + 1 : at + 2 + GAP]
            if word not in following:
                break
            at += 1 + following.index(word)
        else:
            return True
    return False


def _in_domain(name: str, names: frozenset[str] | None) -> str | None:
    """The domain's name for `name` (itself, or `action_<name>`), or None."""
    for candidate in (name, f"action_{name}"):
        if names is not None and candidate in names:
            return candidate
    return None


def _slot_for(phrase: str, domain: Domain) -> str | None:
    """The one slot a phrase names ('order id' -> order_id; 'email' -> customer_email if alone)."""
    if not domain.slots:
        return None
    key = re.sub(r"[^a-z0-9]+", "_", phrase.lower()).strip("_")
    if key in domain.slots:
        return key
    ending = [s for s in domain.slots if s.endswith(f"_{key}")]
    return ending[0] if len(ending) == 1 else None


# One action named after a verb of calling; not an alternative ("or calling X") nor a list ("calling X, Y
# as the procedure says": a procedure's calls, some of them conditional).
_CALLS = re.compile(
    r"(?<!\bor )\b(?:call|calls|calling|with|using|use|uses)\s+([a-z][a-z0-9_]*_[a-z0-9_]+)\b(?!,)"
)
_BEFORE = re.compile(
    r"\bask(?:s|ing)? for (?:the |a |an )?([a-z][a-z ]*?) before (?:calling|call|using) (\w+)"
)
_GIVES = re.compile(r"\bgiv(?:es|ing|e) (?:the |a |an |their |your )?(.+?)(?:$|\.| and report| before| but)")
_NEGATED = re.compile(r"\b(?:not|never|no|refuses?|cannot|can't|without)\b", re.IGNORECASE)
# A figure an answer must state: an amount, a percentage, a quantity with its unit, a code, a long number.
_FIGURE = re.compile(
    r"\$\s?\d[\d,.]*\d|\d+(?:\.\d+)?\s?%|\d+(?:[–-]\d+)?\s(?:business\s)?(?:days?|hours?|minutes?|weeks?|"
    r"months?|years?|km|cycles?)\b|\b[A-Z]{2,}(?:-[A-Z0-9]+)+\b|\b\d{3,}\b"
)


def stated_figures(then: str) -> list[str]:
    """The figures a spec's Then says an answer holds (in its quotations and the values it reads from a
    table, else anywhere in it), in order, at most MAX_FACTS."""
    quoted = re.findall(r'"([^"]+)"|\(([^)]*\d[^)]*)\)', then)
    source = " ".join(a or b for a, b in quoted) or then
    return list(dict.fromkeys(m.group(0).strip() for m in _FIGURE.finditer(source)))[:MAX_FACTS]


def figure_pattern(figure: str) -> str:
    """A readable regular expression finding a figure however an answer spaces, dashes or groups it:
    '5–8 business days' finds '5-8 business days', '4499' finds '4,499', '$129' finds '$ 129', and no
    figure is found inside a longer one ('4499' is not in '14499')."""
    out = []
    for run in re.findall(r"\d+|\s+|.", figure):
        if run.isdigit():
            out.append(run if len(run) < 4 else f"{run[:-3]},?{run[-3:]}")
        elif run.isspace():
            out.append(r"\s+")
        elif run in "–-":
            out.append(r"\s*[–-]\s*")
        else:
            out.append(re.escape(run) + (r"\s*" if run == "$" else ""))
    start = r"\b" if figure[:1].isalnum() else ""
    end = r"\b" if figure[-1:].isalnum() else r"(?!\d)"
    return start + "".join(out) + end


def offline_assertions(spec: SpecInput, domain: Domain) -> dict[str, Any]:
    """The draft's assertion fields for a spec: the domain names it makes checkable (see the module)."""
    text = " ".join([spec.scenario, spec.given, spec.when, spec.then])
    flows = sorted(f for f in domain.flows or () if not f.startswith(BUILTIN_FLOW_PREFIX) and _named(f, text))
    completed = flows if not _NEGATED.search(spec.then) else []
    then = spec.then.lower()
    actions = [a for name in _CALLS.findall(then) if (a := _in_domain(name, domain.actions))]
    sequence: list[dict[str, str]] = []
    # a flow collects only some of its tools' parameters: a slot it never asks for is never set
    collected = domain.collected(flows)
    for phrase, name in _BEFORE.findall(then):
        slot, action = _slot_for(phrase, domain), _in_domain(name, domain.actions)
        if slot and action and (collected is None or slot in collected):
            sequence = [{"key": "slot_was_set", "value": slot}, {"key": "action_executed", "value": action}]
    given = _GIVES.search(spec.when.lower())
    phrases = re.split(r",\s*|\s+and\s+", given[1]) if given and "without" not in spec.when.lower() else []
    slots = [s for p in phrases if (s := _slot_for(p, domain)) and (collected is None or s in collected)]
    responses = sorted(r for r in domain.responses or () if re.search(rf"\b{re.escape(r)}\b", text))
    return {
        "flows_started": flows,
        "flows_completed": completed,
        "actions_executed": list(dict.fromkeys(actions)),
        "slots_set": list(dict.fromkeys(slots)),
        "responses_uttered": responses,
        "sequence": sequence,
        "facts": stated_figures(spec.then),
    }


def _domain_of(inputs: dict[str, Any]) -> Domain:
    """The domain as the task's inputs carry it (see `domain_input`)."""
    data = inputs.get("domain") or {}

    def names(key: str) -> frozenset[str] | None:
        return frozenset(data[key]) if data.get(key) is not None else None

    slots = data.get("slots")
    return Domain(
        slots={s["name"]: SlotType(s.get("type"), tuple(s.get("values") or ())) for s in slots}
        if slots is not None
        else None,
        flows=names("flows"),
        actions=names("actions"),
        responses=names("responses"),
        collects={f: frozenset(names) for f, names in data["collects"].items()}
        if data.get("collects") is not None
        else None,
    )


def offline_scenario(inputs: dict[str, Any], rng: random.Random) -> ScenarioDraft:
    """The task's offline implementation: the spec read by the rules of the module docstring."""
    spec = SpecInput.model_validate(inputs["spec"])
    return ScenarioDraft(
        name=spec.scenario.strip(),
        simulation_context=briefing(spec),
        criteria=criteria_of(spec.then),
        **offline_assertions(spec, _domain_of(inputs)),
    )


SCENARIO_FROM_SPEC = Task("scenario_from_spec", ScenarioDraft, offline_scenario, max_tokens=1500)


# ------------------------------------------------------------------------------------------- building


def domain_input(domain: Domain | None) -> dict[str, Any]:
    """The domain as the task shows it to a model (None where the domain does not say)."""
    if domain is None:
        return {}
    slots = (
        [{"name": n, "type": t.type, "values": list(t.values)} for n, t in sorted(domain.slots.items())]
        if domain.slots is not None
        else None
    )
    listed = {
        key: sorted(names) if names is not None else None
        for key, names in (
            ("flows", domain.flows),
            ("actions", domain.actions),
            ("responses", domain.responses),
        )
    }
    collects = (
        {f: sorted(names) for f, names in sorted(domain.collects.items())}
        if domain.collects is not None
        else None
    )
    return {"slots": slots, **listed, "collects": collects}


def build_scenario(draft: ScenarioDraft, domain: Domain | None) -> Scenario:
    """The scenario of a draft, keeping only what the domain can check: assertions and initial slots
    that name a flow, action, slot or response the domain defines (none at all without a domain)."""
    assertions: list[Assertion] = []
    initial: dict[str, Any] = {}
    if domain is not None:

        def known(names: frozenset[str] | None, name: str) -> bool:
            return names is not None and name in names

        flows = domain.flows
        slots = frozenset(domain.slots) if domain.slots is not None else None
        started = [f for f in dict.fromkeys(draft.flows_started) if known(flows, f)]
        if started:
            assertions.append(FlowStartedAssertion(flow_ids=started, operator="all"))
        assertions += [
            FlowCompletedAssertion(flow_id=f) for f in dict.fromkeys(draft.flows_completed) if known(flows, f)
        ]
        assertions += [
            ActionExecutedAssertion(action_name=a)
            for a in dict.fromkeys(draft.actions_executed)
            if known(domain.actions, a)
        ]
        set_slots = [s for s in dict.fromkeys(draft.slots_set) if known(slots, s)]
        if set_slots:
            assertions.append(SlotWasSetAssertion(slots=[SlotCheck(name=s) for s in set_slots]))
        assertions += [
            BotUtteredAssertion(utter_name=r)
            for r in dict.fromkeys(draft.responses_uttered)
            if known(domain.responses, r)
        ]
        names = {"slot_was_set": slots, "action_executed": domain.actions}
        steps = [s for s in draft.sequence if s.key in STEP_KEYS and known(names.get(s.key, flows), s.value)]
        if len(steps) >= 2 and len(steps) == len(draft.sequence):
            assertions.append(
                SequencingAssertion(steps=[SequencingStep(key=s.key, value=s.value) for s in steps])
            )
        # any target that reports events reports what the assistant said: a figure is always checkable
        facts = list(dict.fromkeys(f.strip() for f in draft.facts if f.strip()))[:MAX_FACTS]
        assertions += [BotUtteredAssertion(text_matches=figure_pattern(f)) for f in facts]
        for slot in draft.initial_slots:
            if slots is not None and slot.name in slots and not domain.slots[slot.name].refuses(slot.value):
                initial[slot.name] = slot.value
    criteria = [c.strip() for c in draft.criteria if c.strip()]
    return Scenario(
        name=" ".join(draft.name.split()),
        simulation_context=draft.simulation_context.strip(),
        setup=ScenarioSetup(initial_slots=initial) if initial else None,
        goals=ScenarioGoals(criteria=criteria or None, assertions=assertions or None)
        if criteria or assertions
        else None,
    )


class GeneratedScenario(Record):
    """A scenario written from a spec, with what wrote it."""

    spec_id: str = Field(description="The spec it was written from.")
    scenario: Scenario = Field(description="The scenario, valid under the format (and the domain, if any).")
    model: str = Field(description="'provider/model' that wrote it.")
    offline: bool = Field(description="True when written by the offline implementation.")


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or `name (2)`, `name (3)`, ...: a scenario's name is its identity in the store."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name} ({n})"
    taken.add(candidate)
    return candidate


def generate_scenarios(
    client: ModelClient, specs: Sequence[Spec], domain: Domain | None = None, *, model: str | None = None
) -> list[GeneratedScenario]:
    """One scenario per spec, in order, each valid under the format's validator (and the domain, when
    given); names made unique. Raises EvalcoreError naming the specs no scenario could be written for
    (the others are cached: a second call does not pay for them again)."""
    shown = domain_input(domain)
    inputs = [{"spec": SpecInput.of(spec).model_dump(mode="json"), "domain": shown} for spec in specs]
    results = client.run_batch(SCENARIO_FROM_SPEC, inputs, role="generator", model=model)
    failed = [f"{spec.id}: {r.error}" for spec, r in zip(specs, results, strict=True) if not r.ok]
    if failed:
        raise EvalcoreError(f"no scenario for {len(failed)} spec(s): " + "; ".join(failed))
    out: list[GeneratedScenario] = []
    taken: set[str] = set()
    for spec, result in zip(specs, results, strict=True):
        scenario = build_scenario(cast(ScenarioDraft, result.output), domain)
        scenario = scenario.model_copy(update={"name": _unique(scenario.name or spec.scenario, taken)})
        problems: list[Problem] = []
        if parse_scenario(to_yaml(scenario), f"spec {spec.id}", problems, domain) is None:
            raise ValidationFailed(problems, f"the scenario written from spec {spec.id}")
        out.append(
            GeneratedScenario(spec_id=spec.id, scenario=scenario, model=result.model, offline=result.offline)
        )
    return out


def scenarios_from_specs(
    client: ModelClient, specs: Sequence[Spec], domain: Domain | None = None
) -> list[Scenario]:
    """One scenario per spec (see `generate_scenarios`; this keeps only the scenarios)."""
    return [g.scenario for g in generate_scenarios(client, specs, domain)]
