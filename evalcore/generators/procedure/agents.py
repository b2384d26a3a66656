"""Offline agents to play procedure tests against (issue 17, items 8 and 9, demo part), and the player.

- `OracleAgent` answers every test with its expected action (found by the test's context): the check
  that every metric of Table 2 can reach 100%.
- `NullAgent` always replies "OK": API recall 0, the floor.
- `DemoAgent` follows the project's procedures and knows nothing of the tests. It reads the procedure the
  customer's first message asks for (best word overlap with the procedures' intents), compiles its
  flowgraph (flowgraph.compile_flowgraph, as the offline generator does) and replays the context on it:
  the customer's replies choose an edge out of the step it last carried out, an API output chooses the
  edge of its outcome, a customer message sharing nothing with the procedure and giving nothing asked
  for is out of procedure (it steers back to the procedure). Its next action is the step it reaches: a
  reply in its own words (`in_own_words`: its own phrasings of the step's verbs, words swapped for
  synonyms, codes in brackets dropped, at most the step's first three sentences: a real agent's
  paraphrase, not the generator's wording, so its correct-reply figure is not circular), or the API call
  with the values the customer stated or an earlier API output gave (a value never given is made up
  from the tool's schema). It makes the mistakes tool-using agents make, at seeded rates: skips a lookup
  (assumes the first call of a conversation went well and says so), sends a wrong parameter
  value, calls the next API where it should ask the customer, and goes off script; and it misses an
  injected message that shares words with the procedure (answers it as a step of the procedure).

`play(tests, agent, tools)` gives each test's context and the tool schemas to the agent and records its
action.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

import networkx as nx

from evalcore.documents.retrieval import tokenize
from evalcore.generators.procedure.apis import known_tools
from evalcore.generators.procedure.conversations import GENERATOR, output_fields, without_condition
from evalcore.generators.procedure.flowgraph import build_flowgraph, compile_flowgraph
from evalcore.generators.procedure.graphs import Graph
from evalcore.generators.procedure.utterances import agent_utterance
from evalcore.inputs.tool_values import check_arguments, value_for
from evalcore.items.store_ops import list_tests
from evalcore.models import Procedure, Test, Tool, Turn, TurnRole
from evalcore.models.common import content_hash
from evalcore.models.items import Action, expected_action
from evalcore.targets.agents import Agent, AgentSetting, register_agent

# Seeded mistake rates of the demo agent, chosen so each mistake shows in its own metric on the sample.
SKIP_LOOKUP = 0.3  # of first API calls in a conversation: replies as if it had succeeded (API recall)
WRONG_PARAMETER = 0.2  # of API calls: one argument gets another valid value (correct parameters)
CALL_INSTEAD_OF_ASK = 0.15  # of replies that ask the customer: calls the next API instead (reply recall)
OFF_SCRIPT_REPLY = 0.15  # of replies: a generic answer instead of the procedure's step (correct reply)
_OPENERS = ("", "Sure. ", "Of course! ", "Thanks for waiting. ", "Happy to help. ")
# The demo agent's own ways of saying a step's verb: {rest} is what follows it, pronouns already swapped.
_OWN_FRAMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        r"ask the customer to|ask them to",
        ("Would you mind if I asked you to {rest}?", "Can you {rest}, please?"),
    ),
    (r"ask for|ask", ("Can you let me know {rest}?", "I'll need to know {rest}.", "May I ask {rest}?")),
    (r"collect", ("I'll just need {rest}.", "Can I get {rest}?")),
    (r"explain ([^:]+):", ("Just so you know, {rest}.", "A quick note on {1}: {rest}.")),
    (r"explain how", ("This is how {rest}.", "Let me walk you through how {rest}.")),
    (r"explain", ("I should mention {rest}.", "To be clear, {rest}.")),
    (r"give", ("I have {rest} for you.", "I can share {rest} now.")),
    (r"offer", ("Would {rest} work for you?", "One option is {rest}.")),
    (r"suggest", ("My recommendation is {rest}.", "I'd go with {rest}.")),
    (r"tell the customer|tell them|say", ("{rest}.", "Good to know: {rest}.")),
    (r"check|verify|find|look up", ("I'll check {rest}.", "Let's look at {rest}.")),
    (r"confirm", ("Just to confirm, {rest}.", "I can confirm {rest}.")),
    (r"point out|remind (?:them|the customer)|note", ("Keep in mind {rest}.", "Please be aware {rest}.")),
    (r"apologise|apologize", ("My apologies{rest}.",)),
    (r"do not reveal|don't reveal", ("I'm not able to share {rest}.",)),
)
_OWN = [(re.compile(rf"^(?:{p})(?![A-Za-z])\s*", re.IGNORECASE), frames) for p, frames in _OWN_FRAMES]
_SYNONYMS = {
    "dates": "days",
    "preferred": "favourite",
    "store": "shop",
    "number": "no.",
    "problem": "issue",
    "bike": "bicycle",
    "phone": "phone number",
    "booking": "reservation",
    "customer": "you",
    "item": "product",
    "within": "inside",
    "details": "info",
    "email": "email address",
    "order": "purchase",
}
_YOU = ((r"\bthe customer's\b|\btheir\b", "your"), (r"\bthe customer\b|\bthey\b|\bthem\b", "you"))
_GENERIC = (
    "Let me know if there's anything else I can do for you today.",
    "Thanks for reaching out, I hope you have a lovely day.",
    "I understand your frustration, and I appreciate your patience.",
)
_ACKNOWLEDGES = re.compile(r"^\s*(yes|yeah|ok|okay|sure|fine|no|please|great|thanks)\b", re.IGNORECASE)
# "order id: "WEB-1"", "quantity: 2": how a customer states a value (the offline conversations' form)
_VALUE = r"\"(?:[^\"\\]|\\.)*\"|\[[^\]]*\]|-?\d+(?:\.\d+)?|true|false|null"  # JSON string, list, number ...
_STATED = re.compile(rf"([A-Za-z][A-Za-z _]*?):\s*({_VALUE})")
_OFF_PROCEDURE = "off-procedure"
CASE = "Customer's case"  # how a compiled flowgraph labels a conditional branch (flowgraph.condition_of)


def context_key(context: Sequence[Turn]) -> str:
    """A hash of a context's turns (what the oracle looks its answers up by)."""
    return content_hash([[t.role.value, t.content, t.tool_name, t.arguments] for t in context])


class NullAgent:
    """Always replies "OK"."""

    name = "null"

    def act(self, context: Sequence[Turn], tools: Sequence[Tool]) -> Action:
        """ "OK"."""
        return Action(kind="reply", text="OK")


class OracleAgent:
    """Answers every test with its expected action; a context it was not given gets "OK"."""

    name = "oracle"

    def __init__(self, tests: Sequence[Test]) -> None:
        self._answers = {context_key(t.context): expected_action(t) for t in tests}

    def act(self, context: Sequence[Turn], tools: Sequence[Tool]) -> Action:
        """The expected action of the test with this context."""
        return self._answers.get(context_key(context), Action(kind="reply", text="OK"))


def _words(text: str) -> set[str]:
    return set(tokenize(text))


def _overlap(text: str, other: str) -> float:
    """Share of `other`'s words that `text` has (0 when `other` has none)."""
    theirs = _words(other)
    return len(_words(text) & theirs) / len(theirs) if theirs else 0.0


def _said(text: str, step: str) -> float:
    """How much of a step `text` says: of the step's words, or of its utterance (conversations.py says a
    conditional step without the condition the customer just stated, and no "end the conversation")."""
    return max(
        _overlap(text, step),
        _overlap(text, agent_utterance(step)),
        _overlap(text, agent_utterance(without_condition(step))),
    )


def stated_values(context: Sequence[Turn]) -> dict[str, Any]:
    """The values the conversation has given so far: stated by the customer ("order id: "WEB-1""), sent
    in earlier calls and returned by earlier API outputs; later ones win, an output's never over what was
    said or sent."""
    values: dict[str, Any] = {}
    for turn in context:
        if turn.role == TurnRole.tool_result:
            values = {**output_fields(turn.content), **values}
        if turn.role == TurnRole.user:
            for name, raw in _STATED.findall(turn.content):
                values[name.strip().lower().replace(" ", "_")] = json.loads(raw)
        elif turn.role == TurnRole.tool_call:
            values.update(turn.arguments or {})
    return values


class DemoAgent:
    """Follows the project's procedures with seeded, realistic mistakes (module docstring)."""

    name = "demo"

    def __init__(self, procedures: Sequence[Procedure], tools: Sequence[Tool], seed: int = 0) -> None:
        self.seed = seed
        self.tools = {t.name: t for t in tools}
        self.flows: dict[str, tuple[Procedure, Graph]] = {}
        for procedure in procedures:
            flow = build_flowgraph(procedure, list(tools), compile_flowgraph(procedure, list(tools)))
            if flow.valid:  # a procedure it cannot follow is one it does not know
                self.flows[procedure.name] = (procedure, flow)

    def procedure_for(self, message: str) -> tuple[Procedure, Graph] | None:
        """The procedure whose intent the message asks for best (None when it shares no word with any)."""
        scored = [
            (_overlap(message, p.intent) + 0.1 * _overlap(message, p.description), name)
            for name, (p, _) in self.flows.items()
        ]
        best = max(scored, default=(0.0, ""))
        return self.flows[best[1]] if best[0] > 0 else None

    def act(self, context: Sequence[Turn], tools: Sequence[Tool]) -> Action:
        """The next step of the procedure the context is in (module docstring)."""
        # seeded by the context: a re-run errs the same way, whatever the test's id
        rng = random.Random(int(content_hash({"context": context_key(context), "seed": self.seed})[:16], 16))
        first = next((t.content for t in context if t.role == TurnRole.user), "")
        found = self.procedure_for(first)
        if found is None:
            return Action(kind="reply", text="Could you tell me what you need help with?")
        procedure, flow = found
        due = self._due(procedure, flow, context)
        if due is None:
            return Action(kind="reply", text=rng.choice(_GENERIC))
        if due == _OFF_PROCEDURE:
            return Action(
                kind="reply", text=f"I'm only here to help you {procedure.intent}; let's get back to it."
            )
        g = flow.digraph()
        node = g.nodes[due]
        values = stated_values(context)
        if node["type"] == "api":
            first_call = not any(t.role == TurnRole.tool_call for t in context)
            if first_call and rng.random() < SKIP_LOOKUP:
                assumed = sorted(g.successors(due), key=lambda n: g.edges[due, n]["id"])
                said = g.nodes[assumed[0]]["description"] if assumed else "everything looks fine."
                return Action(kind="reply", text=f"I've checked, and it went through. {said}")
            call = self._call(node["description"], values, rng)
            if call.arguments and rng.random() < WRONG_PARAMETER:
                return self._wrong_parameter(call, rng)
            return call
        text = node["description"]
        asks = "ask" in text.lower() or "?" in text
        later = [n for n in _descendants_by_distance(g, due) if g.nodes[n]["type"] == "api"]
        if asks and later and rng.random() < CALL_INSTEAD_OF_ASK:
            return self._call(g.nodes[later[0]]["description"], values, rng)
        if rng.random() < OFF_SCRIPT_REPLY:
            return Action(kind="reply", text=rng.choice(_GENERIC))
        return Action(kind="reply", text=in_own_words(text, rng))

    def _due(self, procedure: Procedure, flow: Graph, context: Sequence[Turn]) -> str | None:
        """The flowgraph node the context calls for next, `_OFF_PROCEDURE`, or None (nothing is due)."""
        g = flow.digraph()
        done: str | None = None
        due: str | None = flow.root()
        vocabulary = _words(
            f"{procedure.intent} {procedure.description} {' '.join(s.text for s in procedure.steps)}"
        )
        vocabulary |= {w for name in procedure.apis for w in _words(name.replace("_", " "))}
        for turn in list(context)[1:]:
            if turn.role == TurnRole.user:
                if done is None:
                    due = flow.root()
                    continue
                stated = bool(_STATED.search(turn.content)) or bool(_ACKNOWLEDGES.match(turn.content))
                if not stated and not (_words(turn.content) & vocabulary):
                    due = _OFF_PROCEDURE
                    continue
                edges = [(n, g.edges[done, n]["description"]) for n in g.successors(done)]
                due = _answer_edge(turn.content, edges) if edges else None
            elif turn.role == TurnRole.assistant:
                if due == _OFF_PROCEDURE:
                    due = None
                    continue
                candidates = [c for c in [due, *(g.successors(done) if done else [])] if c and c in g]
                candidates = [c for c in candidates if g.nodes[c]["type"] != "api"]
                best = max(
                    candidates, key=lambda c: _said(turn.content, g.nodes[c]["description"]), default=None
                )
                if best is not None and _said(turn.content, g.nodes[best]["description"]) >= 0.5:
                    done = best
                due = None
            elif turn.role == TurnRole.tool_call:
                apis = [
                    n
                    for n in g
                    if g.nodes[n]["type"] == "api" and g.nodes[n]["description"] == turn.tool_name
                ]
                done = due if due in apis else (apis[0] if apis else done)
                due = None
            elif turn.role == TurnRole.tool_result and done is not None:
                outcome = _outcome(turn.content)
                edges = [(n, g.edges[done, n]["description"]) for n in g.successors(done)]
                exact = [n for n, d in edges if d.strip().casefold() == outcome.casefold()]
                due = (
                    exact[0]
                    if exact
                    else max(edges, key=lambda e: _overlap(outcome, e[1]), default=(None, ""))[0]
                )
        return due

    def _call(self, tool_name: str, values: dict[str, Any], rng: random.Random) -> Action:
        """A call with the stated values where the schema takes them, made-up values for the rest."""
        tool = self.tools.get(tool_name)
        schema = tool.parameters if tool else {}
        properties = schema.get("properties") or {}
        arguments: dict[str, Any] = {}
        for name in schema.get("required", []):
            prop = properties.get(name, {})
            check = {"type": "object", "properties": {name: prop}}
            if name in values and not check_arguments(check, {name: values[name]}):
                arguments[name] = values[name]
            else:
                arguments[name] = value_for(name, prop, rng)
        return Action(kind="api", tool_name=tool_name, arguments=arguments)

    def _wrong_parameter(self, right: Action, rng: random.Random) -> Action:
        tool = self.tools.get(right.tool_name or "")
        prop = (tool.parameters if tool else {}).get("properties") or {}
        name = rng.choice(sorted(right.arguments))
        for _ in range(10):  # another valid value; an enum of one member, or bad luck, keeps the typo below
            value = value_for(name, prop.get(name, {}), rng)
            if value != right.arguments[name]:
                break
        else:
            value = f"{right.arguments[name]}x"
        return Action(kind="api", tool_name=right.tool_name, arguments={**right.arguments, name: value})


def in_own_words(step: str, rng: random.Random) -> str:
    """A step said the way the demo agent says it (module docstring)."""
    sentences = [x for x in re.split(r"(?<=[.;])\s+", " ".join(step.split())) if x.strip()][:3]
    said = []
    for sentence in sentences:
        text = re.sub(r"\s*\([^)]*\)", "", sentence).strip().rstrip(".;")
        for pattern, replacement in _YOU:
            text = re.sub(pattern, replacement, text, flags=re.IGNORECASE)
        text = re.sub(r"\b([a-z]+(?:_[a-z]+)+)\b", lambda m: m.group(1).replace("_", " "), text)
        text = re.sub(r"\b(they|you) (want|need)s\b", r"\1 \2", text)
        words = [
            _SYNONYMS.get(w, w) if rng.random() < 0.5 else w for w in re.split(r"(\W+)", text)
        ]  # half the words a thesaurus would change, changed
        text = "".join(words)
        for pattern, frames in _OWN:
            match = pattern.match(text)
            if match:
                rest = text[match.end() :].strip()
                frame = rng.choice(frames).replace("{rest}", rest)
                text = frame.replace("{1}", match.group(1).strip()) if match.groups() else frame
                break
        else:
            text += "."
        said.append(text[:1].upper() + text[1:])
    return rng.choice(_OPENERS) + " ".join(said)


def _answer_edge(message: str, edges: list[tuple[str, str]]) -> str:
    """The edge a customer's reply takes: the case it describes (most of the case's words), else the
    one edge that is no case ("Otherwise", "acknowledges", "agrees"), else the closest."""
    cases = [(_overlap(message, d), n) for n, d in edges if d.startswith(CASE)]
    matched = [n for score, n in sorted(cases, reverse=True) if score >= 0.5]
    if matched:
        return matched[0]
    rest = [(n, d) for n, d in edges if not d.startswith(CASE)] or edges
    return max(rest, key=lambda e: _overlap(message, e[1]))[0]


def _outcome(content: str) -> str:
    """An API output's outcome: its `result` field, else the output itself."""
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        return content
    return str(data.get("result", content)) if isinstance(data, dict) else content


def _descendants_by_distance(g: nx.DiGraph, node: str) -> list[str]:
    """Nodes reachable from `node`, nearest first."""
    distance = nx.single_source_shortest_path_length(g, node)
    return sorted((n for n in distance if n != node), key=lambda n: (distance[n], n))


def play(tests: Sequence[Test], agent: Agent, tools: Sequence[Tool]) -> list[tuple[Test, Action]]:
    """Each test with the action the agent takes given its context and the tool schemas."""
    return [(t, agent.act(t.context, tools)) for t in tests]


def _oracle(setting: AgentSetting) -> OracleAgent:
    tests = setting.tests
    if tests is None:
        tests = [t for t in list_tests(setting.store, setting.project_id) if t.generator == GENERATOR]
    return OracleAgent(tests)


def _demo(setting: AgentSetting) -> DemoAgent:
    # imported here: the job module imports this package's generation steps, which need no agent
    from evalcore.generators.procedure.job import known_procedures

    procedures = known_procedures(setting.store, setting.project_id)
    return DemoAgent(procedures, known_tools(setting.store, setting.project_id), setting.seed)


register_agent("demo", _demo)
register_agent("oracle", _oracle)
register_agent("null", lambda _setting: NullAgent())
