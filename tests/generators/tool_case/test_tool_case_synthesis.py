"""Tool-case synthesis (seed 004, Section 2.2; issue 20, item 2): tool groups of the sample, situations a
group cannot produce skipped with a reason, offline templates that really contain their defect, the job
on the sample project, and the model task (one-shot for NEG, checked output)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import jsonschema
import pytest

from evalcore.errors import UsageError, ValidationFailed
from evalcore.generators.tool_case.catalog import builtin_situations
from evalcore.generators.tool_case.groups import derive_groups, prerequisites, requirement, tool_groups
from evalcore.generators.tool_case.job import create_toolcases, execute_toolcases, generate_toolcases
from evalcore.generators.tool_case.offline import need, realise
from evalcore.generators.tool_case.records import GENERATOR
from evalcore.generators.tool_case.synthesis import GENERATE_TOOL_CASE, ZERO_SHOT, case_inputs
from evalcore.inputs import import_project
from evalcore.inputs.documents import read_table
from evalcore.items.store_ops import list_conversations
from evalcore.models import Tool
from evalcore.store import Store

pytest_plugins = ["llm_fixtures"]
SAMPLE = Path(__file__).resolve().parents[3] / "data" / "sample"
TOOLS = [Tool.model_validate(json.loads(p.read_text())) for p in sorted((SAMPLE / "tools").glob("*.json"))]
SITUATIONS = {s.id: s for s in builtin_situations()}
GROUPS = {g.name: g for g in derive_groups(TOOLS)}
TABLES = tuple((p.stem, read_table(p, p.name, []).rows) for p in sorted((SAMPLE / "tables").glob("*.csv")))


def test_the_samples_tools_fall_into_four_groups():
    assert {name: sorted(t.name for t in g.tools) for name, g in GROUPS.items()} == {
        "order tools": ["create_return", "lookup_order", "open_warranty_claim"],
        "store tools": ["book_rental", "book_repair", "check_rental_availability"],
        "check_stock": ["check_stock"],
        "transfer_to_human": ["transfer_to_human"],
    }
    given = tool_groups(TOOLS, {"tool_groups": {"all": [t.name for t in TOOLS]}})
    assert [g.name for g in given] == ["all"] and len(given[0].tools) == 8
    with pytest.raises(ValidationFailed) as err:
        tool_groups(TOOLS, {"tool_groups": {"mail": ["check_stock", "send_email"]}})
    assert [str(p) for p in err.value.problems] == [
        "setting tool_groups [mail[1]]: no tool 'send_email' in the project"
    ]


def test_a_group_that_cannot_produce_a_situation_says_why():
    single = GROUPS["check_stock"]
    assert requirement("wrong_tool_silent", single) == "needs a second tool to pick wrongly"
    assert "security or verification" in requirement("security_overkill", GROUPS["store tools"])
    assert "changes anything" in requirement("wrong_action_silent", single)
    assert requirement("security_overkill", GROUPS["order tools"]) is None
    assert requirement(None, single).startswith("the situation has no offline template")


def _able(recipe: str) -> list:
    return [g for g in GROUPS.values() if requirement(recipe, g) is None]


@pytest.mark.parametrize("situation", list(SITUATIONS))
def test_every_situation_is_realised_with_tool_turns_on_every_group_that_can_produce_it(situation):
    groups = _able(situation)
    assert groups, f"no sample group produces {situation}"
    for group in groups:
        for seed in range(4):
            case = realise(situation, group.tools, random.Random(seed))
            roles = [t.role for t in case.turns]
            assert roles[0] == "user" and "tool_call" in roles and "assistant" in roles
            for i, turn in enumerate(case.turns):
                if turn.role == "tool_call":
                    assert case.turns[i + 1].role == "tool_result"
                    assert case.turns[i + 1].tool_name == turn.tool_name
                    assert turn.tool_name in {t.name for t in group.tools}
            assert case.defect


def _calls(case):
    return [(t, case.turns[i + 1]) for i, t in enumerate(case.turns) if t.role == "tool_call"]


def test_the_templates_really_contain_their_defects():
    rng = random.Random(7)
    orders, store = GROUPS["order tools"], GROUPS["store tools"]
    # Correct: every call's arguments are valid for the tool's schema.
    case = realise("correct", store.tools, rng)
    for call, _ in _calls(case):
        jsonschema.validate(call.arguments, store.tool(call.tool_name).parameters)
    # Null Tool Response: the tool answers nothing; the agent gives up.
    case = realise("null_tool_response", orders.tools, rng)
    assert _calls(case)[0][1].content in ("", "null")
    # Hallucinated Edit: the tool reports a failure outcome, the agent claims success.
    case = realise("hallucinated_edit", orders.tools, rng)
    result = json.loads(_calls(case)[0][1].content)
    outcomes = orders.tool(_calls(case)[0][0].tool_name).returns["properties"]["result"]["enum"]
    assert result["result"] in outcomes[1:] and "went through" in case.turns[-3].content
    # BadParams / Silent: the user leaves a value open, the agent passes one nobody gave.
    case = realise("bad_params_silent", store.tools, rng)
    guessed = {str(v) for v in _calls(case)[0][0].arguments.values()} - {
        v for v in map(str, _calls(case)[0][0].arguments.values()) if v in case.turns[0].content
    }
    assert guessed and "the usual one" in case.turns[0].content
    # WrongTool: the tool called is not the one the user asked for.
    case = realise("wrong_tool_silent", store.tools, rng)
    asked = next(t for t in store.tools if need(t) in case.turns[0].content)
    assert _calls(case)[0][0].tool_name != asked.name
    # Trusted Wrong Fact and Wrong Action Silent: the world state records what the output hides.
    assert realise("trusted_wrong_fact", store.tools, rng).world_state
    hidden = realise("wrong_action_silent", orders.tools, rng).world_state
    assert hidden["applied"] is False and hidden["tool"] in {"create_return", "open_warranty_claim"}
    # Propagated Tool Error: the result answers for another value than the call asked.
    case = realise("propagated_tool_error", orders.tools, rng)
    call, out = _calls(case)[0]
    data = json.loads(out.content)
    assert any(k in data and data[k] != v for k, v in call.arguments.items())


# Templates where the tool works properly or the agent behaves: the agent makes the calls that come first.
PROPER = [s.id for s in SITUATIONS.values() if s.recipe != "missing_or_skipped_tool" and (
    s.tool_execution == "correct" or s.agent_appropriate)]  # fmt: skip


@pytest.mark.parametrize("situation", PROPER)
def test_the_agent_makes_the_calls_that_must_come_first_unless_it_skips_them(situation):
    for group in _able(situation):
        for seed in range(6):
            case = realise(situation, group.tools, random.Random(seed), TABLES)
            called: list[str] = []
            for call, _ in _calls(case):
                needed = {t.name for t in prerequisites(group.tool(call.tool_name), group.tools)}
                assert not needed or needed & set(called), (situation, seed, call.tool_name, called)
                called.append(call.tool_name)
    skipped = realise("missing_or_skipped_tool", GROUPS["store tools"].tools, random.Random(0), TABLES)
    assert [c.tool_name for c, _ in _calls(skipped)] == ["book_rental"]


def test_correct_conversations_have_consistent_values_from_the_tables_and_read_like_a_person():
    fleet = {(r["store_id"], r["sku"]): r for r in dict(TABLES)["rental_fleet"]}
    for group in _able("correct"):
        for seed in range(15):
            case = realise("correct", group.tools, random.Random(seed), TABLES)
            for call, out in _calls(case):
                args = call.arguments
                jsonschema.validate(args, group.tool(call.tool_name).parameters)
                if "start_date" in args and "end_date" in args:
                    assert args["start_date"] <= args["end_date"]
                if "rider_age" in args:
                    assert 18 <= args["rider_age"] <= 70
                if call.tool_name == "book_rental":
                    row = fleet[(args["store_id"], args["sku"])]  # a bike that store rents
                    assert json.loads(out.content)["deposit_usd"] == int(row["deposit_usd"])
            said = [t.content for t in case.turns if t.role in ("user", "assistant")]
            assert not any(".." in text or "Here is what I found" in text for text in said)
            assert case.turns[0].content.startswith("Hi, I'd like to ")
            assert "_" not in case.turns[0].content.split(".")[0]  # no tool name in the request


def test_the_model_prompt_is_one_shot_for_neg_and_zero_shot_for_pos():
    group = GROUPS["order tools"]
    neg = GENERATE_TOOL_CASE.render(case_inputs(SITUATIONS["null_tool_response"], group))
    pos = GENERATE_TOOL_CASE.render(case_inputs(SITUATIONS["correct"], group))
    assert '"tool_result"' in neg[-1].content and ZERO_SHOT not in neg[-1].content
    assert ZERO_SHOT in pos[-1].content and "lookup_order" in pos[-1].content


@pytest.fixture
def sample(sqlite_store: Store, monkeypatch) -> tuple[Store, str]:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    return sqlite_store, import_project(sqlite_store, SAMPLE).project_id


def test_offline_generation_gives_every_situation_labelled_conversations_and_resumes(sample):
    store, pid = sample
    seen = []
    outcome = generate_toolcases(
        store, pid, per_situation=2, pos_share=None, seed=3, on_progress=lambda d, n: seen.append(d)
    )
    assert (outcome.done, outcome.total, outcome.failed) == (52, 52, []) and seen[-1] == 52
    params = outcome.run.params
    assert params["unproduced"] == []
    assert {"situation": "wrong_tool_silent", "group": "check_stock",
            "reason": "needs a second tool to pick wrongly"} in params["skipped"]  # fmt: skip
    conversations = [v.conversation for v in list_conversations(store, pid, generator=GENERATOR)]
    assert len(conversations) == 52
    by_situation: dict[str, int] = {}
    for c in conversations:
        situation = SITUATIONS[c.metadata["situation"]]
        assert c.metadata["labels"] == situation.labels and c.provenance.is_offline
        assert requirement(situation.recipe, GROUPS[c.metadata["tool_group"]]) is None
        by_situation[situation.id] = by_situation.get(situation.id, 0) + 1
    assert by_situation == dict.fromkeys(SITUATIONS, 2)
    fleet = {(r["store_id"], r["sku"]) for r in dict(TABLES)["rental_fleet"]}
    booked = [
        (t.arguments["store_id"], t.arguments["sku"])
        for c in conversations
        if c.metadata["situation"] == "correct"
        for t in c.turns
        if t.tool_name == "book_rental" and t.role.value == "tool_call"
    ]
    assert set(booked) <= fleet  # the job hands the project's tables to the templates
    again = execute_toolcases(store, outcome.run.id)
    assert again.done == 52 and len(list_conversations(store, pid, generator=GENERATOR)) == 52


def test_a_situation_no_group_can_produce_is_skipped_not_faked(sample, tmp_path):
    store, pid = sample
    store.update_settings(pid, {"tool_groups": {"stock": ["check_stock"]}})
    run = create_toolcases(store, pid, situations=["wrong_tool_silent", "null_tool_response"])
    assert run.params["unproduced"] == ["wrong_tool_silent"]
    assert [u["situation"] for u in run.params["units"]] == ["null_tool_response"]
    with pytest.raises(UsageError, match="unknown situation"):
        create_toolcases(store, pid, situations=["no_such_case"])
    with pytest.raises(UsageError, match="unknown tool group"):
        create_toolcases(store, pid, groups=["nope"])


def _case_reply(tool: str) -> str:
    args = {"order_id": "WEB-204518", "email": "a@example.com"}
    turns = [
        {"role": "user", "content": "Where is my order WEB-204518? Email a@example.com."},
        {"role": "tool_call", "tool_name": tool, "arguments": args},
        {"role": "tool_result", "tool_name": tool, "content": ""},
        {"role": "assistant", "content": "I couldn't find anything."},
        {"role": "user", "content": "Useless."},
    ]  # fmt: skip
    return json.dumps({"turns": turns, "world_state": None, "defect": "the tool returned nothing"})


def test_a_model_writes_the_conversation_and_one_using_a_foreign_tool_fails(sample, llm_env, monkeypatch):
    store, pid = sample
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    llm_env.enqueue(_case_reply("lookup_order"), _case_reply("send_email"))
    run = create_toolcases(store, pid, situations=["null_tool_response"], groups=["order tools"],
                           per_situation=2, model="openai/gpt-4o-mini")  # fmt: skip
    outcome = execute_toolcases(store, run.id)
    assert outcome.done == 2 and len(outcome.failed) == 1
    stored = [v.conversation for v in list_conversations(store, pid, generator=GENERATOR)]
    assert len(stored) == 1 and stored[0].provenance.producer == "openai/gpt-4o-mini"
    assert [t.role.value for t in stored[0].turns][:3] == ["user", "tool_call", "tool_result"]
    prompt = llm_env.calls[0].body["messages"][-1]["content"]
    assert "Null Tool Response" in prompt and "lookup_order" in prompt
