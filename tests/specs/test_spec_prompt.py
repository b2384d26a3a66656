"""Spec generation asks as seed 000 does by default (one spec per call, its prompt, criteria and example),
and with our batch prompt only when `batch` > 1; through the fake OpenAI server."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.inputs import import_project
from evalcore.specs.generation import generate_specs
from evalcore.specs.store_ops import list_specs

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env
MODEL = "openai/gpt-4o-mini"
SAMPLE = "data/sample"


@pytest.fixture(autouse=True)
def _online(monkeypatch):
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)


def _two_specs(api: str, body: dict) -> str:
    """A reply with two specs whose titles name the request's unit (its position in the call log)."""
    text = json.dumps(body["messages"])
    tag = str(abs(hash(text)) % 10**8)
    spec = {"given": "A customer had a booking.", "when": "The customer asks.", "then": "It should answer.",
            "category": "policy", "documents": []}  # fmt: skip
    return json.dumps(
        {"specs": [{**spec, "scenario": f"First {tag}"}, {**spec, "scenario": f"Second {tag}"}]}
    )


def _prompts(server) -> list[str]:
    """The text of each request, its line breaks as spaces."""
    texts = [" ".join(m["content"] for m in call.body["messages"]) for call in server.completed("openai")]
    return [" ".join(text.split()) for text in texts]


def test_by_default_one_spec_per_call_with_the_seeds_prompt(sqlite_store, llm_env):
    project_id = import_project(sqlite_store, SAMPLE).project_id
    llm_env.responder = _two_specs
    outcome = generate_specs(sqlite_store, project_id, m=3, model=MODEL, from_card=False)
    prompts = _prompts(llm_env)
    assert len(prompts) == 3, "one call per spec"
    for prompt in prompts:
        assert "Output only 1 scenario" in prompt
        assert (
            'Don\'t use exact names like "Leonardo DiCaprio" -> instead use [actor]' in prompt
        )  # criterion 14
        assert "Scenario: Answering timeline-based questions with cross-celebrity context" in prompt
        assert "15. Always ensure the scenario is fully reflected" in prompt
        assert "keep the business's own facts" not in prompt
    specs = [v.spec for v in list_specs(sqlite_store, project_id)]
    assert outcome.added == 3 and sorted(s.scenario.split()[0] for s in specs) == ["First"] * 3, (
        "a reply with more than the one spec asked for keeps the first"
    )
    assert {s.provenance.task for s in specs} == {"generate_spec"}


def test_batching_is_an_option_with_our_prompt(sqlite_store, llm_env):
    project_id = import_project(sqlite_store, SAMPLE).project_id
    llm_env.responder = _two_specs
    outcome = generate_specs(sqlite_store, project_id, m=4, batch=2, model=MODEL, from_card=False)
    prompts = _prompts(llm_env)
    assert len(prompts) == 2, "two calls of two specs"
    assert all("Generate 2 diverse scenarios" in p and "keep the business's own facts" in p for p in prompts)
    assert not any("Output only 1 scenario" in p for p in prompts)
    assert outcome.added == 4
    assert {v.spec.provenance.task for v in list_specs(sqlite_store, project_id)} == {"generate_specs"}


def test_offline_the_seeds_default_makes_300_or_says_why_fewer(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    db = f"sqlite:///{tmp_path / 's.db'}"
    runner = CliRunner()
    assert runner.invoke(app, ["import", SAMPLE, "--db", db]).exit_code == 0
    result = runner.invoke(app, ["specs", "generate", "-m", "300", "--db", db])
    assert result.exit_code == 0, result.output
    added = int(result.output.split("run run-")[1].split(": ")[1].split()[0])
    assert 100 < added < 300
    assert f"{added} of 300 requested specs generated: ran out of new specs" in result.output
