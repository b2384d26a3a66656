"""The simulator's stop rules (ChatChecker's, issue 18 item 2), with scripted user turns from the local model
server and scripted targets; the offline user; the detector and rater tasks on a simulated dialogue."""

from __future__ import annotations

import itertools
import random

import pytest

from evalcore.generators.simulation.detection import judge_dialogue, rating_dimensions
from evalcore.generators.simulation.offline_user import END, offline_user_turn
from evalcore.generators.simulation.records import BreakdownDecision, FinishReason
from evalcore.generators.simulation.simulator import (
    CRASH_CONTENT,
    SIMULATE_USER_TURN,
    Briefing,
    Limits,
    simulate_dialogue,
    turn_inputs,
    words_in,
)
from evalcore.generators.simulation.taxonomy import CHATBOT_CRASH_TITLE
from evalcore.llm.client import ModelClient
from evalcore.models import Persona, PersonaProfile, TurnRole
from evalcore.targets import TargetAdapter, TargetCrash, TargetReply

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
MODEL = "openai/gpt-4o-mini"
SEEDS = itertools.count()
INFO = {"name": "Shop bot", "type": "task-oriented", "task": "Help customers with returns, order tracking."}


class Scripted(TargetAdapter):
    """A target that answers from a list; an Exception in the list is raised; ('text', True) ends."""

    def __init__(self, *replies) -> None:
        self.replies, self.seen = list(replies), []

    def reply(self, messages):
        self.seen.append(list(messages))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        text, ended = reply if isinstance(reply, tuple) else (reply, False)
        return TargetReply(text, 1.0, ended=ended)


def persona(
    kind: str = "standard", style: list[str] | None = None, task: str = "Return a jacket."
) -> Persona:
    profile = PersonaProfile(
        name="Ada Park",
        age=34,
        background_info=["You bought a jacket last week."],
        personality={"agreeableness": "high", "extraversion": "medium"},
        interaction_style=style or ["You write complete sentences."],
    )
    return Persona(persona_id=f"generated_{kind}_persona_01", type=kind, profile=profile, task=task)


def run(project, llm_server, target, *users, limits=Limits(max_user_turns=3)):
    """One dialogue with scripted user turns (a persona of its own: a repeated prompt is served cached)."""
    llm_server.enqueue(*({"message": u} for u in users))
    llm = ModelClient(project, "p1")
    briefing = Briefing("u", persona(task=f"Return jacket number {next(SEEDS)}."))
    return simulate_dialogue(briefing, target, llm, chatbot_info=INFO, limits=limits, model=MODEL)


def test_at_most_max_user_turns_then_max_turns_reached(project, llm_env):
    bot = Scripted("a", "b", "c")
    out = run(project, llm_env, bot, "one", "two", "three", "four")
    assert out.finish_reason == FinishReason.max_turns_reached and out.error is None
    assert [t.content for t in out.turns] == ["one", "a", "two", "b", "three", "c"]
    assert [m.content for m in bot.seen[-1]] == ["one", "a", "two", "b", "three"], "the target sees it all"
    assert not out.offline and out.simulator_models == [MODEL]


def test_end_conversation_keeps_the_text_before_it_and_an_empty_reply_ends_too(project, llm_env):
    out = run(project, llm_env, Scripted("a"), "hello", f'"Thanks, bye!" {END} more')
    assert out.finish_reason == FinishReason.user_ended_chat
    assert [t.content for t in out.turns] == ["hello", "a", "Thanks, bye!"]
    out = run(project, llm_env, Scripted("a"), "hello", "   ")
    assert out.finish_reason == FinishReason.user_ended_chat and [t.content for t in out.turns] == [
        "hello",
        "a",
    ]
    out = run(project, llm_env, Scripted(), END)
    assert out.finish_reason == FinishReason.user_ended_chat and out.turns == []


def test_the_target_ending_the_chat_and_a_target_error_as_chatbot_crash(project, llm_env):
    out = run(project, llm_env, Scripted("a", ("Goodbye!", True)), "one", "two", "three")
    assert out.finish_reason == FinishReason.chatbot_ended_chat and out.turns[-1].content == "Goodbye!"
    out = run(project, llm_env, Scripted("a", TargetCrash("error", "HTTP 500")), "one", "two", "three")
    assert out.finish_reason == FinishReason.chatbot_error and "HTTP 500" in out.error
    crash = out.turns[-1]
    assert crash.role == TurnRole.assistant and crash.content == CRASH_CONTENT
    assert crash.breakdown.breakdown_types == [CHATBOT_CRASH_TITLE] and crash.breakdown.score == 0.0
    assert crash.breakdown.decision == BreakdownDecision.breakdown and len(out.turns) == 4


def test_a_simulator_that_never_answers_usably_is_a_user_simulator_error(project, llm_env):
    llm_env.enqueue("not json", "still not", "nope")
    llm = ModelClient(project, "p1")
    out = simulate_dialogue(
        Briefing("u", persona()), Scripted(), llm, chatbot_info=INFO, limits=Limits(), model=MODEL
    )
    assert out.finish_reason == FinishReason.user_simulator_error and out.error and out.turns == []


def test_turn_lengths_are_word_counts_and_a_long_turn_is_kept_as_the_paper_keeps_it(project, llm_env):
    assert (words_in("5 words"), words_in("94 words"), words_in(None)) == (5, 94, None)
    limits = Limits(max_user_turns=1, typical_user_turn_length="3 words", max_user_turn_length="4 words")
    out = run(project, llm_env, Scripted("a"), "one two three four five six", limits=limits)
    assert out.turns[0].content == "one two three four five six", "the maximum is an instruction, not a cut"
    system = SIMULATE_USER_TURN.render(turn_inputs(Briefing("u", persona()), INFO, limits, []))[0].content
    assert (
        "Keep your answer around 3 words. Use longer or shorter answers if your persona would do so in "
        "the given situation." in system
    )
    assert "- You must always keep your response below 4 words in length." in system
    assert "Return a jacket." in system
    assert '"task": "Help customers with returns, order tracking."' in system, (
        "the simulator sees the chatbot info whole, its task too (seed 002, Listing 9)"
    )


def test_the_simulator_prompt_is_the_seeds_listing_9_word_for_word():
    limits = Limits(typical_user_turn_length="5 words", max_user_turn_length="94 words")
    system, user = SIMULATE_USER_TURN.render(turn_inputs(Briefing("u", persona()), INFO, limits, []))
    for line in (
        "# Role\nYou play the role of a standard human user interacting with a chatbot.",
        "You are interacting with a chatbot that has the following characteristics:\n{",
        "You act as the following standard user persona in your conversation with the chatbot:\nprofile:",
        "# Task\nComplete the next turn in the conversation based on your persona.",
        "## Task Guidelines\n- Complete the turn as human-like as possible.\n- Always stick to your persona. "
        "You are trying to pass the Turing test by acting as the human persona.",
        "- If the chatbot indicates that the conversation is over, if there is no progress in the "
        "conversation or if the conversation can not be continued realistically, end the conversation by "
        'writing "END_CONVERSATION".',
    ):
        assert line in system.content
    assert user.content.endswith("1. YOU:") and user.content.startswith("# Conversation\n")


def test_a_scenario_briefing_is_pursued_offline_and_its_slots_are_given_when_asked():
    context = (
        "You are an impatient customer who escalates quickly if not given a direct answer.\n"
        "You want to find out why the order is delayed and get a clear resolution."
    )
    briefing = Briefing("u", None, context=context, slots={"order_id": "ORD-9981"})
    inputs = turn_inputs(briefing, INFO, Limits(), [])
    opener = offline_user_turn({**inputs, "history": []}, random.Random(1)).message
    assert "i want to find out why the order is delayed" in opener.lower()
    history = [
        {"role": "user", "content": opener},
        {"role": "assistant", "content": "What is your order id?"},
    ]
    for seed in range(5):  # whatever the draw, a fact of the briefing is given when the bot asks for it
        assert "ORD-9981" in offline_user_turn({**inputs, "history": history}, random.Random(seed)).message


def test_offline_challenging_users_misbehave_and_standard_ones_pursue_their_task():
    def messages(kind, style):
        base = turn_inputs(Briefing("u", persona(kind, style)), INFO, Limits(), [])
        history, out = [], []
        for i in range(6):
            text = offline_user_turn({**base, "history": history}, random.Random(i)).message
            out.append(text)
            history += [
                {"role": "user", "content": text},
                {"role": "assistant", "content": "Sure. Returns are free."},
            ]
        return out

    standard = messages("standard", None)
    assert "return" in standard[0].lower() and "jacket" in standard[0].lower()
    assert any(END in m for m in standard), "a standard user ends once its task is done"
    challenging = messages("challenging", ["You often send fragments and half-finished sentences."])
    assert any(len(m.split()) <= 3 and END not in m for m in challenging[1:]), challenging


def test_a_text_profile_is_shown_as_text_and_its_words_shape_the_offline_user():
    text = "A retired sailor who writes in capital letters when impatient."
    sailor = Persona(persona_id="p_text", type="challenging", profile=text, task="Return a jacket.")
    inputs = turn_inputs(Briefing("u", sailor), INFO, Limits(), [])
    assert f"profile: {text}" in SIMULATE_USER_TURN.render(inputs)[0].content
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure. Returns are free."}]
    said = [offline_user_turn({**inputs, "history": history}, random.Random(i)).message for i in range(8)]
    assert any(m.endswith("!!") for m in said), said


def test_the_detector_and_rater_offline_on_a_dialogue(project):
    llm = ModelClient(project, "p1")
    out = run_offline_dialogue(llm)
    judged = judge_dialogue(out.turns, out.finish_reason, llm, chatbot_info=INFO, task_oriented=True)
    annotated = [t.breakdown for t in judged.turns if t.role == TurnRole.assistant]
    assert all(a is not None for a in annotated) and judged.offline and judged.unscored == 0
    assert annotated[-1].breakdown_types == [CHATBOT_CRASH_TITLE], "the crash annotation is kept"
    assert "Repetition" in annotated[1].breakdown_types
    assert list(judged.ratings) == [d.key for d in rating_dimensions(True)]
    assert judged.ratings["task_success"].rating <= 2 and judged.ratings["overall_performance"].rating <= 3
    conversational = judge_dialogue(out.turns, out.finish_reason, llm, chatbot_info=INFO, task_oriented=False)
    assert list(conversational.ratings) == [d.key for d in rating_dimensions(False)]


def run_offline_dialogue(llm):
    """A dialogue that repeats itself, then crashes (offline user, scripted target)."""
    same = "Returns are free within 30 days for unworn items."
    bot = Scripted(same, same, TargetCrash("error", "boom"))
    return simulate_dialogue(Briefing("u", persona()), bot, llm, chatbot_info=INFO, limits=Limits(), seed=1)


@pytest.fixture(autouse=True)
def _offline_by_default(monkeypatch):
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)


def test_a_stray_shared_word_does_not_answer_a_question_and_a_fragment_needs_asking_back():
    from evalcore.generators.simulation.breakdown_rules import judge_turn
    from evalcore.generators.simulation.records import Dialogue, DialogueTurn

    def dialogue(*lines):
        roles = (TurnRole.user, TurnRole.assistant)
        turns = [DialogueTurn(role=roles[i % 2], content=x) for i, x in enumerate(lines)]
        return Dialogue(
            dialogue_id="d", user_name="u", turns=turns, finish_reason=FinishReason.user_ended_chat
        )

    stray = dialogue(
        "What's the weather going to be like tomorrow?", "Our helmets look like new after a wash."
    )
    assert judge_turn(stray, 1).breakdown_types == ["Ignore question"]
    on_topic = dialogue(
        "Is there a cost for returns?", "Returns of unworn items are accepted within 30 days."
    )
    assert judge_turn(on_topic, 1).decision == "no_breakdown"
    fragment = dialogue("wait the returns", "Returns of unworn items are accepted within 30 days.")
    assert judge_turn(fragment, 1, task_oriented=True).breakdown_types == ["Clarification failure"]
    assert judge_turn(fragment, 1, task_oriented=False).decision == "no_breakdown", "a task-oriented type"
    answer = dialogue(
        "I want to return a jacket.", "Which size is it?", "Medium", "Medium jackets can be returned."
    )
    assert judge_turn(answer, 3, task_oriented=True).decision == "no_breakdown", (
        "a short answer is no fragment"
    )
    thanks = dialogue("Thanks a lot", "You are welcome, happy riding.")
    assert judge_turn(thanks, 1, task_oriented=True).decision == "no_breakdown"


def test_offline_users_write_shorter_turns_for_a_card_with_short_typical_turns():
    def mean_words(typical: str) -> float:
        limits = Limits(typical_user_turn_length=typical, max_user_turn_length="94 words")
        base = turn_inputs(Briefing("u", persona()), INFO, limits, [])
        history, lengths = [], []
        for i in range(3):
            text = offline_user_turn({**base, "history": history}, random.Random(i)).message
            lengths.append(len(text.split()))
            history += [
                {"role": "user", "content": text},
                {"role": "assistant", "content": "Returns are free."},
            ]
        return sum(lengths[1:]) / 2  # the follow-ups (the first turn states the task)

    assert mean_words("5 words") <= 6 < mean_words("20 words")


def test_the_detector_is_shown_17_types_for_a_conversational_bot_and_26_for_a_task_oriented_one():
    from evalcore.generators.simulation.detection import DETECT_BREAKDOWN, taxonomy_text

    assert len(taxonomy_text(False).splitlines()) == 17 and len(taxonomy_text(True).splitlines()) == 26
    inputs = {"chatbot_info": "name: Shop bot", "chat_history": "1. USER: hi", "last_bot_utterance": "Hello!"}
    task = DETECT_BREAKDOWN.render({**inputs, "breakdown_taxonomy": taxonomy_text(True)})[0].content
    chat = DETECT_BREAKDOWN.render({**inputs, "breakdown_taxonomy": taxonomy_text(False)})[0].content
    assert "- Clarification failure:" in task and "- Clarification failure:" not in chat
    assert "- Repetition:" in chat and '"breakdown_types"' in chat, "the output's keys are in the prompt"


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("typical_user_turn_length: 12 words", 'typical_user_turn_length: "five"',
         "system.yaml:38 [user_simulation_config.typical_user_turn_length]: must be a word count"),
        ("type: RAG and tool-using task-oriented assistant", "type: tasky",
         "system.yaml:11 [chatbot_info.type]: 'tasky' names neither"),
    ],
)  # fmt: skip
def test_a_card_with_a_turn_length_in_no_words_or_an_unknown_bot_type_is_refused(old, new, where, tmp_path):
    import shutil
    from pathlib import Path

    from evalcore.errors import ValidationFailed
    from evalcore.inputs import import_project
    from evalcore.store import Store

    folder = tmp_path / "sample"
    shutil.copytree(Path(__file__).resolve().parents[3] / "data" / "sample", folder)
    card = folder / "system.yaml"
    card.write_text(card.read_text().replace(old, new))
    store = Store(f"sqlite:///{tmp_path / 'x.db'}")
    with pytest.raises(ValidationFailed) as refused:
        import_project(store, folder)
    assert str(refused.value).startswith(f"sample/{where}") and "\n" not in str(refused.value)
    assert store.projects() == []
