"""What every importer of another tool's file shares: its records with their lines, our own fields that
travel in a format's metadata (under `evalcore`), chat messages in the OpenAI shape, and the items made.

A record is first validated against the other tool's own shape (a pydantic model per format, unknown
fields allowed and kept), then mapped onto our Turn, Test and Conversation; our fields, when the record
carries them (it was exported by us), are laid over the mapping, so a round trip keeps ids, tiers,
provenance, grounding and generator details while edits made in the other tool to what it shows win.
Every problem is a `Problem` with file, line and field; what does not map is kept in the item's
metadata and counted by kind, for one line per kind in the import's report.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalcore.errors import Problem, ValidationFailed
from evalcore.inputs.sources import Located, dotted, json_lines, parse_json, parse_yaml, value_problems
from evalcore.models import Conversation, Provenance, Test, Turn, TurnRole
from evalcore.models.common import Record, Tier, content_hash
from evalcore.store import schema as t

OURS = "evalcore"  # the key our own fields travel under, in each format's metadata field
ID_LIMIT = 64  # the store's id column
LineOf = Callable[[tuple[str | int, ...]], int | None]


class Foreign(BaseModel):
    """Base of another tool's record shapes: fields we do not know are allowed (kept in metadata)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def unknown(self) -> dict[str, Any]:
        """The fields of the record that its model does not name."""
        return dict(self.model_extra or {})


class Ours(Record):
    """Our fields of an item, as our exporters write them into a format's metadata."""

    kind: Literal["conversation", "test", "spec", "persona"] = Field(description="What the item is here.")
    id: str = Field(description="The item's id in the store it was exported from.")
    generator: str | None = Field(default=None, description="The generator that made it.")
    spec_id: str | None = Field(default=None, description="The spec it exercises.")
    conversation_id: str | None = Field(default=None, description="A test's conversation.")
    tier: Tier = Field(default=Tier.unreviewed, description="Its tier when exported.")
    offline: bool = Field(default=False, description="Made by the offline provider (provenance says so).")
    provenance: Provenance | None = Field(default=None, description="Who or what produced it.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="The item's own metadata.")
    turns: list[Turn] = Field(default_factory=list, description="A conversation's turns, a test's context.")
    expected: Turn | None = Field(default=None, description="A test's expected turn.")
    assertions: list[dict[str, Any]] = Field(default_factory=list, description="A test's assertions.")
    spec: dict[str, Any] | None = Field(default=None, description="A spec's fields, for a spec.")
    persona: dict[str, Any] | None = Field(default=None, description="A persona's fields, for a persona.")


@dataclass
class Said:
    """One turn as another tool's record says it: what our Turn gets from it."""

    role: TurnRole
    content: str = ""
    tool_name: str | None = None
    arguments: dict[str, Any] | None = None


@dataclass
class Mapped:
    """One record in our terms, before our own fields are laid over it: turns, and for a test its
    expected turn and assertions; `metadata` holds what of the record has no place of ours."""

    turns: list[Said]
    expected: Said | None = None
    assertions: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    key: str | None = None  # the record's own id or name, for our id when it carries none of ours


@dataclass
class Read:
    """What a file gave: items with their lines, and what was kept as metadata, counted by kind."""

    items: list[tuple[int, Conversation | Test]] = field(default_factory=list)
    kept: Counter[tuple[str, str]] = field(default_factory=Counter)
    skipped: Counter[tuple[str, str]] = field(default_factory=Counter)

    def keep(self, what: str, why: str, count: int = 1) -> None:
        """Count `count` things of kind `what` kept as metadata, and why."""
        if count:
            self.kept[what, why] += count

    def skip(self, what: str, why: str) -> None:
        """Count one record of kind `what` that makes no item here, and why."""
        self.skipped[what, why] += 1

    def notes(self) -> list[str]:
        """One line per kind of thing kept: '12 promptfoo assertions of type javascript kept as ...'."""
        kept = [f"{n} {what} kept as metadata: {why}" for (what, why), n in sorted(self.kept.items())]
        return kept + [f"{n} {what} skipped: {why}" for (what, why), n in sorted(self.skipped.items())]


@dataclass
class Source:
    """One record of a file: its first line, its data and the line of any field inside it."""

    line: int
    data: Any
    line_of: LineOf
    prefix: tuple[str | int, ...] = ()  # where the record sits in the file (for field names)


def _fail(problems: list[Problem], shown: str, what: str) -> None:
    if problems:
        raise ValidationFailed(problems, f"{what} file {shown}")


def jsonl_sources(text: str, shown: str, problems: list[Problem]) -> list[Source]:
    """Each non-blank line of a JSONL text as a record; bad lines are problems with their line."""
    return [
        Source(number, data, lambda _loc, n=number: n) for number, data in json_lines(text, shown, problems)
    ]


def document_sources(
    text: str, shown: str, problems: list[Problem], *, yaml_text: bool, list_keys: tuple[str, ...] = ()
) -> list[Source]:
    """The records of a JSON or YAML document: a list of them, or a mapping holding the list under one
    of `list_keys` (promptfoo's `tests:`, a dataset's `examples:`)."""
    located: Located | None = (parse_yaml if yaml_text else parse_json)(text, shown, problems)
    if located is None:
        return []
    data, prefix = located.data, ()
    if isinstance(data, dict):
        key = next((k for k in list_keys if k in data), None)
        if key is None:
            want = " or a mapping with " + " or ".join(f"'{k}'" for k in list_keys) if list_keys else ""
            problems.append(Problem(shown, f"expected a list of records{want}", located.line_of(())))
            return []
        data, prefix = data[key], (key,)
    if not isinstance(data, list):
        problems.append(Problem(shown, "expected a list of records", located.line_of(prefix)))
        return []
    return [
        Source(
            located.line_of((*prefix, i)) or 1,
            record,
            lambda loc, i=i: located.line_of((*prefix, i, *loc)),
            (*prefix, i),
        )
        for i, record in enumerate(data)
    ]


def validate(model: type[BaseModel], source: Source, shown: str, problems: list[Problem]) -> Any:
    """The record as `model`, or None after a problem per error (with the field's line)."""
    if not isinstance(source.data, dict):
        problems.append(Problem(shown, "each record must be a mapping (an object)", source.line))
        return None
    try:
        return model.model_validate(source.data)
    except ValidationError as exc:
        for error in exc.errors():
            loc = tuple(error["loc"])
            message = "required field is missing" if error["type"] == "missing" else error["msg"]
            problems.append(Problem(shown, message, source.line_of(loc), dotted((*source.prefix, *loc))))
        return None


def ours_of(
    metadata: Any, where: tuple[str | int, ...], source: Source, shown: str, problems: list[Problem]
) -> tuple[Ours | None, dict[str, Any]]:
    """Our fields out of a format's metadata mapping at `where` (None when it has none), and the rest
    of that metadata; a malformed `evalcore` entry is a problem at its field."""
    if isinstance(metadata, str):  # formats whose metadata is one text (tau2's notes) carry JSON there
        try:
            metadata = json.loads(metadata)
        except (json.JSONDecodeError, RecursionError):
            return None, {}
        for loc, why in value_problems(metadata):  # escapes inside the text: checked as the file was
            problems.append(
                Problem(shown, why, source.line_of(where), dotted((*source.prefix, *where, *loc)))
            )
        if not isinstance(metadata, dict) or value_problems(metadata):
            return None, {}
    if not isinstance(metadata, dict) or OURS not in metadata:
        return None, dict(metadata) if isinstance(metadata, dict) else {}
    rest = {k: v for k, v in metadata.items() if k != OURS}
    try:
        return Ours.model_validate(metadata[OURS]), rest
    except ValidationError as exc:
        for error in exc.errors():
            loc = (*where, OURS, *error["loc"])
            problems.append(Problem(shown, error["msg"], source.line_of(loc), dotted((*source.prefix, *loc))))
        return None, rest


def _turn(said: Said, index: int, base: Turn | None = None) -> Turn:
    fields = base.model_dump() if base is not None else {}
    fields.update(index=index, role=said.role, content=said.content)
    if said.tool_name is not None or base is None:
        fields["tool_name"] = said.tool_name
    if said.arguments is not None or base is None:  # None: the format names the tool, not its arguments
        fields["arguments"] = said.arguments
    return Turn.model_validate(fields)


def _roles(turns: list[Turn] | list[Said]) -> list[TurnRole]:
    return [t.role for t in turns]


def merge_turns(said: list[Said], ours: list[Turn]) -> list[Turn]:
    """Our turns with the text the other tool holds now. Where the format carries every turn, turn for
    turn; where it holds fewer (tool turns dropped, as DeepEval and Ragas single-turn do, or only a test's
    last user message), ours keep theirs and the last user and assistant turns take the format's text;
    turns that no longer line up are the format's alone."""
    if ours and _roles(said) == _roles(ours):
        return [_turn(s, i, o) for i, (s, o) in enumerate(zip(said, ours, strict=True))]
    spoken = [i for i, t in enumerate(ours) if t.role in (TurnRole.user, TurnRole.assistant)]
    tail = spoken[len(spoken) - len(said) :] if said else []
    if ours and len(said) <= len(spoken) and [ours[i].role for i in tail] == _roles(said):
        texts = dict(zip(tail, said, strict=True))
        return [
            _turn(texts[i], i, t) if i in texts else t.model_copy(update={"index": i})
            for i, t in enumerate(ours)
        ]
    return [_turn(s, i) for i, s in enumerate(said)]


_SLUG = re.compile(r"[^A-Za-z0-9_.:-]+")


def item_id(fmt: str, key: str | None, record: Any) -> str:
    """Our id of a record that carries none of ours: `<format>-<its own id>`, else a hash of it."""
    if key:
        candidate = f"{fmt}-{_SLUG.sub('-', str(key)).strip('-')}"
        if len(candidate) <= ID_LIMIT:
            return candidate
    return f"{fmt}-{content_hash(record)[:16]}"


def build(
    fmt: str,
    shown: str,
    source: Source,
    mapped: Mapped,
    ours: Ours | None,
    problems: list[Problem],
    out: Read,
) -> None:
    """Add the item a mapped record makes to `out`, our fields laid over it (a test when it has an expected
    turn); a spec we exported is counted as skipped (specs come in through `evalcore specs import`)."""
    if ours is not None and ours.kind == "spec":
        out.skip("specs", "import specs with `evalcore specs import`")
        return
    if ours is not None and ours.kind == "persona":
        out.skip("personas", "import personas with `evalcore simulations personas import`")
        return
    item = _item(fmt, shown, source, mapped, ours, problems)
    if item is not None and not _too_long(item, shown, source.line, problems):
        out.items.append((source.line, item))


def _too_long(item: Conversation | Test, shown: str, line: int, problems: list[Problem]) -> bool:
    """Record a problem for each value longer than the store's column for it (a file's own ids and our
    fields from a file are untrusted); True if there was one."""
    columns = {"id": t.items.c.id, "generator": t.items.c.generator, "spec_id": t.items.c.spec_id}
    values = {name: getattr(item, name) for name in columns}
    values["provenance.run_id"] = item.provenance.run_id
    columns["provenance.run_id"] = t.items.c.run_id
    turns = item.turns if isinstance(item, Conversation) else [*item.context, item.expected]
    for turn in turns:
        values[f"turns[{turn.index}].query_type"] = turn.query_type
        columns[f"turns[{turn.index}].query_type"] = t.judgments.c.query_type
    found = False
    for name, value in values.items():
        limit = columns[name].type.length
        if isinstance(value, str) and len(value) > limit:
            problems.append(Problem(shown, f"too long: {len(value)} characters, at most {limit}", line, name))
            found = True
    return found


def _item(
    fmt: str, shown: str, source: Source, mapped: Mapped, ours: Ours | None, problems: list[Problem]
) -> Conversation | Test | None:
    provenance = Provenance(producer=f"import:{fmt}", provider="import", task=f"import.{fmt}", inputs=[shown])
    metadata = dict(ours.metadata) if ours else {}
    if mapped.metadata:
        metadata[fmt] = mapped.metadata
    common = {
        "id": ours.id if ours else item_id(fmt, mapped.key, source.data),
        "generator": (ours.generator if ours else None) or fmt,
        "spec_id": ours.spec_id if ours else None,
        "tier": ours.tier if ours else Tier.unreviewed,
        "provenance": ours.provenance if ours and ours.provenance else provenance,
    }
    try:
        if not (ours.kind == "test" if ours else mapped.expected is not None):
            said = mapped.turns
            if mapped.expected is not None and (mapped.expected.content or mapped.expected.tool_name):
                said = [*said, mapped.expected]  # the format's reference is the conversation's last turn
            turns = merge_turns(said, ours.turns if ours else [])
            return Conversation(**common, turns=turns, metadata=metadata)
        context = merge_turns(mapped.turns, ours.turns if ours else [])
        expected_said = mapped.expected or Said(TurnRole.assistant)
        mine = ours.expected if ours else None
        named = (
            mine is not None and mine.role == TurnRole.tool_call and expected_said.role == TurnRole.assistant
        )
        if (
            named and expected_said.content == mine.tool_name
        ):  # formats whose reference is a text name the tool
            expected_said = Said(TurnRole.tool_call, "", mine.tool_name)
        expected = _turn(expected_said, len(context), ours.expected if ours else None)
        assertions = [*(ours.assertions if ours else []), *mapped.assertions]
        if ours and mapped.assertions:  # ours were exported as the format's checks: keep one copy
            assertions = _unique(assertions)
        if metadata:
            expected = expected.model_copy(update={"metadata": {**expected.metadata, **metadata}})
        return Test(
            **common,
            conversation_id=ours.conversation_id if ours else None,
            context=context,
            expected=expected,
            assertions=assertions,
        )
    except ValidationError as exc:
        for error in exc.errors():
            problems.append(Problem(shown, error["msg"], source.line, dotted(tuple(error["loc"])) or None))
        return None


def _unique(assertions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for a in assertions:
        key = json.dumps(a, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out


def finish(read: Read, shown: str, problems: list[Problem], what: str) -> Read:
    """Raise every problem found (nothing is written), or refuse a file that gave no item, or a file
    whose records would be stored under one id twice; else the read."""
    seen: dict[str, int] = {}
    for line, item in read.items:
        if item.id in seen:
            problems.append(
                Problem(shown, f"id '{item.id}' already used on line {seen[item.id]}", line, "id")
            )
        seen.setdefault(item.id, line)
    if not problems and not read.items:
        problems.append(Problem(shown, f"no {what} record in the file"))
    _fail(problems, shown, what)
    return read


def message_text(content: Any) -> str:
    """The text of a chat message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type", "text") == "text"
        )
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def from_messages(
    messages: Any, where: tuple[str | int, ...], source: Source, shown: str, problems: list[Problem]
) -> tuple[list[Said], list[str]]:
    """Turns out of OpenAI-style chat messages (user, assistant with tool_calls, tool; system messages
    are returned apart: no turn of ours holds them). A malformed message is a problem at its field."""
    turns: list[Said] = []
    system: list[str] = []
    if not isinstance(messages, list):
        problems.append(Problem(shown, "must be a list of messages", source.line_of(where), dotted(where)))
        return turns, system
    for i, message in enumerate(messages):
        at = (*where, i)
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            problems.append(Problem(shown, "a message needs a 'role'", source.line_of(at), dotted(at)))
            continue
        role, text = message["role"], message_text(message.get("content"))
        if role == "system":
            system.append(text)
        elif role == "user":
            turns.append(Said(TurnRole.user, text))
        elif role == "assistant":
            if text or not message.get("tool_calls"):
                turns.append(Said(TurnRole.assistant, text))
            turns.extend(
                _calls(message.get("tool_calls") or [], (*at, "tool_calls"), source, shown, problems)
            )
        elif role == "tool":
            turns.append(Said(TurnRole.tool_result, text, message.get("name") or message.get("function")))
        else:
            why = f"unknown role '{role}' (system, user, assistant or tool)"
            problems.append(Problem(shown, why, source.line_of((*at, "role")), dotted((*at, "role"))))
    return turns, system


def _calls(calls: Any, where: tuple, source: Source, shown: str, problems: list[Problem]) -> Iterator[Said]:
    for j, call in enumerate(calls if isinstance(calls, list) else [calls]):
        function = call.get("function", call) if isinstance(call, dict) else None
        if isinstance(function, str):  # Inspect's and tau2's calls: the name beside the arguments
            function = {"name": function, "arguments": call.get("arguments", {})}
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str):
            problems.append(
                Problem(shown, "a tool call needs a name", source.line_of((*where, j)), dotted((*where, j)))
            )
            continue
        arguments = function.get("arguments", function.get("args", {}))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                arguments = {"arguments": arguments}
        if not isinstance(arguments, dict):
            arguments = {"arguments": arguments}
        yield Said(TurnRole.tool_call, "", name, arguments)


INPUT_KEYS = ("input", "question", "query", "prompt", "user_input", "message")
OUTPUT_KEYS = ("output", "answer", "expected", "expected_output", "reference", "content", "text")


def chat_of(
    value: Any, where: tuple[str | int, ...], source: Source, shown: str, problems: list[Problem]
) -> tuple[list[Said], list[str]]:
    """Turns out of a dataset's input: a text (one user turn), a list of chat messages, a mapping with
    `messages`, or a mapping with one text under a usual key (`input`, `question`, ...)."""
    if isinstance(value, str):
        return [Said(TurnRole.user, value)], []
    if isinstance(value, list):
        return from_messages(value, where, source, shown, problems)
    if isinstance(value, dict):
        if "messages" in value:
            return from_messages(value["messages"], (*where, "messages"), source, shown, problems)
        key = next((k for k in INPUT_KEYS if isinstance(value.get(k), str)), None)
        if key is not None:
            return [Said(TurnRole.user, value[key])], []
    why = "cannot tell the user's message: give a text, a list of messages, or {'messages': [...]}"
    problems.append(Problem(shown, why, source.line_of(where), dotted((*source.prefix, *where))))
    return [], []


def unread_keys(value: Any) -> dict[str, Any]:
    """The keys of a dataset's input mapping that `chat_of` did not take the turns from."""
    if not isinstance(value, dict):
        return {}
    used = (
        "messages"
        if "messages" in value
        else next((k for k in INPUT_KEYS if isinstance(value.get(k), str)), None)
    )
    return {k: v for k, v in value.items() if k != used}


def expected_of(
    value: Any, where: tuple[str | int, ...], source: Source, shown: str, problems: list[Problem]
) -> Said | None:
    """The expected turn out of a dataset's expected output: a text, a chat message (an assistant reply or
    tool call), or a mapping with one text under a usual key (`output`, `answer`, ...); None for none."""
    if value is None:
        return None
    if isinstance(value, str):
        return Said(TurnRole.assistant, value)
    if isinstance(value, dict) and "role" in value:
        turns, _ = from_messages([value], where, source, shown, problems)
        return turns[0] if turns else None
    if isinstance(value, dict):
        if isinstance(value.get("messages"), list) and value["messages"]:
            turns, _ = from_messages(value["messages"][-1:], (*where, "messages"), source, shown, problems)
            return turns[0] if turns else None
        key = next((k for k in OUTPUT_KEYS if isinstance(value.get(k), str)), None)
        if key is not None:
            return Said(TurnRole.assistant, value[key])
    why = "cannot tell the expected reply: give a text, a chat message, or {'output': ...}"
    problems.append(Problem(shown, why, source.line_of(where), dotted((*source.prefix, *where))))
    return None
