"""The team-scale store the dashboard benchmarks run on (issues 15 and 28): a project folder imported, then
grown to 5,000 specs, 2,000 conversations and 100,000 judgments out of real pipeline output, multiplied.

Offline spec generation, then copies of those specs (each a new spec, its scenario numbered) up to the
number asked; the latest selection (k = 30); offline doc-QA conversations of the selected specs, then
copies spread over other specs, 10% of them annotated; one offline run of the demo target, then runs whose
judgments copy its turns over every conversation; then the diversity map job as a worker runs it (UMAP of
every spec, about a minute). Copies go in through the store's tables in batches, not one generator call
each, so the store builds in about two minutes. Used by benchmarks/dashboard.py (AppTest renders) and
benchmarks/browser.py (headless Chromium).
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa

from evalcore.store import Store
from evalcore.store import schema as t

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample"
BATCH = 2000


class Clock:
    """Wall and CPU seconds of a block (CPU: this process, every thread)."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *_: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def step(label: str, action: Callable[[], object]) -> object:
    """Run `action`, print its wall and CPU time under `label`, return its result."""
    with Clock() as clock:
        result = action()
    print(f"   {label:<58} {clock.wall:6.1f} s wall {clock.cpu:6.1f} s cpu", flush=True)
    return result


def copy_specs(store: Store, project: str, n: int) -> None:
    """Copies of the generated specs (each a new spec, scenario numbered) until the project has n."""
    from evalcore.specs.drafts import SpecDraft
    from evalcore.specs.store_ops import add_specs, list_specs

    views = list_specs(store, project)
    drafts = []
    for i in range(n - len(views)):
        spec = views[i % len(views)].spec
        drafts.append(SpecDraft(scenario=f"{spec.scenario} (copy {i // len(views) + 1})", given=spec.given,
                                when=spec.when, then=spec.then, category=spec.category,
                                documents=spec.documents))  # fmt: skip
    provenance = views[0].spec.provenance
    for start in range(0, len(drafts), BATCH):
        with store.write() as conn:
            add_specs(store, project, drafts[start : start + BATCH], provenance, conn=conn)


def copy_conversations(store: Store, project: str, n: int, seed: int = 0) -> list[str]:
    """Copies of the generated conversations, each given to another spec, until the project has n; 10%
    of all of them annotated (accepted or rejected). Returns every conversation id."""
    from evalcore.items.state import refresh_states
    from evalcore.items.store_ops import list_conversations
    from evalcore.models import Annotation
    from evalcore.specs.store_ops import list_specs

    rng = random.Random(seed)
    originals = [v.conversation for v in list_conversations(store, project)]
    spec_ids = [v.spec.id for v in list_specs(store, project)]
    ids = [c.id for c in originals]
    with store.write() as conn:
        for i in range(n - len(originals)):
            body = originals[i % len(originals)].model_dump(mode="json")
            new_id = f"{body['id']}-copy{i}"
            spec_id = spec_ids[(7 * i) % len(spec_ids)]
            store.add_item(project, "conversation", {**body, "id": new_id, "spec_id": spec_id}, "offline",
                           item_id=new_id, generator=body.get("generator") or "doc_qa", spec_id=spec_id,
                           conn=conn)  # fmt: skip
            ids.append(new_id)
        for cid in ids[::10]:
            label = "accept" if rng.random() < 0.7 else "reject"
            verdict = Annotation(item_kind="conversation", item_id=cid, label=label, author="ann")
            store.annotate(cid, [verdict], "ann", 1, conn=conn)
    refresh_states(store, project)
    return ids


def copy_runs(store: Store, project: str, template_run: str, conversations: list[str], n: int) -> None:
    """Runs whose judgments copy the template run's turns over every conversation, until the store holds
    n judgments: each run a finished run of the demo target with its units recorded (its progress)."""
    from evalcore.models import Run, RunStatus
    from evalcore.models.common import now_utc

    j, u = t.judgments, t.run_units
    with store.read() as conn:
        turns = [dict(r._mapping) for r in conn.execute(sa.select(j).where(j.c.run_id == template_run))]
        have = conn.scalar(sa.select(sa.func.count()).select_from(j))
    template = store.run(template_run)
    by_conversation: dict[str, list[dict]] = {}
    for turn in turns:
        by_conversation.setdefault(turn["conversation_id"], []).append(turn)
    shapes = list(by_conversation.values())
    per_run = len(conversations) * statistics.mean(len(s) for s in shapes)
    runs = max(1, round((n - have) / per_run))
    stamp = now_utc()
    left = n - have
    for r in range(runs):
        run_id = f"run-bench-{r + 1}"
        keys = []
        rows, units = [], []
        for c, cid in enumerate(conversations):
            for turn in shapes[(c + r) % len(shapes)]:
                if left <= 0:
                    break
                left -= 1
                key = f"{cid}#{turn['turn_index']}"
                keys.append(cid)
                rows.append({**{k: v for k, v in turn.items() if k != "id"}, "run_id": run_id,
                             "conversation_id": cid, "created_at": stamp})  # fmt: skip
                result = {"score": turn["score"]}
                units.append({"run_id": run_id, "unit_key": key, "status": "done", "result": result,
                              "error": None, "finished_at": stamp})  # fmt: skip
        params = {**template.params, "items": list(dict.fromkeys(keys)), "total_turns": len(rows),
                  "progress_total": len(rows)}  # fmt: skip
        run = Run(id=run_id, kind=template.kind, target=template.target, judge=template.judge, params=params,
                  code_version=template.code_version)  # fmt: skip
        store.start_run(project, run)
        with store.write() as conn:
            for start in range(0, len(rows), BATCH):
                conn.execute(sa.insert(j), rows[start : start + BATCH])
                conn.execute(sa.insert(u), units[start : start + BATCH])
        store.finish_run(run_id, RunStatus.finished)


def build_store(
    url: str, folder: Path = SAMPLE, specs: int = 5000, conversations: int = 2000, judgments: int = 100_000
) -> tuple[Store, str]:
    """A store at `url` holding the project `folder` at the given scale (see the module docstring), and the
    project's id."""
    from evalcore.generators.doc_qa.job import generate_conversations
    from evalcore.inputs import import_project
    from evalcore.runs import create_run, execute_run
    from evalcore.specs.generation import generate_specs
    from evalcore.specs.selecting import select_specs
    from evalcore.specs.spec_map import compute_map, start_map

    os.environ["EVALCORE_OFFLINE"] = "1"
    store = Store(url)
    print(f"1. building the store: {specs:,} specs, {conversations:,} conversations, {judgments:,} judgments")
    project = step(f"import {folder}", lambda: import_project(store, folder)).project_id
    step("generate 200 specs offline", lambda: generate_specs(store, project, min(200, specs)))
    step(f"copy specs up to {specs:,}", lambda: copy_specs(store, project, specs))
    step("select 30 (greedy, embeddings of every spec)", lambda: select_specs(store, project, min(30, specs)))
    step("generate doc-QA conversations offline (2 per selected spec)",
         lambda: generate_conversations(store, project, specs="selected", per_spec=2, turns=7,
                                        d=[2, 3, 5]))  # fmt: skip
    ids = step(f"copy conversations up to {conversations:,}, annotate 10%",
               lambda: copy_conversations(store, project, conversations))  # fmt: skip
    run = create_run(store, project, "demo", judge="offline", limit=60)
    step("one offline run of the demo target (60 conversations)", lambda: execute_run(store, run.id))
    step(f"copy runs up to {judgments:,} judgments",
         lambda: copy_runs(store, project, run.id, ids, judgments))  # fmt: skip
    step("the diversity map job as a worker runs it (UMAP)",
         lambda: compute_map(store, start_map(store, project).id))  # fmt: skip
    return store, project


def store_in(folder: Path, project: Path = SAMPLE, **scale: int) -> tuple[str, str]:
    """The URL of the team-scale store `folder`/dashboard.db, built there from the project folder `project`
    unless it exists already (then reused as it is), and the id of the project it holds."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder.resolve() / "dashboard.db"
    url = f"sqlite:///{path}"
    if not path.exists():
        store, project_id = build_store(url, project, **scale)
    else:
        print(f"1. reusing the store {url}")
        store = Store(url)
        project_id = store.projects()[0].id
    store.close()
    os.environ.pop("EVALCORE_OFFLINE", None)
    return url, project_id
