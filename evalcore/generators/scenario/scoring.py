"""The offline scorer of the generative assertions (seed 003, `generative_response_is_relevant` and
`generative_response_is_grounded`, "LLM-scored"): embedding similarity, so scenarios run with no model.

Relevance is the cosine similarity of the user message and the response. Groundedness follows the shape
of Rasa's judge (the share of the response's statements the ground truth supports), with similarity in
place of the judge: each sentence of the response scores its best cosine against the sentences of the
ground truth, and the response scores the mean. Cosines below 0 count as 0. Any embedding function fits
(`embedding_scorer`); `client_scorer` uses evalcore's embeddings (ModelClient.embed: the configured
embedding model, or the offline fallback), cached in the store like every other vector.

Calibration of relevance. An answer and the question it answers share few words, so their cosine stays
low even when the answer is right: on the sample project (25 questions, each with the passage the demo
flow assistant answers it from, against the other 600 question-answer pairs as irrelevant ones), the
relevant pairs' cosines have a median of 0.44 with wordllama (10th percentile 0.31) and 0.27 with the
hashed n-grams (0.19), the irrelevant pairs' 0.08 and 0.07. Read raw against Rasa's default threshold of
0.5, most right answers would fail. So the relevance score is the cosine mapped, piecewise linearly, so
that the model's cut (`RELEVANCE_CUTS`) becomes 0.5, 0 stays 0 and 1 stays 1: wordllama's cut is 0.25
(every relevant pair passes, 13% of the irrelevant ones do), the hashed n-grams' 0.20 (84% and 8%).
A model without a measured cut (an API embedding) is read raw. Groundedness needs no calibration: a
response built from its passage scores 0.88-1.0, an invented one 0.06-0.43 (benchmarks/scenarios.py).
A scenario's own `threshold` applies to the calibrated score.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field

from evalcore.documents.sentences import split_sentences
from evalcore.generators.scenario.checks import Score, Scorer, ScoreRequest
from evalcore.llm.guard import guard_judge
from evalcore.llm.tasks import Task
from evalcore.llm.types import ConfigError

if TYPE_CHECKING:
    from evalcore.llm.client import ModelClient

Embed = Callable[[Sequence[str]], np.ndarray]
# The relevance cosine that reads as a score of 0.5, per embedding model (see the module docstring).
RELEVANCE_CUTS = {"wordllama/l2_supercat_256": 0.25, "offline/hash-256": 0.20}


def sentences(text: str) -> list[str]:
    """The sentences of a reply (split after . ! ? and at line breaks), without empty ones."""
    return [s for line in text.splitlines() for s in split_sentences(line, chat=True)]


def _unit(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def calibrated(cosine: float, cut: float | None) -> float:
    """The cosine mapped so that `cut` becomes 0.5 (0 and 1 stay); the cosine itself without a cut."""
    if cut is None or not 0 < cut < 1:
        return cosine
    if cosine <= cut:
        return 0.5 * cosine / cut
    return 0.5 + 0.5 * (cosine - cut) / (1 - cut)


def embedding_scorer(embed: Embed, relevance_cut: float | None = None) -> Scorer:
    """A scorer from an embedding function (texts -> one row per text); None when there is nothing to
    compare with (no user message before the response, or an empty response). `relevance_cut`: the
    cosine that reads as 0.5 for relevance (none: the cosine is the score)."""

    def score(request: ScoreRequest) -> Score | None:
        answer = sentences(request.response)
        reference = request.question if request.metric == "relevance" else request.ground_truth
        against = [reference.strip()] if request.metric == "relevance" else sentences(reference)
        if not answer or not any(against):
            return None
        if request.metric == "relevance":
            answer = [request.response.strip()]
        vectors = _unit(embed([*answer, *against]))
        similarity = np.clip(vectors[: len(answer)] @ vectors[len(answer) :].T, 0.0, 1.0)
        value = float(similarity.max(axis=1).mean())
        if request.metric == "relevance":
            why = f"cosine similarity {value:.2f} between the user message and the response"
            if relevance_cut is not None:
                score = calibrated(value, relevance_cut)
                return Score(
                    score, f"{why}, calibrated to {score:.2f} (cosine {relevance_cut:.2f} reads as 0.5)"
                )
            return Score(value, why)
        return Score(
            value, f"mean best cosine similarity {value:.2f} of {len(answer)} sentence(s) to the ground truth"
        )

    return score


def client_scorer(client: ModelClient, model: str | None = None) -> Scorer:
    """The embedding scorer over evalcore's embeddings (`model`: an embedding model name, else the
    project's `embedding` role), relevance calibrated for the model that embeds."""
    try:
        chosen = client.registry.choose("embedding", model).model
    except ConfigError:  # an unknown model fails where it embeds, with the model layer's own message
        chosen = model
    cut = RELEVANCE_CUTS.get(str(chosen))
    return embedding_scorer(lambda texts: client.embed(list(texts), model), cut)


# ------------------------------------------------------------------------------------ online: a judge

# Online, the generative assertions are scored by the judge model as Rasa scores them with its LLM judge:
# groundedness is the share of the response's statements that the ground truth supports; relevance is
# the judge's 1-5 rating of how directly the response answers the user message, read as (rating - 1) / 4
# (so Rasa's default threshold of 0.5 needs a rating of 3 or more). Offline, the embedding scorer above
# stands in, and each score's rationale says so.


class StatementCheck(BaseModel):
    """One statement of the response and whether the ground truth supports it."""

    statement: str = Field(description="A statement the response makes, in its own words.")
    supported: bool = Field(description="True when the ground truth states or directly implies it.")


class GenerativeJudgment(BaseModel):
    """The judge's reading of one generative response."""

    rationale: str = Field(default="", description="One or two sentences on why.")
    statements: list[StatementCheck] = Field(
        default_factory=list, description="Groundedness: every statement of the response, checked."
    )
    relevance: int | None = Field(
        default=None, ge=1, le=5, description="Relevance: 1 ignores the message .. 5 answers it fully."
    )


_CONTENT = re.compile(r"[a-z0-9][a-z0-9'-]{2,}")


def offline_generative(inputs: dict[str, Any], rng: random.Random) -> GenerativeJudgment:
    """The task's offline implementation: a statement is supported when most of its words (three letters
    or more) are in the ground truth; relevance from the share of the message's words the response uses."""
    if inputs["metric"] == "groundedness":
        truth = set(_CONTENT.findall(str(inputs["ground_truth"]).lower()))
        checks = []
        for sentence in sentences(str(inputs["response"])):
            words = _CONTENT.findall(sentence.lower())
            shared = sum(w in truth for w in words)
            checks.append(
                StatementCheck(statement=sentence, supported=bool(words) and 2 * shared >= len(words))
            )
        return GenerativeJudgment(rationale="offline: words of each statement found in the ground truth",
                                  statements=checks)  # fmt: skip
    asked = set(_CONTENT.findall(str(inputs["question"]).lower()))
    said = set(_CONTENT.findall(str(inputs["response"]).lower()))
    share = len(asked & said) / len(asked) if asked else 0.0
    return GenerativeJudgment(rationale="offline: words of the message used in the response",
                              relevance=1 + round(4 * share))  # fmt: skip


SCORE_GENERATIVE = Task("score_generative", GenerativeJudgment, offline_generative, max_tokens=700)


def judgment_score(metric: str, judgment: GenerativeJudgment) -> float | None:
    """The 0-1 score of a judgment (see above); None when it holds nothing to score."""
    if metric == "groundedness":
        if not judgment.statements:
            return None
        return sum(s.supported for s in judgment.statements) / len(judgment.statements)
    return None if judgment.relevance is None else (judgment.relevance - 1) / 4


def scenario_scorer(client: ModelClient, judge: str | None = None, target_model: str | None = None) -> Scorer:
    """The scorer of a run's generative assertions: the judge model (`judge`, else the judge role; never
    the target's own model when another is configured) through the task `score_generative`, or, when the
    judge is the offline provider, the embedding scorer, its rationales marked offline."""
    choice = guard_judge(client, target_model, judge)
    if choice.model.startswith("offline/"):
        embedded = client_scorer(client)

        def offline(request: ScoreRequest) -> Score | None:
            score = embedded(request)
            return None if score is None else Score(score.value, f"offline (embedding): {score.rationale}")

        return offline

    def judged(request: ScoreRequest) -> Score | None:
        inputs = {"metric": request.metric, "question": request.question, "response": request.response,
                  "ground_truth": request.ground_truth}  # fmt: skip
        result = client.run_task(SCORE_GENERATIVE, inputs, role="judge", model=choice.model)
        if not result.ok or result.output is None:
            return None  # a judge that cannot answer leaves the assertion unscored, never failed
        value = judgment_score(request.metric, result.output)
        if value is None:
            return None
        return Score(value, f"{result.model}: {result.output.rationale}".strip())

    return judged
