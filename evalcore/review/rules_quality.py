"""The offline breakdown rules scored against the same human labels as a run's detector (issue 31: "the
detector scored against human labels wherever annotators labelled turns"): the turns annotators labelled,
judged again by the rules (generators/simulation/breakdown_rules) instead of by the run's own detector,
so a lead sees what the rules are worth beside the model that annotated the run.
"""

from __future__ import annotations

from dataclasses import replace

from evalcore.generators.simulation.breakdown_rules import judge_turn
from evalcore.generators.simulation.chatchecker import RUN_INFO
from evalcore.generators.simulation.store_ops import load_simulation_run
from evalcore.review.detector_quality import DetectorQuality, labelled_turns, score_detector
from evalcore.store import Store


def _info_text(info: object) -> str:
    """The chatbot info as the rules read it (what the bot is for)."""
    return "\n".join(f"{k}: {v}" for k, v in info.items() if v) if isinstance(info, dict) else ""


def rules_quality(store: Store, run_id: str) -> DetectorQuality:
    """The offline rules scored on the run's human-labelled target turns."""
    sim = load_simulation_run(store, run_id)
    params = sim.run.params
    files = params.get("files") or {}
    info = params.get("chatbot_info") or files.get(RUN_INFO, {}).get("chatbot_info")
    domain = _info_text(info)
    by_id = {d.dialogue_id: d for d in sim.dialogues}
    turns = [
        replace(t, detector=judge_turn(by_id[t.dialogue_id], t.turn_index, sim.task_oriented, domain))
        for t in labelled_turns(store, run_id)
        if t.dialogue_id in by_id
    ]
    return score_detector(run_id, turns)
