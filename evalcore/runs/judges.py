"""Judges of a played turn: an LLM-as-judge (0/1 with a rationale and an error type) and an offline judge.

Judges are made by `make_judge`, a factory in the style of inspect_ai's scorers: the LLM judge is the
task `judge_turn` (prompt `evalcore/prompts/judge_turn.md`) run through the model layer, so its calls
are cached, retried, accounted and budgeted; its offline implementation is the deterministic comparison
of `evalcore.runs.offline_judge`, which is also the offline judge. A judge output that cannot be parsed (after
the model layer's re-asks) is recorded as unscored, with the raw text: never as 0. A valid 0/1 score is
kept when only a secondary field is off: an error type off the list becomes `other`, a missing rationale
stays empty, and the raw text is kept beside the verdict with the names of the repairs (issue 14).

The judge is never the target's own model when another one is configured: `make_judge` goes through the
model layer's guard, which picks another configured model or, when there is none, records a warning on
the run (seed 000 switched to another judge when the system under test ran on the judge's model).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalcore.errors import EvalcoreError
from evalcore.llm.client import ModelClient
from evalcore.llm.guard import guard_judge
from evalcore.llm.tasks import Task
from evalcore.runs import offline_judge
from evalcore.runs.records import ERROR_TYPES, JUDGE_ERROR_TYPES, JudgeErrorType

OFFLINE = "offline"
DOCUMENT_CHARS = 2500  # per grounding document in the judge prompt: enough for a policy section


class JudgeVerdict(BaseModel):
    """A judge's verdict on one reply."""

    # The schema asks for a rationale, but a reply that gives a valid score without one keeps its score.
    model_config = ConfigDict(json_schema_extra={"required": ["rationale", "score"]})

    rationale: str = Field(
        default="", description="Two or three sentences: what matches, what is wrong or missing."
    )
    score: int = Field(description="1 if the reply is fully correct, else 0.", ge=0, le=1)
    error_type: JudgeErrorType | None = Field(default=None, description="Main error when the score is 0.")

    @model_validator(mode="after")
    def _no_error_on_pass(self) -> JudgeVerdict:
        if self.score == 1:
            self.error_type = None
        return self


def offline_verdict(inputs: dict[str, Any], rng: random.Random) -> JudgeVerdict:
    """The judge task's offline implementation: the deterministic comparison."""
    result = offline_judge.compare_reply(
        inputs["question"],
        inputs["expected"],
        inputs["reply"],
        list(inputs.get("grounding_texts") or []),
        multi_turn=bool(inputs.get("multi_turn")),
    )
    return JudgeVerdict(rationale=result.rationale, score=result.score, error_type=result.error_type)


JUDGE_TURN = Task("judge_turn", JudgeVerdict, offline_verdict, prompt="judge_turn.md", max_tokens=600)
# Seed 000's judge template, Prometheus' absolute grading ("Feedback: ... [RESULT] n", read by the model
# layer's parser), on the seed's 0/1 scale; its error type comes at the end of the feedback.
JUDGE_TURN_PROMETHEUS = Task(
    "judge_turn_prometheus", JudgeVerdict, offline_verdict, prompt="judge_turn_prometheus.md", max_tokens=600
)
JUDGE_TEMPLATES: dict[str, Task[JudgeVerdict]] = {"ours": JUDGE_TURN, "prometheus": JUDGE_TURN_PROMETHEUS}
_ERROR_TYPE_LINE = re.compile(r"error[ _]type\s*:\s*`?([A-Za-z_]+)", re.IGNORECASE)


def judge_task(template: str) -> Task[JudgeVerdict]:
    """The judge task of a template name ('ours' or 'prometheus'); an unknown name is refused."""
    if template not in JUDGE_TEMPLATES:
        raise EvalcoreError(f"judge template must be one of {', '.join(JUDGE_TEMPLATES)}, not {template!r}")
    return JUDGE_TEMPLATES[template]


def _error_type_in(feedback: str) -> str:
    """The error type a Prometheus feedback names last ("Error type: coreference"), `other` when it
    names none on the list: a 0 always has a type, as with our template."""
    found = _ERROR_TYPE_LINE.findall(feedback)
    name = found[-1].lower() if found else ""
    return name if name in JUDGE_ERROR_TYPES else "other"


class JudgeStopped(EvalcoreError):
    """The judge could not run because the run's budget is spent."""


@dataclass(frozen=True)
class JudgeInputs:
    """Everything a judge sees about one played turn."""

    spec: str
    history: list[dict[str, str]]
    question: str
    expected: str
    reply: str
    grounding: list[tuple[str, str, str]] = field(default_factory=list)  # (id, title, text)
    multi_turn: bool = False
    history_source: str = "own"  # "own": the target's earlier replies; "expected": the expected answers

    def as_task_inputs(self) -> dict[str, Any]:
        """The inputs of the `judge_turn` task (rendered text, plus raw texts for its offline version)."""
        history = "\n".join(f"{m['role']}: {m['content']}" for m in self.history)
        if history:
            whose = "the expected answers" if self.history_source == "expected" else "its own replies"
            history = f"(the assistant's earlier turns are {whose})\n{history}"
        documents = "\n\n".join(
            f"[{i}] {title}\n{text[:DOCUMENT_CHARS]}" for i, title, text in self.grounding
        )
        return {
            "spec": self.spec or "(none)",
            "history": history or "(this is the first turn)",
            "question": self.question,
            "expected": self.expected,
            "documents": documents or "(none)",
            "reply": self.reply,
            "error_types": "\n".join(f"   - {k}: {ERROR_TYPES[k]}" for k in JUDGE_ERROR_TYPES),
            "grounding_texts": [text for _, _, text in self.grounding],
            "multi_turn": self.multi_turn,
        }


@dataclass(frozen=True)
class Verdict:
    """A judge's decision on one turn: score 1, 0 or None (unscored), with why and who decided."""

    score: float | None
    error_type: str | None
    rationale: str
    judge: str
    raw: str | None = None
    prompt_version: str | None = None
    repairs: tuple[str, ...] = ()  # what the judge's output needed to be read (its raw text is kept then)


class TurnJudge:
    """The interface of judges."""

    name: str
    prompt_versions: dict[str, str]

    def judge(self, inputs: JudgeInputs) -> Verdict:
        """The verdict on one turn."""
        raise NotImplementedError


class OfflineJudge(TurnJudge):
    """Deterministic comparison with the expected answer and the grounding documents; no model."""

    name = OFFLINE
    prompt_versions: ClassVar[dict[str, str]] = {"offline_judge": offline_judge.VERSION}

    def judge(self, inputs: JudgeInputs) -> Verdict:
        """Compare; always scored."""
        verdict = offline_verdict(inputs.as_task_inputs(), random.Random(0))
        return Verdict(
            float(verdict.score), verdict.error_type, verdict.rationale, OFFLINE, None, offline_judge.VERSION
        )


class LLMJudge(TurnJudge):
    """The judge task of a template (`judge_turn`, or `judge_turn_prometheus`) on a model, through the
    model layer."""

    def __init__(self, client: ModelClient, model: str, template: str = "ours") -> None:
        self.client, self.name, self.task = client, model, judge_task(template)
        self.prompt_versions = {self.task.name: self.task.prompt_version}

    def judge(self, inputs: JudgeInputs) -> Verdict:
        """Run the task; unparseable output is unscored, a spent budget raises JudgeStopped."""
        result = self.client.run_task(self.task, inputs.as_task_inputs(), role="judge", model=self.name)
        if result.status == "stopped":
            raise JudgeStopped(result.error or "budget spent")
        version = result.prompt_version
        if not result.ok or result.output is None:
            why = f"unscored: the judge's output could not be used ({result.error})"
            return Verdict(None, None, why, self.name, result.raw, version)
        out = result.output
        # A repaired output is kept as written, so a reviewer can see what the repairs read into it.
        raw = result.raw if result.repairs else None
        repairs = tuple(result.repairs)
        error_type = out.error_type
        if out.score == 0 and error_type is None and self.task is JUDGE_TURN_PROMETHEUS:
            error_type = _error_type_in(out.rationale)
        return Verdict(float(out.score), error_type, out.rationale, self.name, raw, version, repairs)


def make_judge(
    client: ModelClient, judge: str | None, target_model: str | None, template: str = "ours"
) -> TurnJudge:
    """The judge for a run: 'offline', a 'provider/model', or None for the project's judge role; a model
    judges with `template`'s prompt ('ours', or 'prometheus': seed 000's).

    A model goes through the self-preference guard (which records the judge, and any warning, on the
    client's run). The offline provider's model judges with the offline comparison, whatever the template.
    """
    judge_task(template)  # an unknown template fails before any turn is played
    if judge == OFFLINE:
        run = client.current_run()
        if run is not None and run.judge != OFFLINE:
            client.store.set_run_judge(run.id, OFFLINE)
        return OfflineJudge()
    choice = guard_judge(client, target_model, judge)
    if choice.model.startswith("offline/"):
        return OfflineJudge()
    client.registry.resolve("judge", choice.model)  # a misconfigured judge fails before any turn is played
    return LLMJudge(client, choice.model, template)
