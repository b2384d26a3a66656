"""Procedures read from a project's policy documents, offline (issue 26, item 1).

A project with policy documents that name its tools, and no hand-written procedure calling a tool, gets
one procedure per such tool (an intent per task tool), written from the policy's own sentences:

- the task tools are the tools a policy names that are neither a read (by the first word of their name:
  get, find, search...), nor a hand-over; a read that is a task of its own (track_shipment) counts;
- identification: the first tool named in a sentence about identifying the customer is called first;
- the record's lookup: a read tool that takes a required parameter of the task tool (get_order for
  cancel_order's order_id) is called before it, with a branch for a status the policy does not allow
  the task for (the statuses a sentence naming the task tool and "status" lists, among a table's
  `status` column) and one for a record that is not found;
- confirmation: when the policy asks for an explicit yes before the task tool's kind of action, the
  agent reads back the change and asks for it, and a customer who declines ends the conversation;
- hand-over: the policy's hand-over tool closes the failures it names.

A policy written for people, that names no tool (a section "Cancel pending order" saying "An order can
only be cancelled if its status is 'pending'"), is read by its words (policy_words.py): a tool the policy
does not name is about the sections whose heading carries its verb and objects, and the sentences that
carry both; the identifying tool is the read whose parameters the identification (or "must first obtain")
sentence names; a task's record is looked up with the project's read tool that takes its id.

Each step cites the sentences it comes from (`ProcedureStep.sources`: "file: sentence"). What cannot be
read (a tool a policy names that the project lacks) and steps that contradict each other come back as
located warnings ("file § section: ...", policy_checks.py), never silently and never a crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evalcore.documents.sentences import split_sentences
from evalcore.generators.procedure.policy_checks import missing_tools, refusal_conflicts, status_conflicts
from evalcore.generators.procedure.policy_words import (
    PREREQUISITE,
    heading_tools,
    identifying_tool,
    parameter_said,
    sentence_about,
)
from evalcore.inputs.tool_values import returns_from_tables
from evalcore.models import Document, DocumentKind, Procedure, ProcedureStep, Tool

READ_VERBS = frozenset({"get", "find", "lookup", "look", "search", "list", "read", "show", "view", "fetch"})
# reads that are a customer's task of their own (track a parcel, check stock): a procedure, no confirmation
TASK_READS = frozenset({"track", "check"})
# "transfer" alone would take a money transfer (transfer_between_accounts) for a hand-over
_HANDOVER = re.compile(r"transfer_to|hand_?over|escalat|human|staff", re.IGNORECASE)
_IDENTIFY = re.compile(r"\bidentif|\bverify|\bauthenticat", re.IGNORECASE)
_CONFIRM = re.compile(r"\bconfirm|explicit yes", re.IGNORECASE)
_REFUSE = re.compile(r"\brefuse|\bnever\b|\bdo not\b", re.IGNORECASE)
# where a sentence turns from the condition to what the action does ("... if its status is 'pending'; the
# status will be changed to 'cancelled'"): a status named after it is a result, not a condition
_RESULT = re.compile(r"\b(will|changed to|set to|becomes?|kept)\b", re.IGNORECASE)


@dataclass
class PolicyReading:
    """The procedures read from the policies, and what could not be read, with where."""

    procedures: list[Procedure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Sentence:
    where: str
    text: str
    section: str = ""

    def cite(self) -> str:
        return f"{self.where}: {self.text}"


def _sentences(documents: list[Document]) -> list[_Sentence]:
    """Every sentence of the policy documents, a markdown line at a time (list items stay apart)."""
    found = []
    for doc in documents:
        top = section = doc.title
        for line in doc.text.splitlines():
            if line.startswith("# "):  # the document's own heading
                top = section = line.lstrip("# ").strip()
            elif line.startswith("#"):
                section = f"{top} / {line.lstrip('# ').strip()}"
            line = line.strip().lstrip("#-*| ").strip()
            for sentence in split_sentences(line) if line else []:
                found.append(_Sentence(doc.path or doc.id, sentence, section))
    return found


def is_read(tool: Tool) -> bool:
    """Whether the tool only reads, by the first word of its name."""
    return tool.name.lower().split("_")[0] in READ_VERBS


def is_handover(tool: Tool) -> bool:
    """Whether the tool hands the conversation to a person."""
    return bool(_HANDOVER.search(tool.name))


def _required(tool: Tool) -> list[str]:
    return list(tool.parameters.get("required") or [])


def _results(tool: Tool) -> list[str]:
    """The `result` values of the tool's return schema, in order (the first is its success)."""
    prop = ((tool.returns or {}).get("properties") or {}).get("result") or {}
    return [str(v) for v in prop.get("enum") or []]


def _shared(lookup: Tool, task: Tool) -> list[str]:
    """The lookup's required parameters the task also takes: by name, or as the task's qualified one
    (get_account's `account_id` is the `from_account_id` of a transfer)."""
    names = _required(task)
    return [p for p in _required(lookup) if p in names or any(n.endswith(f"_{p}") for n in names)]


def _mentions(sentences: list[_Sentence], name: str) -> list[_Sentence]:
    return [s for s in sentences if re.search(rf"\b{re.escape(name)}\b", s.text)]


def _about(
    sentences: list[_Sentence], tool: Tool, tools: list[Tool]
) -> tuple[list[_Sentence], list[_Sentence]]:
    """The sentences about a tool, those that state its rules and those that only mention it: the
    sentences naming it; for a tool the policy never names, those of the sections whose heading is about
    it (its deepest heading about any tool decides), then the other sentences carrying its verb and an
    object (policy_words.py)."""
    named = _mentions(sentences, tool.name)
    if named:
        return named, []
    in_section, elsewhere = [], []
    for s in sentences:
        headings = [h.strip() for h in s.section.split(" / ")]
        deciding = next((found for h in reversed(headings) if (found := heading_tools(h, tools))), [])
        if tool in deciding:
            in_section.append(s)
        elif sentence_about(s.text, tool):
            elsewhere.append(s)
    return in_section, elsewhere


def _allowed_statuses(about: list[_Sentence], statuses: set[str]) -> list[str]:
    """The statuses the sentences' conditions allow (a sentence naming 'status', before it says what the
    action does)."""
    return sorted(
        {
            v
            for s in about
            if "status" in _conditions(s.text).lower()
            for v in statuses
            if re.search(rf"\b{re.escape(v)}\b", _conditions(s.text).lower())
        }
    )


def _conditions(text: str) -> str:
    """The part of a sentence before it says what the action does (_RESULT)."""
    return _RESULT.split(text, maxsplit=1)[0]


def _statuses(tables: list[Document]) -> set[str]:
    return {
        row["status"].strip().lower()
        for t in tables
        if "status" in t.columns
        for row in t.rows
        if row.get("status")
    }


def read_policies(documents: list[Document], tools: list[Tool], procedures: list[Procedure]) -> PolicyReading:
    """Procedures for the task tools the policies name and no hand-written procedure calls (module
    docstring); the project's own procedures always win."""
    reading = PolicyReading()
    policies = [d for d in documents if d.kind == DocumentKind.policy]
    sentences = _sentences(policies)
    by_name = {t.name: t for t in tools}
    named = [t for t in tools if _mentions(sentences, t.name)]
    # the sentences about each tool, named or (a policy written for people) by its words: those that
    # state its rules (naming it, or in its section) and those that only mention it
    found = {t.name: _about(sentences, t, tools) for t in tools} if sentences else {}
    about = {name: rules + mentions for name, (rules, mentions) in found.items()}
    rules = {name: rules for name, (rules, _) in found.items()}
    # a tool the policy only describes is a task where the team wrote no procedure at all: beside
    # hand-written procedures, their tools say which tasks the team meant
    talked = [t for t in tools if t in named or (about.get(t.name) and not procedures)]
    statuses = _statuses([d for d in documents if d.kind == DocumentKind.table])
    reading.warnings += missing_tools(sentences, set(by_name))
    reading.warnings += status_conflicts(sentences, {t.name for t in named}, statuses)
    reading.warnings += refusal_conflicts(sentences, {t.name for t in named})
    covered = {api for p in procedures for api in p.apis}
    taken = {p.name for p in procedures}
    identify = [s for s in sentences if _IDENTIFY.search(s.text) or _IDENTIFY.search(s.section)]
    identifier = next((t for s in identify for t in named if is_read(t) and t.name in s.text), None)
    if identifier is None:  # a policy naming no identifying tool: the read whose parameters it names
        reads = [t for t in tools if is_read(t) and not is_handover(t)]
        identifier = identifying_tool([s.text for s in identify], reads)
        if identifier is None:
            first = [s for s in sentences if PREREQUISITE.search(s.text)]
            identifier = identifying_tool([s.text for s in first], reads)
            identify = [s for s in first if identifier and _mentions_parameters(s, identifier)] or identify
    handover = next((t for t in talked if is_handover(t)), None)
    tables = [(d.id, d.rows) for d in documents if d.kind == DocumentKind.table]
    # what identifying the customer tells the agent (the id a lookup or task takes), not asked again
    known: set[str] = set()
    if identifier is not None:
        returns = identifier.returns or returns_from_tables(identifier.parameters, tables) or {}
        known = set(_required(identifier)) | {f for f in returns.get("properties") or {} if f.endswith("_id")}
    confirms = [s for s in sentences if _CONFIRM.search(s.text)]
    for task in talked:
        if task.name in covered or task.name in taken or is_handover(task) or task is identifier:
            continue
        if is_read(task):
            continue
        lookup = next(
            (t for t in named if is_read(t) and t is not identifier and _shared(t, task)),
            None,
        )
        if lookup is None and task not in named:  # the project's read that takes the task's record id
            lookup = next(
                (
                    t
                    for t in tools
                    if is_read(t) and t is not identifier and any(p.endswith("_id") for p in _shared(t, task))
                ),
                None,
            )
        # the statuses its rules allow; only a mention when no rule names one
        allowed = _allowed_statuses(rules.get(task.name, []), statuses) or _allowed_statuses(
            about.get(task.name, []), statuses
        )
        reading.procedures.append(
            _procedure(
                task, identifier, lookup, handover, sentences, allowed, confirms, identify, about, known
            )
        )
    for name in dict.fromkeys(api for p in reading.procedures for api in p.apis):
        tool = by_name[name]
        if tool.returns is None and returns_from_tables(tool.parameters, tables) is None:
            reading.warnings.append(
                f"tool {name}: no return schema and no table to build its results from; its results in "
                "these tests carry only the outcome"
            )
    return reading


def _mentions_parameters(sentence: _Sentence, tool: Tool) -> bool:
    """Whether the sentence names every required parameter of the tool."""
    return all(parameter_said(sentence.text, p) is not None for p in _required(tool))


def _identify_steps(
    identifier: Tool, identify: list[_Sentence], cited: list[_Sentence], handover: Tool | None
) -> list[ProcedureStep]:
    """Ask for the identifying fields, then identify the customer (not found: offer a person, where the
    policy has a hand-over; the graph has no second try, so the agent does not promise one)."""
    fields = ", ".join(_required(identifier)).replace("_", " ")
    ask = ProcedureStep(
        kind="message",
        text=f"Ask for the customer's {fields} to identify them.",
        sources=[s.cite() for s in identify[:3]],
    )
    call = ProcedureStep(
        kind="api",
        api=identifier.name,
        text="Identify the customer before anything else.",
        outcomes={
            "found": "Note the customer's id: the customer is identified.",
            "not_found": (
                "Say that no account was found with those details and offer a hand-over to a person "
                f"with {handover.name}."
                if handover
                else "Say that no account was found and ask the customer to check the details once more."
            ),
        },
        sources=[s.cite() for s in (cited or identify)[:3]],
    )
    return [ask, call]


def _lookup_steps(
    lookup: Tool,
    task: Tool,
    about: list[_Sentence],
    cited: list[_Sentence],
    allowed: list[str],
    known: set[str],
) -> list[ProcedureStep]:
    """Ask which record (unless identifying the customer gave it), then look it up and check its status
    against the statuses the policy allows."""
    shared = _shared(lookup, task)
    record = shared[0].removesuffix("_id").replace("_", " ") if shared else "record"
    ask = (
        []
        if shared and set(shared) <= known
        else [
            ProcedureStep(
                kind="message", text=f"Ask which {record} the request is about ({', '.join(shared)})."
            )
        ]
    )
    needed = " or ".join(allowed)
    outcomes = (
        {"found": f"The {record} belongs to the customer and its status is {needed}: go on."}
        if allowed
        else {"found": f"The {record} belongs to the customer: go on."}
    )
    if allowed:
        outcomes["status_not_allowed"] = (
            f"Say that the {record}'s status does not allow this request, which needs the status {needed}; "
            "change nothing."
        )
    outcomes["not_found"] = (
        f"Say that no such {record} is on the customer's account; reveal nothing about it."
    )
    status_cites = [s.cite() for s in about if "status" in s.text.lower()][:3]
    call = ProcedureStep(
        kind="api",
        api=lookup.name,
        text=f"Look the {record} up and check its status against the policy."
        if allowed
        else f"Look the {record} up.",
        outcomes=outcomes,
        sources=status_cites or [s.cite() for s in cited[:2]],
    )
    return [*ask, call]


def _confirm_steps(confirms: list[_Sentence]) -> list[ProcedureStep]:
    """Read the change back and ask for an explicit yes; a customer who declines ends the conversation."""
    read_back = ProcedureStep(
        kind="message",
        text="Read back what will change (the record, the items or details, where any refund goes) "
        "and ask the customer to confirm with an explicit yes.",
        sources=[s.cite() for s in confirms[:3]],
    )
    declined = ProcedureStep(
        kind="message",
        text="If the customer declines or does not confirm, say that nothing was changed and end the "
        "conversation.",
        sources=[s.cite() for s in confirms if _REFUSE.search(s.text) or "decline" in s.text][:2],
    )
    return [read_back, declined]


def _task_step(task: Tool, about: list[_Sentence]) -> ProcedureStep:
    """The request itself, made once, with the outcomes its return schema names."""
    results = _results(task)
    outcomes = {(results or ["done"])[0]: "Say that the request is done and what it changed."}
    for other in results[1:]:
        outcomes[other] = (
            f"Tell the customer what the error '{other.replace('_', ' ')}' means; change nothing."
        )
    if not results:  # a tool whose schema names no outcome: it is done, or it fails
        outcomes["error"] = "Say that the request could not be made; change nothing."
    return ProcedureStep(
        kind="api",
        api=task.name,
        text="Make the request once, with the values the customer confirmed.",
        outcomes=outcomes,
        sources=[s.cite() for s in about[:3]],
    )


def _handover_step(handover: Tool, cited: list[_Sentence]) -> ProcedureStep:
    """A person takes over when identification failed twice or the customer insists on what is not allowed."""
    return ProcedureStep(
        kind="api",
        api=handover.name,
        text="Only if the customer asks for a person, or the request is outside what the policy allows: "
        "summarise the request for a person.",
        outcomes={
            r: "Tell the customer a person takes over." for r in (_results(handover) or ["transferred"])
        },
        sources=[s.cite() for s in cited[:3]],
    )


def _procedure(
    task: Tool,
    identifier: Tool | None,
    lookup: Tool | None,
    handover: Tool | None,
    sentences: list[_Sentence],
    allowed: list[str],
    confirms: list[_Sentence],
    identify: list[_Sentence],
    sentences_about: dict[str, list[_Sentence]],
    known: set[str],
) -> Procedure:
    """One procedure for `task`, in stages: identify, look the record up, ask for the details, confirm (a
    consequential task), make the request, hand over."""
    about = sentences_about.get(task.name) or _mentions(sentences, task.name)
    consequential = task.name.lower().split("_")[0] not in TASK_READS
    steps: list[ProcedureStep] = []
    if identifier is not None:
        steps += _identify_steps(identifier, identify, sentences_about.get(identifier.name, []), handover)
    if lookup is not None:
        steps += _lookup_steps(lookup, task, about, sentences_about.get(lookup.name, []), allowed, known)
    # the record looked up stands for the first parameter it names (a transfer's from_account_id, not its
    # to_account_id, which the customer still gives)
    looked_up = _shared(lookup, task) if lookup else []
    taken = [next(p for p in _required(task) if p == q or p.endswith(f"_{q}")) for q in looked_up]
    others = [p for p in _required(task) if p not in taken and p not in known]
    if others:
        text = f"Ask for the details of the request: {', '.join(others).replace('_', ' ')}."
        steps.append(ProcedureStep(kind="message", text=text, sources=[s.cite() for s in about[:2]]))
    if consequential and confirms:
        steps += _confirm_steps(confirms)
    steps.append(_task_step(task, about))
    if handover is not None:
        steps.append(_handover_step(handover, sentences_about.get(handover.name, [])))
    return Procedure(
        name=f"policy_{task.name}",
        intent=task.name.replace("_", " "),
        description=f"{task.description} Written from the policy: " + "; ".join(s.cite() for s in about[:2]),
        steps=steps,
    )
