"""Model profiles (issue 14): learned from one probe call, followed by every call of the model."""

from __future__ import annotations

import json

import pytest
from llm_server import FAST_RETRY, PROJECT

from evalcore.llm import ConfigError, Message, ModelClient, status
from evalcore.llm.profiles import ModelProfile
from evalcore.runs.judges import JUDGE_TURN

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project

SMALL = "small/qwen2.5-0.5b"
JUDGE_INPUTS = {"spec": "-", "history": "-", "question": "How long?", "expected": "14 days.",
                "documents": "-", "reply": "14 days.", "error_types": "-", "grounding_texts": [],
                "multi_turn": False}  # fmt: skip
VERDICT = {"rationale": "Right.", "score": 1, "error_type": None}


@pytest.fixture
def small(project, llm_env):
    """Provider `small`: the local server as an OpenAI-compatible server, in json_schema mode."""
    project.update_settings(
        PROJECT, {"providers": {"small": {"kind": "openai_compatible", "base_url": llm_env.openai_base_url}}}
    )
    return project


def test_a_server_that_follows_json_schema_is_probed_as_such_in_one_call(small, llm_env):
    learned = status.probe_model(small, PROJECT, SMALL)
    assert (learned.structured, learned.temperature, learned.probed_at is not None) == (
        "json_schema",
        True,
        True,
    )
    (call,) = llm_env.calls
    assert call.body["response_format"]["type"] == "json_schema" and call.body["temperature"] == 0.0
    assert status.model_profiles(small, PROJECT) == {SMALL: learned}


@pytest.mark.parametrize(
    ("reply", "fault", "expected"),
    [
        ('<think>ok</think>\n```json\n{"ok": true, "n": 3}\n```', None, ("none", True)),
        (None, "temperature is not supported with this model", (None, False)),
        (None, "response_format json_schema is not supported", ("json_object", True)),
    ],
    ids=["ignores-the-schema", "refuses-a-temperature", "refuses-json-schema"],
)
def test_what_the_probe_learns_from_a_reply_or_a_refusal(small, llm_env, reply, fault, expected):
    if reply:
        llm_env.enqueue(reply)
    else:
        llm_env.fail_next(400, message=fault)
    learned = status.probe_model(small, PROJECT, SMALL)
    assert (learned.structured, learned.temperature) == expected and len(llm_env.calls) == 1
    assert learned.note


def test_only_compatible_servers_are_probed(small, llm_env):
    with pytest.raises(ConfigError, match="OpenAI-compatible"):
        status.probe_model(small, PROJECT, "openai/gpt-4o-mini")
    assert llm_env.calls == []


def test_every_call_of_the_model_follows_its_profile(small, llm_env):
    profile = ModelProfile(structured="json_object", max_tokens=300, temperature=False)
    status.set_model_profile(small, PROJECT, SMALL, profile)
    llm_env.enqueue(VERDICT)
    llm = ModelClient(small, PROJECT, retry=FAST_RETRY)
    assert llm.run_task(JUDGE_TURN, JUDGE_INPUTS, role="judge", model=SMALL).ok
    llm.complete([Message("user", "Hello")], role="target", model=SMALL, max_tokens=1000)
    task_call, free_call = (c.body for c in llm_env.calls)
    assert task_call["response_format"] == {"type": "json_object"} and "temperature" not in task_call
    assert task_call["max_tokens"] == 300 and free_call["max_tokens"] == 300
    assert "temperature" not in free_call and "response_format" not in free_call


def test_at_the_models_limit_a_cut_reply_is_reasked_instead_of_asked_with_more_room(small, llm_env):
    status.set_model_profile(small, PROJECT, SMALL, ModelProfile(max_tokens=JUDGE_TURN.max_tokens))
    llm_env.enqueue('{"rationale": "The reply gives the fourteen da', json.dumps(VERDICT))
    llm_env.cut_next()
    result = ModelClient(small, PROJECT, retry=FAST_RETRY).run_task(
        JUDGE_TURN, JUDGE_INPUTS, role="judge", model=SMALL
    )
    assert result.ok and result.attempts == 2
    first, second = (c.body for c in llm_env.calls)
    assert second["max_tokens"] == first["max_tokens"] == JUDGE_TURN.max_tokens
    assert "cut off" in second["messages"][-1]["content"], "told why, with the same room"


def test_profiles_are_set_and_forgotten_by_hand(small):
    status.set_model_profile(small, PROJECT, SMALL, ModelProfile().with_max_tokens(2048))
    assert status.model_profiles(small, PROJECT)[SMALL].max_tokens == 2048
    with pytest.raises(ConfigError, match="at least 1"):
        status.set_model_profile(small, PROJECT, SMALL, ModelProfile(max_tokens=0))
    status.set_model_profile(small, PROJECT, SMALL, None)
    assert status.model_profiles(small, PROJECT) == {}
