"""What a run plays: conversations turn by turn, or single tests, as a list of exchanges per item.

Items are read through the read model (`evalcore.items.current`): an annotator's corrected expected
answer is what the target is judged against, and the item's judge verdict is the one the tiers use.
A conversation becomes one exchange per assistant turn: the user message(s) before it are sent, the
assistant turn's content is the expected answer. Tool turns are not sent (chat targets see text only).
A test is one exchange: its context is sent as it is (the reference history), its expected turn judged.

Per turn the report needs the query type (the assistant turn's, else its question's), the grounding
documents (the same way round), and whether it is multi-turn: asked after at least one earlier exchange,
so the first question of a conversation counts as single-turn (it is read without any history).
A doc-QA question also carries its resolved, stand-alone form, which a run with single-turn pairs asks
again alone (`Exchange.resolved`).
`n_documents` is the item's chain length (metadata `chain` or `n_documents`), else the number of
distinct documents its turns cite.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evalcore.errors import NotFoundError
from evalcore.generators.doc_qa.schema import CANNOTANSWER, is_cannot_answer
from evalcore.items.current import CurrentItem, item_ids, read_items, read_tiers
from evalcore.items.store_ops import KIND, TEST_KIND
from evalcore.llm.types import Message
from evalcore.models import Conversation, Test, Tier, Turn, TurnRole
from evalcore.store import Store


@dataclass(frozen=True)
class Exchange:
    """One turn to play: what is sent, what is expected, and how the report classifies it."""

    turn_index: int
    question: str
    expected: str
    query_type: str | None
    grounding: tuple[str, ...]
    multi_turn: bool
    assertions: tuple[dict[str, Any], ...] = ()
    resolved: str = ""  # the question with its references spelled out, to be asked alone (doc-QA)


@dataclass(frozen=True)
class PlayItem:
    """A conversation or test ready to play."""

    key: str  # "conversation:<id>" or "test:<id>"
    kind: str
    item_id: str
    version: int
    spec_id: str | None
    n_documents: int | None
    judge_passed: bool | None
    exchanges: tuple[Exchange, ...]
    context: tuple[Message, ...] = field(default=())  # tests: the fixed history before the exchange

    def unit_key(self, exchange: Exchange) -> str:
        """The job unit of one played turn."""
        return f"{self.key}#t{exchange.turn_index}"


def item_key(kind: str, item_id: str) -> str:
    """'conversation:<id>' or 'test:<id>'."""
    return f"{kind}:{item_id}"


def _expected_text(turn: Turn) -> str:
    if turn.role == TurnRole.tool_call:
        return f"call {turn.tool_name}({json.dumps(turn.arguments or {}, ensure_ascii=False)})"
    return turn.content


def _n_documents(metadata: dict[str, Any], turns: list[Turn]) -> int | None:
    if isinstance(metadata.get("n_documents"), int):
        return metadata["n_documents"]
    chain = metadata.get("chain")
    if isinstance(chain, list) and chain:
        return len(chain)
    documents = {d for t in turns for d in t.grounding}
    return len(documents) or None


def conversation_item(conversation: Conversation, version: int, judge_passed: bool | None) -> PlayItem:
    """One exchange per assistant turn of the conversation; `judge_passed` is the item's judge verdict."""
    exchanges: list[Exchange] = []
    pending: list[Turn] = []
    for turn in conversation.turns:
        if turn.role == TurnRole.user:
            pending.append(turn)
        elif turn.role == TurnRole.assistant and pending:
            asked = pending[-1]
            exchanges.append(
                Exchange(
                    turn_index=turn.index,
                    question="\n\n".join(t.content for t in pending),
                    expected=turn.content,
                    # Unanswerable questions get their own row in reports, as on the Conversations page.
                    query_type=CANNOTANSWER
                    if is_cannot_answer(turn.content)
                    else turn.query_type or asked.query_type,
                    grounding=tuple(turn.grounding or asked.grounding),
                    multi_turn=bool(exchanges),
                    assertions=tuple(turn.metadata.get("assertions") or ()),
                    resolved=str(asked.metadata.get("resolved_question") or ""),
                )
            )
            pending = []
    return PlayItem(
        key=item_key(KIND, conversation.id),
        kind=KIND,
        item_id=conversation.id,
        version=version,
        spec_id=conversation.spec_id,
        n_documents=_n_documents(conversation.metadata, conversation.turns),
        judge_passed=judge_passed,
        exchanges=tuple(exchanges),
    )


def single_test_item(test: Test, version: int) -> PlayItem:
    """The test's context as a fixed history, and its expected turn as the one exchange."""
    context = [
        Message(t.role.value, t.content) for t in test.context if t.role.value in ("user", "assistant")
    ]
    last_user = next((t for t in reversed(test.context) if t.role == TurnRole.user), None)
    exchange = Exchange(
        turn_index=test.expected.index,
        question=last_user.content if last_user else "",
        expected=_expected_text(test.expected),
        query_type=test.expected.query_type or (last_user.query_type if last_user else None),
        grounding=tuple(test.expected.grounding or (last_user.grounding if last_user else [])),
        multi_turn=sum(t.role == TurnRole.user for t in test.context) > 1,
        assertions=tuple(test.assertions),
    )
    return PlayItem(
        key=item_key(TEST_KIND, test.id),
        kind=TEST_KIND,
        item_id=test.id,
        version=version,
        spec_id=test.spec_id,
        n_documents=_n_documents({}, [*test.context, test.expected]),
        judge_passed=None,
        exchanges=(exchange,),
        context=tuple(context[:-1] if context and context[-1].role == "user" else context),
    )


def play_item(item: CurrentItem) -> PlayItem:
    """What a run plays of a current item: its content with the human corrections applied (a corrected
    expected answer is what the target is judged against), and the judge verdict under the policy."""
    if item.kind == KIND:
        return conversation_item(item.conversation(), item.version, item.judge.passes)
    if item.kind == TEST_KIND:
        return single_test_item(item.test(), item.version)
    raise NotFoundError(f"'{item.id}' is a {item.kind}: a run plays conversations and tests")


def load_items(store: Store, keys: Sequence[str]) -> tuple[list[PlayItem], list[str]]:
    """The items behind keys, ready to play, in key order (read together: a few queries per 500 items),
    and the keys whose item is no longer in the store."""
    wanted = [key.partition(":") for key in keys]
    found = read_items(store, [item_id for _, _, item_id in wanted])
    items, missing = [], []
    for key, (kind, _, item_id) in zip(keys, wanted, strict=True):
        item = found.get(item_id)
        if item is None or item.kind != kind:
            missing.append(key)
        else:
            items.append(play_item(item))
    return items, missing


def load_item(store: Store, key: str) -> PlayItem:
    """The current item behind one key, ready to play."""
    items, _ = load_items(store, [key])
    if not items:
        kind, _, item_id = key.partition(":")
        raise NotFoundError(f"no {kind} '{item_id}' in the store")
    return items[0]


def select_keys(
    store: Store,
    project_id: str,
    *,
    source: str = "conversations",
    spec_id: str | None = None,
    generator: str | None = None,
    limit: int | None = None,
    include_rejected: bool = False,
) -> list[str]:
    """Keys of the items a run plays: the project's conversations and/or tests, oldest first; at most
    `limit` of them (None: all). Items annotators rejected are left out unless `include_rejected`, as
    procedure tests are: a run measures the target, not data people marked wrong."""
    if source not in ("conversations", "tests", "both"):
        raise ValueError(f"source must be 'conversations', 'tests' or 'both', not {source!r}")
    keys: list[str] = []
    if source in ("conversations", "both"):
        ids = item_ids(store, project_id, KIND, generator=generator, spec_id=spec_id)
        keys += [item_key(KIND, i) for i in _kept(store, project_id, ids, include_rejected)]
    if source in ("tests", "both"):
        ids = item_ids(store, project_id, TEST_KIND, spec_id=spec_id)
        keys += [item_key(TEST_KIND, i) for i in _kept(store, project_id, ids, include_rejected)]
    return keys if limit is None else keys[: max(limit, 0)]


def _kept(store: Store, project_id: str, ids: list[str], include_rejected: bool) -> list[str]:
    """The ids a run plays: all of them, or those no annotator rejected."""
    if include_rejected:
        return ids
    tiers = read_tiers(store, project_id, ids)
    return [i for i in ids if tiers.get(i) != Tier.rejected]
