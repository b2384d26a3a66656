"""Small and local models' near-misses (issue 14): read without a re-ask, each repair recorded per model."""

from __future__ import annotations

import importlib
import json
import pkgutil

import pytest
from llm_server import FAST_RETRY, PROJECT

import evalcore
from evalcore.generators.doc_qa.generate import GENERATE_CONVERSATION, conversation_inputs
from evalcore.generators.doc_qa.schema import AdherenceCheck, QAConversation
from evalcore.llm import ModelClient, status
from evalcore.llm.parsing import TRUNCATED_ERROR, parse_output
from evalcore.llm.tasks import PROMPTS_DIR, TASKS, output_shape
from evalcore.models import Document, DocumentKind, Provenance, Spec
from evalcore.runs.judges import JUDGE_TURN, JudgeVerdict

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project

TURN = {"question": "Which store has no workshop?", "answer": "Westbrook Station.",
        "document_ids": ["stores"], "query_type": "SINGLE-DOC"}  # fmt: skip
CLEAN_TURNS = json.dumps({"turns": [TURN]})


def all_tasks() -> dict:
    """Every task of the library: a task registers itself when its module is imported."""
    for module in pkgutil.walk_packages(evalcore.__path__, "evalcore."):
        if not module.name.endswith(".__main__"):  # running it would start the CLI
            importlib.import_module(module.name)
    return TASKS


ENTITIES = all_tasks()["extract_entities"].output


def turns_with(**change) -> str:
    return json.dumps({"turns": [{**{k: v for k, v in TURN.items() if k not in change}, **change}]})


# Each fault issue 14 found, as a small model wrote it: (reply, output schema, repairs it needs).
FOUND = {
    "singular-key": (
        turns_with(document_ids=None).replace('"document_ids": null', '"document_id": "stores"'),
        QAConversation,
        ("key_alias", "string_to_list"),
    ),
    "snake-case-enum": (turns_with(query_type="single_doc"), QAConversation, ("enum_spelling",)),
    "title-case-enum": (turns_with(query_type="Single-Doc"), QAConversation, ("enum_spelling",)),
    "ids-as-string": (turns_with(document_ids="stores, returns"), QAConversation, ("string_to_list",)),
    "think-block": (
        '<think>Should it be {"turns": []}? No: one {pair} per turn.</think>\n' + CLEAN_TURNS,
        QAConversation,
        ("reasoning_block",),
    ),
    "comments": (
        '{"turns": [ // one pair\n' + json.dumps(TURN) + " /* the last */ ]}",
        QAConversation,
        ("comments",),
    ),
    "score-word": ('{"rationale": "Right.", "score": "PASS", "error_type": null}', JudgeVerdict,
                   ("score_word",)),
    "prometheus": ("Feedback: Gives the 14 days.\n[RESULT] 1", JudgeVerdict,
                   ("prometheus_result", "key_alias")),
    "pass-empty-error-type": ('{"rationale": "Right.", "score": 1, "error_type": ""}', JudgeVerdict,
                              ("empty_as_null",)),
    "pass-none-error-type": ('{"rationale": "Right.", "score": 1, "error_type": "none"}', JudgeVerdict,
                             ("empty_as_null",)),
    "fail-spelled-error-type": ('{"rationale": "No.", "score": 0, "error_type": "Wrong Fact"}', JudgeVerdict,
                                ("enum_spelling",)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(FOUND))
def test_each_found_fault_is_read_with_its_repairs_named(name):
    reply, schema, repairs = FOUND[name]
    parsed = parse_output(reply, schema)
    assert parsed.error is None and parsed.repairs == repairs
    if schema is QAConversation:
        (turn,) = parsed.value.turns
        assert turn.query_type == "SINGLE-DOC" and turn.document_ids[0] == "stores"
    elif name == "fail-spelled-error-type":
        assert (parsed.value.score, parsed.value.error_type) == (0, "wrong_fact")
    else:
        assert (parsed.value.score, parsed.value.error_type) == (1, None)


def test_normalising_leaves_values_that_fit_alone_but_reads_null_words_as_null():
    parsed = parse_output(turns_with(query_type="FILLER", theme_relation="none"), QAConversation)
    assert parsed.repairs == () and parsed.value.turns[0].theme_relation == "none", "a required text"
    optional = parse_output(turns_with(bridging_entity="none"), QAConversation)
    assert optional.repairs == ("empty_as_null",) and optional.value.turns[0].bridging_entity is None
    sentence = parse_output(turns_with(document_ids="a store, with a comma"), QAConversation)
    assert sentence.value.turns[0].document_ids == ["a store, with a comma"], "only identifiers are split"


def test_a_key_under_another_name_is_kept_even_where_the_field_has_a_default():
    parsed = parse_output(
        '{"adheres": true, "coherent": true, "score": 0.9, "feedback": "Flows."}', AdherenceCheck
    )
    assert parsed.repairs == ("key_alias",) and parsed.value.rationale == "Flows."
    wrapped = parse_output('{"Entities": {"entity": [{"text": "Acme", "kind": "Name"}]}}', ENTITIES)
    assert wrapped.repairs == ("wrapper_key", "key_alias", "enum_spelling")
    assert wrapped.value.entities[0].kind == "name"
    inner = parse_output(
        '{"score": 0.9, "problems": [], "adheres": true, "coherent": true // ok\n}', AdherenceCheck
    )
    assert inner.repairs == ("comments",), "a later bracket never passes for the whole reply"


def test_truncation_drops_the_half_written_last_element():
    second = json.dumps({**TURN, "question": "And its hours?"})
    cut = '{"turns": [' + json.dumps(TURN) + ", " + second[:60]
    parsed = parse_output(cut, QAConversation)
    assert parsed.repairs == ("truncated",) and [t.question for t in parsed.value.turns] == [TURN["question"]]
    # Cut inside the first element: nothing complete is left, and an empty list would pass for "none found".
    early = parse_output('{"turns": [{"question": "Which st', QAConversation)
    assert early.value is None and early.error == TRUNCATED_ERROR


@pytest.fixture
def small(project, llm_env):
    """Provider `small`: the local server as a compatible server in json_object mode (no schema sent)."""
    project.update_settings(
        PROJECT,
        {"providers": {"small": {"kind": "openai_compatible", "base_url": llm_env.openai_base_url,
                                 "structured": "json_object"}}},
    )  # fmt: skip
    return project


def conversation_task_inputs() -> dict:
    spec = Spec(id="s1", scenario="Store services", given="a customer plans a visit",
                when="they ask about a store", then="the answer names the right store",
                provenance=Provenance(producer="human:test"))  # fmt: skip
    docs = [Document(id="stores", kind=DocumentKind.text, title="Stores", text="Westbrook has no workshop.")]
    return conversation_inputs("A bike shop assistant.", spec, docs, [], [], 1, 0, [])


def run_found(store, llm_env, name: str, model: str):
    reply, schema, _ = FOUND[name]
    llm_env.enqueue(reply)
    llm = ModelClient(store, PROJECT, retry=FAST_RETRY)
    if schema is QAConversation:
        return llm.run_task(GENERATE_CONVERSATION, conversation_task_inputs(), model=model)
    inputs = {"spec": "-", "history": "-", "question": "How long?", "expected": "14 days.",
              "documents": "-", "reply": "14 days.", "error_types": "-", "grounding_texts": [],
              "multi_turn": False}  # fmt: skip
    return llm.run_task(JUDGE_TURN, inputs, role="judge", model=model)


@pytest.mark.parametrize("model", ["small/qwen2.5-0.5b", "anthropic/claude-haiku-4-5"])
@pytest.mark.parametrize("name", list(FOUND))
def test_each_found_fault_through_the_real_sdk_costs_no_reask(small, llm_env, name, model):
    result = run_found(small, llm_env, name, model)
    assert result.ok and result.attempts == 1 and tuple(result.repairs) == FOUND[name][2]
    (rate,) = status.repair_rates(small, PROJECT)
    assert (rate.model, rate.replies, rate.repaired, rate.invalid) == (model.split("/", 1)[1], 1, 1, 0)
    assert set(rate.kinds) == set(FOUND[name][2])


def test_the_conversation_prompt_shows_its_output_shape_without_a_schema(small, llm_env):
    run_found(small, llm_env, "snake-case-enum", "small/qwen2.5-0.5b")
    body = llm_env.calls[0].body
    assert body["response_format"] == {"type": "json_object"}, "this mode sends no schema"
    prompt = "\n".join(m["content"] for m in body["messages"])
    assert output_shape(QAConversation) in prompt
    for key in ("question", "answer", "document_ids", "query_type", "bridging_entity", "sources"):
        assert f'"{key}"' in prompt


def test_every_prompt_names_every_key_of_its_output():
    def keys(schema: dict, defs: dict) -> set[str]:
        found = set()
        for value in [schema, *defs.values()]:
            found |= set(value.get("properties", {}))
        return found

    prompts = {p.stem for p in PROMPTS_DIR.glob("*.md")} - {"README"}
    tasks = all_tasks()
    assert prompts <= set(tasks), "a prompt file without a task"
    for task in (tasks[name] for name in sorted(prompts)):
        schema = task.output.model_json_schema()
        text = "\n".join(m.content for m in task.render({f: "x" for f in task.template.fields}))
        missing = {k for k in keys(schema, schema.get("$defs", {})) if k not in text}
        assert not missing, (
            f"{task.name}: the prompt never names {sorted(missing)} (use {{{{ output_shape }}}})"
        )


def test_a_reply_cut_at_the_token_limit_is_asked_again_with_more_room(small, llm_env):
    cut = '{"turns": [{"question": "Which store has no workshop?", "answer": "Westbr'
    llm_env.enqueue(cut, CLEAN_TURNS)
    llm_env.cut_next()
    llm = ModelClient(small, PROJECT, retry=FAST_RETRY)
    result = llm.run_task(GENERATE_CONVERSATION, conversation_task_inputs(), model="small/qwen2.5-0.5b")
    assert result.ok and result.attempts == 2
    first, second = (c.body for c in llm_env.calls)
    assert second["max_tokens"] == 2 * first["max_tokens"] == 2 * GENERATE_CONVERSATION.max_tokens
    assert second["messages"] == first["messages"], "asked afresh, not shown the cut reply"
    (rate,) = status.repair_rates(small, PROJECT)
    assert (rate.replies, rate.repaired, rate.invalid, rate.kinds) == (2, 0, 1, {"truncated": 1})
