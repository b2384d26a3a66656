"""Scenario verdicts with and without the conversations whose simulated user was at fault (issue 31): the
hand-made run of tests/scenario_results.py, one conversation's user made to break character."""

from __future__ import annotations

from scenario_results import store_run

from evalcore.generators.scenario.user_faults import scenario_fault_report
from evalcore.models import Conversation, Turn


def test_a_faulted_conversation_is_listed_and_the_pass_rate_given_without_it(sqlite_store):
    sqlite_store.create_project("p", "P")
    run_id = store_run(sqlite_store, "p")
    clean = scenario_fault_report(sqlite_store, run_id)
    # four repetitions, two passed (conv-d3 is unscored), no simulated user at fault
    assert (clean.played, clean.passed, clean.faults) == (4, 2, {})
    assert (clean.played_without, clean.passed_without) == (4, 2)
    body = Conversation.model_validate(sqlite_store.current("conv-d1").body)
    turns = [
        Turn(index=0, role="user", content="As an AI language model, I cannot have an order."),
        *body.turns[1:],
    ]
    edited = body.model_copy(update={"turns": turns}).model_dump(mode="json")
    sqlite_store.save_revision("conv-d1", edited, "test", sqlite_store.current("conv-d1").version)
    report = scenario_fault_report(sqlite_store, run_id)
    assert [f.kind.value for f in report.faults["conv-d1"]] == ["broke_character"]
    # conv-d1 passed: without it, one of three passed
    assert (report.played, report.passed, report.played_without, report.passed_without) == (4, 2, 3, 1)
