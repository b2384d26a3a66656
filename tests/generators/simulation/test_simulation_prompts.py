"""The simulation prompts are seed 002's listings word for word (issue 31, item 3): the persona generator
(Listing 6) with the standard and challenging descriptions (Listings 7 and 8), the breakdown detector
(Listing 3) and the dialogue rater (Listing 5). The expected text is copied from the seed, lines joined;
what we add after it (the JSON shape to answer in) is listed in the README's deviations."""

from __future__ import annotations

from evalcore.generators.simulation.detection import (
    DETECT_BREAKDOWN,
    RATE_DIALOGUE,
    rating_dimensions,
    taxonomy_text,
)
from evalcore.generators.simulation.personas import GENERATE_PERSONAS, TYPE_DESCRIPTIONS

LISTING_6 = (
    "# Role\nYou are a dialogue system developer tasked with generating diverse user personas for a given "
    "chatbot.",
    "# Task\nGenerate 3 diverse challenging user personas for the following chatbot:\n",
    "Each user persona will be used to automatically simulate a conversation with the chatbot and must "
    "designed to act as human-like as possible.\nYou must write the descriptions in the 2nd person, i.e., "
    'directly address the actor of the persona with "you".',
)
LISTING_7 = (
    "Standard user personas should be as close to normal human users as possible with respect to "
    "demographics, personality and behavior. They should be designed to act as realistic and human-like as "
    "possible."
)
LISTING_8 = (
    "Challenging user personas test the limits of the chatbot. They should be designed to act human-like "
    "but may be more challenging for the chatbot to interact with.\n"
    "Examples of challenging behaviors include:\n"
    "- Being impolite, impatient, frustrated, vague or sarcastic.\n"
    "- Struggling with language, technology or understanding the chatbot.\n"
    "- Questioning the chatbot, modifying previous input or trying to take control of the conversation.\n"
    "- Giving contradictory responses, misinterpreting the chatbot's suggestions, or deliberately testing "
    "the chatbot's patience by asking repetitive or irrelevant questions.\n"
    "- Having multiple goals or tasks in mind or frequently changing the intent."
)
LISTING_5_SYSTEM = (
    "# Role\nYou are an expert in evaluating dialogue systems. You are given a conversation to rate and are "
    "asked to rate the chatbot's performance in this conversation.",
    "# Task\nRate the chatbot's performance in the following dimensions on a scale from 1 to 5, where 1 is "
    "the worst and 5 is the best:\n- Task success (key=task_success): ",
    "- Overall performance (key=overall_performance): How well did the chatbot perform in this "
    "conversation?\n\nThink step by step and provide a reason for the rating of each dimension considering "
    "the guidelines below.",
    "## General Evaluation Policy (Strict Human-Like)\n"
    "- Be **strict, realistic, and detailed**, like a critical human evaluator.\n"
    "- **Compare your scores to human ratings** (if provided) to calibrate accurately.\n"
    "- **Do not overlook small flaws**: awkward phrasing, unnatural tone, vague wording, poor formatting, "
    "or robotic repetition - all should reduce the score for the respective dimension.",
    "## Score Meanings (General Guidance for All Dimensions)\n"
    "- **5 - Excellent:** Near-perfect. Smooth, natural, and accurate. No noticeable issues. Fully aligned "
    "with human expectations.\n"
    "- **4 - Good:** Generally solid, but minor issues exist (e.g., slightly robotic wording, small "
    "tone/grammar issues, or missed nuance).\n"
    "- **3 - Acceptable:** Noticeable problems (e.g., awkward responses, confusion, clumsy error recovery, "
    "slightly incorrect or incomplete answers). Still functional.\n"
    "- **2 - Poor:** Multiple problems in the dialogue flow, accuracy, or tone. May include failed "
    "understanding, missing confirmations, or disjointed logic.\n"
    "- **1 - Very Poor:** Fails to meet user needs. Confusing, error-filled, or totally off-task.",
    "Note: While these definitions apply broadly, some dimensions may demand additional interpretation "
    '(e.g., "fluency" versus "task success"). Always apply the scoring scale according to the intent of that '
    "specific dimension.",
)
INFO = {"name": "Goal Setting Assistant", "type": "task-oriented", "task": "Guide the user to a goal."}


def test_the_persona_generator_is_listing_6_with_the_type_descriptions_of_listings_7_and_8():
    assert (TYPE_DESCRIPTIONS["standard"], TYPE_DESCRIPTIONS["challenging"]) == (LISTING_7, LISTING_8)
    inputs = {
        "count": 3,
        "persona_type": "challenging",
        "chatbot_info": INFO,
        "persona_type_description": TYPE_DESCRIPTIONS["challenging"],
        "output_shape": "{}",
    }
    system, user = GENERATE_PERSONAS.render(inputs)
    text = f"{system.content}\n\n{user.content}"
    for part in (*LISTING_6, LISTING_8, '"task": "Guide the user to a goal."'):
        assert part in text
    assert text.index(LISTING_6[1]) < text.index(LISTING_8) < text.index(LISTING_6[2])


def test_the_rater_is_listing_5_word_for_word():
    dimensions = rating_dimensions(task_oriented=True)
    inputs = {
        "chatbot_info": "name: Goal Setting Assistant",
        "rating_dimensions": "\n".join(f"- {d.title} (key={d.key}): {d.question}" for d in dimensions),
        "chat_history": "1. CHATBOT: Hi!\n2. USER: Hello.",
        "output_shape": "{}",
    }
    system, user = RATE_DIALOGUE.render(inputs)
    for part in LISTING_5_SYSTEM:
        assert part in system.content
    assert user.content == "# Conversation to Rate\n1. CHATBOT: Hi!\n2. USER: Hello.\n\n# Your Expert Rating"


LISTING_3_SYSTEM = (
    "# Role\nYou are an expert in identifying dialogue breakdowns in conversations between a chatbot and a "
    "user. You are given a dialogue context and the latest chatbot utterance to analyse.",
    "# Breakdown Definition\nA dialogue breakdown is any response of the chatbot that makes it difficult "
    "for the user to continue the conversation (smoothly).",
    "## Breakdown Taxonomy\nWhen evaluating the chatbot's response, consider the following breakdown types, "
    "which represent common disruptions:\n- Uninterpretable: ",
    "# Task\nIdentify whether the latest chatbot utterance leads to a dialogue breakdown. If a breakdown is "
    "detected, classify it according to the breakdown taxonomy above.\nAdditionally, provide a score "
    "ranging from 0 to 1, where 0 indicates a complete breakdown and 1 indicates a seamless conversation."
    "\nIf a breakdown is detected, provide a list of all fitting breakdown types.\nThink step by step and "
    "provide a reason for your decision.",
)


def test_the_breakdown_detector_is_listing_3_word_for_word():
    inputs = {
        "breakdown_taxonomy": taxonomy_text(task_oriented=True),
        "chatbot_info": "name: Goal Setting Assistant",
        "chat_history": "1. CHATBOT: Hi!\n2. USER: Hello.",
        "last_bot_utterance": "What is your goal?",
        "output_shape": "{}",
    }
    system, user = DETECT_BREAKDOWN.render(inputs)
    for part in LISTING_3_SYSTEM:
        assert part in system.content
    assert user.content == (
        "# Dialogue Context\n1. CHATBOT: Hi!\n2. USER: Hello.\n\n# Latest Chatbot Utterance to Analyse\n"
        "What is your goal?\n\n# Your Analysis"
    )
