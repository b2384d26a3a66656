"""The self-preference guard: the judge is not the target's own model when another model is configured."""

from __future__ import annotations

from llm_server import PROJECT

from evalcore.llm import ModelClient, Registry, choose_judge, guard_judge, same_model
from evalcore.models import Run

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project


def test_same_model_ignores_provider_case_and_date_suffixes():
    assert same_model("openai/gpt-4o-2024-08-06", "gpt-4o")
    assert same_model("compat/llama3.1:latest", "vllm/Llama3.1")
    assert not same_model("openai/gpt-4o", "openai/gpt-4o-mini")


def test_a_judge_other_than_the_target_is_kept():
    registry = Registry({"models": {"judge": "anthropic/claude-sonnet-4-6"}})
    choice = choose_judge(registry, "openai/gpt-4o")
    assert (choice.model, choice.self_preference) == ("anthropic/claude-sonnet-4-6", False)


def test_when_the_judge_is_the_target_another_configured_model_is_taken(llm_env, monkeypatch):
    settings = {"models": {"judge": "openai/gpt-4o", "generator": "anthropic/claude-haiku-4-5"}}
    assert choose_judge(Registry(settings), "gpt-4o-2024-08-06").model == "anthropic/claude-haiku-4-5"
    settings["judge_candidates"] = ["compat/qwen2.5-72b"]
    assert choose_judge(Registry(settings), "openai/gpt-4o").model == "compat/qwen2.5-72b"
    monkeypatch.setenv("EVALCORE_SIMULATOR_MODEL", "openai/gpt-4.1-mini")
    only_env = {"models": {"judge": "openai/gpt-4o"}}
    assert choose_judge(Registry(only_env), "openai/gpt-4o").model == "openai/gpt-4.1-mini"


def test_with_no_other_model_the_run_records_a_warning(project, llm_env):
    project.update_settings(PROJECT, {"models": {"judge": "openai/gpt-4o", "target": "openai/gpt-4o"}})
    project.start_run(PROJECT, Run(id="run-j", kind="run", target="bot"))
    llm = ModelClient(project, PROJECT, run_id="run-j")
    choice = guard_judge(llm, "openai/gpt-4o")
    assert choice.self_preference and choice.model == "openai/gpt-4o"
    run = project.run("run-j")
    assert run.judge == "openai/gpt-4o"
    assert (
        len(run.warnings) == 1 and "self-preference" in run.warnings[0] and "openai/gpt-4o" in run.warnings[0]
    )
    guard_judge(llm, "openai/gpt-4o")
    assert len(project.run("run-j").warnings) == 1, "recorded once"


def test_offline_judging_offline_is_not_self_preference(project, llm_env):
    choice = guard_judge(ModelClient(project, PROJECT), "offline/heuristic")
    assert choice.model == "offline/heuristic" and not choice.self_preference
