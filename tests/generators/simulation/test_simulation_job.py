"""Simulation runs as jobs (issue 18, item 4): offline against the demo target, a target that crashes on a
keyword, export as a ChatChecker run, the CLI, and a kill -9 mid-run resumed with no finished dialogue's
model calls repeated (local model server, child process)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from llm_server import model_env
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.errors import EvalcoreError
from evalcore.generators.simulation import load_simulation_run, simulation_statistics
from evalcore.generators.simulation.chatchecker import read_run
from evalcore.generators.simulation.job import create_simulation, execute_simulation, simulate
from evalcore.generators.simulation.personas import generate_personas, list_personas
from evalcore.generators.simulation.records import BreakdownDecision, FinishReason
from evalcore.generators.simulation.taxonomy import CHATBOT_CRASH_TITLE
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.jobs import progress
from evalcore.models import RunStatus, Target, TurnRole
from evalcore.store import Store
from evalcore.targets import save_target

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "data" / "sample"
MODEL = "openai/gpt-4o-mini"
CRASH_WORD = "order"


def keyword_bot(messages: list[dict[str, str]]) -> str:
    """A python target that fails whenever the user's latest message mentions an order."""
    last = messages[-1]["content"]
    if CRASH_WORD in last.lower():
        raise RuntimeError("order service unavailable")
    return f"Happy to help with that: {last}"


def shy_bot(messages: list[dict[str, str]]) -> str:
    """A python target that opens the dialogue but whose greeting always fails."""
    if not any(m["role"] == "user" for m in messages):
        raise RuntimeError("greeting service unavailable")
    return "Fine."


@pytest.fixture
def sample(sqlite_store: Store, monkeypatch) -> tuple[Store, str]:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    return sqlite_store, import_project(sqlite_store, SAMPLE).project_id


def test_an_offline_run_against_the_demo_target_annotates_rates_and_exports(sample, tmp_path):
    store, pid = sample
    seen = []
    outcome = simulate(store, pid, "demo", standard=2, challenging=2, on_progress=lambda d, n: seen.append(d))
    assert outcome.run.status == RunStatus.finished and (outcome.done, outcome.total) == (4, 4)
    assert seen[-1] == 4 and outcome.simulated == 4
    sim = load_simulation_run(store, outcome.run.id)
    assert sorted(d.user_name for d in sim.dialogues) == [
        "generated_challenging_persona_01", "generated_challenging_persona_02",
        "generated_standard_persona_01", "generated_standard_persona_02",
    ]  # fmt: skip
    card = store.system_card(pid)
    for dialogue in sim.dialogues:
        assert dialogue.turns[0].role == TurnRole.user and dialogue.persona_item in list_personas(store, pid)
        assert (
            sum(t.role == TurnRole.user for t in dialogue.turns) <= card.user_simulation_config.max_user_turns
        )
        assert all(t.breakdown is not None for t in dialogue.turns if t.role == TurnRole.assistant)
        assert set(dialogue.ratings) == set(sim.rating_dimensions) and dialogue.finish_reason in FinishReason
        longest = int(card.user_simulation_config.max_user_turn_length.split()[0])
        assert all(len(t.content.split()) <= longest for t in dialogue.turns if t.role == TurnRole.user)
    assert set(sim.personas) == {d.user_name for d in sim.dialogues}
    made = [v.conversation.provenance for v in list_conversations(store, pid, generator="simulation")]
    assert len(made) == 4 and all(p.is_offline and p.run_id == outcome.run.id for p in made), "marked offline"
    stats = simulation_statistics(store, outcome.run.id)
    assert stats["num_dialogues"] == 4 and stats["num_chatbot_turns"] > 0
    assert set(stats["rating_stats"]) == set(sim.rating_dimensions)
    from evalcore.generators.simulation import export_chatchecker_run

    export_chatchecker_run(store, outcome.run.id, tmp_path / "out")
    back = read_run(tmp_path / "out")
    assert len(back.dialogues) == 4 and set(back.personas) == set(sim.personas)
    # A finished run does nothing more when started again.
    again = execute_simulation(store, outcome.run.id)
    assert (again.simulated, again.done) == (0, 4)


def test_a_demo_target_with_a_greeting_opens_every_dialogue_and_its_greeting_is_judged(sample, tmp_path):
    store, pid = sample
    greeting = "Hi! I can help with bikes, orders and returns. What do you need?"
    save_target(store, pid, Target(name="greeter", kind="demo", config={"greeting": greeting}))
    outcome = simulate(store, pid, "greeter", standard=1, challenging=1)
    assert outcome.run.status == RunStatus.finished and outcome.simulated == 2
    sim = load_simulation_run(store, outcome.run.id)
    for dialogue in sim.dialogues:
        first, second = dialogue.turns[:2]
        assert (first.role, first.content, second.role) == (TurnRole.assistant, greeting, TurnRole.user)
        assert first.breakdown is not None, "the detector judges the greeting like any target turn"
    stats = simulation_statistics(store, outcome.run.id)
    assert stats["num_chatbot_turns"] == sum(
        t.role == TurnRole.assistant for d in sim.dialogues for t in d.turns
    )
    from evalcore.generators.simulation import export_chatchecker_run

    export_chatchecker_run(store, outcome.run.id, tmp_path / "out")
    for exported in (tmp_path / "out").glob("*/dialogue_1.yaml"):
        first = yaml.safe_load(exported.read_text())["chat_history"][0]
        assert (first["turn_id"], first["role"], first["content"]) == (1, "dialogue_system", greeting)


def test_an_opening_that_crashes_is_a_chatbot_crash_turn_ending_the_dialogue(sample):
    store, pid = sample
    config = {"callable": "test_simulation_job:shy_bot", "opening": True}
    save_target(store, pid, Target(name="shy", kind="python", config=config))
    outcome = simulate(store, pid, "shy", standard=2)
    assert outcome.crashed == 2
    for dialogue in load_simulation_run(store, outcome.run.id).dialogues:
        [crash] = dialogue.turns
        assert dialogue.finish_reason == FinishReason.chatbot_error and "greeting service" in dialogue.error
        assert crash.role == TurnRole.assistant and crash.content == FinishReason.chatbot_error.value
        assert crash.breakdown.breakdown_types == [CHATBOT_CRASH_TITLE] and crash.breakdown.score == 0
    assert simulation_statistics(store, outcome.run.id)["num_dialogues_with_chatbot_errors"] == 2


def test_a_target_that_crashes_on_a_keyword_is_recorded_as_chatbot_crash(sample):
    store, pid = sample
    bot = Target(name="fragile", kind="python", config={"callable": "test_simulation_job:keyword_bot"})
    save_target(store, pid, bot)
    generate_personas(store, pid, standard=3)
    personas = {i: p for i, p in list_personas(store, pid).items()}
    for item_id, persona in personas.items():  # every persona asks about an order in its first turn
        body = persona.model_copy(update={"task": "Track my order."}).model_dump(mode="json")
        store.save_revision(item_id, body, "test", 1)
    outcome = simulate(store, pid, "fragile", standard=3)
    assert outcome.crashed == 3
    stats = simulation_statistics(store, outcome.run.id)
    assert stats["num_dialogues_with_chatbot_errors"] == 3
    for dialogue in load_simulation_run(store, outcome.run.id).dialogues:
        last = dialogue.turns[-1]
        assert dialogue.finish_reason == FinishReason.chatbot_error and "order service" in dialogue.error
        assert last.breakdown.breakdown_types == [CHATBOT_CRASH_TITLE] and last.breakdown.score == 0
        assert last.breakdown.decision == BreakdownDecision.breakdown


def closing_bot(messages: list[dict[str, str]]) -> dict[str, object]:
    """A python target that closes the chat after its second answer."""
    answers = sum(m["role"] == "assistant" for m in messages)
    return {"content": "Done, goodbye." if answers else "Which order?", "ended": answers >= 1}


def test_a_target_that_ends_the_chat_ends_the_dialogue_with_chatbot_ended_chat(sample):
    store, pid = sample
    save_target(
        store,
        pid,
        Target(name="closer", kind="python", config={"callable": "test_simulation_job:closing_bot"}),
    )
    outcome = simulate(store, pid, "closer", standard=2)
    dialogues = load_simulation_run(store, outcome.run.id).dialogues
    assert [d.finish_reason for d in dialogues] == [FinishReason.chatbot_ended_chat] * 2
    assert all(len(d.turns) == 4 and d.turns[-1].content == "Done, goodbye." for d in dialogues)


def test_the_cli_runs_a_simulation_and_prints_its_id_last(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    db = ["--db", f"sqlite:///{tmp_path / 'cli.db'}"]
    runner = CliRunner()
    assert runner.invoke(app, ["import", str(SAMPLE), *db]).exit_code == 0
    made = runner.invoke(
        app, ["simulations", "personas", "generate", "--standard", "1", "--challenging", "1", *db]
    )
    assert made.exit_code == 0 and "generated_challenging_persona_01" in made.output
    result = runner.invoke(
        app, ["simulations", "run", "--target", "demo", "--standard", "1", "--challenging", "1", *db]
    )
    assert result.exit_code == 0, result.output
    run_id = result.output.strip().splitlines()[-1]
    assert re.fullmatch(r"run-[0-9a-f]+", run_id) and "2/2 dialogues" in result.output
    stats = runner.invoke(app, ["simulations", "stats", run_id, "--json", *db])
    assert json.loads(stats.output)["num_dialogues"] == 2
    exported = runner.invoke(app, ["simulations", "personas", "export", "-o", str(tmp_path / "p"), *db])
    assert exported.exit_code == 0 and len(list((tmp_path / "p").glob("*.yaml"))) == 2


# ------------------------------------------------------------------------------------ kill and resume

DIMENSION = re.compile(r"\(key=([a-z_]+)\)")


def scripted(api: str, body: dict) -> str:
    """The fake model: a user who asks two questions then ends, a calm detector, a content rater."""
    name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
    text = body["messages"][-1]["content"]
    if name == "UserTurn":
        asked = text.count("YOU:") - 1
        persona = re.search(r"name: (.+)", body["messages"][0]["content"]).group(1)
        message = END if asked >= 2 else f"{persona} asks about returns, question {asked + 1}?"
        return json.dumps({"message": message})
    if name == "BreakdownAnnotation":
        return json.dumps(
            {"reasoning": "Relevant.", "score": 1.0, "decision": "no_breakdown", "breakdown_types": []}
        )
    keys = DIMENSION.findall(body["messages"][0]["content"])
    return json.dumps({"ratings": [{"dimension": k, "reasoning": "Fine.", "rating": 4} for k in keys]})


END = "Thanks. END_CONVERSATION"
CALLS_PER_DIALOGUE = 6  # 3 user turns (the last ends it), 2 breakdown verdicts, 1 rating
HOLD_AFTER = CALLS_PER_DIALOGUE + 2  # the second dialogue is half done when the server stops answering


def test_a_killed_run_resumes_without_repeating_a_finished_dialogues_calls(tmp_path, llm_env, monkeypatch):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = Store(url)
    pid = import_project(store, SAMPLE).project_id
    generate_personas(store, pid, standard=3, model="offline/heuristic")
    run = create_simulation(
        store, pid, "demo", standard=3, simulator_model=MODEL, judge_model=MODEL, concurrency=1
    )
    llm_env.responder = scripted
    llm_env.hold_after = HOLD_AFTER
    code = (
        "from evalcore.generators.simulation.job import execute_simulation\n"
        f"from evalcore.store import Store\nexecute_simulation(Store({url!r}), {run.id!r})\n"
    )
    env = {**os.environ, **model_env(llm_env)}
    env.pop("EVALCORE_OFFLINE", None)
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        # Killed once a request is held, not merely in flight: a reply still on its way when the
        # child dies was paid for and is asked again (the one call allowed to repeat), which under
        # load made this test count 19 calls instead of 18.
        while (progress(store, store.run(run.id))[0] < 1 or llm_env.held < 1) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        os.kill(child.pid, signal.SIGKILL)  # no cleanup of any kind
        child.wait()
    assert progress(store, store.run(run.id))[0] == 1 and store.run(run.id).status == RunStatus.running
    llm_env.release_held()
    deadline = time.monotonic() + 10
    while llm_env.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(llm_env.completed()) == HOLD_AFTER

    outcome = execute_simulation(store, run.id)
    assert outcome.run.status == RunStatus.finished and (outcome.done, outcome.simulated) == (3, 2)
    keys = [call.key for call in llm_env.completed()]
    assert len(keys) == 3 * CALLS_PER_DIALOGUE and len(set(keys)) == len(keys), (
        "a completed call was repeated"
    )
    sim = load_simulation_run(store, run.id)
    assert len(sim.dialogues) == 3 and all(
        d.finish_reason == FinishReason.user_ended_chat for d in sim.dialogues
    )
    made = [v.conversation.provenance for v in list_conversations(store, pid, generator="simulation")]
    assert {(p.provider, p.producer) for p in made} == {("openai", MODEL)}
    assert all(len(d.turns) == 5 and d.ratings["overall_performance"].rating == 4 for d in sim.dialogues)
    store.close()


def test_a_models_verdicts_keep_unknown_titles_and_an_unparseable_one_is_unscored(project, llm_env):
    import_project(project, SAMPLE, "p2")
    verdicts = iter(
        [
            json.dumps(
                {
                    "reasoning": "Rude.",
                    "score": 0.4,
                    "decision": "breakdown",
                    "breakdown_types": ["Ignore request", "Rude tone"],
                }
            )
        ]
        + ["not a verdict"] * 3
    )

    def reply(api: str, body: dict) -> str:
        name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        return next(verdicts) if name == "BreakdownAnnotation" else scripted(api, body)

    llm_env.responder = reply
    generate_personas(project, "p2", standard=1, model="offline/heuristic")
    outcome = simulate(project, "p2", "demo", standard=1, simulator_model=MODEL, judge_model=MODEL)
    [dialogue] = load_simulation_run(project, outcome.run.id).dialogues
    first, second = (t.breakdown for t in dialogue.turns if t.role == TurnRole.assistant)
    assert first.breakdown_types == ["Ignore request", "Rude tone"], "a title outside the taxonomy is kept"
    assert second is None and dialogue.extra["unscored_turns"] == 1, "unscored, never a made-up verdict"
    assert any("no breakdown verdict" in w for w in project.run(outcome.run.id).warnings)


def test_a_failed_simulated_user_is_a_failed_unit_that_a_retry_simulates_again(project, llm_env):
    from evalcore.jobs import failed_units

    import_project(project, SAMPLE, "p2")
    generate_personas(project, "p2", standard=1, model="offline/heuristic")
    llm_env.responder = lambda api, body: "no JSON here"
    run = create_simulation(project, "p2", "demo", standard=1, simulator_model=MODEL, judge_model=MODEL)
    outcome = execute_simulation(project, run.id)
    assert outcome.run.status == RunStatus.failed and outcome.failed == ["generated_standard_persona_01#1"]
    assert "user simulator" in failed_units(project, run.id)["generated_standard_persona_01#1"]
    assert load_simulation_run(project, run.id).dialogues == []
    llm_env.responder = scripted
    again = execute_simulation(project, run.id, retry_failed=True)
    assert again.run.status == RunStatus.finished and again.simulated == 1
    assert len(load_simulation_run(project, run.id).dialogues) == 1


def test_a_spent_budget_stops_the_run_between_turns_and_a_resume_with_more_finishes_it(project, llm_env):
    import_project(project, SAMPLE, "p2")
    generate_personas(project, "p2", standard=2, model="offline/heuristic")
    llm_env.responder = scripted
    run = create_simulation(project, "p2", "demo", standard=2, simulator_model=MODEL, judge_model=MODEL,
                            budget={"usd": 1e-9})  # fmt: skip
    stopped = execute_simulation(project, run.id)
    assert stopped.run.status == RunStatus.stopped and "budget" in (stopped.run.stopped_reason or "")
    assert stopped.simulated == 0 and load_simulation_run(project, run.id).dialogues == []
    resumed = execute_simulation(project, run.id, budget={"usd": 10.0})
    assert resumed.run.status == RunStatus.finished and resumed.done == 2


def test_a_card_that_says_nothing_gets_chatcheckers_10_user_turns_and_the_cards_own_limit_wins(
    sqlite_store, tmp_path, monkeypatch
):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    said = sqlite_store, import_project(sqlite_store, SAMPLE).project_id
    silent_folder = tmp_path / "silent"
    shutil.copytree(SAMPLE, silent_folder)
    card = silent_folder / "system.yaml"
    text = card.read_text()
    block = text[text.index("user_simulation_config:") : text.index("behaviors:")]
    card.write_text(text.replace(block, "").replace("id: ", "id: silent_", 1))
    silent = sqlite_store, import_project(sqlite_store, silent_folder).project_id
    turns = {}
    for name, (store, pid) in {"said": said, "silent": silent}.items():
        run = create_simulation(store, pid, "demo", standard=1)
        turns[name] = run.params["limits"]["max_user_turns"]
    assert turns == {"said": 12, "silent": 10}
    store, pid = said
    assert (
        create_simulation(store, pid, "demo", standard=1, max_user_turns=3).params["limits"]["max_user_turns"]
        == 3
    ), "a limit given for the run wins over the card's"
    with pytest.raises(EvalcoreError, match="max_user_turns must be at least 1"):
        create_simulation(store, pid, "demo", standard=1, max_user_turns=0)


def test_challenging_personas_break_the_demo_target_more_than_standard_ones_at_the_default_seed(sample):
    store, pid = sample
    outcome = simulate(store, pid, "demo", standard=10, challenging=10)  # seed 0, the CLI's default
    run = load_simulation_run(store, outcome.run.id)
    rates = {}
    for kind in ("standard", "challenging"):
        turns = [
            t
            for d in run.dialogues
            if run.personas[d.user_name].type == kind
            for t in d.turns
            if t.role == TurnRole.assistant
        ]
        broken = [t for t in turns if t.breakdown and t.breakdown.decision == BreakdownDecision.breakdown]
        rates[kind] = len(broken) / len(turns)
    assert rates["challenging"] > rates["standard"], rates
