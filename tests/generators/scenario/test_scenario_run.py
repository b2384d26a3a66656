"""Scenario runs (issue 19, items 5-6 and 8): the seed's own example validates and runs against the demo flow
assistant; a Rasa assistant (a fake Rasa server) with its initial slots injected after session start; the
run is a job (recorded, one unit per repetition, resumable, queueable); `run_count` 1-10; the simulated
user follows the briefing; `evalcore scenarios run` prints the pass share per scenario and the run id."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from rasa_server import RasaServer, sample_engine
from scenario_examples import SEED_EXAMPLE
from typer.testing import CliRunner

from evalcore import jobs
from evalcore.cli.main import app
from evalcore.errors import EvalcoreError
from evalcore.generators.scenario import parse_scenario, read_scenarios
from evalcore.generators.scenario.checks import ScoreRequest
from evalcore.generators.scenario.records import Scenario
from evalcore.generators.scenario.run import (
    RUN_KIND,
    create_scenario_run,
    execute_scenario_run,
    load_scenario_results,
    run_scenarios,
)
from evalcore.generators.scenario.scoring import RELEVANCE_CUTS, calibrated, client_scorer
from evalcore.generators.simulation.offline_user import CANCEL_MESSAGE, _made_up, offline_user_turn
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.llm.client import ModelClient
from evalcore.models import Run, RunStatus, Target, TurnRole
from evalcore.reports.scenarios import pass_rates
from evalcore.targets import save_target
from evalcore.targets.events import EVENTS_KEY, FlowStarted, SlotSet, history

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "data" / "sample"
TRACK = {
    "name": "Track an online order",
    "simulation_context": "You want to find out where your online order is.",
    "setup": {"initial_slots": {"order_id": "WEB-204518", "email": "ana@example.com"}},
    "goals": {
        "criteria": ["The assistant looks up the order"],
        "assertions": [
            {"kind": "flow_started", "flow_id": "track_order"},
            {
                "kind": "slot_was_set",
                "slots": [{"name": "order_id", "value": "WEB-204518", "has_value": True}],
            },
            {"kind": "action_executed", "action_name": "action_lookup_order"},
            {"kind": "bot_uttered", "utter_name": "utter_lookup_order_found"},
            {"kind": "flow_completed", "flow_id": "track_order"},
        ],
    },
}
RETURN = {
    "name": "Return, then cancel",
    "simulation_context": "You want to return an item for a refund. Asked for details, you cancel it.",
    "goals": {"assertions": [{"kind": "flow_cancelled", "flow_id": "return_item"}]},
}


@pytest.fixture
def sample(sqlite_store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    return sqlite_store, import_project(sqlite_store, SAMPLE).project_id


def _seed_example():
    problems: list = []
    scenario = parse_scenario(SEED_EXAMPLE, "order_delay.yml", problems)
    assert problems == [] and scenario is not None, "the seed's own example validates"
    return scenario


def _shares(run: Run, results) -> list[tuple[str, int, int, int]]:
    """Per scenario of the run, in its order: (name, passed, failed or unscored, played), as printed."""
    names = [entry["name"] for entry in run.params["scenarios"]]
    table = pass_rates(results, names)
    rows = table[table.scenario != "All"].itertuples()
    return [(r.scenario, r.passed, r.repetitions - r.passed, r.repetitions) for r in rows]


def test_the_seeds_example_validates_and_runs_against_the_demo_flow_assistant(sample):
    store, pid = sample
    seed = _seed_example()
    outcome = run_scenarios(store, pid, "demo-flows", [seed], run_count=2)
    assert outcome.run.status == RunStatus.finished and (outcome.done, outcome.total) == (2, 2)
    assert any("slot 'authenticated' is not in the domain" in w for w in outcome.run.warnings)
    results = load_scenario_results(store, outcome.run.id)
    assert [(r.scenario, r.repetition) for r in results] == [(seed.name, 1), (seed.name, 2)]
    for result in results:
        verdict = result.verdict
        assert [o.kind for o in verdict.assertions] == [a.kind for a in seed.assertions]  # all twelve
        assert len(verdict.criteria) == 2 and all(c.offline for c in verdict.criteria)
        assert verdict.passed is False, "its flows (check_order_status ...) are not the sample's"
    [conversation] = [v.conversation for v in list_conversations(store, pid, generator="scenario")][:1]
    first = conversation.turns[0]
    assert first.role == TurnRole.user and first.metadata[EVENTS_KEY][:2] == [
        {"type": "action_executed", "action_name": "action_session_start", "turn": 0},
        {"type": "action_executed", "action_name": "action_listen", "turn": 0},
    ], "session start first, on the first turn"
    events = history(conversation.turns)
    assert SlotSet(name="order_id", value="ORD-9981", turn=0) in events, "then the initial slots"
    assert conversation.metadata["scenario"] == seed.name and conversation.provenance.run_id == outcome.run.id
    assert _shares(outcome.run, results) == [(seed.name, 0, 2, 2)]
    with pytest.raises(EvalcoreError, match="domain lacks"):
        create_scenario_run(store, pid, "demo-flows", [seed], strict=True)


def test_a_scenario_the_assistant_satisfies_passes_every_repetition(sample):
    store, pid = sample
    clean = save_target(store, pid, Target(name="clean", kind="demo_flows", config={"defect_rate": 0}))
    scenario = Scenario.model_validate(TRACK)
    outcome = run_scenarios(store, pid, clean.name, [scenario, Scenario.model_validate(RETURN)], run_count=3)
    results = load_scenario_results(store, outcome.run.id)
    assert len(results) == 6 and all(r.verdict.passed for r in results), [
        (o.kind, o.message) for r in results for o in r.verdict.assertions if not o.passed
    ]
    assert _shares(outcome.run, results) == [(scenario.name, 3, 0, 3), ("Return, then cancel", 3, 0, 3)]
    texts = {
        tuple(t.content for t in v.conversation.turns)
        for v in list_conversations(store, pid, generator="scenario")
    }
    assert len(texts) > 2, "repetitions are played anew (the simulated user's seed differs)"


def test_run_count_is_one_to_ten_and_the_target_must_report_events(sample):
    store, pid = sample
    scenario = Scenario.model_validate(TRACK)
    for count in (0, 11):
        with pytest.raises(EvalcoreError, match="run_count"):
            create_scenario_run(store, pid, "demo-flows", [scenario], run_count=count)
    with pytest.raises(EvalcoreError, match="reports no events"):
        create_scenario_run(store, pid, "demo", [scenario])
    with pytest.raises(EvalcoreError, match="no scenario"):
        create_scenario_run(store, pid, "demo-flows", [])


def test_a_rasa_assistant_gets_its_slots_after_session_start_and_its_tracker_is_checked(sample):
    store, pid = sample
    with RasaServer(sample_engine(str(SAMPLE))) as server:
        save_target(store, pid, Target(name="rasa", kind="rasa", config={"url": server.url}))
        outcome = run_scenarios(store, pid, "rasa", [Scenario.model_validate(TRACK)], run_count=2)
        [(_, passed, _, played)] = _shares(outcome.run, load_scenario_results(store, outcome.run.id))
        assert (passed, played) == (2, 2)
        senders = {body["sender"] for _, path, body in server.calls if path == "/webhooks/rest/webhook"}
        assert len(senders) == 2, "one tracker per conversation"
        for sender in senders:
            mine = [
                (p, b)
                for _, p, b in server.calls
                if sender in p or (isinstance(b, dict) and b.get("sender") == sender)
            ]
            assert mine[0][1]["message"] == "/session_start"
            assert mine[1][0].endswith("/tracker/events") and {e["name"] for e in mine[1][1]} == {
                "order_id",
                "email",
            }
            assert all(p.endswith("/tracker") or b.get("message") for p, b in mine[3:]), (
                "then the conversation"
            )
    [conversation, _] = [v.conversation for v in list_conversations(store, pid, generator="scenario")]
    events = history(conversation.turns)
    assert events.index(SlotSet(name="email", value="ana@example.com", turn=0)) < events.index(
        FlowStarted(flow_id="track_order", turn=1)
    )


def test_a_rasa_server_that_fails_is_a_failed_unit_retried_later(sample):
    store, pid = sample
    with RasaServer(sample_engine(str(SAMPLE))) as server:
        save_target(store, pid, Target(name="rasa", kind="rasa", config={"url": server.url}))
        run = create_scenario_run(store, pid, "rasa", [Scenario.model_validate(TRACK)])
        server.fail_next(400)  # not transient: no retry
        first = execute_scenario_run(store, run.id)
        assert first.failed and "session start" in next(iter(jobs.failed_units(store, run.id).values()))
        again = execute_scenario_run(store, run.id, retry_failed=True)
        assert again.done == 1 and not again.failed


def test_a_stopped_run_resumes_and_the_queue_can_take_it(sample):
    store, pid = sample
    scenarios = [Scenario.model_validate(TRACK), Scenario.model_validate(RETURN)]
    run = create_scenario_run(store, pid, "demo-flows", scenarios, run_count=2, concurrency=1)
    assert run.kind == RUN_KIND and run.status == RunStatus.pending and run.params["job"].endswith(":resume")

    class Enough(Exception):
        pass

    def stop_after_one(done: int, total: int) -> None:
        if done >= 1:
            raise Enough

    with pytest.raises(Enough):
        execute_scenario_run(store, run.id, on_progress=stop_after_one)
    assert store.run(run.id).status == RunStatus.stopped
    assert 1 <= len(load_scenario_results(store, run.id)) < 4
    outcome = jobs.resume(store.url, run.id)  # what a queue worker calls
    assert outcome.run.status == RunStatus.finished and outcome.done == 4
    assert len(load_scenario_results(store, run.id)) == 4
    assert len(list_conversations(store, pid, generator="scenario")) == 4, "no repetition played twice"


def test_the_offline_user_follows_a_scenarios_briefing():
    rng = random.Random(0)
    assert _made_up("What is your order id (for example WEB-204518)?", rng).startswith("My order id is WEB-")
    assert _made_up("Which reason would you like: defective, other?", rng) in (
        "defective, please.",
        "other, please.",
    )
    assert _made_up("Could you confirm the original owner, yes or no?", rng) == "Yes."
    assert "@example.com" in _made_up("What is your email?", rng)
    assert _made_up("How was your day?", rng) is None
    inputs = {"context": RETURN["simulation_context"], "history": [
        {"role": "user", "content": "I want to return an item for a refund."},
        {"role": "assistant", "content": "What is your order id?"},
    ]}  # fmt: skip
    assert offline_user_turn(inputs, rng).message == CANCEL_MESSAGE
    # with no sentence of what the user wants, it opens with what the briefing says it does
    briefing = (
        "You are a first-time customer. You have a question about a half day. "
        "What you do: you ask for it outright. Use your own words."
    )
    opening = offline_user_turn({"context": briefing, "history": []}, random.Random(1)).message
    assert "I'd like to ask for a half day outright." in opening
    # "ask about X and then about Y": X first, Y in the next turn, and Y is what the user is after then
    for briefing in (
        "You are a customer. What you do: you ask about the late fees and then about the rental deposit.",
        "You are a customer. You want to ask about the late fees and then about the rental deposit.",
    ):
        history: list[dict] = []
        for n in range(3):
            said = offline_user_turn({"context": briefing, "history": history}, random.Random(n)).message
            history += [{"role": "user", "content": said}, {"role": "assistant", "content": "Here it is."}]
        first, second, third = (t["content"] for t in history if t["role"] == "user")
        assert "the late fees." in first and "rental deposit" not in first, first
        assert second.endswith("And what about the rental deposit?") and "the rental deposit" in third
    # asked for what its briefing says it gives, even an annoyed user (who may misbehave) gives it
    annoyed = (
        "You are a frustrated customer. You want the assistant to register a warranty claim. You are already "
        "annoyed; let it show when an answer is vague or evasive. What you do: you ask for it and give the "
        "order id, part, issue description."
    )
    asked = [{"role": "user", "content": "I want to register a warranty claim."},
             {"role": "assistant", "content": "What is your order id (for example WEB-204518)?"}]  # fmt: skip
    for seed in range(8):
        reply = offline_user_turn({"context": annoyed, "history": asked}, random.Random(seed)).message
        assert reply.startswith("My order id is WEB-"), reply


def test_relevance_is_calibrated_for_the_offline_embedding_model(sample):
    store, pid = sample
    assert calibrated(0.25, 0.25) == 0.5 and calibrated(0.0, 0.25) == 0 and calibrated(1.0, 0.25) == 1
    assert calibrated(0.4, None) == 0.4
    client = ModelClient(store, pid)
    scorer = client_scorer(client)
    model = client.registry.choose("embedding").model
    assert model in RELEVANCE_CUTS
    question = "What are the late fees after the grace period?"
    right = (
        "After a 15-minute grace period, late fees are $10 per hour for standard bikes and $15 for e-bikes."
    )
    wrong = "Pine Hollow (RC-03), 1420 Trailhead Road, rents mountain and kids bikes only."
    good = scorer(ScoreRequest("relevance", right, question, ""))
    bad = scorer(ScoreRequest("relevance", wrong, question, ""))
    assert good.value >= 0.5 > bad.value and "calibrated" in good.rationale


# -------------------------------------------------------------------------------------------------- CLI


def test_the_cli_runs_files_or_the_projects_scenarios_and_ends_with_the_run_id(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    runner = CliRunner()
    db = f"sqlite:///{tmp_path / 'store.db'}"
    assert runner.invoke(app, ["init", "--db", db]).exit_code == 0
    assert runner.invoke(app, ["import", str(SAMPLE), "--db", db]).exit_code == 0
    seed = tmp_path / "order_delay.yml"
    seed.write_text(SEED_EXAMPLE, encoding="utf-8")
    assert runner.invoke(app, ["scenarios", "validate", str(seed)]).exit_code == 0
    result = runner.invoke(app, ["scenarios", "run", str(seed), "--target", "demo-flows", "--run-count", "2",
                                 "--db", db])  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any("0/2 passed  Agent handles delayed order gracefully" in line for line in lines)
    assert any(line.startswith("0/2 passed; ") and "without them" in line for line in lines), "user faults"
    run_id = lines[-1]
    assert run_id.startswith("run") and " " not in run_id
    # read from a file: the target's domain problems name its line and field
    notes = [line for line in lines if line.startswith("note: ")]
    assert notes and all(line.startswith(f"note: {seed}:") for line in notes)
    why = "slot 'authenticated' is not in the domain"
    assert f"note: {seed}:10 [scenario.setup.initial_slots.authenticated]: {why}" in notes
    assert runner.invoke(app, ["scenarios", "import", str(seed), "--db", db]).exit_code == 0
    queued = runner.invoke(
        app, ["scenarios", "run", "--all", "--target", "demo-flows", "--queue", "--db", db]
    )
    assert queued.exit_code == 0, queued.output
    queued_id = queued.stdout.splitlines()[-1]
    assert "queued on" in queued.stdout and queued_id != run_id
    from evalcore.store import Store

    store = Store(db)
    assert store.run(queued_id).status == RunStatus.pending and "queued_at" in store.run(queued_id).params
    jobs.resume(db, queued_id)
    assert len(load_scenario_results(store, queued_id)) == 1
    for args, message in (
        (["scenarios", "run", str(seed), "--db", db], "--target"),
        (["scenarios", "run", str(seed), "--all", "--target", "demo-flows", "--db", db], "--all"),
        (["scenarios", "run", str(seed), "--target", "demo", "--db", db], "reports no events"),
        (
            ["scenarios", "run", str(seed), "--target", "demo-flows", "--run-count", "11", "--db", db],
            "--run-count",
        ),
    ):
        failed = runner.invoke(app, args)
        assert failed.exit_code != 0 and message in failed.output, failed.output
    bad = tmp_path / "bad.yml"
    bad.write_text(SEED_EXAMPLE.replace("operator: any", "operator: some"), encoding="utf-8")
    refused = runner.invoke(app, ["scenarios", "run", str(bad), "--target", "demo-flows", "--db", db])
    assert refused.exit_code != 0 and "operator" in refused.output
    found, problems = read_scenarios([seed])
    assert not problems and found
    config = '{"inject": ["bot_uttered"], "defect_rate": 0}'
    added = runner.invoke(
        app, ["targets", "add", "flaky", "--kind", "demo_flows", "--config", config, "--db", db]
    )
    assert added.exit_code == 0 and "flaky" in runner.invoke(app, ["targets", "list", "--db", db]).stdout
    assert store_target(db, "flaky").config["inject"] == ["bot_uttered"]
    wrong = runner.invoke(app, ["targets", "add", "x", "--kind", "demo_flows", "--config", "[1]", "--db", db])
    assert wrong.exit_code != 0 and "JSON object" in wrong.output


def store_target(db: str, name: str) -> Target:
    from evalcore.store import Store
    from evalcore.targets import get_target

    store = Store(db)
    return get_target(store, store.projects()[0].id, name)
