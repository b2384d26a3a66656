"""What every exporter to another tool's format shares: an item as a `Case` (turns, expected turn,
assertions), our own fields for the format's metadata field (`evalcore`), and chat messages.

Specs, conversations and tests all become cases, so each format writes one record shape: a test is its
context and expected turn; a conversation its turns (formats that want an input and a reference take the
turns up to its last user turn and the reply after it, `split_last`); a spec its Given and When as the
user's message and its Then as the expected reply. Our fields (`ours`) carry what the format has no place
for: ids, generator, spec, tier, provenance and the offline mark, every turn as we hold it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evalcore.items.current import iter_items
from evalcore.items.store_ops import KIND, TEST_KIND
from evalcore.models import Conversation, Spec, Test, Turn, TurnRole
from evalcore.specs.store_ops import list_specs
from evalcore.store import Store

OURS = "evalcore"  # the key our own fields travel under, as evalcore.inputs.formats reads them
SPEC_KIND = "spec"
KINDS = (SPEC_KIND, KIND, TEST_KIND)


@dataclass
class Case:
    """One item as the exporters write it."""

    id: str
    kind: str
    title: str
    turns: list[Turn]
    expected: Turn | None = None
    assertions: list[dict[str, Any]] = field(default_factory=list)
    ours: dict[str, Any] = field(default_factory=dict)


def _ours(item: Conversation | Test | Spec, kind: str) -> dict[str, Any]:
    provenance = item.provenance
    out: dict[str, Any] = {
        "kind": kind,
        "id": item.id,
        "offline": provenance.is_offline,
        "provenance": provenance.model_dump(mode="json"),
    }
    if isinstance(item, Spec):
        out["spec"] = item.model_dump(mode="json", exclude={"provenance", "id", "selected"})
        return out
    out.update(generator=item.generator, spec_id=item.spec_id, tier=str(item.tier))
    if isinstance(item, Conversation):
        out.update(metadata=item.metadata, turns=[t.model_dump(mode="json") for t in item.turns])
    else:
        out.update(
            conversation_id=item.conversation_id,
            turns=[t.model_dump(mode="json") for t in item.context],
            expected=item.expected.model_dump(mode="json"),
            assertions=item.assertions,
        )
    return out


def case_of(item: Conversation | Test | Spec) -> Case:
    """An item as a case (see the module docstring)."""
    if isinstance(item, Spec):
        ask = Turn(index=0, role=TurnRole.user, content=f"{item.given}\n\n{item.when}".strip())
        then = Turn(index=1, role=TurnRole.assistant, content=item.then)
        return Case(item.id, SPEC_KIND, item.scenario, [ask], then, ours=_ours(item, SPEC_KIND))
    if isinstance(item, Conversation):
        title = str(item.metadata.get("scenario") or f"{item.generator} conversation {item.id}")
        return Case(item.id, KIND, title, list(item.turns), ours=_ours(item, KIND))
    title = f"{item.generator or 'test'} test {item.id}"
    return Case(
        item.id, TEST_KIND, title, list(item.context), item.expected, item.assertions, _ours(item, TEST_KIND)
    )


def cases(store: Store, project_id: str, kind: str) -> Iterator[Case]:
    """Every current item of a kind as a case: specs as they stand; conversations and tests through the
    read model (corrections applied, tier under the project's policy), oldest first."""
    if kind == SPEC_KIND:
        for view in list_specs(store, project_id):
            yield case_of(view.spec)
        return
    for item in iter_items(store, project_id, kind):
        yield case_of(item.conversation() if kind == KIND else item.test())


def split_last(case: Case) -> tuple[list[Turn], str, Turn | None]:
    """A case as (turns before the last user message, that message, the reply expected after it): a
    test's or spec's own; for a conversation, the first turn after its last user turn."""
    users = [i for i, t in enumerate(case.turns) if t.role == TurnRole.user]
    if not users:
        return list(case.turns), "", case.expected
    last = users[-1]
    after = case.turns[last + 1 :]
    expected = case.expected if case.kind != KIND else (after[0] if after else None)
    return list(case.turns[:last]), case.turns[last].content, expected


def message(turn: Turn) -> dict[str, Any]:
    """A turn as an OpenAI chat message (a tool call as an assistant message with `tool_calls`)."""
    if turn.role == TurnRole.tool_call:
        call = {
            "name": turn.tool_name or "",
            "arguments": json.dumps(turn.arguments or {}, ensure_ascii=False),
        }
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": f"call_{turn.index}", "type": "function", "function": call}],
        }
    if turn.role == TurnRole.tool_result:
        return {"role": "tool", "content": turn.content, "name": turn.tool_name or ""}
    return {"role": str(turn.role), "content": turn.content}


def messages(turns: list[Turn]) -> list[dict[str, Any]]:
    """Turns as OpenAI chat messages."""
    return [message(t) for t in turns]
