"""The seven metrics of Table 2 (seed 001, Section 4.3; issue 17, item 9) on hand-built tests, and the
offline agents: the oracle reaches 100% everywhere, the null agent has API recall 0 (item 8, demo part)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from evalcore.generators.procedure import agents
from evalcore.generators.procedure.agents import DemoAgent, NullAgent, OracleAgent, play
from evalcore.generators.procedure.conversations import render_path, to_conversation
from evalcore.generators.procedure.convgraph import build_conversation_graph, convert_flowgraph
from evalcore.generators.procedure.cut import cut_tests
from evalcore.generators.procedure.flowgraph import build_flowgraph, compile_flowgraph
from evalcore.generators.procedure.metrics import (
    REPLY_THRESHOLD,
    REPLY_THRESHOLDS,
    Action,
    calibrate_threshold,
    reply_threshold,
    same_arguments,
    score_tests,
    table2,
    threshold_note,
)
from evalcore.generators.procedure.noise import add_noise
from evalcore.generators.procedure.paths import weighted_walks
from evalcore.inputs.project import load_project
from evalcore.llm.local import hashed_ngrams
from evalcore.models import Provenance, Tool, Turn
from evalcore.models import Test as ItemTest

PROV = Provenance(producer="offline")
SAMPLE = load_project(Path(__file__).resolve().parents[3] / "data" / "sample")
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


def _sample_tests(seed: int = 0) -> tuple[list, list[ItemTest]]:
    """Tests of the sample's procedures, made offline (graphs, noise, walks, conversations, cuts)."""
    tests: list[ItemTest] = []
    apis = {t.name: t.parameters for t in SAMPLE.tools}
    for k, procedure in enumerate(SAMPLE.procedures):
        flow = build_flowgraph(procedure, SAMPLE.tools, compile_flowgraph(procedure, SAMPLE.tools))
        conv = build_conversation_graph(procedure.name, convert_flowgraph(flow, procedure.intent), list(apis))
        noisy = add_noise(conv, p=0.3, seed=seed)
        for j, path in enumerate(weighted_walks(noisy, 6, seed)):
            turns = render_path(noisy, path, apis, procedure.intent, random.Random(100 * k + j))
            made = to_conversation(f"c{k}-{j}", turns, graph=noisy, path=path, problems=[], provenance=PROV)
            tests += cut_tests(made)
    return SAMPLE.procedures, tests


def test_demo_agent_follows_the_procedures(monkeypatch: pytest.MonkeyPatch) -> None:
    """With its mistakes turned off, the demo agent reads the procedure, its step and the last API output
    from the context alone: every API call and nearly every reply is the expected one (it misses only
    injected messages that share words with the procedure, and values no customer ever stated)."""
    procedures, tests = _sample_tests()
    for rate in ("SKIP_LOOKUP", "WRONG_PARAMETER", "CALL_INSTEAD_OF_ASK", "OFF_SCRIPT_REPLY"):
        monkeypatch.setattr(agents, rate, 0.0)
    scores = score_tests(play(tests, DemoAgent(procedures, SAMPLE.tools), SAMPLE.tools), similar, CUT)
    counts = table2(scores, CUT)
    assert (
        counts["api_recall"][0] == counts["api_recall"][1]
        and counts["correct_api"][0] == counts["correct_api"][1]
    )
    assert counts["reply_recall"][0] == counts["reply_recall"][1]
    steps = [s for s in scores if "only help you" not in s.expected.text]
    assert sum(s.correct for s in steps) >= 0.9 * len(steps)
    steer = [s.predicted.text for s in scores if "only help you" in s.expected.text]
    assert steer and sum("only here to help" in text for text in steer) >= len(steer) / 2  # steered back


def test_demo_agent_errs_at_seeded_rates_and_is_reproducible() -> None:
    procedures, tests = _sample_tests()
    demo = DemoAgent(procedures, SAMPLE.tools, seed=3)
    actions = play(tests, demo, SAMPLE.tools)
    assert actions == play(tests, DemoAgent(procedures, SAMPLE.tools, seed=3), SAMPLE.tools)
    assert actions != play(tests, DemoAgent(procedures, SAMPLE.tools, seed=4), SAMPLE.tools)
    first_calls = [
        a for t, a in actions
        if t.expected.role == "tool_call" and not any(c.role == "tool_call" for c in t.context)
    ]  # fmt: skip
    skipped = sum(a.kind == "reply" for a in first_calls) / len(first_calls)
    assert skipped == pytest.approx(agents.SKIP_LOOKUP, abs=0.15)  # the lookup skipped, assumed fine
    asks = [(t, a) for t, a in actions if t.expected.role == "assistant" and "?" in t.expected.content]
    assert any(a.kind == "api" for _, a in asks)  # called an API where it should have asked
    counts = table2(score_tests(actions, similar, CUT), CUT)
    assert counts["correct_params"][0] < counts["correct_params"][1]  # a wrong value sent


CUT = REPLY_THRESHOLDS["offline/hash-256"]


def similar(a, b):
    """Cosine of the hashed n-gram embedding (the offline model, threshold CUT): the demo agent says the
    step in its own words, so its replies are compared by meaning, not by text."""
    return [float(hashed_ngrams(x) @ hashed_ngrams(y)) for x, y in zip(a, b, strict=True)]


REPLY_PAIRS = Path(__file__).resolve().parents[2] / "fixtures" / "procedure_replies.jsonl"


def test_the_reply_threshold_is_the_calibrated_cut_on_the_hand_written_pairs() -> None:
    rows = [json.loads(line) for line in REPLY_PAIRS.read_text().splitlines()]
    assert len(rows) >= 30 and {r["procedure"] for r in rows} == {p.name for p in SAMPLE.procedures}

    def cosines(key: str) -> list[float]:
        a = np.stack([hashed_ngrams(r["expected"]) for r in rows])
        b = np.stack([hashed_ngrams(r[key]) for r in rows])
        return (a * b).sum(axis=1).tolist()

    cal = calibrate_threshold(cosines("paraphrase"), cosines("wrong"))
    assert round(cal.threshold, 2) == REPLY_THRESHOLDS["offline/hash-256"]
    assert cal.accuracy >= 0.85 and cal.positive[1] > cal.threshold > cal.negative[0]
    assert reply_threshold("offline/hash-256") == (REPLY_THRESHOLDS["offline/hash-256"], True)
    assert reply_threshold("openai/text-embedding-3-small") == (REPLY_THRESHOLD, False)
    assert "no calibrated threshold" in threshold_note(REPLY_THRESHOLD, "openai/text-embedding-3-small")
    assert "(given)" in threshold_note(0.6, "openai/text-embedding-3-small", given=True)


def test_calibration_picks_the_most_accurate_cut() -> None:
    cal = calibrate_threshold([0.9, 0.8, 0.6], [0.1, 0.3, 0.7])
    assert cal.threshold == pytest.approx(0.45) and cal.accuracy == pytest.approx(5 / 6)
    assert cal.positive == (0.6, 0.9) and cal.negative == (0.1, 0.7)
