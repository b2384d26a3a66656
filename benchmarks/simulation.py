"""Persona simulation offline (issue 18, "Done means"): 10 standard and 10 challenging personas against the
demo target on the sample project, ChatChecker's statistics per persona type (seed 002, Table 5: #D with
B, #B, B/ST, unique B, crashes, MTLD, ratings), and a target that crashes on a keyword.

Run from the repository root: `.venv/bin/python benchmarks/simulation.py [--personas N] [--seeds S ...]`
(default: seeds 0 to 4, a project each; per-seed rates, whether challenging personas lead at each, and the
pooled table).
Everything is offline (EVALCORE_OFFLINE=1): the personas, the simulated users, the breakdown rules and the
heuristic rater; the figures say how the offline pipeline behaves, not how a model would.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CRASH_WORD = "return"


def keyword_bot(messages: list[dict[str, str]]) -> str:
    """A target that fails whenever the user's latest message mentions a return (the crash check)."""
    last = messages[-1]["content"]
    if CRASH_WORD in last.lower():
        raise RuntimeError("returns service unavailable")
    return f"I can help with that. You asked: {last}"


def _row(label: str, dialogues: list, task_oriented: bool) -> str:
    from evalcore.generators.simulation import stats

    chat = stats.run_chat_statistics(dialogues)
    broken = stats.run_breakdown_stats(dialogues, task_oriented)
    ratings = stats.rating_stats(dialogues)
    overall = ratings.get("overall_performance", {}).get("average", float("nan"))
    return (
        f"{label:<12}{chat['num_dialogues']:>4}{chat['avg_chatbot_turns_per_dialogue']:>7.1f}"
        f"{chat['avg_user_turn_length']:>7.1f}{broken['n_dialogues_with_breakdowns']:>9}"
        f"{broken['total_breakdown_count']:>5}{broken['breakdowns_per_chatbot_turn']:>8.3f}"
        f"{broken['n_unique_breakdown_types']:>9}{chat['num_dialogues_with_chatbot_errors']:>7}"
        f"{chat['user_turn_mtld']:>9.1f}{chat['chatbot_turn_mtld']:>9.1f}{overall:>9.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", type=int, default=10, help="personas of each type (default 10)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4], help="one project per seed")
    args = parser.parse_args()
    os.environ["EVALCORE_OFFLINE"] = "1"
    sys.path.insert(0, str(ROOT))
    from evalcore.generators.simulation import load_simulation_run
    from evalcore.generators.simulation.job import simulate
    from evalcore.inputs import import_project
    from evalcore.models import Target
    from evalcore.store import Store
    from evalcore.targets import save_target

    n = args.personas
    with tempfile.TemporaryDirectory() as folder:
        store = Store(f"sqlite:///{Path(folder) / 'bench.db'}")
        by_type: dict[str, list] = {"standard": [], "challenging": []}
        task_oriented = True
        print(f"demo target, sample project, offline; {n} standard and {n} challenging personas per seed")
        for seed in args.seeds:  # a project per seed: its own personas and its own users' draws
            pid = import_project(store, ROOT / "data" / "sample", f"sample-{seed}").project_id
            started, cpu = time.perf_counter(), time.process_time()
            outcome = simulate(store, pid, "demo", standard=n, challenging=n, seed=seed)
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            sim = load_simulation_run(store, outcome.run.id)
            task_oriented = sim.task_oriented
            rates = {}
            for kind in by_type:
                dialogues = [d for d in sim.dialogues if sim.personas[d.user_name].type == kind]
                by_type[kind] += dialogues
                rates[kind] = _rate(dialogues, task_oriented)
            print(
                f"seed {seed}: run {outcome.run.status.value} in {seconds:.1f} s wall, {cpu:.1f} s CPU (all "
                f"threads); breakdowns per target turn "
                f"standard {rates['standard']:.3f}, challenging {rates['challenging']:.3f} -> challenging "
                f"{'ahead' if rates['challenging'] > rates['standard'] else 'NOT ahead'}"
            )
        print(f"all seeds pooled (bot type task-oriented: {task_oriented}):")
        print(
            f"{'personas':<12}{'D':>4}{'ST/D':>7}{'|UT|':>7}{'D with B':>9}{'#B':>5}{'B/ST':>8}"
            f"{'unique B':>9}{'crash':>7}{'MTLD u':>9}{'MTLD st':>9}{'overall':>9}"
        )
        for kind, dialogues in by_type.items():
            print(_row(kind, dialogues, task_oriented))
        rates = {kind: _rate(dialogues, task_oriented) for kind, dialogues in by_type.items()}
        verdict = "more" if rates["challenging"] > rates["standard"] else "NOT more"
        print(
            f"breakdowns per target turn, pooled: standard {rates['standard']:.3f}, challenging "
            f"{rates['challenging']:.3f} -> challenging personas produce {verdict}"
        )

        save_target(
            store,
            pid,
            Target(name="fragile", kind="python", config={"callable": "benchmarks.simulation:keyword_bot"}),
        )
        crashed = simulate(store, pid, "fragile", standard=n, challenging=n, seed=args.seeds[-1])
        run = load_simulation_run(store, crashed.run.id)
        mentioned = [
            d
            for d in run.dialogues
            if any(CRASH_WORD in t.content.lower() for t in d.turns if t.role.value == "user")
        ]
        recorded = [
            d
            for d in run.dialogues
            if d.turns
            and d.turns[-1].breakdown is not None
            and d.turns[-1].breakdown.breakdown_types == ["Chatbot Crash"]
        ]
        print(
            f"target crashing on '{CRASH_WORD}': {len(mentioned)} of {len(run.dialogues)} dialogues mention "
            f"it, {crashed.crashed} ended with chatbot_error, {len(recorded)} end on a 'Chatbot Crash' turn "
            f"(score 0)"
        )
        store.close()


def _rate(dialogues: list, task_oriented: bool) -> float:
    from evalcore.generators.simulation import stats

    return stats.run_breakdown_stats(dialogues, task_oriented)["breakdowns_per_chatbot_turn"] or 0.0


if __name__ == "__main__":
    main()
