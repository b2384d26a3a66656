"""Simulator-fault detection (issue 31, item 1): each kind on a hand-written dialogue that has it and one
that must not be flagged, the published ChatChecker run left unflagged, and the task's prompt and schema."""

from __future__ import annotations

import pytest
from chatchecker_reference import chatchecker_dir, reference_run
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.generators.simulation.chatchecker import read_dialogue_file, read_run
from evalcore.generators.simulation.personas import read_persona_files
from evalcore.generators.simulation.records import Dialogue, DialogueTurn, FinishReason
from evalcore.generators.simulation.user_faults import (
    DETECT_USER_FAULTS,
    UserFaultKind,
    UserFaults,
    detect_user_faults,
    fault_kinds,
    user_fault_inputs,
)
from evalcore.models import TurnRole

STANDARD = {
    "type": "standard",
    "profile": {
        "name": "Maria Lopez",
        "age": 34,
        "background_info": ["You commute by bike every day.", "You bought two bikes last spring."],
        "interaction_style": ["Polite and to the point."],
    },
    "task": "Find out whether your e-bike battery can be replaced under warranty.",
}
CHALLENGING = {**STANDARD, "type": "challenging"}


def dialogue(*texts: str, finish: FinishReason = FinishReason.chatbot_ended_chat) -> Dialogue:
    """A dialogue alternating bot and user turns, the bot first."""
    turns = [
        DialogueTurn(role=TurnRole.assistant if i % 2 == 0 else TurnRole.user, content=text)
        for i, text in enumerate(texts)
    ]
    return Dialogue(dialogue_id="d", user_name="u", turns=turns, finish_reason=finish)


CLEAN = dialogue(
    "Hello! How can I help you with your bike today?",
    "Hi, my e-bike battery stopped holding a charge. Is it covered by the warranty?",
    "Batteries are covered for two years. When did you buy the bike?",
    "Last spring, so about a year ago.",
    "Then the replacement is covered. Shall I open a warranty claim for you?",
    "Yes please, go ahead.",
    "Done: your claim number is 4411. Is there anything else I can help you with?",
    "No, that's all. Thank you, bye!",
)

FAULTY = {
    UserFaultKind.goal_drift: (
        dialogue(
            "Hello! How can I help you with your bike today?",
            "Is my e-bike battery covered by the warranty?",
            "Batteries are covered for two years. When did you buy the bike?",
            "Which football club won the championship in nineteen ninety eight?",
            "I can only help with bikes.",
            "Ok, thanks.",
        ),
        STANDARD,
    ),
    UserFaultKind.invented_fact: (
        dialogue(
            "Hello! How can I help you with your bike today?",
            "Is my e-bike battery covered by the warranty? I bought five bikes last spring.",
            "Batteries are covered for two years.",
            "Great, thanks.",
        ),
        STANDARD,
    ),
    UserFaultKind.premature_end: (
        dialogue(
            "Hello! How can I help you with your bike today?",
            "Is my e-bike battery covered by the warranty?",
            "It is. Shall I open a warranty claim for you?",
            "Never mind, goodbye.",
            finish=FinishReason.user_ended_chat,
        ),
        STANDARD,
    ),
    UserFaultKind.broke_character: (
        dialogue(
            "Hello! How can I help you with your bike today?",
            "Hello! How can I assist you today?",
            "I am the assistant here. What do you need?",
            "Is my e-bike battery covered by the warranty?",
        ),
        STANDARD,
    ),
    UserFaultKind.repetition: (
        dialogue(
            "Hello! How can I help you with your bike today?",
            "My e-bike battery stopped holding a charge, is it covered?",
            "Batteries are covered for two years. When did you buy it?",
            "My e-bike battery stopped holding a charge, is it covered?",
        ),
        STANDARD,
    ),
    UserFaultKind.too_cooperative: (
        dialogue(
            "Hello! How can I help you with your bike today?",
            "Is my e-bike battery covered by the warranty, please?",
            "Batteries are covered for two years. Shall I open a claim?",
            "Yes please, that would be lovely.",
            "Done. Anything else?",
            "That's all, thank you very much.",
        ),
        CHALLENGING,
    ),
}

# The same situations played well: each must not be flagged with its kind.
FINE = {
    UserFaultKind.goal_drift: (CLEAN, STANDARD),
    UserFaultKind.invented_fact: (
        dialogue("How can I help?", "I bought two bikes last spring; I'm 34 and my name is Maria."),
        STANDARD,
    ),
    UserFaultKind.premature_end: (
        dialogue(
            "Hello! How can I help?",
            "Is my battery covered?",
            "It is, claim 4411 is open. Anything else I can help you with today?",
            "No, bye.",
            finish=FinishReason.user_ended_chat,
        ),
        STANDARD,
    ),
    UserFaultKind.broke_character: (CLEAN, STANDARD),
    UserFaultKind.repetition: (
        dialogue(
            "Hello! How can I help you with your bike today?",
            "What is the price of a new e-bike battery for my model?",
            "Which model do you have?",
            "What is the price of a new e-bike battery for my model?",
        ),
        {
            **STANDARD,
            "profile": {**STANDARD["profile"], "interaction_style": ["You repeat the same question."]},
        },
    ),
    UserFaultKind.too_cooperative: (
        dialogue(
            "Hello! How can I help you with your bike today?",
            "WHY does my battery die already? Is it covered or not?",
            "Batteries are covered for two years.",
            "Fine, whatever. Open the claim.",
        ),
        CHALLENGING,
    ),
}


@pytest.mark.parametrize("kind", list(UserFaultKind))
def test_each_kind_fires_on_its_dialogue_and_names_the_turn(kind):
    found, persona = FAULTY[kind]
    faults = [f for f in detect_user_faults(found, persona) if f.kind == kind]
    assert faults, kind
    assert all(found.turns[f.turn].role == TurnRole.user and f.reason for f in faults)


@pytest.mark.parametrize("kind", list(UserFaultKind))
def test_each_kind_stays_quiet_when_the_user_plays_its_part(kind):
    fine, persona = FINE[kind]
    assert kind not in fault_kinds(detect_user_faults(fine, persona))


def test_a_clean_dialogue_has_no_fault_at_all():
    assert detect_user_faults(CLEAN, STANDARD) == []


def test_drift_and_repetition_are_a_challenging_personas_right():
    drifted, _ = FAULTY[UserFaultKind.goal_drift]
    repeated, _ = FAULTY[UserFaultKind.repetition]
    assert not fault_kinds(detect_user_faults(drifted, CHALLENGING)) & {UserFaultKind.goal_drift}
    assert not fault_kinds(detect_user_faults(repeated, CHALLENGING)) & {UserFaultKind.repetition}


def test_the_published_chatchecker_runs_dialogues_are_not_flagged():
    folders = sorted(p for p in (chatchecker_dir() / "runs").glob("*/*") if p.is_dir())
    assert reference_run() in folders  # every published run there, not only the one the tests know
    for folder in folders:
        run = read_run(folder)
        for d in run.dialogues:
            persona = run.personas[d.user_name].model_dump(mode="json")
            assert detect_user_faults(d, persona) == [], d.dialogue_id


def test_the_releases_example_dialogue_of_a_challenging_persona_is_read_alone_and_not_flagged():
    example = read_dialogue_file(chatchecker_dir() / "example_dialogue.yaml")
    assert (example.user_name, len(example.turns)) == ("generated_challenging_persona_01", 23)
    assert example.turns[0].role == TurnRole.user and example.turns[1].breakdown is not None
    persona = read_persona_files(chatchecker_dir() / f"{example.user_name}.yaml")[0]
    assert persona.type == "challenging"
    assert detect_user_faults(example, persona.model_dump(mode="json")) == []


def test_the_task_renders_a_numbered_transcript_and_answers_offline_with_the_rules():
    found, persona = FAULTY[UserFaultKind.broke_character]
    inputs = user_fault_inputs(found, persona)
    messages = DETECT_USER_FAULTS.render(inputs)
    assert "[1] user: Hello! How can I assist you today?" in messages[-1].content
    assert '"faults"' in messages[0].content  # the output's shape
    answer = DETECT_USER_FAULTS.run_offline(inputs)
    assert isinstance(answer, UserFaults)
    assert [(f.kind, f.turn) for f in answer.faults] == [(UserFaultKind.broke_character, 1)]


def test_stats_prints_the_faulted_dialogues_and_the_figures_without_them(tmp_path):
    runner = CliRunner()
    db = f"sqlite:///{tmp_path / 'faults.db'}"
    imported = runner.invoke(app, ["simulations", "import", str(reference_run()), "--db", db])
    run_id = imported.stdout.strip().splitlines()[-1]
    table = runner.invoke(app, ["simulations", "stats", run_id, "--db", db])
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert "user_fault dialogues                  0 (none)" in lines
    assert "dialogues_with_breakdowns             5 (without user_fault dialogues: 5)" in lines


def test_a_name_given_at_the_start_of_a_sentence_is_checked_too():
    said = dialogue("How can I help?", "My name is Carla and I bought two bikes.")
    faults = detect_user_faults(said, STANDARD)
    assert [f.kind for f in faults] == [UserFaultKind.invented_fact] and "Carla" in faults[0].reason
    assert detect_user_faults(dialogue("How can I help?", "My name is Maria."), STANDARD) == []
