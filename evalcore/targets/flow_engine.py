"""A small flow engine in the manner of a Rasa (CALM) assistant, built from a project's procedures, that
reports what it does as Rasa tracker events (issue 19, item 3).

`flows_from_procedures` turns each procedure into a flow whose id is the procedure's name: before each
API step, `collect` steps for the tool's required parameters (at most `MAX_COLLECT` per tool; slot =
parameter name, asked with `utter_ask_<slot>`), the action `action_<api>` (which sets the slot
`<api>_result` to its outcome) and the outcome's response `utter_<api>_<outcome>`; a message step that
does not ask for anything becomes the templated response `utter_<flow>_step_<n>` carrying its text.
`transfer_to_human` steps run only when an outcome calls for it or the user asks for a person. Slot
types come from the tools' JSON schemas (`domain_of` gives them as a scenario Domain).

`FlowEngine.session()` is one conversation (`FlowSession`): `start()` runs session start, `set_slots`
injects slots (seed 003: "sends a /session_start message first ... then injects the slot values on
top"), `handle(text)` takes one user message and returns the tracker events it caused, Rasa's own
shapes (`user`, `flow_started`, `slot`, `action`, `bot` with `utter_action` / `utter_source` metadata,
`flow_completed` / `flow_cancelled` / `flow_interrupted` with `step_id`, and a `flow_started` of
`pattern_clarification` naming the suggested flows). How it answers:
- no flow active: the message starts the flow its words match best (procedure name and intent weigh
  four times its description; "rent" matches "rental"); when two flows match about equally it asks
  which one (a clarification with buttons); a question ("what is the late fee ...?", "I'd like to ask
  ...") starts a flow only when the flow's words cover at least half of its words, as a CALM command
  generator answers a question from knowledge unless a flow's description is about what it asks
  (a "rental" in a question about late fees does not start rent_ebike); a message that starts no flow
  is a knowledge question,
  answered from the best passage of the project's documents (source `EnterpriseSearchPolicy`, the
  passage as `search_results`; a table row said in words with its units and currency, its codes named
  as a customer knows them), or, when nothing matches, with `utter_ask_rephrase`;
- a flow active: a slot value in the message fills the slot asked (by the parameter's pattern, format,
  enum, type; a free-text slot takes the words after "is", else the message); a slot asked twice in vain
  is left empty and the flow goes on (the tool's second outcome follows); "cancel", "never mind",
  "forget it" cancel the flow (`utter_flow_cancelled`); a question that fills nothing is answered by
  search, and the flow asks again; a message that matches another flow strongly interrupts the active
  one, which resumes when the other completes.

`Defects` makes it misbehave as real assistants do, one kind per assertion the seed defines, each at a
rate (seeded: the same seed and conversation misbehave the same way). The kinds are listed in
`DEFECTS`; the demo target (`demo_flows`) turns them on.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evalcore.documents.facts import column_label
from evalcore.documents.naming import code_names, key_columns
from evalcore.documents.retrieval import Passage, PassageIndex, split_passages, tokenize
from evalcore.documents.sentences import split_sentences
from evalcore.documents.wording import cells_answer, key_noun, place_columns
from evalcore.models import Document, Procedure, Tool
from evalcore.models.common import content_hash
from evalcore.targets.domain import Domain, SlotType

MAX_COLLECT = 3  # slots a flow collects before one action; other parameters are the action's defaults
HANDOVER = "transfer_to_human"
SEARCH_SOURCE = "EnterpriseSearchPolicy"
CLARIFY = "pattern_clarification"
MIN_SEARCH_SCORE = 1.5  # BM25 score under which a question finds nothing
MIN_FLOW_SCORE = 2.0  # keyword weight a message needs to start a flow
QUESTION_COVER = 0.5  # share of a question's words a flow's words must cover for the question to start it
AMBIGUOUS = 0.85  # a second flow within this share of the best one's score: ask which is meant
MAX_ASKS = 2
FREE_TEXT_WORDS = 8  # a whole message fills a free-text slot only when it is this short
RERANK = 10  # best passages of which the one holding most of the question's words answers
_UNIT_WORDS = frozenset({"usd", "eur", "gbp"})  # a currency in a column's name is not what is asked
SMALL_TALK_WORDS = 3  # a remark of at most this many content words and no question is no search query

_CANCEL = re.compile(r"\b(cancel|never\s?mind|forget (?:it|that|about it)|stop this|abort)\b", re.IGNORECASE)
# A request for a person: the words themselves, or a verb of handing over followed by who to ("hand the
# conversation to the support team"); "team" or "staff" alone is not one ("does the workshop team ...?").
_HUMAN = re.compile(
    r"\b(?:human|person|real agent|someone from|staff member|"
    r"(?:talk|speak|chat|hand|pass|transfer|connect|put|escalate)\w*\b[^.?!]{0,40}?\b(?:to|with)\s+"
    r"(?:[\w-]+\s+){0,3}?(?:team|agent|someone|somebody|staff|representative|people))\b",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_IS_VALUE = re.compile(r"\b(?:is|are|it's|its|:)\s+(.+?)[.!]?$", re.IGNORECASE)
_YES = re.compile(r"\b(yes|yeah|yep|sure|correct|right|ok|okay|please do|go ahead|true)\b", re.IGNORECASE)
_NO = re.compile(r"\b(no|nope|not|don't|false)\b", re.IGNORECASE)
_QUESTION = re.compile(r"\?|\b(?:ask|what|how|why|which|whether|wonder(?:ing)?)\b", re.IGNORECASE)
# Words of a request, not of what it asks about ("hey, quick one: I'd like to ask a follow-up question
# about X"): they find no passage.
_REQUEST = frozenset(
    "ask tell give explain want need help like find out know hi hello hey please quick one follow up "  # noqa: SIM905
    "follow-up question about".split()
)
# Words every request uses: they start no flow (nor do words most of the project's procedures share, see
# `flows_from_procedures`).
_GENERIC = frozenset(
    "ask tell give explain check customer order item want need help like out find".split()  # noqa: SIM905
)

# What the assistant says when the conversation is handed over or a call fails; every other outcome is
# worded by the procedure's own `replies` (the project's words), else by a generic line.
OUTCOME_TEXT = {
    "transferred": "A member of our team is joining this chat now.",
    "error": "Sorry, something went wrong on our side.",
}
RESPONSES = {
    "utter_ask_rephrase": "I'm sorry, I didn't quite understand. Could you rephrase that?",
    "utter_flow_cancelled": "Okay, I've stopped that. Is there anything else I can help with?",
    "utter_clarification_options": "I can help with several things here. Which one do you mean?",
    "utter_dont_know": "I'm sorry, I don't know how to help with that.",
    "utter_default": "Sorry, I can't handle that request.",
    "utter_anything_else": "Is there anything else I can help you with?",
}

# Defect kinds, each named after the assertion that catches it.
DEFECTS: dict[str, str] = {
    "flow_started": "misroute: the request starts a neighbouring flow instead of the one it matches",
    "flow_completed": "stall: the flow stops before its last step and never completes",
    "flow_cancelled": "ignore cancel: a cancel request is ignored and the flow goes on",
    "action_executed": "skip action: the action's reply is sent without the action running",
    "slot_was_set": "forget slot: a value (the user's, or an action's result) is used but not stored",
    "slot_was_not_set": "needless handover: a transfer to a human runs although nothing called for it",
    "bot_uttered": "generic reply: an outcome is answered with utter_default instead of its response",
    "bot_did_not_utter": "dont know: the assistant says utter_dont_know before it helps",
    "pattern_clarification_contains": "no clarification: an ambiguous request goes to one flow unasked",
    "generative_response_is_relevant": "wrong passage: a search answer quotes an unrelated passage",
    "generative_response_is_grounded": "invention: a search answer states things its passage does not",
    "sequencing": "early completion: the flow is marked completed before its action runs",
}
_INVENTED = (
    "Good news: we can refund everything in cash right now, no receipt needed, and you get a free upgrade "
    "to a premium model as a thank-you gift."
)


@dataclass(frozen=True)
class SlotInfo:
    """A slot: its name, JSON schema (from the tool parameter) and Rasa slot type."""

    name: str
    schema: dict[str, Any]

    @property
    def rasa_type(self) -> SlotType:
        """The slot type as a Rasa domain declares it."""
        kind = self.schema.get("type")
        kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
        if self.schema.get("enum"):
            return SlotType("categorical", tuple(str(v) for v in self.schema["enum"]))
        return SlotType(
            {"boolean": "bool", "integer": "float", "number": "float", "array": "list"}.get(str(kind), "text")
        )


@dataclass(frozen=True)
class FlowStep:
    """One step of a flow: collect a slot, run an action, or say a templated response."""

    id: str
    kind: str  # collect | action | utter
    name: str  # the slot, the tool, or the response
    text: str = ""
    outcomes: tuple[str, ...] = ()
    replies: tuple[tuple[str, str], ...] = ()  # (outcome, what the assistant says), from the procedure


@dataclass(frozen=True)
class Flow:
    """A flow: its id, what it is for, the words that start it, and its steps."""

    id: str
    description: str
    keywords: dict[str, float]
    steps: tuple[FlowStep, ...]


def _words(text: str) -> list[str]:
    words = [w.replace("-", "") for w in tokenize(text)]  # "rent_ebike" is about e-bikes
    return [w for w in words if w not in _GENERIC and not w.isdigit()]


def _same_word(keyword: str, word: str) -> bool:
    """One word, or one the other starts with when both have 4 letters or more ("rent" / "rental")."""
    if keyword == word:
        return True
    return min(len(keyword), len(word)) >= 4 and (word.startswith(keyword) or keyword.startswith(word))


def _asks(text: str) -> bool:
    return bool(re.match(r"\s*(ask|collect|confirm the)\b", text, re.IGNORECASE))


def flows_from_procedures(procedures: Sequence[Procedure], tools: Sequence[Tool]) -> list[Flow]:
    """One flow per procedure (see the module docstring)."""
    by_name = {t.name: t for t in tools}
    flows = []
    for procedure in procedures:
        steps: list[FlowStep] = []
        collected: set[str] = set()
        for n, step in enumerate(procedure.steps, start=1):
            if step.kind == "message":
                if not _asks(step.text):
                    utter = f"utter_{procedure.name}_step_{n}"
                    text = " ".join(step.text.split())
                    steps.append(FlowStep(f"{procedure.name}_step_{n}", "utter", utter, text))
                continue
            if step.api == HANDOVER:
                continue
            tool = by_name.get(step.api or "")
            params = (tool.parameters.get("properties") or {}) if tool else {}
            required = [p for p in (tool.parameters.get("required") or []) if p in params] if tool else []
            for name in [p for p in required if p not in collected][:MAX_COLLECT]:
                collected.add(name)
                steps.append(FlowStep(f"collect_{name}", "collect", name))
            action = FlowStep(str(step.api), "action", str(step.api), outcomes=tuple(step.outcomes),
                              replies=tuple(step.replies.items()))  # fmt: skip
            steps.append(action)
        keywords: dict[str, float] = {}
        for text, weight in ((procedure.name.replace("_", " "), 2.0), (procedure.intent, 2.0),
                             (procedure.description, 0.5)):  # fmt: skip
            for word in _words(text):
                keywords[word] = max(keywords.get(word, 0.0), weight)
        flows.append(Flow(procedure.name, procedure.intent, keywords, tuple(steps)))
    return _without_shared_words(flows)


def _without_shared_words(flows: list[Flow]) -> list[Flow]:
    """The flows without the keywords at least half of them share (3 or more): a word every procedure of
    a bike shop uses ("bike") tells no flow from another."""
    if len(flows) < 3:
        return flows
    counts = Counter(word for flow in flows for word in flow.keywords)
    shared = {word for word, n in counts.items() if n >= max(3, (len(flows) + 1) // 2)}
    return [
        Flow(f.id, f.description, {w: v for w, v in f.keywords.items() if w not in shared}, f.steps)
        for f in flows
    ]


def slots_of(tools: Sequence[Tool]) -> dict[str, SlotInfo]:
    """Every tool parameter as a slot (the first tool naming it gives its schema), and each tool's
    `<tool>_result` slot holding its outcome."""
    slots: dict[str, SlotInfo] = {}
    for tool in tools:
        for name, schema in (tool.parameters.get("properties") or {}).items():
            schema = schema if isinstance(schema, dict) else {}
            if name not in slots or len(schema) > len(slots[name].schema):  # the fullest description
                slots[name] = SlotInfo(name, schema)
        outcomes = ((tool.returns or {}).get("properties") or {}).get("result", {}).get("enum")
        slots[f"{tool.name}_result"] = SlotInfo(f"{tool.name}_result", {"type": "string", "enum": outcomes}
                                                if outcomes else {"type": "string"})  # fmt: skip
    return slots


def domain_of(flows: Sequence[Flow], slots: dict[str, SlotInfo]) -> Domain:
    """The slots, flows (with the slots each collects), actions and responses as a scenario Domain, so
    scenarios are checked against them."""
    named: dict[str, Any] = {}
    fields = getattr(Domain, "__dataclass_fields__", {})
    if "actions" in fields:
        tools = {s.name for f in flows for s in f.steps if s.kind == "action"} | {HANDOVER}
        named["actions"] = frozenset(f"action_{t}" for t in tools) | {"action_trigger_search"}
    if "responses" in fields:
        named["responses"] = frozenset(responses_of(flows, slots)) | {"utter_search_answer"}
    named["collects"] = {f.id: frozenset(s.name for s in f.steps if s.kind == "collect") for f in flows}
    typed = {name: info.rasa_type for name, info in slots.items()}
    return Domain(typed, frozenset(f.id for f in flows), **named)


def responses_of(flows: Sequence[Flow], slots: dict[str, SlotInfo]) -> dict[str, str]:
    """Every response the engine can send, by name (what a domain's `responses:` would list)."""
    out = {**RESPONSES, f"utter_{HANDOVER}_transferred": OUTCOME_TEXT["transferred"]}
    for flow in flows:
        for step in flow.steps:
            if step.kind == "utter":
                out[step.name] = step.text
            elif step.kind == "collect":
                out[f"utter_ask_{step.name}"] = ask_text(slots.get(step.name) or SlotInfo(step.name, {}))
            elif step.kind == "action":
                for outcome in step.outcomes:
                    said = dict(step.replies).get(outcome) or OUTCOME_TEXT.get(outcome)
                    out[f"utter_{step.name}_{outcome}"] = said or _generic_outcome(step.name, outcome)
    return out  # fmt: skip


def ask_text(slot: SlotInfo) -> str:
    """How the assistant asks for a slot: its name in words, an example from its description."""
    label = slot.name.replace("_", " ")
    example = re.search(r"e\.g\.,?\s*([^,;)]+)", str(slot.schema.get("description") or ""))
    options = slot.schema.get("enum")
    if options:
        return f"Which {label} would you like: {', '.join(str(o) for o in options)}?"
    if slot.rasa_type.type == "bool":
        return f"Could you confirm the {label}, yes or no?"
    hint = f" (for example {example.group(1).strip().rstrip('.')})" if example else ""
    return f"What is your {label}{hint}?"


def _generic_outcome(tool: str, outcome: str) -> str:
    return f"{tool.replace('_', ' ').capitalize()}: {outcome.replace('_', ' ')}."


@dataclass
class Defects:
    """Which defects are on, and how often each fires (see DEFECTS)."""

    rate: float = 0.0  # chance that any defect fires at an opportunity of its kind
    inject: tuple[str, ...] = ()  # kinds that fire at every opportunity
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = [k for k in self.inject if k not in DEFECTS]
        if unknown:
            raise ValueError(f"unknown defect kind(s) {', '.join(unknown)} (known: {', '.join(DEFECTS)})")


def extract(slot: SlotInfo, text: str) -> Any:
    """The slot's value in a user message, or None (see the module docstring)."""
    schema, words = slot.schema, text.strip()
    if pattern := schema.get("pattern"):
        found = re.search(pattern.strip("^$"), words)
        if found:
            return found.group(0)
    if schema.get("format") == "email" or "email" in slot.name:
        found = _EMAIL.search(words)
        return found.group(0) if found else None
    if options := schema.get("enum"):
        lowered = words.lower()
        for option in options:
            if str(option).lower() in lowered or str(option).replace("_", " ").lower() in lowered:
                return option
        return None
    kind = slot.rasa_type.type
    if kind == "bool":
        return False if _NO.search(words) else (True if _YES.search(words) else None)
    if kind == "float":
        found = _NUMBER.search(words)
        return (
            (int(found.group(0)) if schema.get("type") == "integer" else float(found.group(0)))
            if found
            else None
        )
    if "date" in slot.name:
        found = _DATE.search(words)
        if found:
            return found.group(0)
    if words.endswith("?") or not words:
        return None
    named = _IS_VALUE.search(words)
    if named is None and (schema.get("pattern") or len(words.split()) > FREE_TEXT_WORDS):
        return None  # a value of the wrong shape, or a sentence about something else
    value = (named.group(1) if named else words).strip().rstrip(".!")
    return [value] if kind == "list" else value


def valid(slot: SlotInfo, value: Any) -> bool:
    """Whether a value satisfies the slot's pattern (a free-text value always does)."""
    pattern = slot.schema.get("pattern")
    return value is not None and (not pattern or bool(re.fullmatch(pattern.strip("^$"), str(value))))


def _bot(text: str, utter: str | None, source: str | None = None, **extra: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if utter:
        metadata["utter_action"] = utter
    if source:
        metadata["utter_source"] = source
    buttons = extra.pop("buttons", None)
    metadata.update(extra)
    event: dict[str, Any] = {"event": "bot", "text": text, "metadata": metadata}
    if buttons:
        event["data"] = {"buttons": buttons}
    return event


class FlowEngine:
    """Flows, slots and responses of a project, and the passages its search answers from."""

    def __init__(self, procedures: Sequence[Procedure], tools: Sequence[Tool], documents: Sequence[Document],
                 defects: Defects | None = None) -> None:  # fmt: skip
        self.flows = {f.id: f for f in flows_from_procedures(procedures, tools)}
        self.slots = slots_of(tools)
        self.responses = responses_of(list(self.flows.values()), self.slots)
        self.documents = {d.id: d for d in documents}
        self.names = code_names(documents)
        passages = split_passages(documents)
        self.passages = {p.id: p for p in passages}
        # a row is found by what a customer calls its codes ("the Ridgeline Sprout 20"), as well as by them
        self.index = PassageIndex([_named(p, self.names) for p in passages]) if passages else None
        self.defects = defects or Defects()

    @property
    def domain(self) -> Domain:
        """The engine's slots and flows."""
        return domain_of(list(self.flows.values()), self.slots)

    def session(self, conversation_id: str) -> FlowSession:
        """A new conversation."""
        return FlowSession(self, conversation_id)

    def match(self, text: str) -> list[tuple[float, str]]:
        """Flows by how well the message's words match their keywords, best first (score > 0 only)."""
        words = set(_words(text))
        scored = [
            (sum(weight for k, weight in f.keywords.items() if any(_same_word(k, w) for w in words)), f.id)
            for f in self.flows.values()
        ]
        return sorted([s for s in scored if s[0] > 0], key=lambda s: (-s[0], s[1]))

    def covers(self, flow_id: str, text: str) -> float:
        """The share of the message's words that match the flow's keywords (name, intent, description)."""
        words = set(_words(text))
        keywords = self.flows[flow_id].keywords
        return sum(any(_same_word(k, w) for k in keywords) for w in words) / len(words) if words else 0.0

    def search(
        self, question: str, avoid_best: bool = False, quoted: Collection[str] = ()
    ) -> tuple[str, str] | None:
        """(answer, passage text) for a knowledge question, or None when nothing matches well enough;
        `avoid_best` takes the least related passage found instead (a defect).

        Of the best passages, the one holding most of the question's words answers (BM25 also rewards a
        passage repeating one of them), one whose text is not `quoted` yet in the conversation first
        (asked again, or for more, the assistant says more, not the same again); a table row is said in
        words, with its units and currency (`row_answer`), a text by its sentences holding most of the
        question's words."""
        if self.index is None:
            return None
        # "I'd like to ask about ..." says nothing of what is asked: such words find no passage
        wanted = {w for w in tokenize(question) if w not in _REQUEST}
        hits = self.index.retrieve(" ".join(sorted(wanted)), k=30)
        if not hits or hits[0].score < MIN_SEARCH_SCORE:
            return None
        fresh = [h for h in hits[:RERANK] if _flat(self.passages[h.passage.id].text) not in quoted]
        best = max(fresh or hits[:RERANK], key=lambda h: len(wanted & set(tokenize(h.passage.indexed_text))))
        passage = self.passages[(hits[-1] if avoid_best else best).passage.id]
        document = self.documents.get(passage.document_id)
        if passage.kind == "table" and document is not None and document.rows:
            answer = self.row_answer(document, int(passage.id.rsplit("#r", 1)[1]), wanted)
        else:
            body = _worded_rows(passage.text.split("\n", 1)[1] if "\n" in passage.text else passage.text)
            sentences = [
                s
                for line in body.splitlines()
                for s in split_sentences(line, chat=True)
                if len(s.split()) >= 3
            ]
            ranked = sorted(sentences, key=lambda s: -len(wanted & set(tokenize(s))))[:2]
            answer = " ".join(re.sub(r"[*_#|]+", "", s).strip() for s in (ranked or [body]))
        return _flat(answer), _flat(passage.text)

    def row_answer(self, document: Document, row: int, wanted: set[str]) -> str:
        """A table row in words: one sentence per cell asked about (a column whose words the question
        has; every cell when it names none), about the row as a customer names it, its codes in brackets
        ("The daily rate for the Ridgeline Sprout 20 (RC-KIDS-20) at the Ridgeline Cycles Pine Hollow
        (RC-03) is $20.")."""
        data = {c: str(document.rows[row].get(c, "")).strip() for c in document.columns}
        key = key_columns(document.columns, document.rows)
        named = {c: f"{self.names[data[c]]} ({data[c]})" if data[c] in self.names else f"the {key_noun(c)} "
                 f"{data[c]}" for c in key}  # fmt: skip
        places = place_columns([(c, data[c]) for c in key])
        things = [n for c, n in named.items() if c not in places] or list(named.values())
        place = next((named[c] for c in places if named[c] not in things), None)
        thing = " and ".join(things)
        # a cell that only names the row ("model: Ridgeline Sprout 20") is said with the row already
        cells = [(c, v) for c, v in data.items() if c not in key and v and not _names_row(v, thing, place)]
        asked = [
            (c, v)
            for c, v in cells
            if any(
                _same_word(k, w) for k in tokenize(column_label(c)) for w in wanted if k not in _UNIT_WORDS
            )
        ]
        return " ".join(cells_answer(thing, place, c, v) for c, v in asked or cells)


def _flat(text: str) -> str:
    """Text on one line, single-spaced (as a search answer and its passage are reported)."""
    return " ".join(text.split())


def _worded_rows(text: str) -> str:
    """A text with its markdown tables' rows as sentences, each cell under its column's header ("| Voltra
    Haul Cargo | $85 | $400 |" under "| Bike | Daily rate | Deposit |": "Voltra Haul Cargo: daily rate $85;
    deposit $400.")."""
    out: list[str] = []
    header: list[str] | None = None
    for line in text.splitlines():
        if not line.strip().startswith("|"):
            header = None
            out.append(line)
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
            continue
        if header is None:
            header = cells
            continue
        said = "; ".join(
            f"{h[:1].lower() + h[1:]} {c}" for h, c in zip(header[1:], cells[1:], strict=False) if c
        )
        out.append(f"{cells[0]}: {said}." if said else cells[0])
    return "\n".join(out)


def _names_row(value: str, thing: str, place: str | None) -> bool:
    """Whether a cell's words (not a bare number) are already in how the row is named."""
    return bool(re.search(r"[A-Za-z]", value)) and any(value in named for named in (thing, place or ""))


def _named(passage: Passage, names: dict[str, str]) -> Passage:
    """A table row's passage with the names of the codes it holds added, as the index reads it."""
    if passage.kind != "table":
        return passage
    said = [names[code] for code in re.findall(r"[A-Z0-9]+(?:-[A-Z0-9]+)+", passage.text) if code in names]
    return replace(passage, text=f"{passage.text} ({'; '.join(said)})") if said else passage


@dataclass
class _Active:
    flow: Flow
    position: int = 0
    asks: dict[str, int] = field(default_factory=dict)
    completed: bool = False  # a flow_completed was already reported (the early-completion defect)


class FlowSession:
    """One conversation with the engine: its tracker events and its state."""

    def __init__(self, engine: FlowEngine, conversation_id: str) -> None:
        self.engine, self.id = engine, conversation_id
        self.events: list[dict[str, Any]] = []
        self.slots: dict[str, Any] = {}
        self.stack: list[_Active] = []
        self.pending_choice: list[str] = []
        self.done: set[str] = set()  # flows completed or cancelled in this conversation
        self.quoted: set[str] = set()  # passages search answered from in this conversation
        self.turn = 0
        self._ids = random.Random(content_hash([conversation_id, engine.defects.seed]))

    # ------------------------------------------------------------------------------------ defects

    def _fires(self, kind: str) -> bool:
        defects = self.engine.defects
        if kind in defects.inject:
            return True
        if defects.rate <= 0:
            return False
        roll = random.Random(content_hash([defects.seed, self.id, self.turn, kind, len(self.events)]))
        return roll.random() < defects.rate

    # ------------------------------------------------------------------------------------ setup

    def start(self) -> list[dict[str, Any]]:
        """Session start: what Rasa's action_session_start does on an empty tracker."""
        new = [{"event": "action", "name": "action_session_start"}, {"event": "session_started"},
               {"event": "action", "name": "action_listen"}]  # fmt: skip
        self.events += new
        return new

    def set_slots(self, values: dict[str, Any]) -> list[dict[str, Any]]:
        """Inject slot values (no questions asked: the tracker takes them as they are)."""
        new = [{"event": "slot", "name": name, "value": value} for name, value in values.items()]
        self.slots.update(values)
        self.events += new
        return new

    # ------------------------------------------------------------------------------------ turns

    def handle(self, text: str) -> list[dict[str, Any]]:
        """The events one user message causes (the user event first, action_listen last)."""
        self.turn += 1
        out: list[dict[str, Any]] = [{"event": "user", "text": text}]
        if self.pending_choice:
            self._choose(text, out)
        elif self.stack:
            self._in_flow(text, out)
        else:
            self._no_flow(text, out)
        out.append({"event": "action", "name": "action_listen"})
        self.events += out
        return out

    def _say(self, out: list[dict[str, Any]], utter: str, **fill: Any) -> None:
        text = self.engine.responses.get(utter, RESPONSES["utter_default"])
        values = {**{k: v for k, v in self.slots.items()}, **fill}
        text = re.sub(r"\{(\w+)\}", lambda m: str(values.get(m.group(1), m.group(1).replace("_", " "))), text)
        out.append({"event": "action", "name": utter})
        out.append(_bot(text, utter, buttons=fill.get("buttons")))

    def _no_flow(self, text: str, out: list[dict[str, Any]]) -> None:
        if _HUMAN.search(text):
            self._handover(out, "customer_request")
            return
        # A flow done in this conversation is not started again by its words alone, and once a flow has
        # run, a question needs twice the weight to start one (it is more likely a follow-up question).
        matches = [(s, f) for s, f in self.engine.match(text) if f not in self.done]
        if _QUESTION.search(text):
            matches = [(s, f) for s, f in matches if self.engine.covers(f, text) >= QUESTION_COVER]
        needed = MIN_FLOW_SCORE * (2 if self.done and "?" in text else 1)
        if matches and matches[0][0] >= needed:
            close = [f for s, f in matches[1:] if s >= AMBIGUOUS * matches[0][0]]
            if close and not self._fires("pattern_clarification_contains"):
                self._clarify([matches[0][1], *close[:2]], out)
                return
            chosen = matches[0][1]
            if self._fires("flow_started"):
                others = sorted(f for f in self.engine.flows if f != chosen)
                chosen = others[len(text) % len(others)] if others else chosen
            self._start(chosen, out)
            return
        self._answer(text, out)

    def _clarify(self, flow_ids: list[str], out: list[dict[str, Any]]) -> None:
        names = [self.engine.flows[f].description for f in flow_ids]
        out.append({"event": "flow_started", "flow_id": CLARIFY,
                    "metadata": {"clarification_ids": flow_ids, "names": names}})  # fmt: skip
        buttons = [{"title": n, "payload": f"/{f}"} for f, n in zip(flow_ids, names, strict=True)]
        self._say(out, "utter_clarification_options", buttons=buttons)
        out.append({"event": "flow_completed", "flow_id": CLARIFY, "step_id": "ask_options"})
        self.pending_choice = flow_ids

    def _choose(self, text: str, out: list[dict[str, Any]]) -> None:
        options, self.pending_choice = self.pending_choice, []
        lowered = text.lower()
        picked = next((f for f in options if f in lowered or f"/{f}" in lowered), None)
        if picked is None:
            scored = {f: s for s, f in self.engine.match(text)}
            ranked = sorted(options, key=lambda f: -scored.get(f, 0.0))
            ordinal = re.search(r"\b(first|second|third|1|2|3)\b", lowered)
            if ordinal:
                word = ordinal.group(1)
                at = ["first", "second", "third"].index(word) if word.isalpha() else int(word) - 1
                picked = options[min(len(options) - 1, at)]
            else:
                picked = ranked[0]  # "yes", "that one": the best match of the question asked
        self._start(picked, out)

    def _answer(self, text: str, out: list[dict[str, Any]]) -> None:
        """A knowledge question, answered by search (or a rephrase request); a short remark that asks
        nothing ("yes, that's right", "ok thanks") gets `utter_anything_else`."""
        if "?" not in text and len(tokenize(text)) <= SMALL_TALK_WORDS:
            self._say(out, "utter_anything_else")
            return
        relevant = not self._fires("generative_response_is_relevant")
        found = self.engine.search(text, avoid_best=not relevant, quoted=self.quoted)
        if found is None:
            self._say(out, "utter_ask_rephrase")
            return
        answer, passage = found
        self.quoted.add(passage)
        if self._fires("generative_response_is_grounded"):
            answer = _INVENTED
        out.append({"event": "action", "name": "action_trigger_search"})
        out.append(_bot(answer, "utter_search_answer", SEARCH_SOURCE, search_results=[passage]))

    def _start(self, flow_id: str, out: list[dict[str, Any]]) -> None:
        if self._fires("bot_did_not_utter"):
            self._say(out, "utter_dont_know")
        out.append({"event": "flow_started", "flow_id": flow_id})
        self.stack.append(_Active(self.engine.flows[flow_id]))
        self._advance(out)

    def _in_flow(self, text: str, out: list[dict[str, Any]]) -> None:
        active = self.stack[-1]
        step = active.flow.steps[active.position]
        if _CANCEL.search(text) and not self._fires("flow_cancelled"):
            self.stack.pop()
            self.done.add(active.flow.id)
            out.append({"event": "flow_cancelled", "flow_id": active.flow.id, "step_id": step.id})
            self._say(out, "utter_flow_cancelled")
            return
        if _HUMAN.search(text):
            self._handover(out, "customer_request")
            return
        matches = self.engine.match(text)
        other = next((f for s, f in matches if f != active.flow.id and s >= 2 * MIN_FLOW_SCORE), None)
        if other is not None and not any(a.flow.id == other for a in self.stack):
            out.append({"event": "flow_interrupted", "flow_id": active.flow.id, "step_id": step.id})
            self._start(other, out)
            return
        slot = self.engine.slots.get(step.name) or SlotInfo(step.name, {})
        value = extract(slot, text) if step.kind == "collect" else None
        if value is None:
            if text.strip().endswith("?"):
                self._answer(text, out)
            active.asks[step.name] = active.asks.get(step.name, 0) + 1
            if active.asks[step.name] >= MAX_ASKS:
                active.position += 1  # asked twice in vain: go on without it
            self._advance(out)
            return
        if not self._fires("slot_was_set"):
            out.append({"event": "slot", "name": step.name, "value": value})
        self.slots[step.name] = value
        active.position += 1
        self._advance(out)

    def _advance(self, out: list[dict[str, Any]]) -> None:
        """Run the active flow's steps until it needs the user, or ends."""
        while self.stack:
            active = self.stack[-1]
            flow = active.flow
            if active.position >= len(flow.steps):
                self._complete(out)
                continue
            step = flow.steps[active.position]
            if active.position == len(flow.steps) - 1 and self._fires("flow_completed"):
                self.stack.pop()  # stalls: the flow is dropped before its last step, never completed
                self.done.add(flow.id)
                return
            if step.kind == "collect":
                if step.name in self.slots:
                    active.position += 1
                    continue
                if active.asks.get(step.name, 0) >= MAX_ASKS:
                    active.position += 1
                    continue
                self._say(out, f"utter_ask_{step.name}")
                return
            if step.kind == "utter":
                self._say(out, step.name)
                active.position += 1
                continue
            last_action = all(s.kind != "action" for s in flow.steps[active.position + 1 :])
            if last_action and not active.completed and self._fires("sequencing"):
                # marked completed before its last action runs
                out.append({"event": "flow_completed", "flow_id": flow.id, "step_id": step.id})
                active.completed = True
            self._action(step, active, out)
            active.position += 1

    def _complete(self, out: list[dict[str, Any]]) -> None:
        active = self.stack.pop()
        self.done.add(active.flow.id)
        last = active.flow.steps[-1].id if active.flow.steps else "START"
        if not active.completed:
            out.append({"event": "flow_completed", "flow_id": active.flow.id, "step_id": last})
        if self.stack:  # the interrupted flow resumes (Rasa's flow_resumed: no assertion reads it)
            out.append({"event": "flow_resumed", "flow_id": self.stack[-1].flow.id})

    def _outcome(self, step: FlowStep) -> str:
        needed = [s.name for s in self._flow_collects(step)]
        ok = all(valid(self.engine.slots.get(n) or SlotInfo(n, {}), self.slots.get(n)) for n in needed)
        if not step.outcomes:
            return "done"
        return step.outcomes[0] if ok or len(step.outcomes) == 1 else step.outcomes[1]

    def _flow_collects(self, step: FlowStep) -> list[FlowStep]:
        flow = self.stack[-1].flow
        index = flow.steps.index(step)
        before = []
        for earlier in reversed(flow.steps[:index]):
            if earlier.kind == "action":
                break
            if earlier.kind == "collect":
                before.append(earlier)
        return before

    def _action(self, step: FlowStep, active: _Active, out: list[dict[str, Any]]) -> None:
        outcome = self._outcome(step)
        if not self._fires("action_executed"):
            out.append({"event": "action", "name": f"action_{step.name}"})
            if not self._fires("slot_was_set"):
                out.append({"event": "slot", "name": f"{step.name}_result", "value": outcome})
        self.slots[f"{step.name}_result"] = outcome
        ids = {"ticket_id": f"TCK-{self._ids.randint(10000, 99999)}",
               "return_id": f"RMA-{self._ids.randint(100000, 999999)}",
               "booking_id": f"BK-{self._ids.randint(100000, 999999)}",
               "claim_id": f"WC-{self._ids.randint(100000, 999999)}"}  # fmt: skip
        utter = "utter_default" if self._fires("bot_uttered") else f"utter_{step.name}_{outcome}"
        self._say(out, utter, **ids)
        if outcome == "error" or self._fires("slot_was_not_set"):
            self._handover(out, "tool_error" if outcome == "error" else "other")

    def _handover(self, out: list[dict[str, Any]], reason: str) -> None:
        out.append({"event": "slot", "name": "reason", "value": reason})
        out.append({"event": "action", "name": f"action_{HANDOVER}"})
        out.append({"event": "slot", "name": f"{HANDOVER}_result", "value": "transferred"})
        self.slots[f"{HANDOVER}_result"] = "transferred"
        self._say(out, f"utter_{HANDOVER}_transferred")


def engine_for(procedures: Iterable[Procedure], tools: Iterable[Tool], documents: Iterable[Document],
               defects: Defects | None = None) -> FlowEngine:  # fmt: skip
    """A flow engine over a project's inputs."""
    return FlowEngine(list(procedures), list(tools), list(documents), defects)
