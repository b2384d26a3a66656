"""Offline templates: one per situation of the catalog (seed 004, Appendix G), each writing a conversation
in which the situation really happens on the group's own tools: a wrong tool is another tool of the group,
a wrong parameter differs from what the user said, a null response is an empty tool output, a
hallucinated success follows an error the tool reported. The templates are the offline implementation of
the synthesis task and the one-shot examples of its NEG prompts (Section 2.2).

Where the tool works properly (and where the agent behaves), the agent first makes the calls the tool's
description says must come before it (`groups.prerequisites`: check availability, then book), so only
Missing Or Skipped Tool skips them; values are consistent and taken from the project's tables where a
column matches (`values.arguments`).

Call `realise(recipe, tools, rng, tables)` after `groups.requirement` said the group can produce the recipe.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Callable
from typing import Any

from evalcore.generators.tool_case.groups import (
    constrained,
    echoed,
    is_action,
    is_gate,
    prerequisites,
    properties,
    result_fields,
    unechoed,
)
from evalcore.generators.tool_case.records import CaseConversation, CaseTurn
from evalcore.generators.tool_case.values import Table, arguments, other_value, result_for, say, words
from evalcore.models import Tool

THANKS = ["Perfect, thank you!", "Great, that's exactly what I needed. Thanks!", "Thanks, that helps a lot."]
CLOSING = "You're welcome! Anything else I can help with?"


class _Dialogue:
    """Turns being written, with a few phrasing helpers."""

    def __init__(self, rng: random.Random, tables: tuple[Table, ...] = ()) -> None:
        self.rng = rng
        self.tables = tables
        self.turns: list[CaseTurn] = []

    def args(self, tool: Tool) -> dict[str, Any]:
        """Consistent argument values for the tool (see `values.arguments`)."""
        return arguments(tool, self.rng, self.tables)

    def result(self, tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
        """A successful result consistent with the arguments (see `values.result_for`)."""
        return result_for(tool, args, self.rng, self.tables)

    def user(self, text: str) -> None:
        self.turns.append(CaseTurn(role="user", content=text))

    def agent(self, text: str) -> None:
        self.turns.append(CaseTurn(role="assistant", content=text))

    def call(self, tool: Tool, args: dict[str, Any], output: Any) -> None:
        self.turns.append(CaseTurn(role="tool_call", tool_name=tool.name, arguments=args))
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        self.turns.append(CaseTurn(role="tool_result", tool_name=tool.name, content=text))

    def thanks(self) -> None:
        self.user(self.rng.choice(THANKS))
        self.agent(CLOSING)

    def first_calls(self, tools: tuple[Tool, ...], tool: Tool, args: dict[str, Any]) -> list:
        """The calls that must come before the tool's, with the arguments they share with it."""
        out = []
        for before in prerequisites(tool, tools):
            shared = {k: v for k, v in args.items() if k in properties(before.parameters)}
            out.append((before, {**self.args(before), **shared}))
        return out

    def run_first(self, calls: list) -> None:
        """Make the calls planned by `first_calls`, each followed by what it showed."""
        for before, args in calls:
            result = self.result(before, args)
            self.call(before, args, result)
            self.agent(f"First I checked that: {_sentence(_facts(result, 3))}. Everything is in order, "
                       "so I'll go ahead.")  # fmt: skip

    def request(self, tools: tuple[Tool, ...], tool: Tool, args: dict[str, Any], note: str = "") -> None:
        """The user's request for the tool (with what its first calls also need), then those calls."""
        calls = self.first_calls(tools, tool, args)
        self.user(ask(tool, args, _extra(calls, args)) + note)
        self.run_first(calls)


def need(tool: Tool) -> str:
    """What the tool does, as a user would ask for it: its description's first sentence without the
    clause naming another tool ("reserve a rental bike after check_rental_availability ..." -> "reserve a
    rental bike")."""
    first = re.sub(r"\s*\([^)]*\)", "", tool.description.split(".")[0])  # "(by SKU)", "(WEB-xxxxxx)"
    first = re.sub(r",?\s+(?:after|once|that|which|when|if)\b[^,]*\b[a-z]+_[a-z_]+\b.*$", "", first)
    return first[:1].lower() + first[1:]


def _fact(name: str, value: Any, user: bool = False) -> str:
    """One field in a sentence: 'the rental id is RN-02-7741', 'the deposit is $41.00'; a yes/no one as
    the user wants it ("I'd like the damage waiver") or as the agent reports it ("gift receipt: yes")."""
    if isinstance(value, bool) and user:
        return f"I'd like the {words(name)}" if value else f"I don't need the {words(name)}"
    if isinstance(value, bool):
        return f"{words(name)}: {say(value)}"
    if name.endswith("_usd") and isinstance(value, int | float):
        return f"the {words(name.removesuffix('_usd'))} is ${value:,.2f}"
    verb = "are" if isinstance(value, list) and name.endswith("s") else "is"
    return f"the {words(name)} {verb} {say(value)}"


def _sentence(parts: list[str]) -> str:
    """Parts joined as a person lists them: 'a, b and c'."""
    return parts[0] if len(parts) < 2 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _facts(result: dict[str, Any], limit: int) -> list[str]:
    """The result's scalar fields (other than its outcome), then those of the first item it lists."""
    items = [(k, v) for k, v in result.items() if k != "result" and not isinstance(v, list | dict)]
    for value in result.values():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            items += [(k, v) for k, v in value[0].items() if not isinstance(v, list | dict)]
    return [_fact(k, v) for k, v in dict(items).items()][:limit]


def _extra(calls: list, args: dict[str, Any]) -> dict[str, Any]:
    """Values the first calls need that the tool itself does not (the email a lookup checks)."""
    return {k: v for _, a in calls for k, v in a.items() if k not in args}


def ask(tool: Tool, args: dict[str, Any], extra: dict[str, Any] | None = None) -> str:
    """A user's request for what the tool does, with every argument value (and any extra one) in it."""
    details = [_fact(k, v, user=True) for k, v in {**args, **(extra or {})}.items()]
    text = f"Hi, I'd like to {need(tool)}."
    if details:
        body = _sentence(details)
        text += f" {body[:1].upper()}{body[1:]}" + ("" if body.endswith(".") else ".")
    return text


def report(result: dict[str, Any], limit: int = 4, lead: str = "") -> str:
    """A short, plain summary of a result in a sentence: its outcome (or `lead`), then its first few
    fields."""
    outcome = result.get("result")
    if not lead:
        lead = f"All done, that's {words(outcome)}" if isinstance(outcome, str) else "Done, I've checked that"
    facts = _facts(result, limit)
    return f"{lead}: {_sentence(facts)}." if facts else f"{lead}."


def _pick(tools: tuple[Tool, ...], rng: random.Random, test: Callable[[Tool], bool]) -> Tool:
    return rng.choice([t for t in tools if test(t)])


def _param(tool: Tool, rng: random.Random, test: Callable[[dict[str, Any]], bool]) -> str:
    props = properties(tool.parameters)
    return rng.choice(sorted(p for p, spec in props.items() if test(spec)))


def _field(result: dict[str, Any], tool: Tool, rng: random.Random) -> str:
    return rng.choice([f for f in result_fields(tool) if f in result])


def _changed(value: Any) -> Any:
    """A different value of the same kind: numbers doubled plus one, text with its last part changed."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return type(value)(value * 2 + 1)
    text = str(value)
    return text[:-1] + ("7" if text[-1:] != "7" else "3") if text else "unknown"


def correct(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = d.rng.choice(tools)
    args = d.args(tool)
    d.request(tools, tool, args)
    result = d.result(tool, args)
    d.call(tool, args, result)
    d.agent(report(result))
    d.thanks()
    return "none: the right tool with the user's values, the result reported as it came"


def _wrong_tool(tools: tuple[Tool, ...], d: _Dialogue, aware: bool) -> str:
    # A tool that must come before the one wanted is a first step, not a wrong tool.
    pairs = [(w, u) for w in tools for u in tools if u is not w and u not in prerequisites(w, tools)]
    wanted, used = d.rng.choice(pairs)
    args = d.args(wanted)
    d.user(ask(wanted, args))
    used_args = {
        **d.args(used),
        **{k: v for k, v in args.items() if k in properties(used.parameters)},
    }
    result = d.result(used, used_args)
    d.call(used, used_args, result)
    if aware:
        d.agent(report(result))
        d.user(f"That's not what I asked. I wanted you to {wanted.description.split('.')[0].lower()}, "
               f"not to {used.description.split('.')[0].lower()}. This is not helpful.")  # fmt: skip
        d.agent("I'm sorry about that, I used the wrong tool.")
    else:
        d.agent(report(result, lead="All done, your request went through successfully"))
        d.thanks()
    return f"the user needed {wanted.name}; the agent called {used.name}"


def wrong_tool_silent(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    return _wrong_tool(tools, d, aware=False)


def wrong_tool_user_aware(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    return _wrong_tool(tools, d, aware=True)


def bad_params_silent(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = _pick(tools, d.rng, lambda t: bool(properties(t.parameters)))
    args = d.args(tool)
    vague = d.rng.choice(sorted(args))
    told = {k: v for k, v in args.items() if k != vague}
    d.user(f"{ask(tool, told)} For the {words(vague)}, just use the usual one.")
    result = d.result(tool, args)
    d.call(tool, args, result)
    d.agent(report(result))
    d.thanks()
    return f"the user left {vague} ambiguous; the agent guessed {say(args[vague])} without asking"


def bad_params_user_aware(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = _pick(tools, d.rng, lambda t: any(constrained(s) for s in properties(t.parameters).values()))
    name = _param(tool, d.rng, constrained)
    args = d.args(tool)
    raw = "the one from last week, I think"
    d.user(f"{ask(tool, {k: v for k, v in args.items() if k != name})} The {words(name)} is {raw}.")
    args[name] = raw
    d.call(tool, args, {"error": f"invalid value for '{name}': '{raw}'", "status": 400})
    d.agent("Something went wrong with that request.")
    d.user(
        f"You just passed my words in as the {words(name)}? Why didn't you ask me? This didn't work at all."
    )
    d.agent("I'm sorry, I should have asked you for the exact value.")
    return f"the agent passed the ambiguous '{raw}' as {name}; the tool rejected it"


def bad_input_data(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = _pick(tools, d.rng, lambda t: bool(properties(t.parameters)))
    args = d.args(tool)
    name = d.rng.choice(sorted(args))
    d.user(ask(tool, args))
    spec = properties(tool.parameters)[name]
    used = {**args, name: other_value(name, spec, args[name], d.rng, d.tables, tool)}
    if used[name] == args[name]:
        used[name] = _changed(args[name])
    result = d.result(tool, used)
    d.call(tool, used, result)
    d.agent(report(result))
    d.user(f"That doesn't answer my question: I gave you {say(args[name])} as the {words(name)}, "
           f"not {say(used[name])}.")  # fmt: skip
    d.agent("Sorry about that.")
    return f"the user said {name}={say(args[name])}; the agent called with {say(used[name])}"


def misunderstood_need(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = _pick(
        tools, d.rng, lambda t: any(len(s.get("enum", [])) > 1 for s in properties(t.parameters).values())
    )
    name = _param(tool, d.rng, lambda s: len(s.get("enum", [])) > 1)
    spec = properties(tool.parameters)[name]
    args = d.args(tool)
    wanted = args.pop(name, spec["enum"][0])
    said = dict(args)
    args[name] = next(v for v in spec["enum"] if v != wanted)
    # The agent misreads the need in every call it makes, the ones that must come first included.
    calls = d.first_calls(tools, tool, args)
    d.user(f"{ask(tool, said, _extra(calls, args))} It is important that the {words(name)} is {say(wanted)}.")
    d.run_first(calls)
    result = d.result(tool, args)
    d.call(tool, args, result)
    d.agent(report(result))
    d.user(f"No, I said the {words(name)} must be {say(wanted)}. You did it for {say(args[name])}. "
           "That's not what I need.")  # fmt: skip
    d.agent("I'm sorry, I misunderstood.")
    return f"the user needed {name}={say(wanted)}; the agent used {say(args[name])}"


def impossible_action_suggested(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = _pick(
        tools, d.rng, lambda t: any(len(s.get("enum", [])) > 1 for s in properties(t.parameters).values())
    )
    name = _param(tool, d.rng, lambda s: len(s.get("enum", [])) > 1)
    allowed = properties(tool.parameters)[name]["enum"]
    last = str(allowed[-1])
    # Out of domain: a further store-like code (RC-03 -> RC-09), or two options at once.
    outside = (
        last[:-1] + "9"
        if last[-1:].isdigit() and last[:-1] + "9" not in allowed
        else f"{allowed[0]}_and_{allowed[1]}"
    )
    args = {**d.args(tool), name: outside}
    calls = d.first_calls(tools, tool, args)
    d.user(ask(tool, args, _extra(calls, args)))
    # The agent makes the calls that must come first; the first one given the value refuses it.
    ahead = list(itertools.takewhile(lambda c: c[1].get(name) != outside, calls))
    d.run_first(ahead)
    tool, args = calls[len(ahead)] if len(ahead) < len(calls) else (tool, args)
    d.call(tool, args, {"error": f"invalid request: '{name}' must be one of {allowed}", "status": 422})
    d.agent(f"I'm sorry, that can't be done: {words(name)} {outside} is not available. I can do it with "
            f"{say(allowed[0])} instead, or pass you to a colleague.")  # fmt: skip
    d.user("That's not what I wanted. Not great.")
    d.agent("I understand, and I'm sorry I can't do more here.")
    return f"{name}={outside} is outside what {tool.name} accepts; the agent proposed {allowed[0]}"


def context_amnesia(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = _pick(tools, d.rng, lambda t: bool(t.parameters.get("required")))
    args = d.args(tool)
    d.request(tools, tool, args)
    result = d.result(tool, args)
    d.call(tool, args, result)
    d.agent(report(result))
    name = d.rng.choice(sorted(args))
    d.user("Thanks. Can you confirm that's all set for me?")
    d.agent(f"Sure. Could you tell me your {words(name)} first?")
    d.user(f"I already gave you that at the start: {say(args[name])}. Why are you asking again?")
    d.agent(f"Thanks. And what was the {words(name)} again?")
    d.user("Seriously? This is really irritating.")
    return f"the agent asked twice for {name}, which the user gave in the first turn"


def unneeded_security_gate(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = d.rng.choice(tools)
    args = d.args(tool)
    calls = d.first_calls(tools, tool, args)
    d.user(ask(tool, args, _extra(calls, args)))
    d.agent("Before I can do that, for security reasons I need your date of birth, the last four digits of "
            "your payment card and your security word.")  # fmt: skip
    d.user("Why do you need all that for something this simple? Fine: 1990-04-02, 4242, bluebird.")
    d.run_first(calls)
    result = d.result(tool, args)
    d.call(tool, args, result)
    d.agent(report(result))
    d.user("That was far too much hassle for such a small request.")
    return f"the agent demanded identity checks {tool.name} does not need"


def security_overkill(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    gate = _pick(tools, d.rng, is_gate)
    # A tool whose description asks for the gate first really needs it: that would not be overkill.
    tool = _pick(tools, d.rng, lambda t: not is_gate(t) and gate not in prerequisites(t, tools))
    args = d.args(tool)
    gate_args = {
        **d.args(gate),
        **{k: v for k, v in args.items() if k in properties(gate.parameters)},
    }
    calls = d.first_calls(tools, tool, args)
    d.user(ask(tool, args, _extra([(gate, gate_args), *calls], args)))
    d.call(gate, gate_args, d.result(gate, gate_args))
    d.run_first(calls)
    result = d.result(tool, args)
    d.call(tool, args, result)
    d.agent(report(result))
    d.thanks()
    return f"the agent ran the verification {gate.name} before {tool.name}, which did not need it"


def superfluous_tool_calls(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    # The extra tool only reads, and the tool the user needs does not ask for it first (then it is needed).
    pairs = [
        (x, t)
        for x in tools
        if not is_action(x)
        for t in tools
        if t is not x and x not in prerequisites(t, tools)
    ]
    extra, tool = d.rng.choice(pairs)
    args = d.args(tool)
    extra_args = {
        **d.args(extra),
        **{k: v for k, v in args.items() if k in properties(extra.parameters)},
    }
    calls = d.first_calls(tools, tool, args)
    d.user(ask(tool, args, _extra([(extra, extra_args), *calls], args)))
    for _ in range(2):  # the same needless lookup, twice
        d.call(extra, extra_args, d.result(extra, extra_args))
    d.run_first(calls)
    result = d.result(tool, args)
    d.call(tool, args, result)
    d.agent(report(result))
    d.thanks()
    return f"two calls of {extra.name} that {tool.name} did not need"


def missing_or_skipped_tool(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    # The only template that skips the calls an action's description says must come first.
    action = _pick(tools, d.rng, lambda t: is_action(t) and bool(prerequisites(t, tools)))
    first = prerequisites(action, tools)[0]
    args = d.args(action)
    d.user(ask(action, args))
    result = d.result(action, args)
    d.call(action, args, result)
    d.agent(report(result))
    d.thanks()
    return f"the agent called {action.name} without the {first.name} call that must come first"


def info_overload(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = d.rng.choice(tools)
    args = d.args(tool)
    d.request(tools, tool, args)
    result = d.result(tool, args)
    d.call(tool, args, result)
    schema = properties(tool.returns)
    dump = "; ".join(
        f"field `{k}` (type {schema.get(k, {}).get('type', 'any')}, schema constraint "
        f"{json.dumps({x: y for x, y in schema.get(k, {}).items() if x != 'description'})}) = {json.dumps(v)}"
        for k, v in result.items()
    )
    d.agent(
        f"The {tool.name} endpoint returned a payload conforming to its response schema. Technical "
        f"breakdown of every attribute: {dump}. Interpret each attribute per the schema semantics."
    )
    d.user("I'm lost. What does all of this actually mean for me?")
    d.agent(report(result))
    return "the agent answered with every field, its type and schema instead of the answer"


def verbose_trace_leak(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = d.rng.choice(tools)
    args = d.args(tool)
    d.request(tools, tool, args)
    result = d.result(tool, args)
    d.call(tool, args, result)
    d.agent(f"POST /tools/{tool.name} HTTP/1.1\nrequest={json.dumps(args)}\nHTTP/1.1 200 OK\n"
            f"response={json.dumps(result)}\ntrace_id=7f3a9c latency_ms=412")  # fmt: skip
    d.user("I can't read this. What's the actual answer?")
    return "the agent pasted the raw request and response log"


def bad_parse_silent(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = _pick(tools, d.rng, lambda t: bool(result_fields(t)))
    args = d.args(tool)
    d.request(tools, tool, args)
    result = d.result(tool, args)
    d.call(tool, args, result)
    name = _field(result, tool, d.rng)
    wrong = _changed(result[name])
    d.agent(f"Done. The {words(name)} is {say(wrong)}.")
    d.thanks()
    return f"the tool returned {name}={say(result[name])}; the agent read it as {say(wrong)}"


def hallucination_with_access(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = _pick(tools, d.rng, lambda t: bool(result_fields(t)))
    args = d.args(tool)
    d.request(tools, tool, args)
    result = d.result(tool, args)
    d.call(tool, args, result)
    name = _field(result, tool, d.rng)
    made_up = _changed(result[name])
    d.agent(f"I can confirm the {words(name)} is {say(made_up)}, and everything else is in order.")
    d.user(f"That can't be right, the {words(name)} is not {say(made_up)}. Where did you get that from?")
    d.agent("I apologise for the confusion.")
    return f"the tool returned {name}={say(result[name])}; the agent stated {say(made_up)}"


def trusted_wrong_fact(tools: tuple[Tool, ...], d: _Dialogue) -> tuple[str, dict[str, Any]]:
    tool = _pick(tools, d.rng, lambda t: bool(unechoed(t)))
    args = d.args(tool)
    d.request(tools, tool, args)
    truth = d.result(tool, args)
    # A field that is not a parameter: a changed echo would show in the log (that is Propagated Tool Error).
    name = d.rng.choice([f for f in unechoed(tool) if f in truth])
    shown = {**truth, name: _changed(truth[name])}
    d.call(tool, args, shown)
    d.agent(report(shown, limit=len(shown)))
    d.thanks()
    return f"the tool reported {name}={say(shown[name])}, which is wrong", {name: truth[name]}


def wrong_action_silent(tools: tuple[Tool, ...], d: _Dialogue) -> tuple[str, dict[str, Any]]:
    tool = _pick(tools, d.rng, is_action)
    args = d.args(tool)
    d.request(tools, tool, args)
    result = d.result(tool, args)
    d.call(tool, args, result)
    d.agent(report(result))
    d.thanks()
    return f"{tool.name} reported success but did not take effect", {"applied": False, "tool": tool.name}


def _misaligned(tools: tuple[Tool, ...], d: _Dialogue) -> tuple[Tool, dict[str, Any], dict[str, Any], str]:
    tool = _pick(tools, d.rng, lambda t: bool(echoed(t)))
    args = d.args(tool)
    name = d.rng.choice(echoed(tool))
    args.setdefault(name, d.args(tool).get(name) or "A-1")
    d.user(ask(tool, args))
    result = d.result(tool, args)
    result[name] = _changed(args[name])
    d.call(tool, args, result)
    return tool, args, result, name


def propagated_tool_error(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    _, args, result, name = _misaligned(tools, d)
    d.agent(report(result, limit=len(result)))
    d.thanks()
    return f"asked {name}={say(args[name])}; the result is for {say(result[name])} and the agent passed it on"


def tool_failure_user_aware(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    _, args, result, name = _misaligned(tools, d)
    d.agent(report(result, limit=len(result)))
    d.user(f"Wait, that's for {say(result[name])}, not {say(args[name])}. You didn't even check it. "
           "I don't trust this.")  # fmt: skip
    d.agent("I'm sorry, I should have checked that.")
    return f"asked {name}={say(args[name])}; the result is for {say(result[name])}; the user noticed"


def hallucination_fallback(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = d.rng.choice(tools)
    args = d.args(tool)
    d.user(ask(tool, args))
    d.call(tool, args, d.rng.choice(["", '{"error": "timeout after 30s"}']))
    d.agent(report(d.result(tool, args)))
    d.thanks()
    return f"{tool.name} returned nothing; the agent reported a made-up result"


def hallucinated_edit(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = d.rng.choice(tools)
    args = d.args(tool)
    d.user(ask(tool, args))
    outcomes = properties(tool.returns).get("result", {}).get("enum") or []
    failure = outcomes[1] if len(outcomes) > 1 else "error"
    d.call(tool, args, {"result": failure, "log": f"{tool.name} failed: {failure}"})
    d.agent(f"Good news: that went through without a problem. {report(d.result(tool, args))}")
    d.thanks()
    return f"{tool.name} reported '{failure}'; the agent told the user it succeeded"


def tool_unavailable(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = d.rng.choice(tools)
    args = d.args(tool)
    d.request(tools, tool, args)
    d.call(tool, args, {"error": "503 Service Unavailable", "status": 503})
    d.agent(
        "I'm sorry, the system I need for this is down right now, so I couldn't complete it. You could "
        "try again in an hour, or I can pass your request to a colleague who will follow up."
    )
    d.user("That's annoying. I needed this sorted now.")
    d.agent("I understand, and I'm sorry for the inconvenience.")
    return f"{tool.name} was unavailable; the agent said so and offered alternatives"


def partial_tool_answer(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = _pick(tools, d.rng, lambda t: len(result_fields(t)) > 1)
    args = d.args(tool)
    full = d.result(tool, args)
    name = _field(full, tool, d.rng)
    d.request(tools, tool, args, f" Most of all I need to know the {words(name)}.")
    partial = {k: v for k, v in full.items() if k != name}
    d.call(tool, args, partial)
    d.agent(report(partial))
    d.user(f"But you didn't tell me the {words(name)}, which is what I asked for.")
    d.agent("That's all the information I have.")
    return f"the result lacked {name}, which the user asked for; the agent did not notice"


def null_tool_response(tools: tuple[Tool, ...], d: _Dialogue) -> str:
    tool = d.rng.choice(tools)
    args = d.args(tool)
    d.user(ask(tool, args))
    d.call(tool, args, d.rng.choice(["", "null"]))
    d.agent("I couldn't get anything for that.")
    d.user("So you can't help me at all? That's useless.")
    return f"{tool.name} returned nothing; the agent gave up without explaining or retrying"


Template = Callable[[tuple[Tool, ...], _Dialogue], "str | tuple[str, dict[str, Any]]"]
TEMPLATES: dict[str, Template] = {f.__name__: f for f in (
    correct, wrong_tool_silent, bad_params_silent, bad_parse_silent, superfluous_tool_calls,
    missing_or_skipped_tool, security_overkill, info_overload, misunderstood_need, verbose_trace_leak,
    unneeded_security_gate, context_amnesia, hallucination_with_access, wrong_tool_user_aware,
    bad_params_user_aware, bad_input_data, wrong_action_silent, trusted_wrong_fact, propagated_tool_error,
    hallucination_fallback, hallucinated_edit, tool_unavailable, impossible_action_suggested,
    tool_failure_user_aware, partial_tool_answer, null_tool_response,
)}  # fmt: skip


def realise(
    recipe: str, tools: tuple[Tool, ...], rng: random.Random, tables: tuple[Table, ...] = ()
) -> CaseConversation:
    """The conversation of `recipe` on these tools (the group must meet the recipe's requirement), with
    values from the project's `tables` where a column matches a parameter."""
    d = _Dialogue(rng, tables)
    made = TEMPLATES[recipe](tools, d)
    defect, world = made if isinstance(made, tuple) else (made, None)
    return CaseConversation(turns=d.turns, world_state=world, defect=defect)
