"""Flowgraph of a procedure (seed 001, Section 3.4, prompt A.4; issue 17, item 2).

The LLM task `generate_flowgraph` is one-shot as A.4 (the example is in the prompt); its offline
implementation compiles the procedure's structured steps:

- each message step is a message node (the first one the start_message), each api step an api node whose
  description is the tool's name;
- an api step's outcomes are its out-edges (labelled with the outcome's name) to a message node saying what
  the agent does next. The first outcome is the one the procedure goes on with (the sample's procedures
  list the success first); the others end the conversation there, unless their text names the tool of a
  later api step ("call transfer_to_human"), which they then lead to; an api step without outcomes takes
  the `result` enum of the tool's return schema;
- a step whose text opens with a condition ("Only if ...", "If ...", "For ...", "When ...") is a branch:
  the step before it leads both to it (edge: the condition) and past it. A conditional message step
  rejoins the procedure, unless it says to end the conversation (a customer who declines to confirm);
  a conditional api step (a hand-over) ends it;
- where a branch has nothing left to go on to, one closing end_message node ends it; every other node
  left without a successor is an end_message.

- an outcome that sends the agent back (it names the tool of this or an earlier api step and says so
  with "again", "re-run", "retry", "go back" or "step N": "Re-run
  check_rental_availability ...", "Go back to step 1 and call check_stock again", or "step N" of an earlier
  api step) is a bounded retry, since the seed's graphs have no cycle: the loop is unrolled once, to a
  second call node of that API (directly, or after the outcome's message when it asks the customer
  something first), whose outcomes are the earlier step's outcomes and end the conversation there.

Edges otherwise only point forward in the procedure, so a compiled graph has no cycle; a procedure that
names an unknown tool compiles, and the rule check lists the unknown tool.
"""

from __future__ import annotations

import random
import re
from typing import Any

from evalcore.generators.procedure.graphs import Edge, Graph, GraphBody, Node, checked
from evalcore.llm.tasks import Task
from evalcore.models import Procedure, ProcedureStep, Tool

_CONDITION = re.compile(r"^\s*(only\s+(if|for|when)|if|for|when|in case)\b[\s,]*", re.IGNORECASE)
CLOSING = "Ask whether there is anything else, then close the conversation."
_STEP = re.compile(r"\bstep\s+(\d+)\b", re.IGNORECASE)
_AGAIN = re.compile(r"\bagain\b|\bre-?(run|try|check)\b|\bretry\b|\bgo back\b|\bstep\s+\d+|\brepeat", re.I)
_ENDS = re.compile(r"\bend the conversation\b", re.IGNORECASE)


def is_conditional(step: ProcedureStep) -> bool:
    """Whether the step opens with a condition, i.e. runs only in some conversations."""
    return bool(_CONDITION.match(step.text))


def condition_of(step: ProcedureStep) -> str:
    """The condition as the customer's situation: the step's first sentence without its opening word."""
    first = re.split(r"(?<=[.;:])\s", step.text.strip(), maxsplit=1)[0].rstrip(".;:")
    # the condition ends at its comma: "If the customer declines, say that ..." -> "the customer declines"
    rest = _CONDITION.sub("", first, count=1).split(", ", 1)[0]
    return f"Customer's case: {rest[:1].lower()}{rest[1:]}" if rest else "Customer's case applies"


def _reply(step: ProcedureStep) -> str:
    """The customer's reply to a message step: the details it asked for, or an acknowledgement."""
    asks = re.search(r"\bask\b|\bcollect\b|\?", step.text, re.IGNORECASE)
    return "Customer gives the details asked for" if asks else "Customer acknowledges and goes on"


def _outcomes(step: ProcedureStep, tools: dict[str, Tool]) -> dict[str, str]:
    if step.outcomes:
        return dict(step.outcomes)
    tool = tools.get(step.api or "")
    result = ((tool.returns or {}).get("properties") or {}).get("result") or {} if tool else {}
    names = result.get("enum") or ["done"]
    return {str(name): f"Tell the customer the result ({name}) and what it means." for name in names}


def _named_step(text: str, steps: list[ProcedureStep], before: int, after: int = -1) -> int | None:
    """The index of the api step in (after, before] the outcome text names (its tool, or "step N"), or
    None."""
    for j in range(before, after, -1):
        if steps[j].api and re.search(rf"\b{re.escape(steps[j].api)}\b", text):
            return j
    for number in _STEP.findall(text):
        j = int(number) - 1
        if after < j <= before and steps[j].kind == "api":
            return j
    return None


def _asks_first(text: str, tool: str) -> bool:
    """Whether the outcome asks the customer something before the retried call ("Ask the customer to
    re-check the number, then call lookup_order again")."""
    head = text.split(tool, 1)[0]
    return bool(re.search(r"\bask\b|\?", head, re.IGNORECASE))


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.edges: list[Edge] = []
        self.closing: str | None = None

    def node(self, kind: str, description: str) -> str:
        node_id = f"N{len(self.nodes) + 1}"
        self.nodes.append(Node(node_id=node_id, node_type=kind, node_description=description))
        return node_id

    def edge(self, source: str, target: str, description: str) -> None:
        edge = Edge(edge_id=f"E{len(self.edges) + 1}", edge=(source, target), edge_description=description)
        self.edges.append(edge)

    def close(self) -> str:
        if self.closing is None:
            self.closing = self.node("end_message", CLOSING)
        return self.closing


def compile_flowgraph(procedure: Procedure, tools: list[Tool]) -> GraphBody:
    """The flowgraph the procedure's steps describe (module docstring)."""
    by_name = {t.name: t for t in tools}
    steps = procedure.steps
    b = _Builder()
    start: str | None = None
    if steps[0].kind == "api":  # the agent must open the conversation before it calls anything
        start = b.node("start_message", procedure.description or f"Offer help to {procedure.intent}.")
    entry = [
        b.node("api", s.api or "") if s.kind == "api" else b.node("message", s.text.strip()) for s in steps
    ]
    if start is not None:
        b.edge(start, entry[0], f"Customer asks to {procedure.intent}")
    conditional = [i > 0 and is_conditional(s) for i, s in enumerate(steps)]
    for i, step in enumerate(steps):
        exits = [entry[i]]
        if step.kind == "api":
            exits = []
            for k, (name, text) in enumerate(_outcomes(step, by_name).items()):
                # naming a tool is no retry by itself ("the order lookup_order found"): it must say so
                earlier = _named_step(text, steps, i) if _AGAIN.search(text) else None
                if earlier is not None:
                    _retry(b, entry[i], name, text, steps[earlier], by_name)
                    continue
                outcome = b.node("message", text.strip())
                b.edge(entry[i], outcome, name)
                later = _named_step(text, steps, len(steps) - 1, i)
                if later is not None:
                    b.edge(outcome, entry[later], "Customer agrees")
                elif k == 0 and not conditional[i]:
                    exits.append(outcome)
        if conditional[i] and step.kind == "message" and _ENDS.search(step.text):
            b.edge(entry[i], b.close(), _reply(step))
            continue
        branches = []
        following = None
        for j in range(i + 1, len(steps)):
            if not conditional[j]:
                following = j
                break
            branches.append(j)
        for x in exits:
            for j in branches:
                b.edge(x, entry[j], condition_of(steps[j]))
            if following is not None:
                b.edge(x, entry[following], ("Otherwise. " if branches else "") + _reply(step))
            elif branches:
                b.edge(x, b.close(), "Otherwise. " + _reply(step))
    sources = {e.edge[0] for e in b.edges}
    nodes = []
    for n in b.nodes:
        kind = n.node_type
        if n.node_id == entry[0] and start is None:
            kind = "start_message"
        elif kind == "message" and n.node_id not in sources:
            kind = "end_message"
        nodes.append(n.model_copy(update={"node_type": kind}))
    return GraphBody(nodes=nodes, edges=b.edges)


def _retry(b: _Builder, call: str, name: str, text: str, step: ProcedureStep, tools: dict[str, Tool]) -> None:
    """The outcome `name` of `call` as a retry of `step`'s API, unrolled once (module docstring)."""
    api = step.api or ""
    again = b.node("api", api)
    if _asks_first(text, api):
        asked = b.node("message", text.strip())
        b.edge(call, asked, name)
        b.edge(asked, again, "Customer gives the details asked for")
    else:
        b.edge(call, again, name)
    for outcome, said in _outcomes(step, tools).items():
        b.edge(again, b.node("message", said.strip()), outcome)


def _offline(inputs: dict[str, Any], rng: random.Random) -> GraphBody:
    procedure = Procedure.model_validate(inputs["procedure"])
    return compile_flowgraph(procedure, [Tool.model_validate(t) for t in inputs["apis"]])


GENERATE_FLOWGRAPH = Task(
    "generate_flowgraph", GraphBody, _offline, prompt="generate_flowgraph.md", max_tokens=4000
)


def flowgraph_inputs(procedure: Procedure, tools: list[Tool]) -> dict[str, Any]:
    """The task's inputs: the procedure and the tools it calls (those the project has)."""
    wanted = set(procedure.apis)
    return {
        "procedure": procedure.model_dump(mode="json"),
        "apis": [t.model_dump(mode="json") for t in tools if t.name in wanted],
    }


def build_flowgraph(procedure: Procedure, tools: list[Tool], body: GraphBody) -> Graph:
    """The flowgraph with its broken rules listed; api nodes must name one of the project's tools."""
    return checked("flowgraph", procedure.name, body, [t.name for t in tools])
