"""Generating candidate specs (seed 000, Section 3.1): m drafts in batches, one job unit per batch.

Each unit asks for `batch` specs with one scenario focus over a few focused documents; the focuses
rotate so the pool is varied before selection. Every finished unit is committed with its specs, so a
stopped or crashed job resumes from the next unit and never pays for a finished call twice (the model
layer's cache covers the rest). Units are claimed (evalcore.jobs), so two processes on one run never
generate the same batch. Each spec's documents D_s are those retrieval finds for its text, plus the ones
the generator cited.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evalcore import __version__, jobs
from evalcore.documents.retrieval import build_index
from evalcore.llm.client import ModelClient
from evalcore.llm.tasks import Task
from evalcore.models import Document, Provenance, Run
from evalcore.specs.drafts import CATEGORIES, SpecDraft, SpecDrafts
from evalcore.specs.offline import offline_specs
from evalcore.specs.store_ops import add_specs, list_specs
from evalcore.store import Store
from evalcore.store.store import new_id

GENERATE_SPECS = Task(
    "generate_specs", SpecDrafts, offline_specs, prompt="generate_specs.md", temperature=0.7, max_tokens=3000
)
RUN_KIND = "specs.generate"
HISTORY_LIMIT = 60


@dataclass(frozen=True)
class GenerationOutcome:
    """What a generation job did."""

    run: Run
    added: int
    failed: list[str]
    skipped: int


def _document_input(doc: Document) -> dict[str, Any]:
    if doc.kind.value == "table":
        return {
            "id": doc.id,
            "kind": "table",
            "title": doc.title,
            "columns": doc.columns,
            "rows": doc.rows[:25],
        }
    return {"id": doc.id, "kind": doc.kind.value, "title": doc.title, "text": doc.text}


def plan_units(documents: list[Document], m: int, batch: int, seed: int) -> list[dict[str, Any]]:
    """The job's units: for each batch, its focus and focused documents (deterministic per seed)."""
    rng = random.Random(seed)
    units = []
    for i in range((m + batch - 1) // batch):
        focus = CATEGORIES[i % len(CATEGORIES)]
        pool = [d for d in documents if d.kind.value != "table"] if focus == "policy" else documents
        policy_first = sorted(pool, key=lambda d: (d.kind.value != "policy", rng.random()))
        chosen = policy_first[:3] if focus == "policy" else rng.sample(pool, k=min(len(pool), 3))
        units.append(
            {"key": f"batch-{i:04d}", "focus": focus, "documents": [d.id for d in chosen], "count": batch}
        )
    return units


def _system_description(store: Store, project_id: str) -> tuple[str, dict[str, Any]]:
    card = store.system_card(project_id)
    if card is None:
        return store.project(project_id).title, {}
    info = card.chatbot_info
    text = f"{info.name}: {info.description}\nTask: {info.task}"
    return text, card.model_dump(mode="json")


def generate_specs(
    store: Store,
    project_id: str,
    m: int = 60,
    *,
    batch: int = 5,
    seed: int = 0,
    docs_per_spec: int = 3,
    run_id: str | None = None,
    budget: dict[str, float] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    model: str | None = None,
    retry_failed: bool = False,
) -> GenerationOutcome:
    """Generate about `m` candidate specs (or resume run `run_id` with its own parameters).

    A job (evalcore.jobs): each unit is claimed, then committed with its specs. `retry_failed` gives the
    failed units of the resumed run back to be generated again (their unparseable replies are not replayed).
    """
    if run_id:
        run = store.run(run_id)
        params = run.params
    else:
        params = {"m": m, "batch": batch, "seed": seed, "docs_per_spec": docs_per_spec, "model": model,
                  **jobs.entry_point(resume_generation)}  # fmt: skip
        run = Run(
            id=new_id("run"), kind=RUN_KIND, params=params, budget=budget or {}, code_version=__version__
        )
    run = store.start_run(project_id, run)
    if retry_failed:
        jobs.retry_failed(store, run.id)
    documents = store.documents(project_id)
    by_id = {d.id: d for d in documents}
    description, card = _system_description(store, project_id)
    units = {u["key"]: u for u in plan_units(documents, params["m"], params["batch"], params["seed"])}
    if "history" not in params:
        params["history"] = [v.spec.scenario for v in list_specs(store, project_id)][-HISTORY_LIMIT:]
        store.update_run_params(run.id, {"history": params["history"]})
    common = {
        "system_description": description,
        "card": card,
        "documents_summary": [{"id": d.id, "kind": d.kind.value, "title": d.title} for d in documents],
        "tools": [t.model_dump(mode="json") for t in store.tools(project_id)],
        "history": params["history"],
    }
    llm = ModelClient(store, project_id, run_id=run.id)
    llm.registry.resolve("generator", params.get("model"))  # a configuration error fails before any call
    index = build_index(documents)
    added: list[str] = []
    seen = {v.spec.scenario.strip().lower() for v in list_specs(store, project_id)}
    dedupe = threading.Lock()  # units commit from several threads; one scenario is kept once

    def work(claim: jobs.Claim) -> None:
        unit = units[claim.key]
        inputs = {
            **common,
            "focus": unit["focus"],
            "count": unit["count"],
            "documents": [_document_input(by_id[i]) for i in unit["documents"] if i in by_id],
        }
        result = llm.run_task(GENERATE_SPECS, inputs, role="generator", model=params.get("model"),
                              seed=params["seed"])  # fmt: skip
        if result.status == "stopped":
            raise jobs.UnitStopped(result.error or "budget")  # not done: a resume with more budget does it
        with dedupe, claim.commit() as writer:
            if result.status != "ok" or result.output is None:
                writer.fail(result.error or "no output", {"raw": result.raw})
                return
            fresh = []
            for draft in result.output.specs:
                if draft.scenario.strip().lower() not in seen:
                    seen.add(draft.scenario.strip().lower())
                    fresh.append(_with_documents(draft, index, by_id, params["docs_per_spec"]))
            provenance = Provenance(
                producer=result.model or "offline",
                provider=result.provider or "offline",
                task=GENERATE_SPECS.name,
                prompt_version=result.prompt_version,
                inputs=unit["documents"],
                seed=params["seed"],
                run_id=run.id,
            )
            ids = add_specs(store, project_id, fresh, provenance, conn=writer.conn)
            duplicates = len(result.output.specs) - len(fresh)
            writer.result = {"specs": ids, "duplicates": duplicates, "cache_hit": result.cache_hit}
        added.extend(ids)

    report = jobs.run_units(
        store, run.id, list(units), work, concurrency=llm.concurrency, on_progress=on_progress
    )
    return GenerationOutcome(report.run, len(added), report.failed, report.skipped)


def resume_generation(store: Store, run_id: str) -> GenerationOutcome:
    """Resume a generation run with its own parameters (what a worker process calls)."""
    return generate_specs(store, store.run_project(run_id), run_id=run_id)


def _with_documents(draft: SpecDraft, index, by_id: dict[str, Document], k: int) -> SpecDraft:
    """D_s: the documents retrieval finds for the spec's text, then those the generator cited."""
    query = " ".join([draft.scenario, draft.given, draft.when, draft.then])
    retrieved = index.retrieve_documents(query, k=k)
    cited = [d for d in draft.documents if d in by_id]
    return draft.model_copy(update={"documents": list(dict.fromkeys(retrieved + cited))})


def latest_generation(store: Store, project_id: str) -> Run | None:
    """The newest spec-generation run of a project, if any (a page offers to resume it when stopped)."""
    runs = store.runs(project_id, kind=RUN_KIND)
    return runs[0] if runs else None
