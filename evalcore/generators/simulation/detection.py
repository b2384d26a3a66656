"""The breakdown detector and the dialogue rater as tasks (seed 002, Sections 3.3-3.4, Listings 3 and 5;
issue 18, items 3 and 4).

`DETECT_BREAKDOWN` judges one assistant turn in its context: {reasoning, decision, score 0..1, types},
the types by their titles from the taxonomy shown (17 for conversational bots, all 26 for task-oriented
ones); a title the model invents is kept as given. Offline, the rules of breakdown_rules decide.
`RATE_DIALOGUE` rates a whole dialogue 1-5 with reasoning on each dimension, one call per dialogue:
ChatChecker's default dimensions for the bot's type. Offline, a heuristic reads the rules' breakdowns,
how the dialogue ended and how the user left it, so a dialogue that went badly gets low ratings.
`judge_dialogue` runs both on a simulated dialogue: crashed turns keep the simulator's annotation; a
turn whose verdict never parsed stays unannotated (unscored, never a made-up 0).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from evalcore.generators.simulation.breakdown_rules import detect_offline, judge_turn
from evalcore.generators.simulation.records import (
    BreakdownAnnotation,
    BreakdownDecision,
    Dialogue,
    DialogueTurn,
    DimensionRating,
    FinishReason,
)
from evalcore.generators.simulation.simulator import SimulationStopped, history_text
from evalcore.generators.simulation.taxonomy import breakdown_types
from evalcore.llm.client import ModelClient
from evalcore.llm.tasks import Task
from evalcore.models import TurnRole

# Our own one-line descriptions of the taxonomy's types (../shared/reference/breakdown_taxonomy.md), shown
# to the detector beside their titles.
DESCRIPTIONS = {
    "uninterpretable": "The utterance cannot be understood: a fragment, garbled or empty.",
    "grammatical_error": "The utterance is ungrammatical or lacks an essential part.",
    "semantic_error": "The words do not combine into a meaningful statement.",
    "wrong_information": "The utterance states something plainly false.",
    "ignore_question": "The user's question is not answered.",
    "ignore_request": "The user's request is not acted on.",
    "ignore_proposal": "The user's offer or proposal is passed over.",
    "ignore_greeting": "The user's greeting is not returned.",
    "ignore_expectation": "The reply has the right form but not the content the user expected.",
    "unclear_intention": "On topic, but why it is said is unclear.",
    "topic_transition_error": "The topic changes (or returns) abruptly, for no reason.",
    "lack_of_information": "Something needed to make sense of the reply is missing.",
    "self_contradiction": "The reply contradicts what the chatbot said before.",
    "contradiction": "The reply contradicts what the user said.",
    "repetition": "The chatbot says again what it already said, reworded or not.",
    "lack_of_sociality": "The reply is rude, offensive or inconsiderate.",
    "lack_of_common_sense": "The reply asserts what almost everyone knows to be false.",
    "in_domain_task_failure": "The chatbot fails at a task it was built for.",
    "update_info_failure": "Details the user changed are not taken over.",
    "clarification_failure": "The chatbot goes ahead on vague input instead of asking.",
    "redundancy": "The chatbot asks for what it was already given.",
    "lack_of_brevity": "The reply is needlessly long.",
    "lack_of_clarity": "The reply is hard to follow in its context.",
    "failure_to_recognize_out_of_domain": "An out-of-scope request is treated as in scope.",
    "failure_to_communicate_capabilities": "The chatbot does not make clear what it can and cannot do.",
    "failure_to_resolve_out_of_domain": "An out-of-scope request is handled badly (no redirection).",
}


@dataclass(frozen=True)
class RatingDimension:
    """One rated dimension: its key in ratings, its title and the question the rater answers."""

    key: str
    title: str
    question: str


_DIMENSIONS = {
    d.key: d
    for d in (
        RatingDimension(
            "task_success",
            "Task success",
            "How well did the chatbot understand the user and help them complete their task, "
            "covering every part of the task it was built for?",
        ),
        RatingDimension(
            "efficiency",
            "Efficiency",
            "How little effort, how few turns and how little repetition did the chatbot need?",
        ),
        RatingDimension("appropriateness", "Appropriateness", "How appropriate were the chatbot's replies?"),
        RatingDimension("naturalness", "Naturalness", "How natural did the chatbot's replies feel?"),
        RatingDimension(
            "coherence",
            "Coherence",
            "How coherent were the chatbot's replies; did the conversation flow well?",
        ),
        RatingDimension("likability", "Likability", "How likable was the chatbot throughout?"),
        RatingDimension("informativeness", "Informativeness", "How informative were the chatbot's replies?"),
        RatingDimension(
            "overall_performance",
            "Overall performance",
            "How well did the chatbot perform in this conversation?",
        ),
    )
}
# ChatChecker's default dimensions per bot type (../shared/reference/breakdown_taxonomy.md; seed 002,
# Section 2.2: task success and efficiency beside appropriateness and naturalness for task-oriented bots,
# appropriateness, naturalness, coherence, likability and informativeness for conversational ones). The
# seed rates nothing else, so engagingness is not a dimension here; an imported run's ratings of any
# dimension are kept as they are.
TASK_ORIENTED_DIMENSIONS = (
    "task_success",
    "efficiency",
    "appropriateness",
    "naturalness",
    "overall_performance",
)
CONVERSATIONAL_DIMENSIONS = (
    "appropriateness",
    "naturalness",
    "coherence",
    "likability",
    "informativeness",
    "overall_performance",
)


def rating_dimensions(task_oriented: bool) -> tuple[RatingDimension, ...]:
    """The dimensions a dialogue with this kind of bot is rated on, in ChatChecker's order."""
    keys = TASK_ORIENTED_DIMENSIONS if task_oriented else CONVERSATIONAL_DIMENSIONS
    return tuple(_DIMENSIONS[k] for k in keys)


def taxonomy_text(task_oriented: bool) -> str:
    """The taxonomy as the detector reads it: one '- Title: description' per type judged."""
    return "\n".join(f"- {t.title}: {DESCRIPTIONS[t.key]}" for t in breakdown_types(task_oriented))


def _turns(inputs: dict[str, Any]) -> list[DialogueTurn]:
    return [DialogueTurn(role=TurnRole(t["role"]), content=t["content"]) for t in inputs["turns"]]


def offline_breakdown(inputs: dict[str, Any], rng: random.Random) -> BreakdownAnnotation:
    """The rules' verdict on the last turn of `turns` (breakdown_rules.judge_turn)."""
    turns = _turns(inputs)
    dialogue = Dialogue(
        dialogue_id="offline", user_name="offline", turns=turns, finish_reason=FinishReason.user_ended_chat
    )
    task_oriented = bool(inputs.get("task_oriented"))
    return judge_turn(dialogue, len(turns) - 1, task_oriented, str(inputs.get("chatbot_info") or ""))


DETECT_BREAKDOWN = Task("detect_breakdown", BreakdownAnnotation, offline_breakdown, max_tokens=800)


class RatedDimension(BaseModel):
    """The rating of one dimension."""

    dimension: str = Field(description="The dimension's key, e.g. task_success.")
    reasoning: str = Field(description="Why this rating, step by step.")
    rating: int = Field(ge=1, le=5, description="1 (very poor) to 5 (excellent).")


class DialogueRatings(BaseModel):
    """The rater's answer: one entry per dimension asked for."""

    ratings: list[RatedDimension] = Field(description="One rating per dimension.")


_SATISFIED = re.compile(r"\b(?:thanks?|thank you|great|perfect|got it|that's all|that's everything)\b", re.I)
_GAVE_UP = re.compile(r"forget it|never mind|isn'?t getting anywhere|ask someone else|can'?t help", re.I)
_NOTHING = re.compile(r"couldn'?t find|could not find|don'?t know|no information|unable to", re.I)


def _clamp(value: float) -> int:
    return max(1, min(5, round(value)))


def offline_ratings(inputs: dict[str, Any], rng: random.Random) -> DialogueRatings:
    """A heuristic rater: breakdowns found by the rules, empty-handed replies, and how the user left."""
    turns = _turns(inputs)
    reason = FinishReason(inputs["finish_reason"])
    dialogue = Dialogue(
        dialogue_id="offline",
        user_name="offline",
        turns=turns,
        finish_reason=reason,
        error=inputs.get("error"),
    )
    task_oriented, domain = bool(inputs.get("task_oriented")), str(inputs.get("chatbot_info") or "")
    verdicts = [v for v in detect_offline(dialogue, task_oriented, domain) if v is not None]
    bot = [t for t in turns if t.role == TurnRole.assistant]
    broken = sum(1 for v in verdicts if v.decision == BreakdownDecision.breakdown)
    share = broken / len(bot) if bot else 1.0
    types = {x for v in verdicts for x in v.breakdown_types}
    empty = sum(1 for t in bot if _NOTHING.search(t.content)) / len(bot) if bot else 1.0
    last_user = next((t.content for t in reversed(turns) if t.role == TurnRole.user), "")
    crashed = reason == FinishReason.chatbot_error
    satisfied = reason in (FinishReason.user_ended_chat, FinishReason.chatbot_ended_chat) and bool(
        _SATISFIED.search(last_user)
    )
    gave_up = bool(_GAVE_UP.search(last_user)) or crashed
    words = sum(len(t.content.split()) for t in bot) / len(bot) if bot else 0.0
    facts = f"{broken} of {len(bot)} chatbot turns break down" + (
        f" ({', '.join(sorted(types))})" if types else ""
    )
    scores: dict[str, tuple[float, str]] = {
        "task_success": (
            (4.5 if satisfied else 1.5 if gave_up else 3.0) - 2 * empty,
            (
                "The user left satisfied"
                if satisfied
                else "The user gave up"
                if gave_up
                else "The task stayed open"
            )
            + f"; {empty:.0%} of the replies found nothing.",
        ),
        "efficiency": (
            5 - 6 * share - (1 if reason == FinishReason.max_turns_reached else 0),
            f"{facts}; it ended with {reason.value}.",
        ),
        "appropriateness": (5 - 5 * share - (2 if crashed else 0), f"{facts}."),
        "naturalness": (
            5 - 4 * share - (1 if words > 80 else 0),
            f"{facts}; replies average {words:.0f} words.",
        ),
        "coherence": (5 - 6 * share, f"{facts}."),
        "likability": (4.5 - 3 * share - (1 if gave_up else 0), f"{facts}."),
        "informativeness": (5 - 4 * empty - 2 * share, f"{empty:.0%} of the replies found nothing."),
    }
    wanted = list(inputs["dimensions"])
    out = {k: scores[k] for k in wanted if k in scores}
    rated = [
        RatedDimension(dimension=k, reasoning=f"Offline heuristic: {why}", rating=_clamp(v))
        for k, (v, why) in out.items()
    ]
    if "overall_performance" in wanted:
        mean = sum(r.rating for r in rated) / len(rated) if rated else 3.0
        rated.append(
            RatedDimension(
                dimension="overall_performance",
                rating=_clamp(mean - (1 if crashed else 0)),
                reasoning=f"Offline heuristic: the other dimensions average {mean:.1f}.",
            )
        )
    return DialogueRatings(ratings=rated)


RATE_DIALOGUE = Task("rate_dialogue", DialogueRatings, offline_ratings, max_tokens=1500)


@dataclass
class Judged:
    """A dialogue's annotations and ratings, and who produced them."""

    turns: list[DialogueTurn]
    ratings: dict[str, DimensionRating] | None
    models: list[str] = field(default_factory=list)  # detector and rater models, no repeats
    offline: bool = True
    unscored: int = 0  # assistant turns whose verdict never parsed
    warnings: list[str] = field(default_factory=list)


def _info_text(info: dict[str, Any]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in info.items() if v)


def judge_dialogue(
    turns: Sequence[DialogueTurn],
    finish_reason: FinishReason,
    llm: ModelClient,
    *,
    chatbot_info: dict[str, Any],
    task_oriented: bool,
    error: str | None = None,
    model: str | None = None,
) -> Judged:
    """Annotate every unannotated assistant turn and rate the dialogue (role `judge`)."""
    info = _info_text(chatbot_info)
    out = Judged(list(turns), None)

    def note(result) -> None:
        if result.status == "stopped":
            raise SimulationStopped(result.error or "budget")
        if result.model not in out.models:
            out.models.append(result.model)
        out.offline = out.offline and result.offline

    for i, turn in enumerate(turns):
        if turn.role != TurnRole.assistant or turn.breakdown is not None:
            continue
        inputs = {
            "breakdown_taxonomy": taxonomy_text(task_oriented),
            "chatbot_info": info,
            "chat_history": history_text(list(turns[:i]), "USER", "CHATBOT") or "(no earlier turns)",
            "last_bot_utterance": turn.content,
            "turns": [{"role": t.role.value, "content": t.content} for t in turns[: i + 1]],
            "task_oriented": task_oriented,
        }
        result = llm.run_task(DETECT_BREAKDOWN, inputs, role="judge", model=model)
        note(result)
        if result.ok and result.output is not None:
            out.turns[i] = turn.model_copy(update={"breakdown": result.output})
        else:
            out.unscored += 1
            out.warnings.append(f"turn {i + 1}: no breakdown verdict ({result.error})")
    dimensions = rating_dimensions(task_oriented)
    inputs = {
        "chatbot_info": info,
        "rating_dimensions": "\n".join(f"- {d.title} (key={d.key}): {d.question}" for d in dimensions),
        "chat_history": history_text(list(turns), "USER", "CHATBOT"),
        "turns": [{"role": t.role.value, "content": t.content} for t in turns],
        "finish_reason": finish_reason.value,
        "error": error,
        "dimensions": [d.key for d in dimensions],
        "task_oriented": task_oriented,
    }
    rated = llm.run_task(RATE_DIALOGUE, inputs, role="judge", model=model)
    note(rated)
    if rated.ok and rated.output is not None:
        given = {r.dimension: r for r in rated.output.ratings}
        out.ratings = {
            d.key: DimensionRating(reasoning=given[d.key].reasoning, rating=given[d.key].rating)
            for d in dimensions
            if d.key in given
        } or None
        missing = [d.key for d in dimensions if d.key not in given]
        if missing:
            out.warnings.append(f"the rater left out {', '.join(missing)}")
    else:
        out.warnings.append(f"no ratings ({rated.error})")
    return out
