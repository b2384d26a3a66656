"""Generating candidate specs (seed 000, Section 3.1): m drafts, one job unit per model call.

By default each unit asks for one spec with seed 000's own prompt (Appendix A.6, task `generate_spec`: its
15 quality criteria, placeholders for names, places and numbers, its example scenario), as the seed
does; `batch` > 1 asks for that many per call with our prompt instead (task `generate_specs`: m/batch
calls, and the business's own facts kept exact rather than made placeholders). Either way a unit has one
scenario focus over a few focused documents; the focuses rotate so the pool is varied before selection.
Every finished unit is committed with its specs, so a stopped or crashed job resumes from the next unit
and never pays for a finished call twice (the model layer's cache covers the rest). Units are claimed
(evalcore.jobs), so two processes on one run never generate the same batch. Each call is told the specs
the project had when the job started (`history`), not those of the calls before it as in the seed: the
units are then independent, so they run in parallel, resume and replay from the cache alike; a draft
repeating a spec of this run is dropped when it is committed.

Each spec's documents D_s are the ones it is about: those the generator cited. Only a spec that cites
none (a tool, a limitation, a card behaviour) gets documents from retrieval, and then only those that
match its text nearly as well as the best one and clear an absolute bar (`ABSOLUTE_SHARE` of its words,
weighted by rarity, found in the document), so the number varies with the spec and may be none; the
job's warnings say how many got none. (The seed does not say how D_s is filled; padding every spec to a
fixed number made Coverage count documents no spec was about.)

Our extension of Section 3.1: before the batches, one unit turns every expected behaviour of the system
card (`behaviors`) and every procedure into a spec (task `specs_from_card`, categories "card behaviour"
and "procedure"); they count towards m. A draft that repeats an earlier spec's title, or its words in
another order (a near-duplicate), is not added; so is a lookup on one table that asks the same columns
as an earlier one of another row (`row_lookup_key`: "Daily rate and deposit of the Voltra Metro E8 at the
Harbor Point store" after the same of the Ridgeline Sprout 20), which a QA analyst tests once and whose
conversations would ask the same few facts of the table. A batch that adds fewer than half the specs it
asked for is dry; after `EXHAUSTED_AFTER` dry batches in a row the job stops and says the corpus gave no
more new specs, instead of working on through batches of near-duplicates. Whenever the job ends short of
m, its warnings say "N of m requested" and why.
"""

from __future__ import annotations

import math
import random
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evalcore import jobs
from evalcore.documents.naming import code_names
from evalcore.documents.retrieval import PassageIndex, build_index, tokenize
from evalcore.errors import EvalcoreError
from evalcore.llm.client import ModelClient
from evalcore.llm.tasks import Task
from evalcore.models import Document, Provenance, Run, Spec
from evalcore.specs.drafts import CATEGORIES, SpecDraft, SpecDrafts
from evalcore.specs.fallback import SemanticFallback
from evalcore.specs.offline import offline_card_specs, offline_specs
from evalcore.specs.store_ops import add_specs, list_specs
from evalcore.store import Store

GENERATE_SPEC = Task(
    "generate_spec", SpecDrafts, offline_specs, prompt="generate_spec.md", temperature=0.7, max_tokens=1000
)  # the seed's prompt, one spec per call (the default)
GENERATE_SPECS = Task(
    "generate_specs", SpecDrafts, offline_specs, prompt="generate_specs.md", temperature=0.7, max_tokens=3000
)  # our prompt, `batch` specs per call
# Specs per call by default: one, with the seed's prompt.
DEFAULT_BATCH = 1
SPECS_FROM_CARD = Task(
    "specs_from_card", SpecDrafts, offline_card_specs, prompt="specs_from_card.md", temperature=0.3,
    max_tokens=4000,
)  # fmt: skip
RUN_KIND = "specs.generate"
HISTORY_LIMIT = 60
CARD_UNIT = "card"
# One empty batch may be bad luck in its documents; two rounds of every focus in a row without one new
# spec mean the documents and tools have given what they can.
EXHAUSTED_AFTER = 2 * len(CATEGORIES)
# A spec that cites no document gets those whose best passage scores at least this share of the best
# document's (BM25): documents about the same thing, not the next-best filler.
RELATIVE_SCORE = 0.7
# ... and only those holding at least this share of the spec's words, each weighted by its rarity (idf):
# a document that shares only common words ("customer", "language") with the spec is not about it.
ABSOLUTE_SHARE = 0.35
# Words every spec uses, whatever it is about: they say nothing of the documents.
_SPEC_WORDS = {"assistant", "customer", "should", "ask", "asks", "they", "who", "wanted", "request", "say",
               "tell", "them", "question", "push", "declines", "directly", "first-time", "returning", "hurry",
               "frustrated", "comparing", "options", "family", "member", "shopping"}  # fmt: skip


@dataclass(frozen=True)
class GenerationOutcome:
    """What a generation job did."""

    run: Run
    added: int
    failed: list[str]
    skipped: int
    duplicates: int = 0  # drafts dropped because an earlier spec has the same scenario
    exhausted: bool = False  # stopped because the batches gave no new spec
    short: str = ""  # "N of M requested ..." when the job ended short of m


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


def plan_units(
    documents: list[Document], m: int, batch: int, seed: int, from_card: int = 0
) -> list[dict[str, Any]]:
    """The job's units: the card unit when the card or procedures give `from_card` specs, then for each
    batch of the remaining m, its focus and focused documents (deterministic per seed)."""
    rng = random.Random(seed)
    units: list[dict[str, Any]] = [{"key": CARD_UNIT, "count": from_card}] if from_card else []
    rest = max(0, m - from_card)
    for i in range((rest + batch - 1) // batch):
        focus = CATEGORIES[i % len(CATEGORIES)]
        pool = [d for d in documents if d.kind.value != "table"] if focus == "policy" else documents
        policy_first = sorted(pool, key=lambda d: (d.kind.value != "policy", rng.random()))
        chosen = policy_first[:3] if focus == "policy" else rng.sample(pool, k=min(len(pool), 3))
        units.append(
            {
                "key": f"batch-{i:04d}",
                "focus": focus,
                "documents": [d.id for d in chosen],
                "count": min(batch, rest - i * batch),
            }
        )
    return units


def spec_task(batch: int) -> Task[SpecDrafts]:
    """The task a generation unit runs: the seed's one-spec prompt, or ours when `batch` > 1."""
    return GENERATE_SPEC if batch == 1 else GENERATE_SPECS


def _system_description(store: Store, project_id: str) -> tuple[str, dict[str, Any]]:
    card = store.system_card(project_id)
    if card is None:
        return store.project(project_id).title, {}
    info = card.chatbot_info
    text = f"{info.name}: {info.description}\nTask: {info.task}"
    return text, card.model_dump(mode="json")


# How many candidates by default, on the page and in the CLI alike: with k = DEFAULT_K selected, the
# greedy selection has twice as many to choose from (seed 000 samples m candidates, then selects k).
DEFAULT_CANDIDATES = 60


def create_generation(
    store: Store,
    project_id: str,
    m: int = DEFAULT_CANDIDATES,
    *,
    batch: int = DEFAULT_BATCH,
    seed: int = 0,
    docs_per_spec: int = 3,
    budget: dict[str, float] | None = None,
    model: str | None = None,
    from_card: bool = True,
    semantic_fallback: bool = False,
) -> Run:
    """Record a new generation run with its parameters, pending: `generate_specs` runs it here, or a
    worker once it is queued (`jobs.queue.enqueue`). The parameters are those of `generate_specs`."""
    for name, value in (("m", m), ("batch", batch), ("docs_per_spec", docs_per_spec)):
        if value < 1:
            raise EvalcoreError(f"spec generation: {name} must be at least 1 (got {value})")
    params = {"m": m, "batch": batch, "seed": seed, "docs_per_spec": docs_per_spec, "model": model,
              "with_card": from_card, "semantic_fallback": semantic_fallback}  # fmt: skip
    return jobs.create(store, project_id, RUN_KIND, params, entry=resume_generation, budget=budget)


def generate_specs(
    store: Store,
    project_id: str,
    m: int = DEFAULT_CANDIDATES,
    *,
    batch: int = DEFAULT_BATCH,
    seed: int = 0,
    docs_per_spec: int = 3,
    run_id: str | None = None,
    budget: dict[str, float] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    model: str | None = None,
    retry_failed: bool = False,
    from_card: bool = True,
    semantic_fallback: bool = False,
) -> GenerationOutcome:
    """Generate about `m` candidate specs (or resume run `run_id` with its own parameters).

    A job (evalcore.jobs): each unit is claimed, then committed with its specs. `retry_failed` gives the
    failed units of the resumed run back to be generated again (their unparseable replies are not replayed).
    `from_card=False` leaves out the specs of the card's behaviours and the procedures (a pool from the
    documents and tools only). `semantic_fallback` gives a spec citing no document also the documents its
    embedding singles out (`fallback.py`), beside BM25's.
    """
    if run_id:
        run = store.run(run_id)
    else:
        run = create_generation(store, project_id, m, batch=batch, seed=seed, docs_per_spec=docs_per_spec,
                                budget=budget, model=model, from_card=from_card,
                                semantic_fallback=semantic_fallback)  # fmt: skip
    params = run.params
    run = store.start_run(project_id, run)
    if retry_failed:
        jobs.retry_failed(store, run.id)
    job = _Generation.start(store, project_id, run, params)
    report = jobs.run_units(
        store, run.id, list(job.units), job.work, concurrency=job.llm.concurrency, on_progress=on_progress
    )
    return job.outcome(report)


@dataclass
class _Generation:
    """One start of a generation job: its units and their inputs, and what the units found so far.

    `start` plans the units and fixes, at the first start, the parameters a resume must see the same
    (`from_card`, `history`); `work` does one unit; `outcome` says what the job did."""

    store: Store
    project_id: str
    run: Run
    params: dict[str, Any]
    units: dict[str, dict[str, Any]]
    by_id: dict[str, Document]
    common: dict[str, Any]  # the inputs of every batch
    card_inputs: dict[str, Any]  # the inputs of the card unit
    procedures: list[dict[str, Any]]
    llm: ModelClient
    relevance: _Relevance
    semantic: SemanticFallback
    seen: _Seen
    added: list[str] = field(default_factory=list)
    # units commit from several threads; one scenario is kept once
    dedupe: threading.Lock = field(default_factory=threading.Lock)
    tally: dict[str, int] = field(
        default_factory=lambda: {"duplicates": 0, "empty_in_a_row": 0, "no_documents": 0}
    )

    @classmethod
    def start(cls, store: Store, project_id: str, run: Run, params: dict[str, Any]) -> _Generation:
        """Plan the units (fixing `from_card` and `history` in the run's parameters at the first start),
        gather their inputs, and read the specs the project has (new ones must differ from them)."""
        documents = store.documents(project_id)
        description, card = _system_description(store, project_id)
        behaviors = list(card.get("behaviors") or [])
        procedures = [p.model_dump(mode="json") for p in store.procedures(project_id)]
        if "from_card" not in params:  # fixed at the first start, so a resume plans the same units
            params["from_card"] = len(behaviors) + len(procedures) if params.get("with_card", True) else 0
            store.update_run_params(run.id, {"from_card": params["from_card"]})
        plan = plan_units(documents, params["m"], params["batch"], params["seed"], params["from_card"])
        if "history" not in params:
            params["history"] = [v.spec.scenario for v in list_specs(store, project_id)][-HISTORY_LIMIT:]
            store.update_run_params(run.id, {"history": params["history"]})
        common = _batch_inputs(store, project_id, documents, description, card, params["history"])
        card_inputs = {
            "system_description": description,
            "assistant_name": card.get("chatbot_info", {}).get("name", ""),
            "documents_summary": common["documents_summary"],
            "behaviors": behaviors,
            "procedures": procedures,
        }
        llm = ModelClient(store, project_id, run_id=run.id)
        llm.registry.resolve("generator", params.get("model"))  # a configuration error fails before any call
        relevance = _Relevance(build_index(documents))
        seen = _Seen.of([v.spec for v in list_specs(store, project_id)], documents)
        return cls(
            store, project_id, run, params, {u["key"]: u for u in plan}, {d.id: d for d in documents},
            common, card_inputs, procedures, llm, relevance,
            SemanticFallback(llm, documents if params.get("semantic_fallback") else []), seen,
        )  # fmt: skip

    def _request(self, key: str, unit: dict[str, Any]) -> tuple[Task[SpecDrafts], dict[str, Any], list[str]]:
        """The unit's task, its inputs, and what its specs are made from (their provenance's inputs)."""
        if key == CARD_UNIT:
            return SPECS_FROM_CARD, self.card_inputs, ["card", *(p["name"] for p in self.procedures)]
        inputs = {
            **self.common,
            "focus": unit["focus"],
            "count": unit["count"],
            "documents": [_document_input(self.by_id[i]) for i in unit["documents"] if i in self.by_id],
        }
        return spec_task(self.params["batch"]), inputs, unit["documents"]

    def work(self, claim: jobs.Claim) -> None:
        """One unit: its drafts, those new to the project committed as specs with their documents."""
        unit = self.units[claim.key]
        task, inputs, cited = self._request(claim.key, unit)
        params = self.params
        result = self.llm.run_task(task, inputs, "generator", model=params.get("model"), seed=params["seed"])
        if result.status == "stopped":
            raise jobs.UnitStopped(result.error or "budget")  # not done: a resume with more budget does it
        drafts: list[SpecDraft] = []
        if result.status == "ok" and result.output is not None:
            # the seed's prompt asks for one spec: a reply with more keeps the first
            drafts = result.output.specs[:1] if task is GENERATE_SPEC else result.output.specs
        # before the commit: the fallback's embeddings are cached by a write of their own
        placed = [
            _with_documents(draft, self.relevance, self.semantic, self.by_id, params["docs_per_spec"])
            for draft in drafts
        ]
        with self.dedupe, claim.commit() as writer:
            if result.status != "ok" or result.output is None:
                writer.fail(result.error or "no output", {"raw": result.raw})
                return
            fresh = [
                spec for draft, spec in zip(drafts, placed, strict=True) if self.seen.admit(draft, self.by_id)
            ]
            self.tally["no_documents"] += sum(not spec.documents for spec in fresh)
            provenance = Provenance(
                producer=result.model or "offline",
                provider=result.provider or "offline",
                task=task.name,
                prompt_version=result.prompt_version,
                inputs=cited,
                seed=params["seed"],
                run_id=self.run.id,
            )
            ids = add_specs(self.store, self.project_id, fresh, provenance, conn=writer.conn)
            duplicates = len(drafts) - len(fresh)
            writer.result = {"specs": ids, "duplicates": duplicates, "cache_hit": result.cache_hit}
            short = claim.key == CARD_UNIT and len(result.output.specs) < unit["count"]
            self.tally["duplicates"] += duplicates
            dry = claim.key != CARD_UNIT and 2 * len(fresh) < unit["count"]  # mostly (near-)duplicates
            self.tally["empty_in_a_row"] = self.tally["empty_in_a_row"] + 1 if dry else 0
            exhausted = self.tally["empty_in_a_row"] >= EXHAUSTED_AFTER
        self.added.extend(ids)
        if short:  # a model may merge or skip some; say so rather than let a behaviour go untested
            self.store.add_run_warning(
                self.run.id, f"{unit['count']} card behaviours and procedures gave only {len(ids)} specs"
            )
        if exhausted:  # after the commit: this unit is done, the job stops before the next
            raise jobs.UnitStopped(
                f"ran out of new specs: the last {EXHAUSTED_AFTER} model calls added mostly near-duplicates "
                f"of earlier specs ({len(self.seen.titles)} distinct specs in the project; add documents, "
                "tools or behaviours for more)"
            )

    def outcome(self, report: jobs.JobReport) -> GenerationOutcome:
        """What the job did, with a warning when it ended short of m or left specs without documents."""
        run_id, m = self.run.id, self.params["m"]
        exhausted = bool(report.stopped and report.stopped.startswith("ran out of new specs"))
        total = _run_specs(self.store, run_id)  # a resumed run counts the specs of its earlier starts too
        short = ""
        if total < m and (exhausted or report.run.status.value == "finished"):
            why = report.stopped if exhausted else (
                f"{self.tally['duplicates']} drafts repeated or nearly repeated earlier specs and were not "
                "added"
            )  # fmt: skip
            short = f"{total} of {m} requested specs generated: {why}"
            self.store.add_run_warning(run_id, short)
        if self.tally["no_documents"]:
            self.store.add_run_warning(
                run_id,
                f"{self.tally['no_documents']} spec(s) cite no document and no document is relevant enough "
                "to them (they keep none rather than unrelated ones)",
            )
        return GenerationOutcome(
            self.store.run(run_id), len(self.added), report.failed, report.skipped, self.tally["duplicates"],
            exhausted, short,
        )  # fmt: skip


def _batch_inputs(
    store: Store,
    project_id: str,
    documents: list[Document],
    description: str,
    card: dict[str, Any],
    history: list[str],
) -> dict[str, Any]:
    """The inputs every batch shares: the system, the documents' titles, the tools, the earlier specs."""
    card_info = card.get("chatbot_info", {})
    return {
        "system_description": description,
        "card": card,
        "documents_summary": [{"id": d.id, "kind": d.kind.value, "title": d.title} for d in documents],
        "tools": [t.model_dump(mode="json") for t in store.tools(project_id)],
        "history": history,
        # what a customer calls each code, so offline titles name a product rather than its SKU
        "names": code_names(
            documents, [card_info.get(k, "") for k in ("business", "name") if card_info.get(k)]
        ),
    }


@dataclass
class _Seen:
    """What the project's specs already say: titles, their words in any order, and table-row lookups
    (`row_lookup_key`); a draft repeating any of them is a (near-)duplicate."""

    titles: set[str]
    words: set[frozenset[str]]
    rows: set[tuple[str, frozenset[str]] | None]
    tables: set[str]

    @classmethod
    def of(cls, specs: list[Spec], documents: list[Document]) -> _Seen:
        """From the project's specs."""
        tables = {d.id for d in documents if d.kind.value == "table"}
        rows = {row_lookup_key(s.scenario, s.documents, tables) for s in specs} - {None}
        return cls(
            {s.scenario.strip().lower() for s in specs}, {near_key(s.scenario) for s in specs}, rows, tables
        )

    def admit(self, draft: SpecDraft, by_id: dict[str, Document]) -> bool:
        """True, and `draft` is remembered, when it repeats no earlier spec."""
        title, words = draft.scenario.strip().lower(), near_key(draft.scenario)
        row = row_lookup_key(draft.scenario, [d for d in draft.documents if d in by_id], self.tables)
        if title in self.titles or words in self.words or row in self.rows:
            return False
        self.titles.add(title)
        self.words.add(words)
        if row is not None:
            self.rows.add(row)
        return True


def resume_generation(store: Store, run_id: str) -> GenerationOutcome:
    """Resume a generation run with its own parameters (what a worker process calls)."""
    return generate_specs(store, store.run_project(run_id), run_id=run_id)


def near_key(scenario: str) -> frozenset[str]:
    """A title's words, order and case aside: two titles with the same key are near-duplicates
    ("Price and brand of X" and "Brand and price of X")."""
    return frozenset(
        w for w in re.findall(r"[\w$%.-]+", scenario.lower()) if w not in ("and", "of", "the", "a")
    )


def row_lookup_key(
    scenario: str, documents: list[str], tables: set[str]
) -> tuple[str, frozenset[str]] | None:
    """For a spec about one table only: the table and its title's words without names, codes and numbers
    (after the first word), else None. Two specs with one key ask the same columns of different rows."""
    if len(documents) != 1 or documents[0] not in tables:
        return None
    first, *rest = scenario.split()
    words = [first] + [w for w in rest if not re.match(r"[A-Z0-9$]", w)]
    return documents[0], near_key(" ".join(words))


def _run_specs(store: Store, run_id: str) -> int:
    """How many specs the run's finished units added."""
    units = store.finished_units(run_id).values()
    return sum(len((u.get("result") or {}).get("specs", [])) for u in units)


class _Relevance:
    """Which documents a spec's text is about: BM25 to rank them, then the share of the spec's words
    (weighted by idf over the passages) that the document holds, an absolute bar BM25 alone lacks."""

    def __init__(self, index: PassageIndex) -> None:
        self.index = index
        self.words: dict[str, set[str]] = {}
        for passage in index.passages:
            self.words.setdefault(passage.document_id, set()).update(tokenize(passage.indexed_text))
        n = max(1, len(index.passages))
        counts: dict[str, int] = {}
        for passage in index.passages:
            for word in set(tokenize(passage.indexed_text)):
                counts[word] = counts.get(word, 0) + 1
        self.idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in counts.items()}

    def share(self, document_id: str, query: str) -> float:
        """The idf-weighted share of the query's known words that the document holds."""
        terms = {t for t in tokenize(query) if t in self.idf and t not in _SPEC_WORDS}
        total = sum(self.idf[t] for t in terms)
        held = sum(self.idf[t] for t in terms if t in self.words.get(document_id, set()))
        return held / total if total else 0.0


def _with_documents(
    draft: SpecDraft, relevance: _Relevance, semantic: SemanticFallback, by_id: dict[str, Document], k: int
) -> SpecDraft:
    """D_s: the documents the generator cited; for a spec citing none, at most k: those BM25 finds about
    as relevant as the best one (RELATIVE_SCORE) and relevant in themselves (ABSOLUTE_SHARE), then those
    its embedding singles out (`fallback.SemanticFallback`); maybe none."""
    cited = [d for d in dict.fromkeys(draft.documents) if d in by_id]
    if cited:
        return draft.model_copy(update={"documents": cited})
    query = " ".join([draft.scenario, draft.given, draft.when, draft.then])
    scores = relevance.index.document_scores(query)[:k]
    found = [
        doc
        for doc, score in scores
        if score >= RELATIVE_SCORE * scores[0][1] and relevance.share(doc, query) >= ABSOLUTE_SHARE
    ]
    found += [doc for doc in semantic.documents(query, k) if doc not in found]
    return draft.model_copy(update={"documents": found[:k]})


def latest_generation(store: Store, project_id: str) -> Run | None:
    """The newest spec-generation run of a project, if any (a page offers to resume it when stopped)."""
    runs = store.runs(project_id, kind=RUN_KIND)
    return runs[0] if runs else None
