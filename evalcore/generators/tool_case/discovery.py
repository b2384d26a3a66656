"""Rubric discovery as a job (kind `rubric_discovery`, one unit): a SCOPE or SPUR rubric set learnt from
the training part of the project's labelled tool-case conversations and stored, so the Tool cases page,
a queue worker and `evalcore rubrics discover` start the same function (seed 004, Section 3).

The training part is the 40/60 split of `evaluation.split` (fold 0). One change, said in the run's
warnings when it applies: a label with conversations but none in the training part (a small project: one
POS conversation of 26 is cut at round(0.4) = 0) gets one of its conversations moved into training, since
a rubric set needs a POS and a NEG rubric; `rubrics evaluate` then has none of that label held out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import ValidationError

from evalcore import jobs
from evalcore.errors import EvalcoreError, UsageError
from evalcore.generators.tool_case.evaluation import TRAIN_SHARE, labelled_conversations, labels_of, split
from evalcore.generators.tool_case.rubrics import KIND, METHODS, RubricSet, load_rubric_set
from evalcore.generators.tool_case.scope import ROLE, Options, RubricStepFailed, discover_rubrics
from evalcore.llm.client import ModelClient
from evalcore.models import Conversation, Run
from evalcore.store import Store

RUN_KIND = "rubric_discovery"
UNIT = "discover"
ABLATABLE = {"AD": "area_discovery", "RW": "weights", "MB": "make_or_break"}


def training_part(
    conversations: list[Conversation], seed: int, share: float
) -> tuple[list[Conversation], list[str]]:
    """The conversations to learn from (module docstring) and a warning per label moved into training."""
    train, test = split(conversations, 0, seed, share)
    warnings = []
    for label in ("POS", "NEG"):
        if any(labels_of(c)[0] == label for c in train):
            continue
        moved = next((c for c in test if labels_of(c)[0] == label), None)
        if moved is None:
            raise UsageError(
                f"no {label} conversation among the {len(conversations)} labelled tool cases: a rubric set "
                f"needs both; generate more tool cases (more per situation) first"
            )
        train.append(moved)
        warnings.append(
            f"the training part had no {label} conversation: 1 of the "
            f"{sum(labels_of(c)[0] == label for c in conversations)} moved into it (none held out)"
        )
    return train, warnings


def create_discovery(
    store: Store,
    project_id: str,
    *,
    method: str = "scope",
    without: Sequence[str] = (),
    train_share: float = TRAIN_SHARE,
    seed: int = 0,
    model: str | None = None,
    all_conversations: bool = False,
) -> Run:
    """Record a discovery job (status pending) over the training part as it is now; a bad option, or a
    project without conversations of both labels, is a one-line UsageError and records nothing."""
    if method not in METHODS:
        raise UsageError(f"method must be scope or spur, not '{method}'")
    off = {w.upper() for w in without}
    if off - set(ABLATABLE):
        raise UsageError(f"leave out AD, RW or MB, not {', '.join(sorted(off - set(ABLATABLE)))}")
    if not 0 < train_share <= 1:
        raise UsageError(f"the training share must be in (0, 1], not {train_share}")
    labelled = labelled_conversations(store, project_id, all_conversations=all_conversations)
    train, warnings = training_part(labelled, seed, train_share)
    _, _, judge = ModelClient(store, project_id).registry.resolve(ROLE, model)
    params = {
        "project_id": project_id,
        "method": method,
        "without": sorted(off),
        "train_share": train_share,
        "seed": seed,
        "model": model,
        "all_conversations": all_conversations,
        "conversations": [c.id for c in train],
        "units": [UNIT],
    }
    return jobs.create(
        store, project_id, RUN_KIND, params, entry=execute_discovery, total=1, judge=judge, warnings=warnings
    )


def execute_discovery(
    store: Store, run_id: str, *, on_progress: Callable[[int, int], None] | None = None
) -> Run:
    """Learn and store the rubric set if not done yet (a first start, a resume, a queue worker's call);
    a model step without usable output fails the unit with its reason, kept for a retry."""
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is not a rubric discovery run (kind {run.kind})")
    params = run.params
    pid = params["project_id"]
    run = store.start_run(pid, run)
    train = [Conversation.model_validate(store.current(i).body) for i in params["conversations"]]
    llm = ModelClient(store, pid, run_id=run.id)
    off = set(params["without"])
    options = Options(**{field: key not in off for key, field in ABLATABLE.items()})

    def work(claim: jobs.Claim) -> None:
        try:
            made = discover_rubrics(
                llm, train, params["method"], options=options, model=params["model"], seed=params["seed"]
            )
        except (RubricStepFailed, ValidationError, EvalcoreError) as exc:
            with claim.commit() as writer:
                writer.fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            return
        with claim.commit() as writer:
            item = store.add_item(
                pid, KIND, made.model_dump(mode="json"), made.producer, note="discovered",
                run_id=run.id, conn=writer.conn,
            )  # fmt: skip
            writer.result = {"rubric_set": item}

    return jobs.run_units(store, run.id, [UNIT], work, on_progress=on_progress).run


def discovered(store: Store, run_id: str) -> tuple[str, RubricSet] | None:
    """The rubric set a finished discovery stored, as (item id, set as discovered); None before."""
    done = store.finished_units(run_id).get(UNIT)
    if not done or done["status"] != "done":
        return None
    item = done["result"]["rubric_set"]
    return item, load_rubric_set(store, item, 1)[0]


def discovery_runs(store: Store, project_id: str) -> list[Run]:
    """The project's discovery runs, newest first."""
    return store.runs(project_id, kind=RUN_KIND)
