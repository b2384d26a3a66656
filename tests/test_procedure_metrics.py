"""The seven metrics of Table 2 (seed 001, Section 4.3; issue 17, item 9) on hand-built tests, and the
offline agents: the oracle reaches 100% everywhere, the null agent has API recall 0 (item 8, demo part)."""

from __future__ import annotations

import pytest

from evalcore.generators.procedure.agents import DemoAgent, NullAgent, OracleAgent, play
from evalcore.generators.procedure.metrics import Action, same_arguments, score_tests, table2
from evalcore.models import Provenance, Tool, Turn
from evalcore.models import Test as ItemTest

PROV = Provenance(producer="offline")
TOOL = Tool(
    name="lookup_order",
    description="Find an order.",
    parameters={
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "store": {"type": "string", "enum": ["A", "B"]}},
        "required": ["order_id", "store"],
    },
)


def _test(tid: str, conv: str, expected: Turn) -> ItemTest:
    return ItemTest(
        id=tid,
        conversation_id=conv,
        context=[Turn(index=0, role="user", content=f"hi ({tid})")],
        expected=expected,
        provenance=PROV,
    )


def _reply(text: str) -> Turn:
    return Turn(index=1, role="assistant", content=text)


def _call(name: str, **args) -> Turn:
    return Turn(index=1, role="tool_call", tool_name=name, arguments=args)


def exact(a, b):
    """Similarity 1 for identical texts, else 0: the metrics' counting is what is tested."""
    return [1.0 if x == y else 0.0 for x, y in zip(a, b, strict=True)]


def test_table2_counts_by_hand() -> None:
    tests = [
        _test("t1", "c1", _reply("Ask for the order id.")),  # replied, same text: correct
        _test("t2", "c1", _call("lookup_order", order_id="W-1", store="A")),  # same call: correct
        _test("t3", "c2", _reply("Tell the result.")),  # called an API instead: reply recall miss
        _test("t4", "c2", _call("lookup_order", order_id="W-2", store="A")),  # wrong store: params miss
        _test("t5", "c3", _call("lookup_order", order_id="W-3", store="B")),  # replied: API recall miss
        _test("t6", "c3", _call("cancel", order_id="W-3")),  # wrong API
        _test("t7", "c4", _reply("Say goodbye.")),  # replied, other text: correct reply miss
    ]
    actions = [
        Action(kind="reply", text="Ask for the order id."),
        Action(kind="api", tool_name="lookup_order", arguments={"order_id": " w-1 ", "store": "A"}),
        Action(kind="api", tool_name="lookup_order", arguments={}),
        Action(kind="api", tool_name="lookup_order", arguments={"order_id": "W-2", "store": "B"}),
        Action(kind="reply", text="Done."),
        Action(kind="api", tool_name="lookup_order", arguments={"order_id": "W-3"}),
        Action(kind="reply", text="Bye!"),
    ]
    scores = score_tests(list(zip(tests, actions, strict=True)), exact, threshold=0.5)
    assert table2(scores, threshold=0.5) == {
        "reply_recall": (2, 3),  # t1, t7 replied; t3 did not
        "correct_reply": (1, 2),  # t1 of t1, t7
        "api_recall": (3, 4),  # t2, t4, t6 called; t5 replied
        "correct_api": (2, 3),  # t2, t4 of t2, t4, t6
        "correct_params": (1, 2),  # t2 (strings trimmed and case-folded) of t2, t4
        "test_correct": (2, 7),  # t1, t2
        "conversation_correct": (1, 4),  # c1 only
    }


def test_same_arguments_normalises_strings_and_numbers() -> None:
    assert same_arguments({"a": "X ", "n": 2}, {"a": "x", "n": 2.0})
    assert not same_arguments({"a": "x"}, {"a": "x", "b": 1})
    assert not same_arguments({"flag": True}, {"flag": 1})


def _suite() -> list[ItemTest]:
    tests = []
    for c in range(12):
        tests += [
            _test(f"c{c}-t1", f"c{c}", _reply("Ask for the order id and the store.")),
            _test(f"c{c}-t3", f"c{c}", _call("lookup_order", order_id=f"W-{c}", store="A")),
            _test(f"c{c}-t5", f"c{c}", _reply("Tell the customer the order was found.")),
        ]
    return tests


def test_oracle_is_perfect_and_null_has_no_api_recall() -> None:
    tests = _suite()
    oracle = table2(score_tests(play(tests, OracleAgent(tests), [TOOL]), exact))
    assert all(h == n > 0 for h, n in oracle.values()), oracle
    null = table2(score_tests(play(tests, NullAgent(), [TOOL]), exact))
    assert null["api_recall"] == (0, 12) and null["reply_recall"] == (24, 24)
    assert null["test_correct"][0] == 0 and null["conversation_correct"] == (0, 12)


def test_demo_agent_errs_at_seeded_rates_and_is_reproducible() -> None:
    tests = _suite()
    many = [_test(f"x{i}-{t.id}", f"x{i}-{t.conversation_id}", t.expected) for i in range(30) for t in tests]
    actions = play(many, DemoAgent(many, seed=3), [TOOL])
    assert actions == play(many, DemoAgent(many, seed=3), [TOOL])
    counts = table2(
        score_tests(actions, lambda a, b: [float(y.endswith(x)) for x, y in zip(a, b, strict=True)])
    )
    rate = {k: h / n for k, (h, n) in counts.items()}
    assert rate["api_recall"] == pytest.approx(1 - 0.3, abs=0.06)  # every call here is a first call
    assert rate["correct_params"] == pytest.approx(1 - 0.2, abs=0.06)
    assert rate["correct_reply"] == pytest.approx(1 - 0.15, abs=0.06)
    assert 0 < rate["reply_recall"] < 1 and rate["correct_api"] == 1.0
