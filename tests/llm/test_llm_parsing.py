"""Malformed model output: repaired when possible, else re-asked with the error, else recorded as failed."""

from __future__ import annotations

import json

import pytest
from llm_server import FAST_RETRY, PROJECT

from evalcore.documents.entity_task import EXTRACT_ENTITIES, Entities
from evalcore.llm import ModelClient
from evalcore.llm.parsing import load_json, parse_output
from evalcore.llm.records import calls

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project

GOOD = {"entities": [{"text": "Acme", "kind": "name"}, {"text": "5 kg", "kind": "quantity"}]}
CLEAN = json.dumps(GOOD)


@pytest.mark.parametrize(
    ("text", "repairs"),
    [
        (f"```json\n{CLEAN}\n```", ("code_fence",)),
        (f"Here you go:\n{CLEAN} Done.", ("prose",)),
        (
            '{"entities": [{"text": "Acme", "kind": "name",}, {"text": "5 kg", "kind": "quantity"},],}',
            ("trailing_commas",),
        ),
        (
            "{'entities': [{'text': 'Acme', 'kind': 'name'}, {'text': '5 kg', 'kind': 'quantity'}]}",
            ("python_literals",),
        ),
        (
            '{"entities": [{"text": "Acme", "kind": "name"}, {"text": "5 kg", "kind": "quantity"}, '
            '{"text": "Par',
            ("truncated",),
        ),
        (
            '```\n{"entities": [{"text": "Acme", "kind": "name"}, {"text": "5 kg", "kind": "quantity"}, {"te',
            ("code_fence", "truncated"),
        ),
        ('[{"text": "Acme", "kind": "name"}, {"text": "5 kg", "kind": "quantity"}]', ("bare_list",)),
    ],
    ids=[
        "fence",
        "prose",
        "trailing-commas",
        "single-quotes",
        "truncated-list",
        "truncated-in-fence",
        "bare-list",
    ],
)
def test_common_faults_are_repaired(text, repairs):
    parsed = parse_output(text, Entities)
    assert parsed.error is None and parsed.repairs == repairs
    assert parsed.value.model_dump() == GOOD


def test_repairs_keep_strings_intact():
    assert load_json("{'a': \"it's\", 'b': 'say \"hi\"', 'c': True, 'd': None}")[0] == {
        "a": "it's", "b": 'say "hi"', "c": True, "d": None,
    }  # fmt: skip
    assert load_json('{"a": "x, ]", "b": [1, 2,]}')[0] == {"a": "x, ]", "b": [1, 2]}
    assert load_json('{"a": "with \\"escaped\\" quotes", "b": [1, 2')[0] == {
        "a": 'with "escaped" quotes',
        "b": [1],
    }


def test_unrepairable_output_reports_why():
    assert "not valid JSON" in parse_output("I cannot help with that.", Entities).error
    error = parse_output('{"entities": [{"text": "Acme", "kind": "ship"}]}', Entities).error
    assert "entities.0.kind" in error and "does not match the schema" in error


def test_invalid_output_is_reasked_with_the_validation_error(project, llm_env):
    llm_env.enqueue('{"entities": [{"text": "Acme", "kind": "ship"}]}', GOOD)
    llm = ModelClient(project, PROJECT, retry=FAST_RETRY)
    result = llm.run_task(EXTRACT_ENTITIES, {"passage": "Acme ships 5 kg."}, model="openai/gpt-4o-mini")
    assert result.ok and result.attempts == 2 and result.output.model_dump() == GOOD
    first, second = llm_env.calls
    reask = second.body["messages"]
    assert reask[:-2] == first.body["messages"]
    assert reask[-2] == {
        "role": "assistant",
        "content": '{"entities": [{"text": "Acme", "kind": "ship"}]}',
    }
    assert reask[-1]["role"] == "user" and "entities.0.kind" in reask[-1]["content"]


def test_after_the_limit_the_unit_fails_with_its_raw_output_and_the_batch_goes_on(project, llm_env):
    bad = "Sorry, I can't produce JSON."

    def reply(api, body):
        passage = body["messages"][1]["content"]
        return bad if "unit-1" in passage else '{"entities": []}'

    llm_env.responder = reply
    llm = ModelClient(project, PROJECT, retry=FAST_RETRY)
    inputs = [{"passage": f"unit-{i}"} for i in range(4)]
    results = llm.run_batch(EXTRACT_ENTITIES, inputs, model="openai/gpt-4o-mini", concurrency=2)
    assert [r.status for r in results] == ["ok", "failed", "ok", "ok"]
    failed = results[1]
    assert failed.raw == bad and failed.output is None
    assert failed.attempts == EXTRACT_ENTITIES.max_reasks + 1 == 3
    assert "no valid output after 3 attempt(s)" in failed.error and "not valid JSON" in failed.error
    assert len(llm_env.calls) == 3 + 3
    assert len(calls(project, project_id=PROJECT)) == 6
