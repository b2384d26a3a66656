"""The seven metrics of Table 2 (seed 001, Section 4.3; issue 17, item 9), as pure functions.

For each test the agent takes one action: a reply, or an API call with arguments. Over a set of tests:

- reply recall: of the tests whose expected action is a reply, the share the agent answers with a reply;
- correct reply: of the tests where both the expected and the predicted action are replies, the share
  whose reply is semantically similar to the expected one (similarity >= threshold; the seed uses
  BERTScore at 0.55, we use an embedding model's cosine, with a threshold calibrated per embedding model:
  see REPLY_THRESHOLDS);
- API recall: of the tests whose expected action is an API call, the share the agent answers with a call;
- correct API: of the tests where both are API calls, the share calling the expected API;
- correct parameters: of the tests where both are the same API call, the share with the expected
  argument values (compared after trimming and case-folding strings; numbers compare as numbers);
- test correct: of all tests, the share fully correct (right kind, and a similar reply, or the right API
  with the right arguments);
- conversation correct: of the conversations, the share whose tests are all correct.

Each metric is a count `hits / n`, so a report can put a Wilson interval on it. A target that crashed
on a test took no action (predicted None): neither a reply nor a call, and the test is not correct.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from evalcore.llm.client import ModelClient
from evalcore.models import Test
from evalcore.models.items import Action, expected_action

# The correct-reply cut per embedding model, calibrated by `calibrate_threshold` on
# tests/fixtures/procedure_replies.jsonl: 40 hand-written pairs from the sample's procedures (the agent
# utterance a test expects, a realistic correct paraphrase a good agent would say, and a wrong or
# off-procedure reply); benchmarks/procedures.py prints the calibration. wordllama: paraphrases 0.22-0.87,
# wrong replies -0.05-0.50, accuracy 0.94 and F1 0.94 at 0.48. The hashed n-gram fallback: paraphrases
# 0.22-0.70, wrong -0.03-0.44, accuracy 0.90 and F1 0.89 at 0.35. A model without an entry gets
# REPLY_THRESHOLD, and the report and CLI say it is uncalibrated.
REPLY_THRESHOLDS: dict[str, float] = {"wordllama/l2_supercat_256": 0.48, "offline/hash-256": 0.35}
REPLY_THRESHOLD = REPLY_THRESHOLDS["wordllama/l2_supercat_256"]
METRICS = (
    "reply_recall",
    "correct_reply",
    "api_recall",
    "correct_api",
    "correct_params",
    "test_correct",
    "conversation_correct",
)
Similarity = Callable[[Sequence[str], Sequence[str]], Sequence[float]]


def reply_threshold(model: str | None) -> tuple[float, bool]:
    """The correct-reply threshold for an embedding model ('provider/model'), and whether it was calibrated
    for it (REPLY_THRESHOLD, the local model's, when not)."""
    found = REPLY_THRESHOLDS.get(model or "")
    return (REPLY_THRESHOLD, False) if found is None else (found, True)


def threshold_note(threshold: float, model: str | None, given: bool = False) -> str:
    """One line saying which threshold is used and why, for report headers and the CLI."""
    if given:
        return f"{threshold:g} (given) on {model}"
    if reply_threshold(model)[1]:
        return f"{threshold:g} (calibrated for {model})"
    return f"{threshold:g} (default: {model} has no calibrated threshold; see benchmarks/procedures.py)"


@dataclass(frozen=True)
class ThresholdCalibration:
    """The cut that best separates correct replies' similarities from wrong ones', and how well it does."""

    threshold: float
    accuracy: float
    f1: float
    positive: tuple[float, float]  # (min, max) similarity of the correct paraphrases
    negative: tuple[float, float]  # (min, max) similarity of the wrong replies


def calibrate_threshold(positive: Sequence[float], negative: Sequence[float]) -> ThresholdCalibration:
    """The cut (a midpoint between two observed similarities) with the best accuracy, F1 breaking ties;
    `positive` are correct replies' similarities to the expected reply, `negative` wrong replies'."""
    values = sorted({*positive, *negative})
    cuts = [(a + b) / 2 for a, b in pairwise(values)] or values
    best: tuple[float, float, float] | None = None
    for cut in cuts:
        tp = sum(p >= cut for p in positive)
        fp = sum(n >= cut for n in negative)
        accuracy = (tp + len(negative) - fp) / (len(positive) + len(negative))
        f1 = 2 * tp / (tp + fp + len(positive)) if positive else 0.0
        if best is None or (accuracy, f1) > best[1:]:
            best = (cut, accuracy, f1)
    assert best is not None, "calibrating needs at least one similarity"
    return ThresholdCalibration(
        float(best[0]),
        float(best[1]),
        float(best[2]),
        (float(min(positive)), float(max(positive))),
        (float(min(negative)), float(max(negative))),
    )


def embedding_similarity(llm: ModelClient, model: str | None = None) -> Similarity:
    """Cosine similarity of texts pairwise, on the `embedding` role's model (the local one by default,
    or the model named); vectors are unit length and cached by the model layer."""

    def similarity(a: Sequence[str], b: Sequence[str]) -> list[float]:
        if not a:
            return []
        return (llm.embed(list(a), model) * llm.embed(list(b), model)).sum(axis=1).tolist()

    return similarity


@dataclass(frozen=True)
class TestScore:
    """One test, the action taken, and what the metrics count of it."""

    test_id: str
    conversation_id: str | None
    expected: Action
    predicted: Action | None  # None: the target crashed (no action)
    similarity: float | None  # reply vs expected reply, when both are replies
    correct_api: bool | None  # when both are API calls
    correct_params: bool | None  # when both are the same API call
    correct: bool


def _norm(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().casefold()
    if isinstance(value, bool):  # True == 1 in Python; an API told `1` for a flag got the wrong type
        return ("bool", value)
    if value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value


def same_arguments(expected: dict[str, Any], predicted: dict[str, Any]) -> bool:
    """Whether the call carries the expected argument values (module docstring)."""
    return _norm(expected) == _norm(predicted)


def score_tests(
    pairs: Sequence[tuple[Test, Action | None]], similarity: Similarity, threshold: float = REPLY_THRESHOLD
) -> list[TestScore]:
    """Score each (test, predicted action or None for a crash); replies are compared in one batch of
    `similarity`."""
    expected = [expected_action(t) for t, _ in pairs]
    both_reply = {  # index -> predicted reply, where both the expected and the predicted action reply
        i: p.text
        for i, (e, (_, p)) in enumerate(zip(expected, pairs, strict=True))
        if p is not None and e.kind == p.kind == "reply"
    }
    sims = list(similarity([expected[i].text for i in both_reply], list(both_reply.values())))
    sim_of = dict(zip(both_reply, sims, strict=True))
    scores = []
    for i, ((test, predicted), wanted) in enumerate(zip(pairs, expected, strict=True)):
        api = params = None
        if predicted is not None and wanted.kind == predicted.kind == "api":
            api = wanted.tool_name == predicted.tool_name
            params = same_arguments(wanted.arguments, predicted.arguments) if api else None
        sim = sim_of.get(i)
        correct = (sim is not None and sim >= threshold) or bool(params)
        scores.append(TestScore(test.id, test.conversation_id, wanted, predicted, sim, api, params, correct))
    return scores


def table2(scores: Sequence[TestScore], threshold: float = REPLY_THRESHOLD) -> dict[str, tuple[int, int]]:
    """Each metric of Table 2 as (hits, n)."""
    reply = [s for s in scores if s.expected.kind == "reply"]
    api = [s for s in scores if s.expected.kind == "api"]
    replied = [s for s in reply if s.predicted is not None and s.predicted.kind == "reply"]
    called = [s for s in api if s.predicted is not None and s.predicted.kind == "api"]
    same_api = [s for s in called if s.correct_api]
    by_conversation: dict[str, bool] = defaultdict(lambda: True)
    for s in scores:
        key = s.conversation_id or s.test_id
        by_conversation[key] = by_conversation[key] and s.correct
    return {
        "reply_recall": (len(replied), len(reply)),
        "correct_reply": (
            sum(s.similarity >= threshold for s in replied if s.similarity is not None),
            len(replied),
        ),
        "api_recall": (len(called), len(api)),
        "correct_api": (len(same_api), len(called)),
        "correct_params": (sum(bool(s.correct_params) for s in same_api), len(same_api)),
        "test_correct": (sum(s.correct for s in scores), len(scores)),
        "conversation_correct": (sum(by_conversation.values()), len(by_conversation)),
    }
