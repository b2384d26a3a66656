"""SPUR against SCOPE as Table 3, and SCOPE's ablations as Table 4 (seed 004, Section 4, Appendix F).

k-fold cross-validation (default 5): each fold shuffles the labelled conversations (stratified by label)
and splits them 40/60 into training and test (Section 4.1: 206 training, 310 test of 516). Rubrics are
learnt on the training part only; the test part is scored. Accuracy, F1, precision and recall take POS as
the positive class, on three subsets: Easy (the user's satisfaction agrees with the label), Hard-Negative
(the user is satisfied but the conversation is NEG; only accuracy applies, as the seed notes) and Overall.
Each figure is the mean over folds with its standard deviation (Table 9).

The conversations are TRACE's: gold (people accepted them) and silver (the judge did) only, as Section 2.3
combines them; a conversation people or the judge rejected does not show its situation, so its intended
label would be wrong as truth. `all_conversations` takes every tool-case conversation instead (before any
review). How many were used and their POS share are reported with the tables.

`compare` computes it in the caller; `create_comparison` / `execute_comparison` make it a job (kind
`rubric_comparison`, one unit per fold, resumable, run by a queue worker), so a page never computes it on a
request: it reads `stored_comparison` from the committed folds.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalcore import jobs
from evalcore.errors import EvalcoreError, UsageError
from evalcore.generators.tool_case.records import GENERATOR
from evalcore.generators.tool_case.rubrics import Method, estimate_label
from evalcore.generators.tool_case.scope import (
    Options,
    RubricStepFailed,
    discover_rubrics,
    score_conversation,
)
from evalcore.items.current import read_tiers
from evalcore.items.store_ops import list_conversations
from evalcore.llm.client import ModelClient
from evalcore.models import Conversation, Run, Tier
from evalcore.store import Store

TRAIN_SHARE = 0.4  # Section 4.1: "split 40/60"
DEFAULT_FOLDS = 5
SUBSETS = ("Easy", "Hard Neg.", "Overall")
METRICS = ("accuracy", "f1", "precision", "recall")
RUN_KIND = "rubric_comparison"
USED_TIERS = (Tier.gold, Tier.silver)  # TRACE = gold + silver (Section 2.3, Table 2)
MAIN: tuple[tuple[str, Method, Options], ...] = (("SPUR", "spur", Options()), ("SCOPE", "scope", Options()))
ABLATIONS: tuple[tuple[str, Method, Options], ...] = tuple(
    (o.label, "scope", o)
    for o in (Options(area_discovery=False), Options(weights=False), Options(make_or_break=False))
)


def labels_of(conversation: Conversation) -> tuple[str, bool]:
    """(overall label, user satisfied) a labelled conversation carries."""
    labels = conversation.metadata.get("labels") or {}
    return str(labels.get("overall")), bool(labels.get("user_satisfied"))


def subset_of(conversation: Conversation) -> str:
    """'Easy' or 'Hard Neg.' (Table 3); dissatisfied POS conversations belong to Overall only."""
    label, satisfied = labels_of(conversation)
    if satisfied and label == "NEG":
        return "Hard Neg."
    return "Easy" if satisfied == (label == "POS") else "Other"


def metrics(pairs: Sequence[tuple[str, str]]) -> dict[str, float | None]:
    """Accuracy, F1, precision and recall of (truth, prediction) pairs, POS the positive class; None where
    undefined (no POS prediction, no POS truth)."""
    if not pairs:
        return dict.fromkeys(METRICS)
    tp = sum(t == p == "POS" for t, p in pairs)
    fp = sum(t == "NEG" and p == "POS" for t, p in pairs)
    fn = sum(t == "POS" and p == "NEG" for t, p in pairs)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else None
    if precision is not None and recall is not None and not (precision and recall):
        f1 = 0.0
    return {
        "accuracy": sum(t == p for t, p in pairs) / len(pairs),
        "f1": f1,
        "precision": precision,
        "recall": recall,
    }


def split(
    conversations: list[Conversation], fold: int, seed: int, share: float = TRAIN_SHARE
) -> tuple[list[Conversation], list[Conversation]]:
    """Training and test conversations of one fold: each label shuffled and cut at `share` (40/60)."""
    rng = random.Random(seed * 1000 + fold)
    train: list[Conversation] = []
    test: list[Conversation] = []
    for label in ("POS", "NEG"):
        group = [c for c in conversations if labels_of(c)[0] == label]
        rng.shuffle(group)
        cut = round(len(group) * share)
        train += group[:cut]
        test += group[cut:]
    return train, test


@dataclass
class Comparison:
    """Per method, subset and metric: the value of every fold."""

    folds: int
    conversations: int = 0  # labelled conversations the folds split
    pos: int | None = None  # of which POS; None for a run recorded before they were counted
    all_conversations: bool = False  # every tool case, not only gold + silver
    sizes: dict[str, int] = field(default_factory=dict)  # test conversations per subset, summed over folds
    values: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    rubric_counts: dict[str, list[int]] = field(default_factory=dict)

    @property
    def pos_share(self) -> float | None:
        """Share of POS among the conversations used; None when unknown or there are none."""
        return self.pos / self.conversations if self.pos is not None and self.conversations else None

    def data_line(self) -> str:
        """Which conversations the folds split, how many, and their POS share, as one line."""
        which = "every tool-case conversation" if self.all_conversations else "gold + silver conversations"
        share = "not recorded" if self.pos_share is None else f"{self.pos_share:.2f} ({self.pos} POS)"
        return f"{self.conversations} labelled conversations ({which}), POS share {share}"

    def add(self, method: str, subset: str, found: dict[str, float | None]) -> None:
        slot = self.values.setdefault(method, {}).setdefault(subset, {})
        for name, value in found.items():
            if value is not None:
                slot.setdefault(name, []).append(value)

    def cell(self, method: str, subset: str, metric: str) -> tuple[float, float] | None:
        """Mean and standard deviation over folds, or None (N/A)."""
        got = self.values.get(method, {}).get(subset, {}).get(metric)
        if not got or (subset == "Hard Neg." and metric != "accuracy"):
            return None
        return statistics.fmean(got), statistics.pstdev(got)

    def rows(self, methods: Sequence[str], subsets: Sequence[str] = SUBSETS) -> list[dict[str, str]]:
        """Table 3 / Table 9 as rows: subset, model, then 'mean (sd)' or N/A per metric."""
        rows = []
        for subset in subsets:
            for method in methods:
                row = {"Data Subset": subset, "Model": method}
                for metric, head in zip(METRICS, ("Acc.", "F1", "Pre.", "Rec."), strict=True):
                    got = self.cell(method, subset, metric)
                    row[head] = "N/A" if got is None else f"{got[0]:.2f} ({got[1]:.2f})"
                rows.append(row)
        return rows

    def table(self, methods: Sequence[str], subsets: Sequence[str] = SUBSETS) -> list[str]:
        """Markdown rows of `rows`."""
        lines = ["| Data Subset | Model | Acc. | F1 | Pre. | Rec. |", "|---|---|---|---|---|---|"]
        return lines + ["| " + " | ".join(row.values()) + " |" for row in self.rows(methods, subsets)]


def _fold(
    llm: ModelClient,
    conversations: list[Conversation],
    fold: int,
    seed: int,
    variants: Sequence[tuple[str, Method, Options]],
    model: str | None,
) -> dict[str, dict[str, Any]]:
    """One fold: per variant, the (truth, prediction) pairs of each subset and its rubric count."""
    train, test = split(conversations, fold, seed)
    found: dict[str, dict[str, Any]] = {}
    for name, method, options in variants:
        rubrics = discover_rubrics(llm, train, method, options=options, model=model, seed=seed + fold)
        pairs: dict[str, list[tuple[str, str]]] = {s: [] for s in SUBSETS}
        for conversation in test:
            scores = score_conversation(llm, rubrics, conversation, model=model, seed=seed + fold)
            predicted, _ = estimate_label(rubrics, scores)
            truth = labels_of(conversation)[0]
            pairs["Overall"].append((truth, predicted))
            if (subset := subset_of(conversation)) in pairs:
                pairs[subset].append((truth, predicted))
        found[name] = {"pairs": pairs, "rubrics": len(rubrics.rubrics)}
    return found


def _add_fold(result: Comparison, found: dict[str, dict[str, Any]]) -> None:
    for name, got in found.items():
        result.rubric_counts.setdefault(name, []).append(got["rubrics"])
        for subset, pairs in got["pairs"].items():
            result.add(name, subset, metrics([tuple(p) for p in pairs]))
            if name == "SPUR":
                result.sizes[subset] = result.sizes.get(subset, 0) + len(pairs)


def _variants(ablations: bool) -> tuple[tuple[str, Method, Options], ...]:
    return MAIN + (ABLATIONS if ablations else ())


def compare(
    llm: ModelClient,
    conversations: list[Conversation],
    *,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    ablations: bool = True,
    model: str | None = None,
    on_fold: Callable[[int, int], None] | None = None,
    all_conversations: bool = False,
) -> Comparison:
    """Table 3 (SPUR, SCOPE) and, with `ablations`, Table 4's SCOPE variants, over `folds` folds of
    `conversations` (`all_conversations` only says, in the result, that they were not filtered by tier)."""
    result = Comparison(folds, len(conversations), _pos_count(conversations), all_conversations)
    for fold in range(folds):
        _add_fold(result, _fold(llm, conversations, fold, seed, _variants(ablations), model))
        if on_fold:
            on_fold(fold + 1, folds)
    return result


def label_counts(conversations: Sequence[Conversation]) -> dict[str, int]:
    """How many conversations carry each overall label ('POS', 'NEG')."""
    return {label: sum(labels_of(c)[0] == label for c in conversations) for label in ("POS", "NEG")}


# Each fold trains on round(40%) of each label, the same count in every fold (`split`): a label needs
# this many conversations for one of them to be in every fold's training share.
MIN_PER_LABEL = next(n for n in range(1, 10) if round(n * TRAIN_SHARE) >= 1)


def missing_labels(conversations: Sequence[Conversation]) -> str | None:
    """Why no fold can train on both labels (POS: handled well, NEG: handled badly), in plain words; None
    when every fold can. Each fold trains on 40% of each label, so each needs MIN_PER_LABEL conversations."""
    counts = label_counts(conversations)
    words = {"POS": "handled well", "NEG": "handled badly"}
    short = [f"{counts[k]} {words[k]}" for k in counts if counts[k] < MIN_PER_LABEL]
    if not short:
        return None
    return (
        f"the comparison needs at least {MIN_PER_LABEL} conversations of each label to train every fold on "
        f"both, and has {' and '.join(short)} among {len(conversations)}: generate more conversations "
        "per situation (Tool cases page, or toolcases generate --per-situation 2)"
    )


def _pos_count(conversations: Sequence[Conversation]) -> int:
    return sum(labels_of(c)[0] == "POS" for c in conversations)


def labelled_conversations(
    store: Store, project_id: str, *, all_conversations: bool = False
) -> list[Conversation]:
    """The project's gold and silver tool-case conversations (tiers under the project's policy), which
    carry their intended labels; with `all_conversations`, every tool-case conversation, rejected ones too."""
    found = [v.conversation for v in list_conversations(store, project_id, generator=GENERATOR)]
    if not found:
        raise UsageError(
            f"project '{project_id}' has no tool-case conversations: run `evalcore toolcases generate` first"
        )
    if all_conversations:
        return found
    tiers = read_tiers(store, project_id, [c.id for c in found])
    kept = [c for c in found if tiers.get(c.id) in USED_TIERS]
    if not kept:
        counts = ", ".join(
            f"{n} {tier.value}" for tier in Tier if (n := sum(tiers.get(c.id) == tier for c in found))
        )
        raise UsageError(
            f"project '{project_id}' has no gold or silver tool-case conversation ({counts}): judge them "
            "with `evalcore toolcases filter` or review them on the Annotate page, or use every "
            "conversation with --all-conversations"
        )
    return kept


def create_comparison(
    store: Store,
    project_id: str,
    *,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    ablations: bool = True,
    model: str | None = None,
    all_conversations: bool = False,
) -> Run:
    """Record a comparison run (kind `rubric_comparison`, status pending): one unit per fold over the
    project's gold and silver conversations (every tool case with `all_conversations`) as they are now
    (their ids kept, so a resume uses the same data)."""
    if folds < 1:
        raise UsageError(f"--folds must be at least 1, not {folds}")
    conversations = labelled_conversations(store, project_id, all_conversations=all_conversations)
    if lacking := missing_labels(conversations):
        raise UsageError(lacking)
    ids = [c.id for c in conversations]
    _, _, judge = ModelClient(store, project_id).registry.resolve("judge", model)
    params = {
        "project_id": project_id,
        "folds": folds,
        "seed": seed,
        "ablations": ablations,
        "model": model,
        "conversations": ids,
        "pos": _pos_count(conversations),
        "all_conversations": all_conversations,
        "units": [f"fold-{n + 1}" for n in range(folds)],
    }
    return jobs.create(
        store, project_id, RUN_KIND, params, entry=execute_comparison, total=folds, judge=judge
    )


def execute_comparison(
    store: Store, run_id: str, *, on_progress: Callable[[int, int], None] | None = None
) -> Run:
    """Work the comparison's folds not committed yet (a first start, a resume, a queue worker's call)."""
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is not a rubric comparison run (kind {run.kind})")
    params = run.params
    pid = params["project_id"]
    run = store.start_run(pid, run)
    conversations = [Conversation.model_validate(store.current(i).body) for i in params["conversations"]]
    llm = ModelClient(store, pid, run_id=run.id)
    llm.registry.resolve("judge", params.get("model"))  # a configuration error fails before any call
    units = params["units"]

    def work(claim: jobs.Claim) -> None:
        fold = units.index(claim.key)
        try:
            found = _fold(
                llm, conversations, fold, params["seed"], _variants(params["ablations"]), params["model"]
            )
        except RubricStepFailed as exc:
            with claim.commit() as writer:
                writer.fail(str(exc))
            return
        with claim.commit() as writer:
            writer.result = found

    return jobs.run_units(store, run.id, units, work, on_progress=on_progress).run


def stored_comparison(store: Store, run_id: str) -> Comparison:
    """The comparison of a run from its committed folds (a run still going shows the folds it has)."""
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is not a rubric comparison run (kind {run.kind})")
    done = {k: u["result"] for k, u in store.finished_units(run_id).items() if u["status"] == "done"}
    params = run.params
    # Runs recorded before the tier filter took every conversation and did not count POS.
    result = Comparison(
        len(done), len(params["conversations"]), params.get("pos"), params.get("all_conversations", True)
    )
    for key in params["units"]:
        if key in done:
            _add_fold(result, done[key])
    return result


def variant_names(run: Run) -> tuple[list[str], list[str]]:
    """The method names of Table 3 and, when the run has them, of Table 4's ablations."""
    return [m[0] for m in MAIN], [m[0] for m in ABLATIONS] if run.params.get("ablations") else []


def comparison_runs(store: Store, project_id: str) -> list[Run]:
    """The project's comparison runs, newest first."""
    return store.runs(project_id, kind=RUN_KIND)


def tier_subsets(store: Store, project_id: str) -> dict[str, list[Conversation]]:
    """The project's gold and the silver tool-case conversations, apart (Table 11's two subsets)."""
    found = [v.conversation for v in list_conversations(store, project_id, generator=GENERATOR)]
    tiers = read_tiers(store, project_id, [c.id for c in found])
    return {tier.value: [c for c in found if tiers.get(c.id) == tier] for tier in USED_TIERS}


def compare_by_tier(
    llm: ModelClient,
    subsets: dict[str, list[Conversation]],
    *,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    model: str | None = None,
) -> dict[str, Comparison | str]:
    """Table 11 (seed 004, Appendix F): SPUR against SCOPE by k-fold cross-validation on each subset
    apart (gold, silver). A subset too small to split into training and test with both labels gets the
    one-line reason instead of a comparison."""
    out: dict[str, Comparison | str] = {}
    for tier, conversations in subsets.items():
        pos = _pos_count(conversations)
        if min(pos, len(conversations) - pos) < 2:
            out[tier] = f"{len(conversations)} conversations ({pos} POS): too few of a label to split"
            continue
        try:
            out[tier] = compare(llm, conversations, folds=folds, seed=seed, ablations=False, model=model)
        except UsageError as exc:  # a fold whose training part teaches no rubric of a label
            out[tier] = str(exc)
    return out


def tier_table(results: dict[str, Comparison | str]) -> list[str]:
    """Table 11 as Markdown rows: per subset (with its size and POS count) and method, the Overall
    figures as 'mean (sd)' over folds; a subset that could not be compared says why."""
    lines = ["| Subset | Model | Acc. | F1 | Pre. | Rec. |", "|---|---|---|---|---|---|"]
    for tier, found in results.items():
        if isinstance(found, str):
            lines.append(f"| {tier} | - | {found} | | | |")
            continue
        for row in found.rows([m[0] for m in MAIN], ("Overall",)):
            cells = [row[h] for h in ("Acc.", "F1", "Pre.", "Rec.")]
            lines.append(f"| {tier} (n={found.conversations}, {found.pos} POS) | {row['Model']} | "
                         + " | ".join(cells) + " |")  # fmt: skip
    return lines
