"""Batches: at most N calls in flight, progress reported in the caller's thread, results in input order."""

from __future__ import annotations

import json
import threading

import pytest
from llm_server import FAST_RETRY, PROJECT

from evalcore.documents.entity_task import EXTRACT_ENTITIES
from evalcore.llm import ModelClient

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project


def echo_unit(api, body):
    """Reply with the unit's own id as the only entity, so results can be matched to inputs."""
    passage = body["messages"][-1]["content"]
    unit = passage.split("unit-")[1].split()[0]
    return json.dumps({"entities": [{"text": f"unit-{unit}", "kind": "identifier"}]})


@pytest.mark.parametrize("limit", [1, 4])
def test_the_server_never_sees_more_than_the_limit_in_flight(project, llm_env, limit):
    llm_env.latency = 0.1  # long enough that every worker is surely waiting on the server at once
    llm_env.responder = echo_unit
    inputs = [{"passage": f"unit-{i} text"} for i in range(12)]
    progress: list[tuple[int, int]] = []
    seen: list[int] = []
    threads: set[int] = set()

    def on_progress(done, total):
        progress.append((done, total))
        threads.add(threading.get_ident())

    def on_result(index, result):
        seen.append(index)
        threads.add(threading.get_ident())

    llm = ModelClient(project, PROJECT, retry=FAST_RETRY)
    results = llm.run_batch(EXTRACT_ENTITIES, inputs, model="openai/gpt-4o-mini", concurrency=limit,
                            on_progress=on_progress, on_result=on_result)  # fmt: skip
    assert llm_env.max_in_flight == limit, "bounded, and the bound is used"
    assert [r.output.entities[0].text for r in results] == [f"unit-{i}" for i in range(12)]
    assert progress == [(i, 12) for i in range(1, 13)]
    assert sorted(seen) == list(range(12))
    assert threads == {threading.get_ident()}, "callbacks run in the caller's thread (Streamlit needs it)"


def test_concurrency_comes_from_settings(project, llm_env):
    llm_env.latency = 0.05
    project.update_settings(PROJECT, {"llm": {"concurrency": 3}})
    llm = ModelClient(project, PROJECT, retry=FAST_RETRY)
    llm.run_batch(EXTRACT_ENTITIES, [{"passage": f"p{i}"} for i in range(9)], model="openai/gpt-4o-mini")
    assert llm.concurrency == 3 and llm_env.max_in_flight == 3


def test_an_error_in_a_callback_stops_the_batch(project, llm_env):
    def on_result(index, result):
        raise RuntimeError("disk full")

    llm = ModelClient(project, PROJECT, retry=FAST_RETRY)
    with pytest.raises(RuntimeError, match="disk full"):
        llm.run_batch(EXTRACT_ENTITIES, [{"passage": f"p{i}"} for i in range(50)], model="openai/gpt-4o-mini",
                      concurrency=2, on_result=on_result)  # fmt: skip
    assert len(llm_env.calls) < 50
