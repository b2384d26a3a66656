"""Conversations from sampled paths (seed 001, Section 3.8, prompt A.6; issue 17, item 6).

The LLM task `generate_conversation` is one-shot as A.6: a conversation graph, the APIs and a sampled
path in, the conversation out, under A.6's conditions. Its offline implementation writes the path's
nodes in order: agent nodes as assistant turns, the step said as an utterance (utterances.py: "Ask for
the dates" -> "Could you tell me the dates?"); customer nodes as user turns (the opening states the
intent; a customer who "gives the details asked for" answers only the parameters of the path's coming API
calls that the agent's last turn asked for; noise messages as they are); api nodes as a `tool_call` turn
with its arguments and a `tool_result` turn carrying the outcome on the path's next edge as `result` and
the other fields of the tool's `returns` schema. Values come from the project's tables where a column has
the parameter's name, else from the schema, are kept for the whole conversation and kept coherent (a
range's end after its start, an adult's age, the email made from the name); a call's parameter nobody
stated takes a field of an earlier API output of that name (the SKU an order lookup returned).

`conversation_problems` checks A.6's conditions on any generated conversation: an API output after every
call, customer and agent alternating (tool turns belong to the agent), the agent acting on every API
output, arguments that respect the tool's parameter types. A conversation that breaks one is kept with the
reasons in its metadata and not cut into tests.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import networkx as nx
from pydantic import Field

from evalcore.generators.procedure.graphs import Graph
from evalcore.generators.procedure.noise import STEER_BACK
from evalcore.generators.procedure.utterances import agent_utterance, asked_parameters
from evalcore.inputs.tool_values import (
    Table,
    check_arguments,
    consistent,
    from_tables,
    is_failure,
    result_values,
    rows_for,
    value_for,
    without_made_up,
)
from evalcore.llm.tasks import Task
from evalcore.models import Conversation, Provenance, Turn
from evalcore.models.common import Record

GENERATOR = "procedure"
GIVES_DETAILS = "Customer gives the details asked for"
_SPEAKER = {"user": "customer", "assistant": "agent"}


class GeneratedTurn(Record):
    """One turn of a generated conversation."""

    role: Literal["user", "assistant", "tool_call", "tool_result"] = Field(
        description="user (customer), assistant (agent), tool_call (agent calls an API) or tool_result."
    )
    content: str = Field(default="", description="Message text; for tool_result the API output as JSON.")
    tool_name: str | None = Field(default=None, description="API called or answering, for tool turns.")
    arguments: dict[str, Any] | None = Field(default=None, description="Arguments of a tool_call.")
    node: str | None = Field(default=None, description="Id of the path's node the turn comes from.")


class GeneratedConversation(Record):
    """A conversation written from one path of a conversation graph."""

    turns: list[GeneratedTurn] = Field(description="The turns in order.")


def _customer_text(description: str, intent: str, details: dict[str, Any]) -> str:
    if description.startswith("Customer wants to "):
        return f"Hi, I'd like to {intent}."
    if description == GIVES_DETAILS:
        if not details:
            return "Sure, go ahead."
        said = ", ".join(f"{k.replace('_', ' ')}: {json.dumps(v)}" for k, v in details.items())
        return f"Sure. {said}."
    if description.startswith("Customer acknowledges"):
        return "OK, that's fine. Please go on."
    if description == "Customer agrees":
        return "Yes, please do that."
    if description.startswith("Customer's case: "):
        case = description.removeprefix("Customer's case: ")
        if _DECLINES.search(case):  # the customer's case is saying no to what was read back
            return "No, please don't go ahead with that."
        return f"Yes, that's my situation: {_first_person(case)}."
    if description.startswith("Otherwise. "):
        return _customer_text(description.removeprefix("Otherwise. "), intent, details)
    return description


_DECLINES = re.compile(r"\bdeclin|\brefuses?\b|\b(does not|doesn't|do not|don't) (confirm|agree)", re.I)
_THIRD = {"is": "am", "has": "have", "does": "do", "was": "was"}


def _first_person(case: str) -> str:
    """A case said of "the customer" as the customer says it: "the customer has a receipt" -> "I have a
    receipt", "the customer's bike" -> "my bike"."""
    said = re.sub(r"\bthe customer's\b", "my", case, flags=re.I)

    def verb(match: re.Match[str]) -> str:
        word = match.group(1)
        base = _THIRD.get(word.lower()) or re.sub(r"(?<=[^s])s$", "", re.sub(r"ies$", "y", word))
        return f"I {base}"

    return re.sub(r"\bthe customer\s+(\w+)", verb, said, flags=re.I)


def output_fields(content: str) -> dict[str, Any]:
    """An API output's fields, and those of the first item of each list of objects in it."""
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        return {}
    if not isinstance(data, dict):
        return {}
    found = {k: v for k, v in data.items() if not isinstance(v, list | dict) and k != "result"}
    for v in data.values():
        if isinstance(v, list) and v and isinstance(v[0], dict):
            found |= {k: x for k, x in v[0].items() if k not in found and not isinstance(x, list | dict)}
    return found


def without_condition(step: str) -> str:
    """A conditional step without its condition ("If the customer declines, say that nothing changed"
    -> "say that nothing changed"), once the customer has said the case applies."""
    return re.sub(r"^\s*(?:only\s+)?(?:if|when|for|in case)\b[^,]*,\s*", "", step, count=1, flags=re.I)


def _unstated(name: str, prop: dict[str, Any], turns: list[GeneratedTurn]) -> Any:
    """The enum member of a parameter nobody stated that the conversation names ("battery safety" ->
    `battery_safety`), or None."""
    said = " ".join(t.content for t in turns).lower().replace("_", " ")
    named = [v for v in prop.get("enum") or [] if isinstance(v, str) and v.replace("_", " ").lower() in said]
    return named[0] if named else None


def _drawn_from(turns: list[GeneratedTurn], name: str) -> random.Random:
    """A random generator seeded by the conversation so far: a value nobody stated is the same in every
    conversation with this context, so the test cut there has one expected call."""
    key = json.dumps([[t.role, t.content] for t in turns] + [name], ensure_ascii=False)
    return random.Random(hashlib.sha256(key.encode()).hexdigest())


def target_record(graph: Graph, path: list[str], tables: list[Table], rng: random.Random) -> dict[str, str]:
    """The ids and status of the record a path's status branch needs (issue 26): after an api node, an
    outcome message that names statuses of a table's `status` column wants a row with one of them, or,
    on a failing outcome ("status_not_allowed"), a row with none of them; {} when the path has no such
    branch (then nothing is drawn, so projects without statuses keep their conversations)."""
    statuses = {r["status"] for _, rows in tables for r in rows if r.get("status")}
    if not statuses:
        return {}
    g = graph.digraph()
    for a, b in itertools.pairwise(path):
        if g.nodes[a]["type"] != "api":
            continue
        said = g.nodes[b]["description"].lower()
        named = {v for v in statuses if re.search(rf"\b{re.escape(v.lower())}\b", said)}
        if not named:
            continue
        refused = is_failure(g.edges[a, b]["description"])
        rows = [r for _, t in tables for r in t if r.get("status") and (r["status"] in named) != refused]
        if rows:
            row = rng.choice(rows)
            return {k: v for k, v in row.items() if k.endswith("_id") or k == "status"}
    return {}


def _named_row(rows: list[dict[str, str]], args: dict[str, Any]) -> dict[str, str] | None:
    """The row the call's arguments name: the one whose key (first column) is an argument, else the one
    that agrees with every argument the table has a column for (an e-mail); a row that merely shares a
    country or a city with some arguments is no match."""
    if not rows:
        return None
    key = next(iter(rows[0]))
    if isinstance(args.get(key), str):
        return next((r for r in rows if r[key] == args[key]), None)
    named = [k for k, v in args.items() if k in rows[0] and isinstance(v, str)]
    return next((r for r in rows if named and all(r[k] == args[k] for k in named)), None)


def from_record(output: dict[str, Any], returns: dict[str, Any], args: dict[str, Any], tables: list[Table]):
    """The output with its top-level fields taken from the table row the call's arguments name (a row
    holding an argument's value under the argument's name: the order of `order_id`), where the row has a
    column of the field's name and its value fits the return schema; a realistic record, not a draw."""
    props = returns.get("properties") or {}
    for _, rows in tables:
        row = _named_row(rows, args)
        if row is None:
            continue
        for name, spec in props.items():
            if name in output and name not in args and (listed := rows_for(spec, args, tables)) is not None:
                output[name] = listed
        for name, value in row.items():
            if name in output and name in props and name not in args:
                typed = value
                if props[name].get("type") in ("number", "integer"):
                    try:
                        typed = float(value) if props[name]["type"] == "number" else int(value)
                    except ValueError:
                        continue
                if not check_arguments({"type": "object", "properties": {name: props[name]}}, {name: typed}):
                    output[name] = typed
    return output


def render_path(
    graph: Graph,
    path: list[str],
    apis: dict[str, dict[str, Any]],
    intent: str,
    rng: random.Random,
    tables: list[Table] | None = None,
    returns: dict[str, dict[str, Any] | None] | None = None,
) -> GeneratedConversation:
    """The offline conversation of one path (module docstring): `apis` maps a tool's name to its
    parameters' schema, `returns` to its result's schema, `tables` are the project's."""
    g = graph.digraph()
    rows = tables or []
    target = target_record(graph, path, rows, rng)
    values = _Values(g, path, apis, intent, rng, rows, target=target, absent=absent_parameters(g, path, apis))
    turns = values.turns
    last_agent = ""
    for i, node_id in enumerate(path):
        kind, text = g.nodes[node_id]["type"], g.nodes[node_id]["description"]
        if kind == "customer":
            details = values.answer(last_agent, i + 1) if text == GIVES_DETAILS else {}
            turns.append(
                GeneratedTurn(role="user", content=_customer_text(text, intent, details), node=node_id)
            )
        elif kind == "agent":
            if text != STEER_BACK:  # after a detour the customer answers the procedure's question
                last_agent = text
            stated = i and g.nodes[path[i - 1]]["description"].startswith("Customer's case: ")
            content = (
                f"Sorry, I can only help you {intent} here. Let's carry on."
                if text == STEER_BACK
                else agent_utterance(without_condition(text) if stated else text)
            )
            turns.append(GeneratedTurn(role="assistant", content=content, node=node_id))
        else:
            args = values.arguments(text)
            call = GeneratedTurn(role="tool_call", tool_name=text, arguments=args, node=node_id)
            call.content = json.dumps({"name": text, "arguments": args}, ensure_ascii=False)
            outcome = g.edges[node_id, path[i + 1]]["description"] if i + 1 < len(path) else ""
            # a record whose status does not allow the request was found: its answer shows that status
            shown = not is_failure(outcome) or "status" in outcome.lower()
            output = result_values(
                (returns or {}).get(text), outcome if not shown else "found", args, rng, rows
            )
            if shown:
                output = {
                    **from_record(output, (returns or {}).get(text) or {}, args, rows),
                    "result": outcome,
                }
            output = without_made_up(output, (returns or {}).get(text), rng)
            result = json.dumps(output, ensure_ascii=False)
            values.seen.update(output_fields(result))
            turns += [call, GeneratedTurn(role="tool_result", tool_name=text, content=result, node=node_id)]
    return GeneratedConversation(turns=turns)


_NOT_FOUND = re.compile(r"not[ _]?found|no[ _]such|unknown|no[ _]match|does[ _]not[ _]exist", re.I)


def absent_parameters(g: Any, path: list[str], apis: dict[str, dict[str, Any]]) -> set[str]:
    """The parameters whose first call on the path finds nothing ("not_found"): the customer gives a value
    no table holds (a mistyped e-mail, an order number that does not exist), so the tables and the tool's
    answer agree. A value an earlier call found stays real, whatever a later call answers."""
    seen: set[str] = set()
    absent: set[str] = set()
    for a, b in itertools.pairwise(path):
        if g.nodes[a]["type"] != "api":
            continue
        missing = bool(_NOT_FOUND.search(g.edges[a, b]["description"]))
        for p in (apis.get(g.nodes[a]["description"]) or {}).get("required") or []:
            if p not in seen and missing:
                absent.add(p)
            seen.add(p)
    return absent


def _unlike(value: str, taken: set[str]) -> list[str]:
    """Values near `value` that are not in `taken`: its last number moved on ('#W8327915' -> '#W8327916'),
    a digit before an e-mail's '@', or a letter added."""
    found = []
    if "@" in value:
        local, domain = value.split("@", 1)
        found += [f"{local}{d}@{domain}" for d in range(1, 10)]
    if number := re.search(r"(\d+)(?!.*\d)", value):
        digits = number.group(1)
        for step in range(1, 20):
            moved = str((int(digits) + step) % 10 ** len(digits)).zfill(len(digits))
            found.append(value[: number.start()] + moved + value[number.end() :])
    found += [value + "x", value + "2"]
    return [f for f in found if f not in taken]


@dataclass
class _Values:
    """The values of one offline conversation: what the customer says when asked for details and the
    arguments of each call, kept consistent with what was said and returned before."""

    g: Any  # the graph as networkx (Graph.digraph)
    path: list[str]
    apis: dict[str, dict[str, Any]]
    intent: str
    rng: random.Random
    rows: list[Table]
    given: dict[str, Any] = field(default_factory=dict)  # what the customer said and the calls sent
    seen: dict[str, Any] = field(default_factory=dict)  # fields of the API outputs so far
    turns: list[GeneratedTurn] = field(default_factory=list)
    target: dict[str, Any] = field(default_factory=dict)  # the record the path's status branch needs
    absent: set[str] = field(default_factory=set)  # parameters whose value no table may hold (not found)

    def accepts(self, name: str, prop: dict[str, Any], value: Any) -> bool:
        """True when `value` fits the parameter's schema."""
        return not check_arguments({"type": "object", "properties": {name: prop}}, {name: value})

    def value(
        self, name: str, prop: dict[str, Any], fields: list[str], draw: random.Random | None = None
    ) -> Any:
        """A value for a parameter: from the project's tables, else made up; consistent with the others."""
        draw = self.rng if draw is None else draw
        drawn = (
            self.target[name] if name in self.target and self.accepts(name, prop, self.target[name]) else None
        )
        tail = name.split("_", 1)[-1]
        for _ in range(8):  # a qualified one (`to_account_id`) is another record than the one looked up
            if drawn is None or (tail != name and drawn == self.given.get(tail)):
                drawn = from_tables(name, prop, self.rows, draw, {**self.target, **self.given}, fields)
        drawn = value_for(name, prop, draw, self.intent) if drawn is None else drawn
        fitted = consistent(name, drawn, prop, self.given, draw)
        fitted = fitted if self.accepts(name, prop, fitted) else drawn
        if name in self.absent and isinstance(fitted, str):
            # no table's value of it, nor of the column it qualifies (`to_account_id`: any account id)
            columns = {name, tail, name.removesuffix("s"), tail.removesuffix("s")}
            taken = {r[c] for _, rows in self.rows for r in rows for c in columns if c in r}
            taken |= {v for v in self.given.values() if isinstance(v, str)}
            fitted = next((v for v in _unlike(fitted, taken) if self.accepts(name, prop, v)), fitted)
        return fitted

    def coming(self, start: int) -> list[dict[str, Any]]:
        """The parameter schemas of the APIs the path calls from `start` on, each once, then of those the
        graph could still call from there (a customer who declines later still gave the details asked)."""
        g = self.g
        names = [g.nodes[n]["description"] for n in self.path[start:] if g.nodes[n]["type"] == "api"]
        if start < len(self.path):
            reachable = nx.descendants(g, self.path[start])
            names += sorted(g.nodes[n]["description"] for n in reachable if g.nodes[n]["type"] == "api")
        return [self.apis.get(n) or {} for n in dict.fromkeys(names)]

    def answer(self, question: str, start: int) -> dict[str, Any]:
        """The details the customer gives to the agent's `question` (those not given yet, or not fitting)."""
        schemas = self.coming(start)
        props: dict[str, Any] = {}
        for schema in schemas:  # the API called first decides a parameter's schema
            for k, v in (schema.get("properties") or {}).items():
                props.setdefault(k, v)
        asked = asked_parameters(agent_utterance(question), schemas)
        said: dict[str, Any] = {}
        for name in sorted(asked, key=lambda n: "email" in n):  # the name first: the email is made from it
            if name not in self.given or not self.accepts(name, props[name], self.given[name]):
                self.given[name] = said[name] = self.value(name, props[name], list(props))
        return said

    def arguments(self, tool: str) -> dict[str, Any]:
        """The arguments of a call of `tool`: values said or returned before where they fit, else new."""
        schema = self.apis.get(tool) or {}
        properties = schema.get("properties") or {}
        args: dict[str, Any] = {}
        for name in sorted(schema.get("required", []), key=lambda n: "email" in n):
            prop = properties.get(name, {})
            # a value said earlier is reused only where this tool's schema accepts it ("reason" differs)
            # a qualified parameter (`from_account_id`) takes the record looked up earlier (`account_id`),
            # unless another argument of this call already took it (the transfer's other account)
            tail = name.split("_", 1)[-1]
            for source, key in ((self.given, name), (self.seen, name), (self.given, tail), (self.seen, tail)):
                if (
                    key in source
                    and self.accepts(name, prop, source[key])
                    and (key == name or source[key] not in args.values())
                ):
                    args[name] = source[key]
                    break
            else:
                args[name] = self.given[name] = _unstated(name, prop, self.turns) or self.value(
                    name, prop, list(properties), _drawn_from(self.turns, name)
                )
        self.given.update(args)
        return args


def _offline(inputs: dict[str, Any], rng: random.Random) -> GeneratedConversation:
    graph = Graph.model_validate(inputs["graph"])
    apis = {t["name"]: t["parameters"] for t in inputs["apis"]}
    returns = {t["name"]: t.get("returns") for t in inputs["apis"]}
    tables = [(name, rows) for name, rows in inputs.get("tables") or []]
    return render_path(graph, inputs["path"], apis, inputs["intent"], rng, tables, returns)


GENERATE_CONVERSATION = Task(
    "generate_conversation",
    GeneratedConversation,
    _offline,
    prompt="generate_conversation.md",
    max_tokens=4000,
)


def conversation_problems(turns: list[GeneratedTurn], apis: dict[str, dict[str, Any]]) -> list[str]:
    """The A.6 conditions the conversation breaks (module docstring); empty when it keeps them all."""
    problems: list[str] = []
    for i, turn in enumerate(turns):
        after = turns[i + 1] if i + 1 < len(turns) else None
        if turn.role == "tool_call":
            if after is None or after.role != "tool_result" or after.tool_name != turn.tool_name:
                problems.append(f"turn {i}: the call to {turn.tool_name} has no API output after it")
            if turn.tool_name not in apis:
                problems.append(f"turn {i}: unknown API {turn.tool_name}")
            else:
                for problem in check_arguments(apis[turn.tool_name], turn.arguments or {}):
                    problems.append(f"turn {i}: {turn.tool_name} {problem}")
        if turn.role == "tool_result" and (after is None or after.role not in ("assistant", "tool_call")):
            problems.append(f"turn {i}: the agent does not act on the output of {turn.tool_name}")
        if turn.role in ("user", "assistant") and i and turns[i - 1].role == turn.role:
            problems.append(f"turn {i}: two {_SPEAKER[turn.role]} messages in a row")
    if turns and turns[-1].role == "user":
        problems.append("the conversation ends on a customer message")
    return problems


def to_conversation(
    conversation_id: str,
    generated: GeneratedConversation,
    *,
    graph: Graph,
    path: list[str],
    problems: list[str],
    provenance: Provenance,
) -> Conversation:
    """The stored Conversation: tool turns as `tool_call`/`tool_result`, the path and noise in metadata."""
    noise = {n.node_id for n in graph.nodes if n.noise}
    turns = [
        Turn(
            index=i,
            role=t.role,
            content=t.content,
            tool_name=t.tool_name,
            arguments=t.arguments,
            metadata={"node": t.node, "noise": t.node in noise} if t.node else {},
        )
        for i, t in enumerate(generated.turns)
    ]
    metadata = {"procedure": graph.procedure, "path": path, "noise": sorted(noise & set(path))}
    if problems:
        metadata["problems"] = problems
    return Conversation(
        id=conversation_id, generator=GENERATOR, turns=turns, metadata=metadata, provenance=provenance
    )
