"""The response cache: identical calls are free, anything that changes the output misses."""

from __future__ import annotations

import pytest
from llm_server import FAST_RETRY, PROJECT
from pydantic import BaseModel

from evalcore.documents.entity_task import EXTRACT_ENTITIES
from evalcore.llm import ModelClient, Task
from evalcore.llm.cache import cache_stats
from evalcore.llm.records import calls
from evalcore.store import Store

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project

PASSAGE = {"passage": "Acme Bank sells the Gold Plan."}
MODEL = "openai/gpt-4o-mini"


@pytest.fixture
def project_on(store: Store) -> Store:
    """A project on each backend (SQLite and PostgreSQL)."""
    store.create_project(PROJECT, "Cache project")
    return store


def test_a_second_identical_call_is_served_from_the_store(project_on, llm_env):
    first = ModelClient(project_on, PROJECT, retry=FAST_RETRY).run_task(
        EXTRACT_ENTITIES, PASSAGE, model=MODEL
    )
    assert len(llm_env.calls) == 1 and not first.cache_hit
    # A new client (as after a restart) sees the same store.
    again = ModelClient(project_on, PROJECT, retry=FAST_RETRY).run_task(
        EXTRACT_ENTITIES, PASSAGE, model=MODEL
    )
    assert len(llm_env.calls) == 1, "no server call for a cached request"
    assert again.cache_hit and again.output == first.output and again.cost_usd == 0.0
    recorded = calls(project_on, project_id=PROJECT)
    assert [c.cache_hit for c in recorded] == [False, True]
    assert recorded[1].tokens_in == recorded[0].tokens_in and recorded[1].cost_usd == 0.0
    assert cache_stats(project_on) == {"openai": 1}


def test_whatever_changes_the_output_changes_the_key(project_on, llm_env, tmp_path):
    llm = ModelClient(project_on, PROJECT, retry=FAST_RETRY)
    llm.run_task(EXTRACT_ENTITIES, PASSAGE, model=MODEL)
    llm.run_task(EXTRACT_ENTITIES, {"passage": "Another passage."}, model=MODEL)
    llm.run_task(EXTRACT_ENTITIES, PASSAGE, model="openai/gpt-4.1-mini")
    llm.run_task(EXTRACT_ENTITIES, PASSAGE, model=MODEL, seed=7)
    llm.run_task(EXTRACT_ENTITIES, PASSAGE, model="anthropic/claude-haiku-4-5")
    assert len(llm_env.calls) == 5
    llm.run_task(EXTRACT_ENTITIES, PASSAGE, model=MODEL)
    assert len(llm_env.calls) == 5


class Summary(BaseModel):
    """A one-line summary."""

    text: str


def test_a_changed_prompt_version_is_a_miss(project_on, llm_env, tmp_path):
    prompt = tmp_path / "summary.md"
    body = "## system\nSummarise.\n## user\n{{ passage }}\n"
    prompt.write_text("---\nversion: 1\n---\n" + body)
    llm = ModelClient(project_on, PROJECT, retry=FAST_RETRY)
    v1 = Task("cache_summary", Summary, lambda i, r: Summary(text="x"), prompt=prompt)
    llm.run_task(v1, PASSAGE, model=MODEL)
    llm.run_task(v1, PASSAGE, model=MODEL)
    assert len(llm_env.calls) == 1
    prompt.write_text("---\nversion: 2\n---\n" + body)  # same text, new version
    v2 = Task("cache_summary", Summary, lambda i, r: Summary(text="x"), prompt=prompt)
    result = llm.run_task(v2, PASSAGE, model=MODEL)
    assert len(llm_env.calls) == 2 and not result.cache_hit and result.prompt_version == "2"


def test_offline_results_are_not_cached_but_are_accounted(project_on, llm_env):
    llm = ModelClient(project_on, PROJECT)
    llm.run_task(EXTRACT_ENTITIES, PASSAGE)
    assert cache_stats(project_on) == {}
    assert [c.provider for c in calls(project_on, project_id=PROJECT)] == ["offline"]
