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

Each step cites the sentences it comes from (`ProcedureStep.sources`: "file: sentence"). What cannot be
read (a tool a policy names that the project lacks) and steps that contradict each other come back as
located warnings ("file § section: ...", policy_checks.py), never silently and never a crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evalcore.documents.sentences import split_sentences
from evalcore.generators.procedure.policy_checks import missing_tools, refusal_conflicts, status_conflicts
from evalcore.models import Document, DocumentKind, Procedure, ProcedureStep, Tool

READ_VERBS = frozenset({"get", "find", "lookup", "look", "search", "list", "read", "show", "view", "fetch"})
# reads that are a customer's task of their own (track a parcel, check stock): a procedure, no confirmation
TASK_READS = frozenset({"track", "check"})
# "transfer" alone would take a money transfer (transfer_between_accounts) for a hand-over
_HANDOVER = re.compile(r"transfer_to|hand_?over|escalat|human|staff", re.IGNORECASE)
_IDENTIFY = re.compile(r"\bidentif|\bverify|\bauthenticat", re.IGNORECASE)
_CONFIRM = re.compile(r"\bconfirm|explicit yes", re.IGNORECASE)
_REFUSE = re.compile(r"\brefuse|\bnever\b|\bdo not\b", re.IGNORECASE)


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
    statuses = _statuses([d for d in documents if d.kind == DocumentKind.table])
    reading.warnings += missing_tools(sentences, set(by_name))
    reading.warnings += status_conflicts(sentences, {t.name for t in named}, statuses)
    reading.warnings += refusal_conflicts(sentences, {t.name for t in named})
    covered = {api for p in procedures for api in p.apis}
    taken = {p.name for p in procedures}
    identify = [s for s in sentences if _IDENTIFY.search(s.text) or _IDENTIFY.search(s.section)]
    identifier = next((t for s in identify for t in named if is_read(t) and t.name in s.text), None)
    handover = next((t for t in named if is_handover(t)), None)
    confirms = [s for s in sentences if _CONFIRM.search(s.text)]
    for task in named:
        if task.name in covered or task.name in taken or is_handover(task) or task is identifier:
            continue
        if is_read(task):
            continue
        lookup = next(
            (t for t in named if is_read(t) and t is not identifier and _shared(t, task)),
            None,
        )
        reading.procedures.append(
            _procedure(task, identifier, lookup, handover, sentences, statuses, confirms, identify)
        )
    columns = {c for d in documents if d.kind == DocumentKind.table for c in d.columns}
    for name in dict.fromkeys(api for p in reading.procedures for api in p.apis):
        tool = by_name[name]
        if tool.returns is None and not set(_required(tool)) & columns:
            reading.warnings.append(
                f"tool {name}: no return schema and no table to build its results from; its results in "
                "these tests carry only the outcome"
            )
    return reading


def _identify_steps(
    identifier: Tool, identify: list[_Sentence], sentences: list[_Sentence], handover: Tool | None
) -> list[ProcedureStep]:
    """Ask for the identifying fields, then identify the customer (not found: check again, then hand over)."""
    give_up = f" After two failed tries, call {handover.name}." if handover else ""
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
            "found": "Note the customer id: the customer is identified.",
            "not_found": "Say that no account was found and ask the customer to check the details "
            "once more." + give_up,
        },
        sources=[s.cite() for s in _mentions(sentences, identifier.name)[:3]],
    )
    return [ask, call]


def _lookup_steps(
    lookup: Tool, task: Tool, about: list[_Sentence], sentences: list[_Sentence], statuses: set[str]
) -> list[ProcedureStep]:
    """Ask which record, then look it up and check its status against the statuses the policy allows."""
    shared = _shared(lookup, task)
    allowed = sorted(
        {
            v
            for s in about
            if "status" in s.text.lower()
            for v in statuses
            if re.search(rf"\b{v}\b", s.text.lower())
        }
    )
    record = shared[0].removesuffix("_id").replace("_", " ") if shared else "record"
    ask = ProcedureStep(
        kind="message", text=f"Ask which {record} the request is about ({', '.join(shared)})."
    )
    needed = " or ".join(allowed) or "one that allows the request"
    outcomes = {"found": f"The {record} belongs to the customer and its status is {needed}: go on."}
    if allowed:
        outcomes["status_not_allowed"] = (
            f"Refuse: the request needs the status {needed}. Say which status the {record} has and "
            "what is still possible; change nothing."
        )
    outcomes["not_found"] = (
        f"Say that no such {record} is on the customer's account; reveal nothing about it."
    )
    status_cites = [s.cite() for s in about if "status" in s.text.lower()][:3]
    call = ProcedureStep(
        kind="api",
        api=lookup.name,
        text=f"Look the {record} up and check its status against the policy.",
        outcomes=outcomes,
        sources=status_cites or [s.cite() for s in _mentions(sentences, lookup.name)[:2]],
    )
    return [ask, call]


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
    results = _results(task) or ["done", "error"]
    outcomes = {results[0]: "Tell the customer the result; the request is done."}
    for other in results[1:]:
        outcomes[other] = (
            f"Tell the customer what the error '{other.replace('_', ' ')}' means; change nothing."
        )
    return ProcedureStep(
        kind="api",
        api=task.name,
        text="Make the request once, with the values the customer confirmed.",
        outcomes=outcomes,
        sources=[s.cite() for s in about[:3]],
    )


def _handover_step(handover: Tool, sentences: list[_Sentence]) -> ProcedureStep:
    """A person takes over when identification failed twice or the customer insists on what is not allowed."""
    return ProcedureStep(
        kind="api",
        api=handover.name,
        text="Only if identification failed twice or the customer insists on what the policy does "
        "not allow: summarise the request for a person.",
        outcomes={
            r: "Tell the customer a person takes over." for r in (_results(handover) or ["transferred"])
        },
        sources=[s.cite() for s in _mentions(sentences, handover.name)[:3]],
    )


def _procedure(
    task: Tool,
    identifier: Tool | None,
    lookup: Tool | None,
    handover: Tool | None,
    sentences: list[_Sentence],
    statuses: set[str],
    confirms: list[_Sentence],
    identify: list[_Sentence],
) -> Procedure:
    """One procedure for `task`, in stages: identify, look the record up, ask for the details, confirm (a
    consequential task), make the request, hand over."""
    about = _mentions(sentences, task.name)
    consequential = task.name.lower().split("_")[0] not in TASK_READS
    steps: list[ProcedureStep] = []
    if identifier is not None:
        steps += _identify_steps(identifier, identify, sentences, handover)
    if lookup is not None:
        steps += _lookup_steps(lookup, task, about, sentences, statuses)
    # the record looked up stands for the first parameter it names (a transfer's from_account_id, not its
    # to_account_id, which the customer still gives)
    looked_up = _shared(lookup, task) if lookup else []
    taken = [next(p for p in _required(task) if p == q or p.endswith(f"_{q}")) for q in looked_up]
    others = [p for p in _required(task) if p not in taken]
    if others:
        text = f"Ask for the details of the request: {', '.join(others).replace('_', ' ')}."
        steps.append(ProcedureStep(kind="message", text=text, sources=[s.cite() for s in about[:2]]))
    if consequential and confirms:
        steps += _confirm_steps(confirms)
    steps.append(_task_step(task, about))
    if handover is not None:
        steps.append(_handover_step(handover, sentences))
    return Procedure(
        name=f"policy_{task.name}",
        intent=task.name.replace("_", " "),
        description=f"{task.description} Written from the policy: " + "; ".join(s.cite() for s in about[:2]),
        steps=steps,
    )
