"""Run statistics exactly as ChatChecker computes them (seed 002, Section 4, Tables 2-4: #B, B/ST, unique B,
crashes, MTLD), checked against its code and against the published run in ../shared/reference/chatchecker.

Pure functions over dialogues in the order ChatChecker reads them (`Dialogue.sort_key`):
- word length is `len(content.split())`; five-number summaries use numpy percentiles (linear);
- MTLD is `lexical_diversity.lex_div.mtld` (defaults) over the tokens of its `tokenize`, every turn of one
  side pooled over all dialogues of the run: one value for user turns, one for assistant turns;
- a dialogue's breakdown `count` is its turns whose decision is breakdown; a turn counts for a type when
  its lower-cased types contain the type's lower-cased title (whatever its decision), a crash only when
  its types contain "Chatbot Crash" exactly and its decision is breakdown;
- the run sums the type counts of the dialogues with at least one breakdown; unique types are the keys
  with a count above zero; the first-breakdown turn id counts user and assistant turns from 1;
- crashes are dialogues that carry an error and ended with `chatbot_error`;
- ratings: mean and population standard deviation (numpy's default, ddof 0) per dimension.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from lexical_diversity import lex_div

from evalcore.generators.simulation.records import BreakdownDecision, Dialogue, DialogueTurn, FinishReason
from evalcore.generators.simulation.taxonomy import CHATBOT_CRASH_KEY, CHATBOT_CRASH_TITLE, breakdown_types
from evalcore.models import TurnRole

# The keys of `evalcore simulations stats --json`, ChatChecker's names (issue 18, "the command a CI job
# will call").
SUMMARY_KEYS = (
    "num_dialogues",
    "num_user_turns",
    "num_chatbot_turns",
    "user_turn_mtld",
    "chatbot_turn_mtld",
    "n_dialogues_with_breakdowns",
    "total_breakdown_count",
    "breakdowns_per_chatbot_turn",
    "n_unique_breakdown_types",
    "avg_turn_number_of_first_breakdown",
    "num_dialogues_with_chatbot_errors",
    "rating_stats",
)


def word_length(text: str) -> int:
    """Length of a turn in words, as ChatChecker counts them."""
    return len(text.split())


def five_num_summary(values: Sequence[float]) -> dict[str, float | None]:
    """min, q1, median, q3, max (numpy, NaN left out); all None for no values."""
    data = [x for x in values if not np.isnan(x)]
    if not data:
        return {"min": None, "q1": None, "median": None, "q3": None, "max": None}
    return {
        "min": float(np.min(data)),
        "q1": float(np.percentile(data, 25)),
        "median": float(np.median(data)),
        "q3": float(np.percentile(data, 75)),
        "max": float(np.max(data)),
    }


def mtld(texts: Sequence[str]) -> float:
    """MTLD of texts read one after the other (lexical-diversity 0.1.1, default threshold and minimum)."""
    tokens = [token for text in texts for token in lex_div.tokenize(text)]
    return float(lex_div.mtld(tokens))


def _side(dialogue: Dialogue, role: TurnRole) -> list[DialogueTurn]:
    return [turn for turn in dialogue.turns if turn.role == role]


def _is_breakdown(turn: DialogueTurn) -> bool:
    return turn.breakdown is not None and turn.breakdown.decision == BreakdownDecision.breakdown


def chat_statistics(dialogue: Dialogue) -> dict[str, Any]:
    """A dialogue's turn counts and turn lengths (ChatChecker's per-dialogue `chat_statistics`)."""
    out: dict[str, Any] = {"num_turns": len(dialogue.turns)}
    for name, role in (("user", TurnRole.user), ("chatbot", TurnRole.assistant)):
        lengths = [word_length(t.content) for t in _side(dialogue, role)]
        out[f"num_{name}_turns"] = len(lengths)
        out[f"avg_{name}_turn_length"] = sum(lengths) / len(lengths) if lengths else 0.0
        out[f"five_num_summary_{name}_turn_lengths"] = five_num_summary(lengths) if lengths else None
    order = ("num_turns", "num_user_turns", "num_chatbot_turns", "avg_user_turn_length",
             "five_num_summary_user_turn_lengths", "avg_chatbot_turn_length",
             "five_num_summary_chatbot_turn_lengths")  # fmt: skip
    return {key: out[key] for key in order}


def _run_side(dialogues: Sequence[Dialogue], per_dialogue: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """One side's (user or chatbot) part of the run's chat statistics."""
    role = TurnRole.user if name == "user" else TurnRole.assistant
    n = len(dialogues)
    counts = [s[f"num_{name}_turns"] for s in per_dialogue]
    texts = [t.content for d in dialogues for t in _side(d, role)]
    lengths = [word_length(text) for text in texts]
    return {
        f"num_{name}_turns": sum(counts),
        f"avg_{name}_turns_per_dialogue": sum(counts) / n,
        f"five_num_summary_{name}_turns": five_num_summary(counts),
        f"avg_avg_{name}_turn_length": sum(s[f"avg_{name}_turn_length"] for s in per_dialogue) / n,
        # ChatChecker divides by the number of turns unguarded; a run without turns of a side has no mean.
        f"avg_{name}_turn_length": sum(lengths) / len(lengths) if lengths else None,
        f"five_num_summary_avg_{name}_turn_length": five_num_summary(lengths),
        f"{name}_turn_mtld": mtld(texts),
    }


def run_chat_statistics(dialogues: Sequence[Dialogue]) -> dict[str, Any]:
    """The run's `chat_statistics` (ChatChecker's simulation_run_info.yaml), dialogues in run order."""
    if not dialogues:
        return {"num_dialogues": 0}
    with_errors = [d for d in dialogues if d.error is not None]
    crashed = [d for d in with_errors if d.finish_reason == FinishReason.chatbot_error]
    simulator = [d for d in with_errors if d.finish_reason == FinishReason.user_simulator_error]
    per_dialogue = [chat_statistics(d) for d in dialogues]
    user = _run_side(dialogues, per_dialogue, "user")
    bot = _run_side(dialogues, per_dialogue, "chatbot")
    mtlds = {"user_turn_mtld": user.pop("user_turn_mtld"), "chatbot_turn_mtld": bot.pop("chatbot_turn_mtld")}
    counts = {k: v for k, v in (user | bot).items() if "turns" in k and "length" not in k}
    lengths = {k: v for k, v in (user | bot).items() if k not in counts}
    return {
        "num_dialogues": len(dialogues),
        "num_dialogues_with_errors": len(with_errors),
        "num_dialogues_with_chatbot_errors": len(crashed),
        "dialogues_with_chatbot_errors": [d.dialogue_id for d in crashed],
        "num_dialogues_with_simulator_errors": len(simulator),
        "dialogues_with_simulator_errors": [d.dialogue_id for d in simulator],
        **counts,
        **lengths,
        **mtlds,
    }


def dialogue_breakdown_stats(dialogue: Dialogue, task_oriented: bool) -> dict[str, Any]:
    """A dialogue's `count`, `avg_score`, `turn_ids_of_breakdowns` and `counts_per_breakdown_type`."""
    bot_turns = _side(dialogue, TurnRole.assistant)
    scores = [t.breakdown.score for t in bot_turns if t.breakdown is not None]
    # ChatChecker divides the annotated turns' scores by all assistant turns (unannotated ones count 0).
    avg_score = sum(scores) / len(bot_turns) if bot_turns else 0.0
    counts: dict[str, int] = {}
    for kind in breakdown_types(task_oriented):
        title = kind.title.lower()
        counts[kind.key] = sum(
            1
            for t in bot_turns
            if t.breakdown is not None and title in [x.lower() for x in t.breakdown.breakdown_types]
        )
    counts[CHATBOT_CRASH_KEY] = sum(
        1 for t in bot_turns if _is_breakdown(t) and CHATBOT_CRASH_TITLE in t.breakdown.breakdown_types
    )
    return {
        "count": sum(1 for t in dialogue.turns if _is_breakdown(t)),
        "avg_score": avg_score,
        "turn_ids_of_breakdowns": [i for i, t in enumerate(dialogue.turns, start=1) if _is_breakdown(t)],
        "counts_per_breakdown_type": counts,
    }


def run_breakdown_stats(dialogues: Sequence[Dialogue], task_oriented: bool) -> dict[str, Any]:
    """The run's breakdown `stats` (ChatChecker's breakdown_detection_stats.yaml, less timings and costs)."""
    per_dialogue = [dialogue_breakdown_stats(d, task_oriented) for d in dialogues]
    broken = [(d, s) for d, s in zip(dialogues, per_dialogue, strict=True) if s["count"] > 0]
    num_bot_turns = sum(len(_side(d, TurnRole.assistant)) for d in dialogues)
    total = sum(s["count"] for s in per_dialogue)
    firsts = [s["turn_ids_of_breakdowns"][0] for _, s in broken]
    breakdown_turns = [t for d, _ in broken for t in d.turns if _is_breakdown(t)]
    keys = [kind.key for kind in breakdown_types(task_oriented)] + [CHATBOT_CRASH_KEY]
    counts = {key: sum(s["counts_per_breakdown_type"][key] for _, s in broken) for key in keys}
    return {
        "n_analyzed_dialogues": len(dialogues),
        "n_dialogues_with_breakdowns": len(broken),
        "total_breakdown_count": total,
        "n_analyzed_chatbot_turns": num_bot_turns,
        "breakdowns_per_chatbot_turn": total / num_bot_turns if num_bot_turns else None,
        "avg_turn_number_of_first_breakdown": sum(firsts) / len(firsts) if firsts else None,
        "avg_turn_quality_score": (
            sum(s["avg_score"] for s in per_dialogue) / len(per_dialogue) if per_dialogue else None
        ),
        "scores_of_turns_with_breakdowns": five_num_summary([t.breakdown.score for t in breakdown_turns]),
        "scores_of_turns_with_breakdowns_excluding_chatbot_crashes": five_num_summary(
            [
                t.breakdown.score
                for t in breakdown_turns
                if t.breakdown.breakdown_types != [CHATBOT_CRASH_TITLE]
            ]
        ),
        "dialogues_with_breakdowns": [d.dialogue_id for d, _ in broken],
        "counts_per_breakdown_type": counts,
        "n_unique_breakdown_types": sum(1 for value in counts.values() if value > 0),
    }


def rating_dimensions(dialogues: Sequence[Dialogue]) -> list[str]:
    """The rated dimensions of a run, in the order the dialogues first name them."""
    return list(dict.fromkeys(dim for d in dialogues for dim in (d.ratings or {})))


def rating_stats(dialogues: Sequence[Dialogue], dimensions: Sequence[str] | None = None) -> dict[str, Any]:
    """Per dimension: `average`, `std` (population) and `five_number_summary` over the rated dialogues."""
    out: dict[str, Any] = {}
    for dim in dimensions if dimensions is not None else rating_dimensions(dialogues):
        values = [d.ratings[dim].rating for d in dialogues if d.ratings and dim in d.ratings]
        if values:
            out[dim] = {
                "average": float(np.mean(values)),
                "std": float(np.std(values)),
                "five_number_summary": five_num_summary(values),
            }
    return out


def summary(
    dialogues: Sequence[Dialogue], task_oriented: bool, dimensions: Sequence[str] | None = None
) -> dict[str, Any]:
    """The statistics a CI job reads, under ChatChecker's names (`SUMMARY_KEYS`); `rating_stats` holds
    `average` and `std` per dimension (in `dimensions` order, else as the dialogues first name them)."""
    chat = run_chat_statistics(dialogues)
    breakdowns = run_breakdown_stats(dialogues, task_oriented)
    ratings = {
        dim: {"average": s["average"], "std": s["std"]}
        for dim, s in rating_stats(dialogues, dimensions).items()
    }
    merged = {**chat, **breakdowns, "rating_stats": ratings}
    merged.setdefault("num_user_turns", 0)
    merged.setdefault("num_chatbot_turns", 0)
    merged.setdefault("num_dialogues_with_chatbot_errors", 0)
    merged.setdefault("user_turn_mtld", None)
    merged.setdefault("chatbot_turn_mtld", None)
    return {key: merged[key] for key in SUMMARY_KEYS}
