"""Tests cut from conversations (seed 001, Section 3.9; issue 17, item 7).

A conversation is cut at every customer message and every API output: the context is every turn up to
and including it, the expected output the next non-customer turn, an assistant reply or a tool call
(API name with arguments). Cuts followed by nothing or by another customer message give no test.
"""

from __future__ import annotations

from evalcore.models import Conversation, Provenance, Test, TurnRole

CUT_AFTER = (TurnRole.user, TurnRole.tool_result)
EXPECTED = (TurnRole.assistant, TurnRole.tool_call)


def cut_tests(conversation: Conversation, provenance: Provenance | None = None) -> list[Test]:
    """The conversation's tests, in order; ids are `<conversation id>-t<index of the expected turn>`."""
    tests = []
    turns = conversation.turns
    for i, turn in enumerate(turns[:-1]):
        expected = turns[i + 1]
        if turn.role in CUT_AFTER and expected.role in EXPECTED:
            tests.append(
                Test(
                    id=f"{conversation.id}-t{expected.index}",
                    conversation_id=conversation.id,
                    generator=conversation.generator,
                    spec_id=conversation.spec_id,
                    context=turns[: i + 1],
                    expected=expected,
                    provenance=provenance or conversation.provenance,
                )
            )
    return tests
