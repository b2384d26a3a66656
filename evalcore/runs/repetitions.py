"""Repetitions of one run (issue 27, item 3; `evalcore run --repeat N`): the same items played N times
against the same target, for pass^k as tau-bench defines it.

Each repetition is a run of its own (N linked runs, not N passes inside one run): every run keeps one
judgment per played turn, so the report, the results view and the compare read a repetition as any run,
a crashed repetition resumes on its own, and the compare pairs a repetition with a baseline item by item.
The runs are linked by `params["repetition"]`: the group (the first repetition's id), this run's index
from 1, and how many repetitions were asked for. The items are chosen once, for the first repetition, and
every later one plays exactly those.
"""

from __future__ import annotations

from typing import Any

from evalcore.errors import UsageError
from evalcore.models import Run
from evalcore.runs.job import create_run
from evalcore.store import Store

REPETITION_KEY = "repetition"


def create_repetitions(store: Store, project_id: str, target: str, repeat: int, **options: Any) -> list[Run]:
    """Record `repeat` linked runs of the same items (options as for `create_run`); names end in ' #i'."""
    if repeat < 1:
        raise UsageError(f"--repeat takes a number of repetitions of at least 1, got {repeat}")
    name = options.pop("name", None)
    first = create_run(store, project_id, target, **options, name=name)
    if repeat == 1:
        return [first]
    base_name = first.params["name"]
    runs = [first]
    for _ in range(2, repeat + 1):
        runs.append(create_run(store, project_id, target, **{**options, "keys": first.params["items"]}))
    # Linked after they are recorded: a run's record is made in one place (create_run), its name and link
    # are parameters like any other; no worker plays a run before this command starts it.
    for index, run in enumerate(runs, start=1):
        link = {"group": first.id, "index": index, "of": repeat}
        store.update_run_params(run.id, {"name": f"{base_name} #{index}", REPETITION_KEY: link})
    return [store.run(r.id) for r in runs]


def repetitions_of(store: Store, run: Run) -> list[Run]:
    """Every repetition of the run's group, by index (the run alone when it was not repeated)."""
    link = run.params.get(REPETITION_KEY)
    if not link:
        return [run]
    group = [
        r
        for r in store.runs(run.params["project_id"], kind=run.kind)
        if (r.params.get(REPETITION_KEY) or {}).get("group") == link["group"]
    ]
    return sorted(group, key=lambda r: r.params[REPETITION_KEY]["index"])
