"""The offline breakdown detector (issue 31, item 3): how many of seed 002's 26 types its rules produce (a
dialogue per type fires it, tests/fixtures/breakdown_types.yaml), which it cannot and why, and its
precision against labels it was not tuned on:
- the published ChatChecker run (shared/reference; its labels are its own model detector's, GPT-4o);
- benchmarks/data/breakdowns_handwritten.yaml: 24 dialogues in five other domains, labelled by hand after
  the rules were written, never used to tune them.

Run from the repository root: `.venv/bin/python benchmarks/breakdown_detector.py` (offline, a second or
two); benchmarks/simulation.py prints the same at its end.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _talk(lines: list[str]):
    from evalcore.generators.simulation.records import Dialogue, DialogueTurn, FinishReason
    from evalcore.models import TurnRole

    roles = (TurnRole.user, TurnRole.assistant)
    turns = [DialogueTurn(role=roles[i % 2], content=text) for i, text in enumerate(lines)]
    return Dialogue(dialogue_id="d", user_name="u", turns=turns, finish_reason=FinishReason.user_ended_chat)


def coverage() -> None:
    """The types whose example dialogue fires them, and the ones the rules leave to a model."""
    from evalcore.generators.simulation.breakdown_checks import UNDECIDABLE
    from evalcore.generators.simulation.breakdown_rules import judge_turn
    from evalcore.generators.simulation.taxonomy import TAXONOMY

    examples = yaml.safe_load((ROOT / "tests" / "fixtures" / "breakdown_types.yaml").read_text("utf-8"))
    produced = []
    for case in examples["types"]:
        fires, quiet = _talk(case["fires"]), _talk(case["quiet"])
        task_oriented = case.get("task_oriented", True)
        hit = (
            case["type"]
            in judge_turn(fires, len(fires.turns) - 1, task_oriented, examples["domain"]).breakdown_types
        )
        kept = judge_turn(quiet, len(quiet.turns) - 1, task_oriented, examples["domain"]).breakdown_types
        if hit and case["type"] not in kept:
            produced.append(case["type"])
    missing = [t.title for t in TAXONOMY if t.title not in produced]
    print(
        f"offline breakdown rules: {len(produced)} of {len(TAXONOMY)} types produced (each fires on its own"
    )
    print("  example dialogue and not on a near miss); not produced:")
    for title in missing:
        print(f"  - {title}: {UNDECIDABLE.get(title, 'its example did not fire (a bug)')}")


def _print_scores(label: str, scores) -> None:
    d = scores.decision
    flagged = d.tp + d.fp
    print(
        f"{label}: {scores.turns} bot turns, {d.tp + d.fn} labelled breakdowns; the rules flag {flagged}, "
        f"{d.tp} of them labelled too (precision {_f(d.precision)}, recall {_f(d.recall)}, F1 {_f(d.f1)}, "
        f"accuracy {_f(scores.accuracy)})"
    )
    print(f"  {'type':<44}{'flagged':>8}{'right':>7}{'labelled':>9}{'prec':>6}{'F1':>6}")
    for title, c in sorted(scores.by_type.items()):
        print(f"  {title:<44}{c.tp + c.fp:>8}{c.tp:>7}{c.tp + c.fn:>9}{_f(c.precision):>6}{_f(c.f1):>6}")


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def published() -> None:
    """Against the labels of every published run in the reference folder (their model detector), and of
    the release's example dialogue (another bot: AutoTOD, with its config)."""
    from evalcore.generators.simulation.breakdown_rules import detect_offline
    from evalcore.generators.simulation.chatchecker import read_dialogue_file, read_run
    from evalcore.generators.simulation.detector_scores import dialogue_pairs, score

    def info(config: Path) -> str:
        chatbot = yaml.safe_load(config.read_text("utf-8"))["chatbot_info"]
        return "\n".join(f"{k}: {v}" for k, v in chatbot.items() if v)

    reference = next(
        (r for p in ROOT.parents if (r := p / "shared" / "reference" / "chatchecker").is_dir()), None
    )
    if reference is None:
        print("published ChatChecker runs not found beside the repository: not measured")
        return
    for folder in sorted(p for p in (reference / "runs").glob("*/*") if p.is_dir()):
        run, shown = read_run(folder), info(folder.parent / "config.yaml")
        pairs = [
            p for d in run.dialogues for p in dialogue_pairs(d, detect_offline(d, run.task_oriented, shown))
        ]
        _print_scores(f"published run {folder.name} (labels: its GPT-4o detector)", score(pairs))
    example = reference / "example_dialogue.yaml"
    if example.is_file():
        dialogue = read_dialogue_file(example)
        shown = info(reference / "autotod_multiwoz_config.yaml")
        pairs = dialogue_pairs(dialogue, detect_offline(dialogue, True, shown))
        _print_scores(f"published {example.name}, AutoTOD (labels: its GPT-4o detector)", score(pairs))


def handwritten() -> None:
    """Against the hand-labelled dialogues of benchmarks/data/breakdowns_handwritten.yaml."""
    from evalcore.generators.simulation.breakdown_rules import detect_offline
    from evalcore.generators.simulation.detector_scores import dialogue_pairs, score
    from evalcore.generators.simulation.records import (
        BreakdownAnnotation,
        Dialogue,
        DialogueTurn,
        FinishReason,
    )
    from evalcore.models import TurnRole

    data = yaml.safe_load((ROOT / "benchmarks/data/breakdowns_handwritten.yaml").read_text("utf-8"))
    pairs = []
    for n, case in enumerate(data["dialogues"]):
        turns = []
        for t in case["turns"]:
            if "user" in t:
                turns.append(DialogueTurn(role=TurnRole.user, content=t["user"]))
                continue
            label = BreakdownAnnotation(
                score=0.5 if t["types"] else 1.0,
                decision="breakdown" if t["types"] else "no_breakdown",
                breakdown_types=t["types"],
            )
            turns.append(DialogueTurn(role=TurnRole.assistant, content=t["bot"], breakdown=label))
        dialogue = Dialogue(
            dialogue_id=f"hand_{n}", user_name="hand", turns=turns, finish_reason=FinishReason.user_ended_chat
        )
        guess = detect_offline(dialogue, case.get("task_oriented", True), case["domain"])
        pairs += dialogue_pairs(dialogue, guess)
    _print_scores(f"hand-labelled set ({len(data['dialogues'])} dialogues, not tuned on)", score(pairs))


def main() -> None:
    """Print coverage, then the scores on both label sets, with the time taken."""
    sys.path.insert(0, str(ROOT))
    started, cpu = time.perf_counter(), time.process_time()
    coverage()
    published()
    handwritten()
    print(f"({time.perf_counter() - started:.2f} s wall, {time.process_time() - cpu:.2f} s CPU)")


if __name__ == "__main__":
    main()
