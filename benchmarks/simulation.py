"""Persona simulation offline (issue 18, "Done means"): 10 standard, 10 challenging and 10 adversarial
personas against the demo target on the sample project, ChatChecker's statistics per persona type (seed
002, Table 5: #D with B, #B, B/ST, unique B, crashes, MTLD, ratings), and a target that crashes on a
keyword. Adversarial personas (issue 31, item 3; `--adversarial 0` leaves them out) also get how many of
their users probed, how many of their dialogues the fault check flags (and would flag if read as
standard personas), and the same on the second project, data/retail.

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
MAX_FLAGGED = 0.10  # issue 31: no more than 10% of the clean published dialogues flagged as user_fault


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
    parser.add_argument("--adversarial", type=int, default=10, help="adversarial personas (default 10)")
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
        by_type: dict[str, list] = {"standard": [], "challenging": [], "adversarial": []}
        task_oriented = True
        clean: list[tuple] = []  # (dialogue, persona) of every seed, for the user-fault check
        probing: list[tuple] = []  # the same of the adversarial personas (not injected into: see below)
        run_ids: list[str] = []  # a run per seed, for Tables 4 and 5 over the seeds
        print(
            f"demo target, sample project, offline; {n} standard, {n} challenging and {args.adversarial} "
            "adversarial personas per seed"
        )
        for seed in args.seeds:  # a project per seed: its own personas and its own users' draws
            pid = import_project(store, ROOT / "data" / "sample", f"sample-{seed}").project_id
            started, cpu = time.perf_counter(), time.process_time()
            outcome = simulate(
                store, pid, "demo", standard=n, challenging=n, adversarial=args.adversarial, seed=seed
            )
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            sim = load_simulation_run(store, outcome.run.id)
            run_ids.append(outcome.run.id)
            task_oriented = sim.task_oriented
            for d in sim.dialogues:
                persona = sim.personas[d.user_name]
                (probing if persona.type == "adversarial" else clean).append(
                    (d, persona.model_dump(mode="json"))
                )
            rates = {}
            for kind in by_type:
                dialogues = [d for d in sim.dialogues if sim.personas[d.user_name].type == kind]
                by_type[kind] += dialogues
                rates[kind] = _rate(dialogues, task_oriented)
            print(
                f"seed {seed}: run {outcome.run.status.value} in {seconds:.1f} s wall, {cpu:.1f} s CPU (all "
                f"threads); breakdowns per target turn "
                f"standard {rates['standard']:.3f}, challenging {rates['challenging']:.3f}, adversarial "
                f"{rates['adversarial']:.3f} -> challenging "
                f"{'ahead' if rates['challenging'] > rates['standard'] else 'NOT ahead'}"
            )
        print(f"all seeds pooled (bot type task-oriented: {task_oriented}):")
        print(
            f"{'personas':<12}{'D':>4}{'ST/D':>7}{'|UT|':>7}{'D with B':>9}{'#B':>5}{'B/ST':>8}"
            f"{'unique B':>9}{'crash':>7}{'MTLD u':>9}{'MTLD st':>9}{'overall':>9}"
        )
        for kind, dialogues in by_type.items():
            if dialogues:
                print(_row(kind, dialogues, task_oriented))
        rates = {kind: _rate(dialogues, task_oriented) for kind, dialogues in by_type.items()}
        verdict = "more" if rates["challenging"] > rates["standard"] else "NOT more"
        print(
            f"breakdowns per target turn, pooled: standard {rates['standard']:.3f}, challenging "
            f"{rates['challenging']:.3f}, adversarial {rates['adversarial']:.3f} -> challenging personas "
            f"produce {verdict}"
        )

        _tables(store, run_ids)
        _fidelity(store, run_ids)
        if args.adversarial:
            _adversarial("sample", probing, task_oriented)
            retail = import_project(store, ROOT / "data" / "retail", "retail-adversarial").project_id
            seeds = args.seeds[:2]  # the second project: a check of the probes, not a table
            runs = [
                simulate(store, retail, "demo", adversarial=args.adversarial, seed=s).run.id for s in seeds
            ]
            loaded = [load_simulation_run(store, r) for r in runs]
            pairs = [(d, _persona(sim, d)) for sim in loaded for d in sim.dialogues]
            _adversarial("retail", pairs, loaded[0].task_oriented)
            _fidelity(store, runs, ("adversarial",))

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
    _user_faults(clean, args.seeds[0])
    _detector()


def _detector() -> None:
    """The offline breakdown detector: types covered, and its scores on two label sets."""
    from benchmarks.breakdown_detector import coverage, handwritten, published

    coverage()
    published()
    handwritten()


def _tables(store, run_ids: list[str]) -> None:
    """Seed 002's Tables 4 and 5 shaped: mean ± std over the seeds' runs, per persona type."""
    from evalcore.generators.simulation.run_tables import COLUMNS, runs_table

    table = runs_table(store, run_ids)
    print(f"Tables 4 and 5 shaped, mean ± std over {len(run_ids)} run(s) (a seed each):")
    print(f"{'personas':<13}" + "".join(f"{name:>15}" for name in COLUMNS.values()))
    for kind, cells in table.items():
        row = "".join(
            f"{f'{cells[k][0]:.3g} ± {cells[k][1]:.2g}' if k in cells else '-':>15}" for k in COLUMNS
        )
        print(f"{kind:<13}{row}")


def _fidelity(
    store, run_ids: list[str], kinds: tuple[str, ...] = ("standard", "challenging", "adversarial")
) -> None:
    """How far the offline simulated users were from their personas, per persona type over the runs."""
    import statistics

    from evalcore.generators.simulation.fidelity import fidelity_of

    rows = [row for run_id in run_ids for row in fidelity_of(store, run_id)[0]]
    print(f"simulated users against their personas ({len(rows)} personas over {len(run_ids)} runs):")
    for kind in kinds:
        mine = [r for r in rows if r.type == kind]
        if not mine:
            continue
        traits = sum(len(r.traits) for r in mine)
        lengths = [r.length_kept for r in mine if r.length_kept is not None]
        print(
            f"  {kind:<12} distance {statistics.fmean(r.distance for r in mine):.2f}, kind kept "
            f"{sum(r.type_kept for r in mine) / len(mine):.0%} (pushy turns "
            f"{statistics.fmean(r.challenging_share for r in mine):.0%}, probing turns "
            f"{statistics.fmean(r.probe_share for r in mine):.0%}), traits kept "
            f"{sum(r.traits_kept for r in mine) / traits if traits else float('nan'):.0%}, length as the "
            f"card {sum(lengths) / len(lengths) if lengths else float('nan'):.0%}, task words said "
            f"{statistics.fmean(r.goal_coverage for r in mine):.0%}"
        )


def _adversarial(project: str, cases: list[tuple], task_oriented: bool) -> None:
    """Adversarial personas' dialogues: how many users probed, breakdowns per target turn, and how many
    dialogues the fault check flags as the persona is (and would flag were it read as a standard one: what
    the check did before adversarial probes were the persona's part). The injection benchmark below is of
    the seed's two types; here one fault is made: each probing dialogue with its probes replaced by its
    user's opening turn, which the check must call too_cooperative."""
    from evalcore.generators.simulation.adversarial import is_probe
    from evalcore.generators.simulation.user_faults import UserFaultKind, detect_user_faults, fault_kinds
    from evalcore.models import TurnRole

    probed = sum(any(is_probe(t.content) for t in d.turns if t.role.value == "user") for d, _ in cases)
    flagged = [d for d, p in cases if detect_user_faults(d, p)]
    as_standard = [d for d, p in cases if detect_user_faults(d, {**p, "type": "standard"})]
    kinds: dict[str, int] = {}
    for d, p in cases:
        for fault in detect_user_faults(d, p):
            kinds[fault.kind.value] = kinds.get(fault.kind.value, 0) + 1
    print(
        f"adversarial personas, {project} project: {len(cases)} dialogues, {probed} with a probe; breakdowns "
        f"per target turn {_rate([d for d, _ in cases], task_oriented):.3f}; flagged as user_fault "
        f"{len(flagged)} "
        f"({', '.join(f'{k} {v}' for k, v in sorted(kinds.items())) or 'none'}), read as standard personas "
        f"{len(as_standard)}"
    )
    tamed = []
    for d, p in cases:
        users = [t for t in d.turns if t.role == TurnRole.user]
        if any(is_probe(t.content) for t in users) and len(users) >= 2:
            opening = users[0].content
            turns = [
                t.model_copy(update={"content": opening})
                if t.role == TurnRole.user and is_probe(t.content)
                else t
                for t in d.turns
            ]
            tamed.append((d.model_copy(update={"turns": turns}), p))
    caught = sum(UserFaultKind.too_cooperative in fault_kinds(detect_user_faults(d, p)) for d, p in tamed)
    print(
        f"  made cooperative (probes replaced by the opening turn): {caught} of {len(tamed)} too_cooperative"
    )


def _user_faults(clean: list[tuple], seed: int) -> None:
    """Recall and precision of `user_fault` per kind on injected faults mixed with the clean dialogues,
    and the share of the published ChatChecker run's dialogues flagged."""
    import random

    from benchmarks.user_fault_injection import inject
    from evalcore.generators.simulation.user_faults import UserFaultKind, detect_user_faults, fault_kinds

    published = _published()
    for _, dialogues in published:  # clean ones too: their bot asks questions to walk out on
        clean = clean + dialogues
    rng = random.Random(seed)
    cases = [(d, p, None) for d, p in clean]
    for kind in UserFaultKind:
        made: list[tuple] = []
        for _ in range(5):  # rounds over the clean dialogues until the kind has 20 (other turns each round)
            made += [(f, p, kind) for d, p in clean if (f := inject(d, p, kind, rng)) is not None]
            if len(made) >= 20:
                break
        cases += made
    found = [(fault_kinds(detect_user_faults(d, p)), kind) for d, p, kind in cases]
    if os.environ.get("EVALCORE_SHOW_FLAGGED"):  # why a clean dialogue was flagged, when tuning
        for d, p, kind in cases:
            if kind is None and (faults := detect_user_faults(d, p)):
                print(" ", [(f.kind.value, f.turn, f.reason) for f in faults])
    flagged_clean = sum(1 for kinds, kind in found if kind is None and kinds)
    print(
        f"user faults: {len(clean)} clean dialogues ({flagged_clean} flagged) and "
        f"{len(cases) - len(clean)} with one injected fault"
    )
    print(f"{'kind':<17}{'injected':>9}{'recall':>8}{'precision':>10}")
    for kind in UserFaultKind:
        injected = sum(1 for _, k in found if k == kind)
        hits = sum(1 for kinds, k in found if k == kind and kind in kinds)
        flagged = sum(1 for kinds, _ in found if kind in kinds)
        recall = hits / injected if injected else float("nan")
        precision = hits / flagged if flagged else float("nan")
        print(f"{kind.value:<17}{injected:>9}{recall:>8.2f}{precision:>10.2f}")
    _handwritten()
    if not published:
        print("no published ChatChecker run beside the repository: share flagged not measured")
        return
    print(f"published ChatChecker runs (every one in the reference folder, goal: at most {MAX_FLAGGED:.0%}):")
    for name, dialogues in published:
        flagged = [d.dialogue_id for d, p in dialogues if detect_user_faults(d, p)]
        share = len(flagged) / len(dialogues)
        verdict = "within" if share <= MAX_FLAGGED else "OVER"
        print(
            f"  {name}: {len(flagged)} of {len(dialogues)} clean dialogues flagged as user_fault "
            f"({share:.0%}, {verdict} the goal){': ' + ', '.join(flagged) if flagged else ''}"
        )


def _handwritten() -> None:
    """The check on dialogues written by hand (benchmarks/data/user_faults_handwritten.yaml), not injected."""
    import yaml

    from evalcore.generators.simulation.records import Dialogue, DialogueTurn, FinishReason
    from evalcore.generators.simulation.user_faults import detect_user_faults, fault_kinds
    from evalcore.models import TurnRole

    data = yaml.safe_load((ROOT / "benchmarks" / "data" / "user_faults_handwritten.yaml").read_text("utf-8"))
    expected = found = hits = clean = clean_flagged = 0
    for n, case in enumerate(data["dialogues"]):
        turns = [
            DialogueTurn(role=TurnRole.assistant if i % 2 == 0 else TurnRole.user, content=text)
            for i, text in enumerate(case["turns"])
        ]
        finish = FinishReason(case.get("finish", "chatbot_ended_chat"))
        dialogue = Dialogue(
            dialogue_id=f"hand_{n}", user_name=case["persona"], turns=turns, finish_reason=finish
        )
        kinds = {
            k.value for k in fault_kinds(detect_user_faults(dialogue, data["personas"][case["persona"]]))
        }
        wanted = set(case["expect"])
        expected, found, hits = expected + len(wanted), found + len(kinds), hits + len(kinds & wanted)
        if not wanted:
            clean, clean_flagged = clean + 1, clean_flagged + bool(kinds)
    print(
        f"hand-written: {len(data['dialogues'])} dialogues, {hits} of {expected} written faults found, "
        f"{found - hits} flagged that were not written; {clean_flagged} of {clean} clean ones flagged"
    )


def _persona(run, dialogue) -> dict | None:
    persona = run.personas.get(dialogue.user_name)
    return persona.model_dump(mode="json") if persona else None


def _published() -> list[tuple[str, list[tuple]]]:
    """Every published ChatChecker run in the reference folder beside the repository (runs/<bot>/<run>),
    and the release's lone example dialogue with its persona: (name, [(dialogue, persona), ...]) each."""
    from evalcore.generators.simulation.chatchecker import read_dialogue_file, read_run
    from evalcore.generators.simulation.personas import read_persona_files

    reference = next(
        (
            p / "shared" / "reference" / "chatchecker"
            for p in ROOT.parents
            if (p / "shared" / "reference").is_dir()
        ),
        None,
    )
    if reference is None:
        return []
    found = []
    for folder in sorted(p for p in (reference / "runs").glob("*/*") if p.is_dir()):
        run = read_run(folder)
        found.append(
            (f"run {folder.parent.name}/{folder.name}", [(d, _persona(run, d)) for d in run.dialogues])
        )
    example = reference / "example_dialogue.yaml"
    if example.is_file():
        dialogue = read_dialogue_file(example)
        persona_file = reference / f"{dialogue.user_name}.yaml"
        persona = (
            read_persona_files(persona_file)[0].model_dump(mode="json") if persona_file.is_file() else None
        )
        found.append((f"{example.name} (a challenging persona's dialogue)", [(dialogue, persona)]))
    return found


def _rate(dialogues: list, task_oriented: bool) -> float:
    from evalcore.generators.simulation import stats

    return stats.run_breakdown_stats(dialogues, task_oriented)["breakdowns_per_chatbot_turn"] or 0.0


if __name__ == "__main__":
    main()
