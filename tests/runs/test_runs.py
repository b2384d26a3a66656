"""Runs: playing conversations and tests against targets, crashes per turn, budget, stop, kill and resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from runs_support import SAMPLE, conversation, sample_project

from evalcore import __version__
from evalcore.errors import EvalcoreError
from evalcore.items.store_ops import add_conversation, add_test
from evalcore.jobs.queue import enqueue, open_queue
from evalcore.llm.retry import RetryPolicy
from evalcore.models import Provenance, Run, RunStatus, Target, Turn
from evalcore.models import Test as ItemTest
from evalcore.runs import (
    create_run,
    execute_run,
    offline_judge,
    request_stop,
    run_progress,
    run_target,
)
from evalcore.runs.store_ops import judgment_bodies, judgment_rows
from evalcore.store import Store
from evalcore.store import schema as t
from evalcore.targets import TargetConfigError, save_target

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
PROJECT = "p1"
ROOT = Path(__file__).resolve().parents[2]
NO_RETRY = RetryPolicy(max_retries=0)


def turns_of(store: Store, run_id: str):
    rows = judgment_rows(store, run_id)
    bodies = judgment_bodies(store, [r[0] for r in rows])
    return [bodies[r[0]] for r in rows]


def add_sample_conversations(store: Store, n: int | None = None) -> None:
    for i, (_, chain, qa) in enumerate(SAMPLE[:n]):
        add_conversation(store, PROJECT, conversation(f"c{i}", f"spec-{i}", chain, qa))


def chat_target(server, name="bot", **overrides) -> Target:
    config = {"base_url": server.openai_base_url, "model": "gpt-4o-mini", "cache": False, "timeout_s": 0.4}
    return Target(name=name, kind="openai", config={**config, **overrides})


@pytest.fixture(autouse=True)
def _online(monkeypatch):
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)


def test_a_demo_run_plays_every_turn_with_its_history_and_records_how_it_was_made(store):
    """On SQLite and PostgreSQL."""
    pid, ids = sample_project(store)
    seen = []
    outcome = run_target(store, pid, "demo", judge="offline", on_progress=lambda d, n: seen.append((d, n)))
    total = sum(len(qa) for _, _, qa in SAMPLE)
    assert (outcome.done, outcome.total, outcome.played, outcome.crashed) == (total, total, total, 0)
    assert seen[0] == (0, total) and seen[-1] == (total, total)
    run = store.run(outcome.run.id)
    assert run.status == RunStatus.finished and run.target == "demo" and run.judge == "offline"
    assert run.params["target"]["kind"] == "demo" and run.params["prompt_versions"] == {
        "offline_judge": offline_judge.VERSION
    }
    assert run.code_version.startswith(__version__) and run.params["items"] == [
        f"conversation:{i}" for i in ids
    ]
    turns = turns_of(store, run.id)
    assert len(turns) == total and {t.judge for t in turns} == {"offline"}
    first, second = (t for t in turns if t.conversation_id == ids[0] and t.turn_index in (1, 3))
    assert first.history == [] and not first.multi_turn
    assert second.multi_turn and second.history == [
        {"role": "user", "content": first.question},
        {"role": "assistant", "content": first.reply},
    ], "the target sees its own earlier reply, not the expected one"
    assert all(t.score in (0.0, 1.0) for t in turns) and any(t.score == 0 for t in turns)
    judged_errors = {"incomplete", "wrong_fact", "coreference", "failed_to_say_cannot_answer"}
    assert {t.error_type for t in turns if t.score == 0} <= judged_errors | {
        "hallucinated",
        "refused_wrongly",
        "multi_doc_retrieval",
        "off_topic",
    }


def test_a_timeout_or_garbage_is_a_crash_of_that_turn_and_the_run_goes_on(project, llm_server, monkeypatch):
    monkeypatch.setenv("RIDGE_KEY", "sk-SENTINEL-run-key-0123456789")
    add_sample_conversations(project, 1)
    save_target(project, PROJECT, chat_target(llm_server, api_key_env="RIDGE_KEY"))
    llm_server.timeout_next(1.5)  # first question: no reply in time
    llm_server.malformed_next()  # second question: HTTP 200 with a body that is not JSON
    llm_server.enqueue(
        "Beyond 25 km only an exchange for a different size.", "No info.", "Bring it to a store."
    )
    run = create_run(project, PROJECT, "bot", judge="offline", concurrency=1)
    outcome = execute_run(project, run.id, retry=NO_RETRY)
    assert outcome.run.status == RunStatus.finished and (outcome.done, outcome.crashed) == (6, 2)
    turns = {t.turn_index: t for t in turns_of(project, run.id)}
    assert (turns[1].score, turns[1].error_type) == (0.0, "crash") and "timeout" in turns[1].crash
    assert (turns[3].score, turns[3].error_type) == (0.0, "crash") and "malformed" in turns[3].crash
    assert turns[1].reply == "" and turns[1].judge == "crash"
    assert turns[5].reply.startswith("Beyond 25 km") and turns[5].crash is None
    # After crashed turns, the next one still carries the questions the target failed to answer.
    assert turns[5].history == [{"role": "user", "content": turns[i].question} for i in (1, 3)]
    with project.read() as conn:
        rows = [row for table in (t.runs, t.judgments, t.run_units) for row in conn.execute(sa.select(table))]
    stored = json.dumps([list(map(str, row)) for row in rows])
    assert "SENTINEL" not in stored and "RIDGE_KEY" in stored, "the key's name is recorded, never its value"


def test_a_killed_run_resumes_without_replaying_finished_turns(sqlite_store, tmp_path, monkeypatch):
    pid, _ = sample_project(sqlite_store)
    save_target(
        sqlite_store,
        pid,
        Target(name="py", kind="python", config={"callable": "runs_support:logging_bot"}),
    )
    run = create_run(sqlite_store, pid, "py", judge="offline", concurrency=2)
    log = tmp_path / "bot.log"
    code = (
        "import sys; sys.path[:0] = ['tests', '.']\n"
        "from evalcore.runs import execute_run\nfrom evalcore.store import Store\n"
        f"execute_run(Store({sqlite_store.url!r}), {run.id!r})\n"
    )
    env = {**os.environ, "EC8_BOT_LOG": str(log), "EC8_BOT_BLOCK_AFTER": "5"}
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        while run_progress(sqlite_store, run.id)[0] < 5 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.3)  # the two workers are now stuck in the target
    finally:
        child.kill()  # SIGKILL: no cleanup of any kind
        child.wait()
    before = {(x.conversation_id, x.turn_index): x.question for x in turns_of(sqlite_store, run.id)}
    assert len(before) == 5 and sqlite_store.run(run.id).status == RunStatus.running

    monkeypatch.setenv("EC8_BOT_LOG", str(log))
    monkeypatch.delenv("EC8_BOT_BLOCK_AFTER", raising=False)
    outcome = execute_run(sqlite_store, run.id)
    total = sum(len(qa) for _, _, qa in SAMPLE)
    assert outcome.run.status == RunStatus.finished and (outcome.done, outcome.played) == (total, total - 5)
    after = turns_of(sqlite_store, run.id)
    assert len(after) == total and len({(x.conversation_id, x.turn_index) for x in after}) == total
    resumed = [json.loads(line) for line in log.read_text().splitlines()]
    resumed = [c for c in resumed if c["pid"] == os.getpid()]
    assert not {c["q"] for c in resumed} & set(before.values()), "no finished turn was played again"
    position = {q: i for _, _, qa in SAMPLE for i, (q, *_) in enumerate(qa)}
    assert all(c["n"] == 2 * position[c["q"]] + 1 for c in resumed), "history rebuilt from stored replies"


def test_a_spent_budget_stops_the_run_and_a_resume_with_more_finishes_it(project, llm_server):
    add_sample_conversations(project, 2)
    save_target(project, PROJECT, chat_target(llm_server, max_tokens=50))
    # Each call reserves its prompt estimate + 50 tokens and spends ~40: room for a few calls, not all 11.
    run = create_run(project, PROJECT, "bot", judge="offline", concurrency=1, budget={"tokens": 400})
    first = execute_run(project, run.id, retry=NO_RETRY)
    assert first.run.status == RunStatus.stopped and first.run.stopped_reason == "budget"
    assert 0 < first.done < first.total
    second = execute_run(project, run.id, budget={"tokens": 100_000}, retry=NO_RETRY)
    assert second.run.status == RunStatus.finished and second.done == second.total
    assert second.played == first.total - first.done
    assert len(llm_server.completed("openai")) == first.total, "every turn asked once"


def test_a_stop_request_halts_a_queued_run_which_resumes_later(sqlite_store, monkeypatch):
    monkeypatch.setenv("EC8_BOT_DELAY", "0.15")
    pid, _ = sample_project(sqlite_store)
    save_target(
        sqlite_store,
        pid,
        Target(name="slow", kind="python", config={"callable": "runs_support:slow_bot"}),
    )
    run = create_run(sqlite_store, pid, "slow", judge="offline", concurrency=1)
    queue = open_queue(sqlite_store.url)
    enqueue(sqlite_store, run.id)
    request_stop(sqlite_store, run.id, "tester")  # stopped while queued: the worker skips it
    assert queue.huey.execute(queue.huey.dequeue())["skipped"]
    assert sqlite_store.run(run.id).status == RunStatus.stopped
    enqueue(sqlite_store, run.id)  # the page's Resume
    worker = threading.Thread(target=lambda: queue.huey.execute(queue.huey.dequeue()))  # a worker's part
    worker.start()
    deadline = time.monotonic() + 30
    while run_progress(sqlite_store, run.id)[0] < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    request_stop(sqlite_store, run.id, "tester")
    worker.join(timeout=30)
    assert not worker.is_alive()
    stopped = sqlite_store.run(run.id)
    done, total = run_progress(sqlite_store, run.id)
    assert (
        stopped.status == RunStatus.stopped and stopped.stopped_reason == "stopped by tester" and done < total
    )
    monkeypatch.setenv("EC8_BOT_DELAY", "0")
    outcome = execute_run(sqlite_store, run.id)
    assert outcome.run.status == RunStatus.finished and outcome.run.stopped_reason is None
    assert len(turns_of(sqlite_store, run.id)) == total


def test_the_judge_is_not_the_targets_own_model_and_a_lone_model_is_flagged(project, llm_server, llm_env):
    add_sample_conversations(project, 1)
    save_target(project, PROJECT, chat_target(llm_server, model="gpt-4o"))
    project.update_settings(PROJECT, {"models": {"judge": "openai/gpt-4o"}})
    run = run_target(project, PROJECT, "bot", retry=NO_RETRY).run
    assert run.judge == "openai/gpt-4o" and any("self-preference" in w for w in run.warnings)
    project.update_settings(
        PROJECT, {"models": {"judge": "openai/gpt-4o", "generator": "anthropic/claude-haiku-4-5"}}
    )
    other = run_target(project, PROJECT, "bot", retry=NO_RETRY).run
    assert other.judge == "anthropic/claude-haiku-4-5" and not other.warnings
    assert {x.judge for x in turns_of(project, other.id)} == {"anthropic/claude-haiku-4-5"}
    assert other.params["prompt_versions"] == {"judge_turn": "2"}


def test_a_test_is_played_with_its_context_and_its_assertions(project):
    turn = lambda i, role, text: Turn(index=i, role=role, content=text, grounding=["rental-policy"])  # noqa: E731
    test = ItemTest(
        id="test-late-fee",
        spec_id="spec-x",
        context=[
            turn(0, "user", "I rent an e-bike."),
            turn(1, "assistant", "Great!"),
            turn(2, "user", "Late fee?"),
        ],
        expected=turn(3, "assistant", "$15 per hour after a 15-minute grace period."),
        assertions=[{"kind": "contains", "text": "$15"}, {"kind": "max_words", "value": 50}],
        provenance=Provenance(producer="offline"),
    )
    add_test(project, PROJECT, test)
    save_target(
        project, PROJECT, Target(name="echo", kind="python", config={"callable": "target_endpoints:echo_bot"})
    )
    outcome = run_target(project, PROJECT, "echo", judge="offline", source="tests")
    [played] = turns_of(project, outcome.run.id)
    assert played.test_id == "test-late-fee" and played.multi_turn and played.question == "Late fee?"
    assert played.reply == "3: Late fee?", "context (2 turns) + the question were sent"
    assert played.score == 0.0 and [a["passed"] for a in played.assertions] == [False, True]
    assert played.judge == "offline+assertions" and "Assertions failed: contains" in played.rationale


def test_conversations_are_played_at_most_concurrency_at_a_time(project, llm_server):
    llm_server.latency = 0.1
    for i in range(6):
        add_conversation(
            project, PROJECT, conversation(f"k{i}", None, [], [("q", "a", "SINGLE-DOC", [])] * 2)
        )
    save_target(project, PROJECT, chat_target(llm_server, timeout_s=5))
    outcome = run_target(project, PROJECT, "bot", judge="offline", concurrency=3)
    assert outcome.done == 12 and 2 <= llm_server.max_in_flight <= 3


def test_a_target_that_cannot_be_reached_as_configured_fails_the_run_with_the_reason(project, monkeypatch):
    monkeypatch.delenv("NO_SUCH_TOKEN", raising=False)
    add_sample_conversations(project, 1)
    config = {"url": "http://127.0.0.1:9/chat", "headers": {"Authorization": "Bearer ${NO_SUCH_TOKEN}"}}
    save_target(project, PROJECT, Target(name="web", kind="http", config=config))
    run = create_run(project, PROJECT, "web", judge="offline")
    with pytest.raises(TargetConfigError, match="NO_SUCH_TOKEN"):
        execute_run(project, run.id)
    failed = project.run(run.id)
    assert failed.status == RunStatus.failed and "NO_SUCH_TOKEN" in failed.stopped_reason
    with pytest.raises(EvalcoreError, match="not a run against a target"):
        project.start_run(PROJECT, Run(id="gen-1", kind="specs.generate"))
        execute_run(project, "gen-1")


def test_a_small_judges_near_misses_keep_their_scores_with_the_raw_text(sqlite_store, llm_env):
    pid, _ = sample_project(sqlite_store)
    sloppy = '<think>{fine?}</think>\n{"rationale": "Right.", "score": "PASS", "error_type": "none"}'
    llm_env.responder = lambda api, body: sloppy
    judge = "anthropic/claude-haiku-4-5"
    run = run_target(sqlite_store, pid, "demo", judge=judge, limit=1, retry=NO_RETRY).run
    turns = turns_of(sqlite_store, run.id)
    assert turns and len(llm_env.calls) == len(turns), "no re-ask"
    for turn in turns:
        assert (turn.score, turn.error_type, turn.raw) == (1.0, None, sloppy)
        assert turn.judge_repairs == ["reasoning_block", "score_word", "empty_as_null"]
