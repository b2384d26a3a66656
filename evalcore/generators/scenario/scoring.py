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

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from evalcore.documents.sentences import split_sentences
from evalcore.generators.scenario.checks import Score, Scorer, ScoreRequest
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
