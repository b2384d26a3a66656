"""Seed 004 where issue 26 found us short: POS at TRACE's share, values from the project's tables (no
made-up `QUERY-619`), make-or-break rubrics that decide NEG whatever the averages, SCOPE's reasons of both
polarities and its de-duplication over every rubric, and SPUR scored with its own satisfaction prompt."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import jsonschema
import pytest

from evalcore.generators.tool_case.catalog import builtin_situations
from evalcore.generators.tool_case.job import generate_toolcases, pos_counts
from evalcore.generators.tool_case.records import GENERATOR
from evalcore.generators.tool_case.rubrics import estimate_label, validate_rubric_set
from evalcore.generators.tool_case.scope import Summary, _deduplicated, score_conversation
from evalcore.generators.tool_case.values import arguments, other_value, result_for
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.llm.client import ModelClient
from evalcore.models import Tool

pytest_plugins = ["llm_fixtures"]
ROOT = Path(__file__).resolve().parents[3]
RETAIL = ROOT / "data" / "retail"
MADE_UP = re.compile(r"^[A-Z]{3,}(-[A-Z]+)*-\d{3}$")  # QUERY-619, NEW-SKU-651, TRACKING-NUMBER-320


def _tool(name: str) -> Tool:
    return Tool.model_validate(json.loads((RETAIL / "tools" / f"{name}.json").read_text()))


def _tables() -> tuple:
    import csv

    found = []
    for path in sorted((RETAIL / "tables").glob("*.csv")):
        with path.open(newline="") as handle:
            found.append((path.stem, list(csv.DictReader(handle))))
    return tuple(found)


def test_pos_situations_get_as_many_conversations_as_make_a_third_pos():
    situations = list(builtin_situations())
    counts = pos_counts(situations, 3, 0.35)
    # 25 NEG situations x 3 = 75; POS = round(75 * 0.35 / 0.65) = 40 -> 40 / 115 = 34.8%
    assert counts["correct"] == 40 and sum(counts.values()) == 115
    assert pos_counts(situations, 3, None)["correct"] == 3
    assert pos_counts([s for s in situations if s.overall == "NEG"], 2, 0.35) == {
        s.id: 2 for s in situations if s.overall == "NEG"
    }


def test_free_text_and_qualified_arguments_come_from_the_tables():
    tables, rng = _tables(), random.Random(4)
    categories = {r["category"] for r in dict(tables)["products"]}
    skus = {r["sku"] for r in dict(tables)["variants"]}
    for _ in range(10):
        assert arguments(_tool("search_products"), rng, tables)["query"] in categories
        assert set(arguments(_tool("exchange_items"), rng, tables)["new_skus"]) <= skus
    # another value for the 'wrong' one a template needs is another of the shop's, not a made-up code
    changed = other_value("new_skus", _tool("exchange_items").parameters["properties"]["new_skus"],
                          ["TNT-JUN2-GRN"], rng, tables)  # fmt: skip
    assert changed != ["TNT-JUN2-GRN"] and set(changed) <= skus


def test_results_hold_table_rows_or_leave_optional_fields_out():
    tables, rng = _tables(), random.Random(1)
    tool = _tool("search_products")
    result = result_for(tool, {"query": "camping"}, rng, tables)
    names = {r["name"] for r in dict(tables)["products"] if r["category"] == "camping"}
    assert result["products"] and {p["name"] for p in result["products"]} <= names
    jsonschema.validate(result, tool.returns)
    # a pending order has no shipment: what no table holds is left out, never CARRIER-856
    tracked = result_for(_tool("track_shipment"), {"order_id": "LK-30401"}, rng, tables)
    assert not any(MADE_UP.match(str(v)) for v in tracked.values()), tracked


def test_generated_tool_cases_hold_no_made_up_values_and_a_third_are_pos(sqlite_store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, RETAIL).project_id
    generate_toolcases(sqlite_store, pid, per_situation=1)
    found = [v.conversation for v in list_conversations(sqlite_store, pid, generator=GENERATOR)]
    pos = sum(c.metadata["labels"]["overall"] == "POS" for c in found)
    assert 0.30 <= pos / len(found) <= 0.40, (pos, len(found))

    def strings(value):
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict | list):
            for v in value.values() if isinstance(value, dict) else value:
                yield from strings(v)

    made_up = [
        s
        for c in found
        for t in c.turns
        if t.role.value in ("tool_call", "tool_result")
        for s in strings(t.arguments if t.role.value == "tool_call" else json.loads(t.content or "null"))
        if MADE_UP.match(s)
    ]
    # a code of the shop's own tables (the headlamp's SKU HLP-TRH-200) is real, however it looks
    real = {v for d in sqlite_store.documents(pid) for row in d.rows for v in row.values()}
    assert [s for s in made_up if s not in real] == []


def _scope(n_neg: int) -> object:
    neg = [
        {"id": f"n{i}", "area": "A", "polarity": "NEG", "text": f"bad {i}", "weight": 10}
        for i in range(n_neg)
    ]
    neg[0] |= {"weight": 100, "make_or_break": True}
    return validate_rubric_set({
        "method": "scope", "areas": [{"name": "A"}, {"name": "B"}],
        "rubrics": [{"id": "p", "area": "A", "polarity": "POS", "text": "good", "weight": 10}, *neg[:5],
                    *[r | {"area": "B"} for r in neg[5:]]],
    })  # fmt: skip


def test_a_make_or_break_hit_decides_neg_even_diluted_by_many_neg_rubrics():
    scope = _scope(10)
    # NEG average 100 * (1/5) / 10 = 2 against POS 10: the averages say POS, the make-or-break hit says NEG.
    label, sides = estimate_label(scope, {"p": 5, "n0": 1})
    assert sides == {"POS": 10.0, "NEG": 2.0} and label == "NEG"
    assert estimate_label(scope, {"p": 5})[0] == "POS"


def test_deduplication_runs_over_every_rubric_and_keeps_area_and_polarity(
    generated_store, llm_env, monkeypatch
):
    store, pid = generated_store
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    from evalcore.generators.tool_case.scope import Pipeline

    made = [
        ("Tools", "NEG", Summary(text="The agent calls the wrong tool.", support=3)),
        ("User", "NEG", Summary(text="The user complains about the answer.", support=2)),
        ("Tools", "POS", Summary(text="The agent calls the right tool with the user's values.", support=4)),
    ]
    llm_env.enqueue({"rubrics": [{"text": "The agent calls the wrong tool.", "support": 5}]})
    out = _deduplicated(Pipeline(ModelClient(store, pid), "openai/gpt-4o-mini"), made)
    prompt = llm_env.calls[0].body["messages"][-1]["content"]
    # one summarisation over the rubrics of both polarities, not one per polarity
    assert len(llm_env.calls) == 1 and "right tool" in prompt and "wrong tool" in prompt
    assert [(a, p, s.text) for a, p, s in out] == [
        ("Tools", "NEG", "The agent calls the wrong tool."),
        ("Tools", "POS", "The agent calls the right tool with the user's values."),  # POS lost: kept
    ]


def test_spur_is_scored_with_the_satisfaction_prompt_and_scope_with_its_own(
    generated_store, llm_env, monkeypatch
):
    store, pid = generated_store
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    conversation = list_conversations(store, pid, generator=GENERATOR)[0].conversation
    spur = validate_rubric_set({
        "method": "spur", "areas": [{"name": "User Satisfaction"}], "max_score": 10,
        "rubrics": [{"id": "s", "area": "User Satisfaction", "polarity": "POS", "text": "thanks"},
                    {"id": "d", "area": "User Satisfaction", "polarity": "NEG", "text": "complains"}],
    })  # fmt: skip
    llm_env.enqueue({"scores": [{"id": "s", "score": 3}]}, {"scores": [{"id": "p", "score": 1}]})
    llm = ModelClient(store, pid)
    assert score_conversation(llm, spur, conversation, model="openai/gpt-4o-mini") == {"s": 3, "d": 0}
    score_conversation(llm, _scope(2), conversation, model="openai/gpt-4o-mini")
    spur_prompt, scope_prompt = (c.body["messages"][0]["content"] for c in llm_env.calls)
    assert "Judge from the user's side" in spur_prompt and "Judge from the user's side" not in scope_prompt
    assert "Read the tool calls and tool results" in scope_prompt and "Read the tool calls" not in spur_prompt


@pytest.fixture
def generated_store(sqlite_store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, RETAIL).project_id
    generate_toolcases(sqlite_store, pid, situations=["correct"], per_situation=1)
    return sqlite_store, pid
