"""A target agent's own conversations scored by SCOPE (or SPUR) rubrics (seed 004, Section 3.2, step 4;
issue 20, item 7), reported per rubric and per area with drill-down to the conversations.

`score_with_rubrics` is a job (kind `rubric_scoring`): one unit per conversation (simulated, imported or
generated: any of the project's conversations, or those of one generator), each committed with every
rubric's score and the label the set estimates. `rubric_report` reads the committed units: per rubric, the
conversations it applies to (and their ids, for drill-down) and its mean normalised score; per area, the
conversations with a POS or a NEG rubric hit; and the estimated labels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from evalcore import __version__, jobs
from evalcore.errors import EvalcoreError, UsageError
from evalcore.generators.tool_case.rubrics import estimate_label, load_rubric_set
from evalcore.generators.tool_case.scope import score_conversation
from evalcore.items.store_ops import list_conversations
from evalcore.llm.client import ModelClient
from evalcore.models import Conversation, Run
from evalcore.store import Store
from evalcore.store.store import new_id

RUN_KIND = "rubric_scoring"


@dataclass(frozen=True)
class RubricLine:
    """One rubric's figures over the scored conversations."""

    rubric_id: str
    area: str
    polarity: str
    text: str
    weight: int
    applies: list[str]  # conversation ids it applies to (score > 0): the drill-down
    mean_score: float  # mean of score / max score over all scored conversations


@dataclass(frozen=True)
class RubricReport:
    """A scoring run read back."""

    run: Run
    scored: int
    labels: dict[str, int]  # estimated label -> conversations
    rubrics: list[RubricLine]
    areas: dict[str, dict[str, int]] = field(default_factory=dict)  # area -> {"POS": n, "NEG": n} hit


def score_with_rubrics(
    store: Store,
    project_id: str,
    rubric_set: str,
    *,
    generator: str | None = None,
    model: str | None = None,
    resume: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Run:
    """Score the project's conversations (of `generator` when given) with a stored rubric set; `resume`
    works the units of an earlier run not committed yet. Returns the run."""
    if resume:
        run = store.run(resume)
        if run.kind != RUN_KIND:
            raise EvalcoreError(f"'{resume}' is not a rubric scoring run (kind {run.kind})")
    else:
        ids = [v.conversation.id for v in list_conversations(store, project_id, generator=generator)]
        if not ids:
            raise UsageError(f"no conversations{f' of generator {generator}' if generator else ''} to score")
        _, version = load_rubric_set(store, rubric_set)
        params = {"project_id": project_id, "rubric_set": rubric_set, "version": version,
                  "generator": generator, "model": model, "units": ids}  # fmt: skip
        run = Run(id=new_id("run"), kind=RUN_KIND, params=params, code_version=__version__, judge=model)
    run = store.start_run(project_id, run)
    # The version the run started with, so a later edit of the set does not mix two sets in one run.
    rubrics, _ = load_rubric_set(store, run.params["rubric_set"], run.params["version"])
    llm = ModelClient(store, project_id, run_id=run.id)
    llm.registry.resolve("judge", run.params.get("model"))

    def work(claim: jobs.Claim) -> None:
        conversation = Conversation.model_validate(store.current(claim.key).body)
        scores = score_conversation(llm, rubrics, conversation, model=run.params.get("model"))
        label, sides = estimate_label(rubrics, scores)
        with claim.commit() as writer:
            writer.result = {"scores": scores, "label": label, "sides": sides}

    report = jobs.run_units(store, run.id, run.params["units"], work, on_progress=on_progress)
    return report.run


def rubric_report(store: Store, run_id: str) -> RubricReport:
    """Per rubric and per area figures of a scoring run (see the module docstring)."""
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is not a rubric scoring run (kind {run.kind})")
    rubrics, _ = load_rubric_set(store, run.params["rubric_set"], run.params["version"])
    done = {k: u["result"] for k, u in store.finished_units(run_id).items() if u["status"] == "done"}
    labels: dict[str, int] = {}
    areas: dict[str, dict[str, int]] = {a.name: {"POS": 0, "NEG": 0} for a in rubrics.areas}
    for result in done.values():
        labels[result["label"]] = labels.get(result["label"], 0) + 1
        hit = {(r.area, r.polarity) for r in rubrics.rubrics if result["scores"].get(r.id, 0) > 0}
        for area, polarity in hit:
            areas[area][polarity] += 1
    lines = []
    for r in rubrics.rubrics:
        applies = sorted(k for k, v in done.items() if v["scores"].get(r.id, 0) > 0)
        total = sum(v["scores"].get(r.id, 0) for v in done.values()) / rubrics.max_score
        lines.append(
            RubricLine(
                r.id, r.area, r.polarity, r.text, r.weight, applies, total / len(done) if done else 0.0
            )
        )
    return RubricReport(run, len(done), labels, lines, areas)
