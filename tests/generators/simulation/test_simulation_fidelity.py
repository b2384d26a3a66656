"""Simulator fidelity (issue 31): how far simulated users are from their personas, per persona and per run,
hand-computed on small dialogues; simulated users beside imported ChatChecker users and people."""

from __future__ import annotations

import pytest
from chatchecker_reference import reference_run
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.generators.simulation.fidelity import (
    goal_coverage,
    persona_fidelity,
    run_summary,
    user_side,
)
from evalcore.generators.simulation.records import (
    BreakdownAnnotation,
    Dialogue,
    DialogueTurn,
    FinishReason,
)
from evalcore.generators.simulation.store_ops import import_chatchecker_run
from evalcore.generators.simulation.user_comparison import side_by_side
from evalcore.items.store_ops import add_conversation
from evalcore.models import Conversation, Persona, Provenance, Turn, TurnRole


def persona(kind: str = "standard", **traits: str) -> Persona:
    return Persona.model_validate(
        {
            "persona_id": f"p_{kind}",
            "type": kind,
            "profile": {"name": "Ana Ruiz", "personality": traits},
            "task": "Book a bike repair for Monday.",
        }
    )


def dialogue(*users: str, broken: tuple[bool, ...] = ()) -> Dialogue:
    turns = []
    for i, text in enumerate(users):
        turns.append(DialogueTurn(role=TurnRole.user, content=text))
        verdict = None
        if i < len(broken):
            verdict = BreakdownAnnotation(
                score=0.4 if broken[i] else 1.0,
                decision="breakdown" if broken[i] else "no_breakdown",
                breakdown_types=["Ignore question"] if broken[i] else [],
            )
        turns.append(DialogueTurn(role=TurnRole.assistant, content="Okay.", breakdown=verdict))
    return Dialogue(dialogue_id="d", user_name="u", turns=turns, finish_reason=FinishReason.user_ended_chat)


def test_a_polite_standard_user_keeps_type_length_and_goal():
    d = dialogue(
        "Hi, I'd like to book a bike repair please.",  # 9 words
        "Monday would be great, thanks.",  # 5 words
        "Is the repair done the same day?",  # 7 words, a question
    )
    row = persona_fidelity(persona(agreeableness="high", openness="low", neuroticism="low"), [d], 6)
    assert row.user_turns == 3 and row.challenging_share == 0.0 and row.type_kept
    assert row.median_turn_words == 7.0 and row.length_kept  # 3 <= 7 <= 12
    # task words: book, bike, repair, monday -> all four said
    assert row.goal_coverage == 1.0
    # polite in 2 of 3 turns (please, thanks), no hostile word -> 0.67 >= 0.3: high
    # one question in three turns -> 0.33: medium (not the low given); no worry word: low
    assert row.traits == {
        "openness": ("low", "medium"),
        "agreeableness": ("high", "high"),
        "neuroticism": ("low", "low"),
    }
    # checks: type, goal, 3 traits, length -> one missed of six
    assert row.traits_kept == 2 and row.distance == pytest.approx(1 / 6)


def test_a_cooperative_challenging_user_is_far_from_its_persona():
    d = dialogue("I need help with something.", "Sure, that is fine.", "Okay, thank you.")
    row = persona_fidelity(persona("challenging", agreeableness="low"), [d], None)
    assert row.challenging_share == 0.0 and not row.type_kept
    assert row.length_kept is None  # the card gives no typical length
    # "thank you" in one turn of three: 0.33 >= 0.3, high agreeableness where low was given
    assert row.goal_coverage == 0.0 and row.traits == {"agreeableness": ("low", "high")}
    assert row.distance == 1.0  # type, goal and the trait all missed


def test_a_pushy_user_shows_its_type():
    d = dialogue("HURRY UP, book the repair.", "Ugh, seriously? Monday!!", "Fine.")
    row = persona_fidelity(persona("challenging"), [d], None)
    assert row.challenging_share == pytest.approx(2 / 3) and row.type_kept


def test_goal_coverage_counts_the_task_words_said():
    assert goal_coverage("Book a bike repair for Monday.", ["a repair on monday"]) == 0.5
    assert goal_coverage("", ["anything"]) == 1.0


def test_run_summary_and_user_side_hand_computed():
    a = persona_fidelity(persona(), [dialogue("Book a bike repair for Monday please.")], 6)
    b = persona_fidelity(persona("challenging"), [dialogue("Hello.")], 6)
    summary = run_summary([a, b])
    assert summary["personas"] == 2 and summary["type_kept"] == 0.5
    side = user_side([dialogue("What time?", "Monday works.", broken=(True, False))])
    assert side["dialogues"] == 1 and side["user turns"] == 2
    assert side["mean turn length"] == 2.0 and side["median turn length"] == 2.0
    assert side["questions per turn"] == 0.5 and side["breakdowns per user turn"] == 0.5
    assert user_side([dialogue("Hi.")])["breakdowns per user turn"] is None  # no verdict to count


def test_side_by_side_puts_imported_runs_and_conversations_beside_the_run(sqlite_store):
    first = import_chatchecker_run(sqlite_store, reference_run(), "shop")
    people = Conversation(
        id="c1",
        generator="deepeval",
        turns=[
            Turn(index=0, role=TurnRole.user, content="Do you open on Sundays?"),
            Turn(index=1, role=TurnRole.assistant, content="Our bikes come in many colours."),
        ],
        provenance=Provenance(producer="deepeval"),
    )
    add_conversation(sqlite_store, "shop", people)
    columns = side_by_side(sqlite_store, first.run_id)
    assert list(columns) == [
        "this imported ChatChecker run",
        "imported conversations (breakdowns by the offline rules)",
    ]
    assert columns["this imported ChatChecker run"]["dialogues"] == 10
    imported = columns["imported conversations (breakdowns by the offline rules)"]
    assert imported["user turns"] == 1 and imported["questions per turn"] == 1.0
    assert imported["breakdowns per user turn"] == 1.0  # the rules: the question was ignored


def test_stats_prints_fidelity_per_persona_with_names(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    db = f"sqlite:///{tmp_path / 's.db'}"
    runner = CliRunner()
    run_id = runner.invoke(app, ["simulations", "import", str(reference_run()), "--db", db]).output.split()[
        -1
    ]
    shown = runner.invoke(app, ["simulations", "stats", run_id, "--db", db]).output
    assert "  Emma Thompson (standard): distance 0.62; type kept" in shown
    assert "users side by side: this imported ChatChecker run" in shown


def test_turns_over_the_cards_maximum_are_counted_not_cut():
    long_turn = "I really need a bike repair on Monday because I ride to work every day."  # 15 words
    d = dialogue(long_turn, "Monday then.", "Yes please, Monday at nine would suit me fine.")  # 15, 2, 9
    row = persona_fidelity(persona(), [d], 5, 10)
    assert (row.max_turn_words, row.over_max_turns) == (10, 1)
    assert persona_fidelity(persona(), [d], 5).over_max_turns is None  # no maximum on the card
    other = persona_fidelity(persona("challenging"), [dialogue(long_turn, long_turn)], 5, 10)
    assert run_summary([row, other])["over_max_turns"] == 3
    assert run_summary([persona_fidelity(persona(), [d], 5)])["over_max_turns"] is None
