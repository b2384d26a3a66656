"""SPUR (seed 004, Section 3.1, Appendix D) and SCOPE (Section 3.2, Appendix C) as pipelines of model
tasks, each with an offline implementation over the observable signals (tool_case/signals.py).

SCOPE: area discovery on 10 sampled training conversations (at most 5 areas), supervised extraction of
reasons per area, grouped summarisation (at most 5 rubrics per area and polarity, reasons in batches of
20), de-duplication across areas (at most max(total/2, 12) rubrics), weight estimation (1-10, make-or-break
NEG rubrics 100), then label estimation (rubrics.estimate_label). SPUR: 3 reasons per SAT/DSAT training
conversation from the user's side, at most 10 SAT and 10 DSAT rubrics, an impact 1-10 per applicable
rubric. `Options` switches off the steps Table 4 ablates.

Weight estimation sees, for every rubric, how often it applies to the POS and to the NEG training
conversations (scored like test conversations), beside its text. Offline, a rubric's weight is its
precision for its own label (the share of the training conversations it applies to that carry its
polarity's label) times 10, at least 1; a NEG rubric that applied to at least MB_MIN_SUPPORT training
conversations and to no POS one (precision >= 0.95) is make-or-break: "a single instance warrants NEG"
(Appendix C.3). So user thanks that also follow hidden failures weigh little, as Section 3.1 argues.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from evalcore.errors import UsageError
from evalcore.generators.tool_case import signals as sig
from evalcore.generators.tool_case.records import transcript
from evalcore.generators.tool_case.rubrics import (
    MAKE_OR_BREAK,
    MAX_AREAS,
    MAX_PER_AREA,
    MAX_SPUR,
    Area,
    Method,
    Rubric,
    RubricSet,
)
from evalcore.jobs import UnitStopped
from evalcore.llm.client import ModelClient
from evalcore.llm.tasks import Task
from evalcore.models import Conversation, Turn

ROLE = "judge"
AREA_SAMPLE = 10  # Appendix C.3: 10 training conversations as references for area discovery
BATCH = 20  # Appendix C.3: batch size of rubric summarisation
MIN_DEDUPED = 12  # Appendix C.3: de-duplicate to max(total_rubrics/2, 12)
SPUR_REASONS = 3  # Section 3.1: 3 reasons for each SAT and DSAT conversation
SCOPE_MAX_SCORE = 5
SPUR_MAX_IMPACT = 10
GENERAL = Area(name="General", description="Everything about the conversation (no area discovery).")
SATISFACTION = Area(name=sig.USER_SATISFACTION, description="What the user says about the interaction.")
USER_SIGNALS = {"user_thanks", "user_complaint", "user_confused", "user_repeats"}
AREA_TEXT = {
    sig.TASK_COMPLETION: "How well the agent fulfils the request and reports accurate information.",
    sig.COMMUNICATION: "Whether replies are clear and readable for the user.",
    sig.ERROR_HANDLING: "How the agent responds to tool failures and wrong tool output.",
    sig.TOOL_USAGE: "Whether the agent calls the right tools with the user's values, and only those needed.",
    sig.USER_SATISFACTION: "The user's expressed satisfaction or frustration.",
}


class AreaOut(BaseModel):
    """One evaluation area."""

    name: str = Field(description="Short name of the area.")
    description: str = Field(description="One sentence: what the area covers.")


class Areas(BaseModel):
    """Areas discovered from the sampled conversations."""

    areas: list[AreaOut] = Field(description="At most the requested number of areas.")


class Reason(BaseModel):
    """One reason for a conversation's label."""

    area: str = Field(description="One of the given areas.")
    polarity: Literal["POS", "NEG"] = Field(description="POS or NEG.")
    reason: str = Field(description="The reason, as a general statement.")


class Reasons(BaseModel):
    """Reasons for one conversation's label."""

    reasons: list[Reason] = Field(description="The reasons found (may be empty).")


class Summary(BaseModel):
    """One summarised rubric."""

    text: str = Field(description="The rubric as a general statement.")
    support: int = Field(ge=0, description="How many of the given reasons it covers.")


class Summaries(BaseModel):
    """Rubrics summarised from reasons."""

    rubrics: list[Summary] = Field(description="Most supported first.")


class WeightOut(BaseModel):
    """The weight of one rubric."""

    id: str = Field(description="The rubric's id.")
    weight: int = Field(ge=1, le=10, description="Importance from 1 to 10.")
    make_or_break: bool = Field(description="True when one instance makes the conversation NEG.")


class Weights(BaseModel):
    """Weights of the rubrics."""

    weights: list[WeightOut] = Field(description="One per rubric.")


class ScoreOut(BaseModel):
    """How strongly one rubric applies."""

    id: str = Field(description="The rubric's id.")
    score: int = Field(ge=0, le=10, description="0 = does not apply, up to the maximum score.")


class Scores(BaseModel):
    """Scores of every rubric on one conversation."""

    scores: list[ScoreOut] = Field(description="One per rubric.")


def _turns(inputs: dict[str, Any]) -> list[Turn]:
    return [Turn.model_validate(t) for t in inputs["turns"]]


def signal_for(text: str) -> sig.Signal | None:
    """The signal a rubric or reason states: its exact statement, else the one sharing most words (at
    least half of them), else None (a rubric the offline path cannot judge scores 0)."""
    for signal in sig.SIGNALS.values():
        if text.strip() == signal.statement:
            return signal
    words = set(re.findall(r"[a-z]+", text.lower()))
    best, overlap = None, 0.0
    for signal in sig.SIGNALS.values():
        theirs = set(re.findall(r"[a-z]+", signal.statement.lower()))
        score = len(words & theirs) / max(1, len(words | theirs))
        if score > overlap:
            best, overlap = signal, score
    return best if overlap >= 0.5 else None


def offline_areas(inputs: dict[str, Any], rng: random.Random) -> Areas:
    """Areas whose signals show in the sample, in Table 6's order."""
    seen = {
        sig.SIGNALS[c].area
        for turns in inputs["samples"]
        for c in sig.observe([Turn.model_validate(t) for t in turns])
    }
    names = [a for a in sig.AREAS if a in seen][: int(inputs["max_areas"])]
    return Areas(areas=[AreaOut(name=a, description=AREA_TEXT[a]) for a in names])


def offline_reasons(inputs: dict[str, Any], rng: random.Random) -> Reasons:
    """The signals of the label's polarity, in the given areas (SPUR: only what the user expresses)."""
    polarity, areas, spur = inputs["polarity"], inputs["area_names"], inputs["perspective"] == "spur"
    found = []
    for code in sorted(sig.observe(_turns(inputs))):
        signal = sig.SIGNALS[code]
        # SPUR explains the SAT/DSAT label from the user's side; SCOPE gives positive or negative reasons
        # for each applicable area (Section 3.2, step 2), so a NEG conversation may have POS reasons.
        if spur and (signal.polarity != polarity or code not in USER_SIGNALS):
            continue
        area = areas[0] if len(areas) == 1 else signal.area
        if area in areas:
            found.append(Reason(area=area, polarity=signal.polarity, reason=signal.statement))
    limit = int(inputs["max_reasons"])
    return Reasons(reasons=found[:limit] if limit else found)


def offline_summaries(inputs: dict[str, Any], rng: random.Random) -> Summaries:
    """Identical reasons merged with their counts, most supported first."""
    counts: dict[str, int] = {}
    for item in inputs["reasons"]:
        counts[item["text"]] = counts.get(item["text"], 0) + int(item["count"])
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: int(inputs["max_rubrics"])]
    return Summaries(rubrics=[Summary(text=t, support=n) for t, n in ranked])


MB_MIN_SUPPORT = 3  # a make-or-break rubric must have been seen in at least 3 NEG training conversations
MB_PRECISION = 0.95


def offline_weights(inputs: dict[str, Any], rng: random.Random) -> Weights:
    """Weights from each rubric's precision for its label on the training conversations."""
    out = []
    for rubric in inputs["rubrics"]:
        own = rubric["pos_hits"] if rubric["polarity"] == "POS" else rubric["neg_hits"]
        hits = rubric["pos_hits"] + rubric["neg_hits"]
        precision = own / hits if hits else 0.0
        critical = rubric["polarity"] == "NEG" and precision >= MB_PRECISION and own >= MB_MIN_SUPPORT
        out.append(WeightOut(id=rubric["id"], weight=max(1, round(10 * precision)), make_or_break=critical))
    return Weights(weights=out)


def offline_scores(inputs: dict[str, Any], rng: random.Random) -> Scores:
    """The maximum score for every rubric whose signal the conversation shows, 0 for the others."""
    seen = sig.observe(_turns(inputs))
    top = int(inputs["max_score"])
    out = []
    for rubric in inputs["rubrics"]:
        signal = signal_for(rubric["text"])
        out.append(ScoreOut(id=rubric["id"], score=top if signal and signal.code in seen else 0))
    return Scores(scores=out)


def offline_satisfaction(inputs: dict[str, Any], rng: random.Random) -> Scores:
    """SPUR's user satisfaction estimation offline: the maximum impact for every rubric whose signal the
    user's own turns show (thanks, complaints, confusion, repeating themselves); tool calls and results
    are not read, as a satisfaction-only estimate does not read them."""
    seen = sig.observe(_turns(inputs)) & USER_SIGNALS
    top = int(inputs["max_score"])
    out = []
    for rubric in inputs["rubrics"]:
        signal = signal_for(rubric["text"])
        out.append(ScoreOut(id=rubric["id"], score=top if signal and signal.code in seen else 0))
    return Scores(scores=out)


DISCOVER_AREAS = Task(
    "discover_areas", Areas, offline_areas, prompt="discover_areas.md", temperature=0.7, max_tokens=1024
)
EXTRACT_REASONS = Task(
    "extract_reasons", Reasons, offline_reasons, prompt="extract_reasons.md", temperature=0.7, max_tokens=1024
)
SUMMARIZE_RUBRICS = Task(
    "summarize_rubrics", Summaries, offline_summaries, prompt="summarize_rubrics.md", max_tokens=2048
)
WEIGH_RUBRICS = Task("weigh_rubrics", Weights, offline_weights, prompt="weigh_rubrics.md", max_tokens=2048)
SCORE_RUBRICS = Task("score_rubrics", Scores, offline_scores, prompt="score_rubrics.md", max_tokens=2048)
# SPUR's baseline is scored as SPUR scores (Section 3.1, USE; Appendix D, Figure 20): a prompt about the
# user's satisfaction only, not SCOPE's prompt that also reads the tool calls and results.
ESTIMATE_SATISFACTION = Task(
    "estimate_satisfaction",
    Scores,
    offline_satisfaction,
    prompt="estimate_satisfaction.md",
    max_tokens=2048,
)
# Appendix C.2: temperature 0.7 where diverse thinking helps (areas, extraction), 0 for clear-cut decisions.

PERSPECTIVES = {
    "scope": "Consider every area: the user's satisfaction, and also the agent's tool use, its handling of "
    "tool errors and the faithfulness of what it reports.",
    "spur": "Consider the user's satisfaction: what in the user's messages shows they are satisfied (SAT) or "
    "dissatisfied (DSAT).",
}


@dataclass(frozen=True)
class Options:
    """Which SCOPE steps run (Table 4 removes one at a time)."""

    area_discovery: bool = True
    weights: bool = True
    make_or_break: bool = True

    @property
    def label(self) -> str:
        """'SCOPE' or the ablation's name as Table 4 writes it."""
        off = [
            n
            for n, on in (("AD", self.area_discovery), ("RW", self.weights), ("MB", self.make_or_break))
            if not on
        ]
        return "SCOPE" + "".join(f" w/o {n}" for n in off)


class RubricStepFailed(Exception):
    """A model step of rubric discovery gave no usable output."""


@dataclass
class Pipeline:
    """Runs the steps through one ModelClient (cache, accounting, budget) with one judge model."""

    llm: ModelClient
    model: str | None = None
    seed: int = 0
    producers: set[str] = field(default_factory=set)

    def run(self, task: Task, inputs: dict[str, Any]) -> Any:
        result = self.llm.run_task(task, inputs, role=ROLE, model=self.model, seed=self.seed)
        if result.status == "stopped":  # the budget or a stop request: a job releases the unit, not fails it
            raise UnitStopped(result.error or "stopped")
        if not result.ok or result.output is None:
            raise RubricStepFailed(f"{task.name}: {result.error or 'no output'}")
        self.producers.add(result.model)
        return result.output

    def conversation_inputs(self, conversation: Conversation) -> dict[str, Any]:
        return {
            "turns": [t.model_dump(mode="json") for t in conversation.turns],
            "transcript": transcript(conversation.turns),
        }

    def areas(self, train: list[Conversation]) -> list[Area]:
        sample = random.Random(self.seed).sample(train, min(AREA_SAMPLE, len(train)))
        inputs = {
            "samples": [[t.model_dump(mode="json") for t in c.turns] for c in sample],
            "conversations": "\n\n".join(f"[{i + 1}]\n{transcript(c.turns)}" for i, c in enumerate(sample)),
            "count": len(sample),
            "max_areas": MAX_AREAS,
        }
        found = self.run(DISCOVER_AREAS, inputs).areas[:MAX_AREAS]
        return [Area(name=a.name, description=a.description) for a in found] or [GENERAL]

    def reasons(self, conversation: Conversation, label: str, areas: list[Area], method: str) -> list[Reason]:
        inputs = {
            **self.conversation_inputs(conversation),
            "label": {"POS": "SAT", "NEG": "DSAT"}[label] if method == "spur" else label,
            "polarity": label,
            "areas": [a.model_dump() for a in areas],
            "area_names": [a.name for a in areas],
            "perspective": method,
            "perspective_instructions": PERSPECTIVES[method],
            "max_reasons": SPUR_REASONS if method == "spur" else 0,
            "limit": f"Give at most {SPUR_REASONS} reasons, all with polarity {label}."
            if method == "spur"
            else "Give at most one reason per area, for each area that applies.",
        }
        names = {a.name for a in areas}
        # SCOPE gives positive or negative reasons for each applicable area (Section 3.2, step 2): a NEG
        # conversation's right tool choice is a POS reason too. SPUR explains the label it was given.
        return [
            r
            for r in self.run(EXTRACT_REASONS, inputs).reasons
            if r.area in names and (method == "scope" or r.polarity == label)
        ]

    def summarise(self, texts: dict[str, int], area: str, polarity: str, most: int) -> list[Summary]:
        """Summaries of reasons (text -> count), in batches of BATCH distinct reasons, then of the batches."""
        items = [{"text": t, "count": n} for t, n in sorted(texts.items(), key=lambda kv: (-kv[1], kv[0]))]
        batches = [items[i : i + BATCH] for i in range(0, len(items), BATCH)] or [[]]
        found: list[Summary] = []
        for batch in batches:
            inputs = {"reasons": batch, "area": area, "polarity": polarity, "max_rubrics": most}
            found += self.run(SUMMARIZE_RUBRICS, inputs).rubrics
        if len(batches) > 1:
            merged = [{"text": s.text, "count": s.support} for s in found]
            inputs = {"reasons": merged, "area": area, "polarity": polarity, "max_rubrics": most}
            found = self.run(SUMMARIZE_RUBRICS, inputs).rubrics
        return found[:most]


def _label(conversation: Conversation) -> str:
    """The conversation's overall label (its intended label, as the training data carries it)."""
    return str((conversation.metadata.get("labels") or {}).get("overall"))


def _area_of(text: str, candidates: list[tuple[str, str]]) -> str:
    """The area of the pre-de-duplication rubric sharing most words with `text`."""
    words = set(text.lower().split())
    return max(candidates, key=lambda c: len(words & set(c[1].lower().split())))[0]


def discover_rubrics(
    llm: ModelClient,
    train: list[Conversation],
    method: Method = "scope",
    *,
    options: Options = Options(),
    model: str | None = None,
    seed: int = 0,
) -> RubricSet:
    """Learn a rubric set from labelled training conversations (see the module docstring)."""
    pipe = Pipeline(llm, model, seed)
    areas = [GENERAL] if method == "scope" and not options.area_discovery else [SATISFACTION]
    if method == "scope" and options.area_discovery:
        areas = pipe.areas(train)
    grouped: dict[tuple[str, str], dict[str, int]] = {}
    for conversation in train:
        label = _label(conversation)
        for reason in pipe.reasons(conversation, label, areas, method):
            texts = grouped.setdefault((reason.area, reason.polarity), {})
            texts[reason.reason] = texts.get(reason.reason, 0) + 1
    made: list[tuple[str, str, Summary]] = []  # (area, polarity, rubric) summarised per area and polarity
    cap = MAX_SPUR if method == "spur" else MAX_PER_AREA
    for polarity in ("POS", "NEG"):
        for (area, pol), texts in grouped.items():
            if pol == polarity:
                made += [(area, polarity, s) for s in pipe.summarise(texts, area, polarity, cap)]
    if method == "scope" and made:
        made = _deduplicated(pipe, made)
    rubrics: list[Rubric] = []
    for polarity in ("POS", "NEG"):
        per_area: dict[str, int] = {}
        for area, _, summary in sorted((m for m in made if m[1] == polarity), key=lambda m: -m[2].support):
            per_area[area] = per_area.get(area, 0) + 1
            if (per_area[area] if method == "scope" else sum(per_area.values())) > cap:
                continue
            rubric_id = f"{polarity.lower()}-{len([r for r in rubrics if r.polarity == polarity]) + 1}"
            rubrics.append(
                Rubric(id=rubric_id, area=area, polarity=polarity, text=summary.text, support=summary.support)
            )
    if missing := [p for p in ("POS", "NEG") if not any(r.polarity == p for r in rubrics)]:
        counts = {label: sum(_label(c) == label for c in train) for label in ("POS", "NEG")}
        raise UsageError(
            f"no {' or '.join(missing)} rubric could be learnt from {len(train)} conversations "
            f"({counts['POS']} POS, {counts['NEG']} NEG): generate more with "
            "`evalcore toolcases generate --per-situation N`"
        )
    made = RubricSet(
        method=method,
        areas=areas,
        rubrics=rubrics,
        max_score=SPUR_MAX_IMPACT if method == "spur" else SCOPE_MAX_SCORE,
        options={
            "area_discovery": options.area_discovery,
            "weights": options.weights,
            "make_or_break": options.make_or_break,
        },
        trained_on=[c.id for c in train],
    )
    if method == "scope" and options.weights:
        made = made.model_copy(update={"rubrics": _weighted(pipe, made, train, options)})
    return made.model_copy(update={"producer": ", ".join(sorted(pipe.producers)) or "offline"})


def _deduplicated(pipe: Pipeline, made: list[tuple[str, str, Summary]]) -> list[tuple[str, str, Summary]]:
    """Rubric de-duplication (step 3b, Appendix C.3): every rubric of every area and both polarities
    summarised together into at most max(total/2, 12); each merged rubric takes the area and polarity of
    the rubric it shares most words with. A polarity the merge lost keeps its best supported rubric, so
    the set still has both."""
    most = max(len(made) // 2, MIN_DEDUPED)
    texts: dict[str, int] = {}
    for _, _, summary in made:
        texts[summary.text] = texts.get(summary.text, 0) + summary.support
    merged = pipe.summarise(texts, "all areas", "POS and NEG", most)
    originals = [(f"{area}\t{polarity}", s.text) for area, polarity, s in made]
    out = [(*_area_of(s.text, originals).split("\t"), s) for s in merged]
    for polarity in ("POS", "NEG"):
        if not any(p == polarity for _, p, _ in out) and (own := [m for m in made if m[1] == polarity]):
            out.append(max(own, key=lambda m: m[2].support))
    return [(area, polarity, s) for area, polarity, s in out]


def _weighted(
    pipe: Pipeline, rubrics: RubricSet, train: list[Conversation], options: Options
) -> list[Rubric]:
    """Rubric weight estimation (step 3c), with each rubric's hits on the training conversations."""
    hits = {r.id: {"POS": 0, "NEG": 0} for r in rubrics.rubrics}
    for conversation in train:
        scores = score_conversation(pipe.llm, rubrics, conversation, model=pipe.model, seed=pipe.seed)
        for rubric_id, score in scores.items():
            hits[rubric_id][_label(conversation)] += score > 0
    listed = [
        {"id": r.id, "text": r.text, "polarity": r.polarity, "area": r.area,
         "pos_hits": hits[r.id]["POS"], "neg_hits": hits[r.id]["NEG"]}
        for r in rubrics.rubrics
    ]  # fmt: skip
    totals = {label: sum(_label(c) == label for c in train) for label in ("POS", "NEG")}
    inputs = {"rubrics": listed, "pos_total": totals["POS"], "neg_total": totals["NEG"]}
    weights = {w.id: w for w in pipe.run(WEIGH_RUBRICS, inputs).weights}
    out = []
    for r in rubrics.rubrics:
        w = weights.get(r.id)
        critical = bool(w and w.make_or_break and r.polarity == "NEG")
        if critical and options.make_or_break:
            out.append(r.model_copy(update={"weight": MAKE_OR_BREAK, "make_or_break": True}))
        else:
            # Without make-or-break (Table 4, MB), a critical rubric keeps the highest ordinary weight.
            out.append(r.model_copy(update={"weight": 10 if critical else (w.weight if w else 1)}))
    return out


def score_conversation(
    llm: ModelClient,
    rubrics: RubricSet,
    conversation: Conversation,
    *,
    model: str | None = None,
    seed: int = 0,
) -> dict[str, int]:
    """Each rubric's score on the conversation (0 = not applicable), clipped to the set's maximum."""
    pipe = Pipeline(llm, model, seed)
    listed = [{"id": r.id, "text": r.text} for r in rubrics.rubrics]
    inputs = {**pipe.conversation_inputs(conversation), "rubrics": listed, "max_score": rubrics.max_score}
    task = ESTIMATE_SATISFACTION if rubrics.method == "spur" else SCORE_RUBRICS
    got = {s.id: min(s.score, rubrics.max_score) for s in pipe.run(task, inputs).scores}
    return {r.id: got.get(r.id, 0) for r in rubrics.rubrics}
