"""The doc-QA generation job: specs -> retrieval -> document graph -> chains -> conversations -> verification.

A run (kind `conversations.doc_qa`) records its parameters and, on its first start, its plan: for every
spec the retrieved documents, the chains and one unit per (spec, conversation index) with its chain. Each
unit generates one conversation, verifies it, and commits it together with the unit's done mark, so a
stopped, killed or crashed job resumes (`run_id=...`) with the units left and never regenerates a
finished conversation; model calls are cached, so even an interrupted unit costs nothing twice. It is a
job of evalcore.jobs: units are claimed before they are worked, so two processes never generate the same
conversation; its progress and stop request are that package's (`jobs.progress`, `jobs.request_stop`).

Chains (`chains="graph"`, the default: seed 000, Algorithm 2, spec-first) start at one of the spec's own
documents D_s and run d documents through the document graph over the documents retrieved for it (the
seed's D_t), else through the whole graph; a chain shorter than d (the graph allows no longer one from
the spec's documents) gets a message. With `chains="spec"` (our earlier behaviour) chains stay within
the spec's own documents: a spec about fewer than d documents gets shorter chains and a message; with
either, a spec whose documents are policies only gets chains
with policies as graph nodes (our extension; the run says so). A spec citing no document (a card
behaviour or tool spec no document is relevant enough to, see evalcore.specs.generation) is skipped with a
message: its conversations could only be grounded in documents it is not about, so they would not test it;
with `leave_spec` (the seed's behaviour) it takes its chains from retrieval and a message says they left
it. A spec with no chain at all gets a message and no units. The messages are the run's warnings. Stop
requests (`request_stop`) are honoured between units.

Specs are about one or two documents, and several may share one (a table, a guide): the plan gives each
conversation the facts of its documents that fewest earlier conversations of the run were given (`fresh`,
which the offline generator asks first), and plans a spec's second and later conversations only while
their chain holds a fact no earlier conversation was given (a message says how many it planned), so
conversations across specs do not re-ask the same facts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalcore import jobs
from evalcore.documents.chains import chains_for_spec
from evalcore.documents.facts import Fact, document_facts, relevance
from evalcore.documents.graph import graph_stats
from evalcore.documents.naming import code_names
from evalcore.documents.retrieval import PassageIndex, build_index, tokenize
from evalcore.errors import EvalcoreError
from evalcore.generators.doc_qa.generate import (
    GENERATE_CONVERSATION,
    GENERATOR,
    conversation_inputs,
    document_input,
    to_conversation,
)
from evalcore.generators.doc_qa.graph_build import build_document_graph
from evalcore.generators.doc_qa.retrieval_per_spec import DEFAULT_K, retrieve_for_spec
from evalcore.generators.doc_qa.specs import system_description
from evalcore.generators.doc_qa.subject import spec_subject
from evalcore.generators.doc_qa.verify import verify_conversation
from evalcore.items.store_ops import add_conversation
from evalcore.llm import ModelClient, TaskResult, choose_judge
from evalcore.llm.registry import OFFLINE_MODEL
from evalcore.models import Document, Run, Spec
from evalcore.models.common import content_hash
from evalcore.specs.choice import choose_specs
from evalcore.store import Store
from evalcore.store.store import new_id

RUN_KIND = "conversations.doc_qa"
CHAIN_MODES = ("graph", "spec")  # see `start_run`
ASKED_SHOWN = 200  # earlier questions a conversation is told of (its chain's documents'): bounds the prompt


@dataclass
class DocQAOutcome:
    """What one call of the job did."""

    run: Run
    added: int = 0
    failed: list[str] = field(default_factory=list)  # unit keys kept as failed, with their errors
    skipped: int = 0  # units already finished before this call
    total: int = 0
    messages: list[str] = field(default_factory=list)  # per-spec messages (short chains, no documents)
    stopped: str | None = None  # why the job stopped before the end, if it did
    left_out: int = 0  # conversations not kept by this call: they could only repeat the run's questions


def chain_lengths(d: int | Sequence[int]) -> list[int]:
    """The chain lengths of a run: one d, or several (e.g. [2, 3, 4]) that a spec's conversations cycle
    through, so failure rates can be read by number of documents (seed 000, Table 11)."""
    lengths = [d] if isinstance(d, int) else list(dict.fromkeys(int(x) for x in d))
    if not lengths or min(lengths) < 1:
        raise EvalcoreError(f"chain length d must be at least 1 (got {d})")
    return lengths


def _plan(
    store: Store, project_id: str, llm: ModelClient, specs: list[Spec], docs: list[Document],
    index: PassageIndex, params: dict[str, Any], ignore: list[str],
) -> dict[str, Any]:  # fmt: skip
    """The run's plan: per spec its retrieved documents and the units of its conversations (each with its
    chain, policies and fresh facts), the messages of what was cut short or skipped, and the graph's size."""
    built = build_document_graph(llm, docs, ignore=ignore, model=params["model"], seed=params["seed"])
    planner = _Planner(llm, docs, ignore, params, built)
    for spec in specs:
        planner.add_spec(spec, index)
    return planner.summary()


@dataclass
class _Planner:
    """A plan being made, spec by spec; facts given to earlier conversations (`asked`) are counted over
    the whole run, so specs sharing a document ask different facts of it."""

    llm: ModelClient
    docs: list[Document]
    ignore: list[str]
    params: dict[str, Any]
    built: Any  # the document graph and how it was built (build_document_graph)
    units: list[dict[str, Any]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    retrieved: dict[str, Any] = field(default_factory=dict)
    asked: dict[tuple[str, str], int] = field(default_factory=dict)  # (document, fact) -> conversations
    with_policies: Any = None  # the graph with policies as nodes, built only for a spec that needs it
    policy_specs: int = 0

    def __post_init__(self) -> None:
        self.by_id = {d.id: d for d in self.docs}
        self.kinds = {d.id: d.kind.value for d in self.docs}
        self.facts_of = {d.id: document_facts(document_input(d)) for d in self.docs}
        self.lengths, self.n = chain_lengths(self.params["d"]), self.params["per_spec"]

    def add_spec(self, spec: Spec, index: PassageIndex) -> None:
        """Plan one spec's conversations: its chains (of each length asked), then one unit per
        conversation; or a message saying why it gets none."""
        params, lengths, n = self.params, self.lengths, self.n
        found = retrieve_for_spec(index, spec, self.docs, params["k"])
        self.retrieved[spec.id] = found.to_json()
        label = f"spec '{spec.scenario}' ({spec.id})"
        own = [i for i in spec.documents if self.kinds.get(i) in ("text", "table")]
        own_policies = [i for i in spec.documents if self.kinds.get(i) == "policy"]
        if not own and not own_policies and not params.get("leave_spec"):
            self.messages.append(f"{label}: it cites no document (a card behaviour or tool spec), so no "
                                 "conversation grounded in documents tests it; skipped")  # fmt: skip
            return
        through_graph = params.get("chains", "spec") == "graph" and bool(own)
        if through_graph:  # spec-first: its own documents, then retrieval's, then the whole graph
            ranked, left, as_nodes = list(dict.fromkeys(own + found.graph_ranked())), False, False
        else:
            ranked, left, as_nodes = _chain_nodes(
                own, own_policies, found, max(lengths), params.get("leave_spec")
            )
        graph = self._graph(as_nodes)
        # Conversation m of a spec uses length lengths[m % len(lengths)], so n conversations spread evenly.
        wanted = {d: sum(1 for m in range(n) if lengths[m % len(lengths)] == d) for d in lengths}
        picks = {d: self._pick(graph, ranked, len(own), d, count, through_graph)
                 for d, count in wanted.items()}  # fmt: skip
        if not any(p.chains for p in picks.values()):
            reason = next((p.reason for p in picks.values() if p.reason), "")
            self.messages.append(f"{label}: {reason or 'no text or table document retrieved'}; skipped")
            return
        # D_policy: the spec's own policies; retrieval's (own first) when chains may leave the spec.
        context_policies = found.policy if left or params.get("leave_spec") else own_policies
        self._note_chains(label, own, ranked, left, picks, wanted, context_policies)
        self._add_units(spec, label, own or own_policies, picks, context_policies)

    def _pick(self, graph: Any, ranked: list[str], starts: int, d: int, count: int, whole: bool) -> Any:
        """A spec's chains of length d. Through the graph (`whole`, the seed's Algorithm 2, spec-first):
        chains start at one of the spec's own documents and run through the documents retrieved for it
        (the seed's D_t); when those hold no chain of d, through the whole document graph."""
        seed = self.params["seed"]
        if not whole:
            return chains_for_spec(graph, ranked, d, n=count, seed=seed)
        picked = chains_for_spec(graph, ranked, d, top=starts, n=count, seed=seed)
        if picked.used < d or len(picked.chains) < count:
            wider = chains_for_spec(graph, ranked, d, top=starts, n=count, seed=seed, restrict=False)
            if (wider.used, len(wider.chains)) > (picked.used, len(picked.chains)):
                return wider
        return picked

    def _graph(self, as_nodes: bool) -> Any:
        """The document graph chains are drawn from: with policies as nodes for a spec that needs it."""
        if not as_nodes:
            return self.built.graph
        if self.with_policies is None:
            model, seed = self.params["model"], self.params["seed"]
            self.with_policies = build_document_graph(
                self.llm, self.docs, ignore=self.ignore, model=model, seed=seed, include_policies=True
            ).graph
        self.policy_specs += 1
        return self.with_policies

    def _note_chains(
        self, label: str, own: list[str], ranked: list[str], left: bool, picks: dict[int, Any],
        wanted: dict[int, int], context_policies: list[str],
    ) -> None:  # fmt: skip
        """Messages on how a spec's chains fall short of what was asked: they leave its documents, are
        shorter or fewer than asked, or its documents hold too few facts for its conversations."""
        n, turns = self.n, self.params["turns"]
        leaving = sum(1 for p in picks.values() for c in p.chains if not set(c.doc_ids) <= set(own))
        if own and leaving and self.params.get("chains", "spec") != "graph":
            self.messages.append(
                f"{label}: {leaving} of its chains leave its {len(own)} document(s) to reach the length asked"
            )
        if left:
            self.messages.append(f"{label}: it cites no text or table document, so its chains leave it for "
                                 "the documents retrieval finds")  # fmt: skip
        for d, picked in picks.items():
            if picked.chains and picked.used != d:
                about = picked.reason if left else f"it is about {len(ranked)} document(s); {picked.reason}"
                self.messages.append(f"{label}: {about} (chains of {picked.used} document(s) instead of {d})")
            if picked.chains and len(picked.chains) < wanted[d]:
                self.messages.append(
                    f"{label}: only {len(picked.chains)} distinct chain(s) of {picked.used}; "
                    f"its {wanted[d]} conversations of that length reuse them"
                )
        # A small corpus cannot give n conversations of L turns distinct facts: say so, not only repeat.
        used = {i for p in picks.values() for c in p.chains for i in c.doc_ids} | set(context_policies)
        facts = sum(len(document_facts(document_input(self.by_id[i]))) for i in used if i in self.by_id)
        answers = n * (turns - 1)  # every pair but the unanswerable one
        if facts < answers:
            self.messages.append(
                f"{label}: its documents hold {facts} facts for {n} conversations of {turns} "
                "turns: the conversations repeat facts (fewer conversations per spec avoid it)"
            )

    def _add_units(
        self, spec: Spec, label: str, own: list[str], picks: dict[int, Any], context_policies: list[str]
    ) -> None:
        """One unit per conversation of the spec, each on the next chain of its length; after the first,
        only while the chain holds a fact no earlier conversation of the run was given."""
        lengths, n, turns = self.lengths, self.n, self.params["turns"]
        query = set(tokenize(" ".join([spec.scenario, spec.given, spec.when, spec.then])))
        seen: dict[int, int] = {}
        repeating = 0
        for m in range(n):
            d = lengths[m % len(lengths)]
            picked = picks[d] if picks[d].chains else next(p for p in picks.values() if p.chains)
            chain = picked.chains[seen.get(d, 0) % len(picked.chains)]
            seen[d] = seen.get(d, 0) + 1
            # After its first, a spec's conversation is planned only while its chain holds a fact no earlier
            # conversation of the run was given: else it would only re-ask theirs.
            unasked = sum(
                1 for i in chain.doc_ids for f in self.facts_of.get(i, []) if not self.asked.get((i, f.text))
            )
            if m and not unasked:
                repeating += 1
                continue
            policies = [i for i in context_policies if i not in chain.doc_ids]
            fresh = _fresh_facts(self.facts_of, self.asked, query, list(chain.doc_ids), policies, turns)
            self.units.append(
                {
                    "key": f"{spec.id}/{m:03d}",
                    "spec_id": spec.id,
                    "variant": m,
                    "chain": list(chain.doc_ids),
                    "bridges": chain.bridges,
                    "edge_kinds": list(chain.edge_kinds),
                    "requested": d,
                    "note": picked.reason,
                    "left_spec_documents": not set(chain.doc_ids) <= set(own),
                    "policies": policies,
                    "fresh": fresh,
                }
            )
        if repeating:
            self.messages.append(
                f"{label}: {n - repeating} of {n} conversations planned: earlier conversations of the run "
                "were given the facts of its documents the others would ask"
            )

    def summary(self) -> dict[str, Any]:
        """The plan as the run keeps it: units, messages, what was retrieved per spec, the graph's size."""
        if self.policy_specs:
            self.messages.append(
                f"policies took part as graph nodes for {self.policy_specs} spec(s) whose documents are "
                "policies only (our extension of seed 000, where policies are context)"
            )
        stats = graph_stats(self.built.graph)
        graph = {
            "extractor": self.built.extractor,
            "failed": self.built.failed,
            "nodes": stats["nodes"],
            "edges": stats["edges"],
            "policy_nodes": self.policy_specs > 0,
        }
        return {"units": self.units, "messages": self.messages, "retrieved": self.retrieved, "graph": graph}


def _fresh_facts(
    facts_of: dict[str, list[Fact]], asked: dict[tuple[str, str], int], query: set[str], chain: list[str],
    policies: list[str], turns: int,
) -> list[str]:  # fmt: skip
    """The facts a conversation should ask: its share of the answered pairs from each chain document and
    one from each policy; of each document those fewest earlier conversations of the run were given, then
    the most on the spec's theme. Counted over the run, not the spec, so specs over the same table (or
    prose) ask different facts of it while it has any left; `asked` is updated."""
    fresh: list[str] = []
    share = -(-(turns - 1) // max(1, len(chain)))
    for i, count in [*((i, share) for i in chain), *((i, 1) for i in policies)]:
        ranked = sorted(
            facts_of.get(i, []),
            key=lambda f: (asked.get((i, f.text), 0), -relevance(f.text, query), content_hash([f.text])),
        )
        for fact in ranked[:count]:
            asked[(i, fact.text)] = asked.get((i, fact.text), 0) + 1
            fresh.append(fact.text)
    return fresh


def _chain_nodes(
    own: list[str], own_policies: list[str], found: Any, d: int, leave: bool | None
) -> tuple[list[str], bool, bool]:
    """The documents a spec's chains may use, best first; whether they are retrieval's rather than the
    spec's own; whether policies must be graph nodes.

    Chains run through the documents the spec is about (its D_s), so its conversations test it. With
    `leave`, a spec about fewer than d documents goes on to retrieval's (the seed's behaviour). A spec
    whose documents are policies only takes them as graph nodes (our extension), unless it may leave;
    a spec citing no document at all (reaching here only with `leave`) takes its chains from retrieval.
    """
    if own:
        return (found.graph_ranked() if leave and len(own) < d else own), False, False
    if own_policies and not leave:
        return own_policies, False, True
    return found.graph_ranked(), True, False


def start_run(
    store: Store, project_id: str, *, specs: str | Sequence[str] = "selected", d: int | Sequence[int] = 5,
    turns: int = 7,
    per_spec: int = 10, seed: int = 0, model: str | None = None, judge: str | None = None,
    k: dict[str, int] | None = None, dense: bool = True, budget: dict[str, float] | None = None,
    leave_spec: bool = False, chains: str = "graph",
) -> Run:  # fmt: skip
    """Record a new doc-QA run with its parameters (validated); `generate_conversations` runs it.

    `chains` says where a spec's chains of d documents come from: "graph" (the default, seed 000's
    Algorithm 2) walks the document graph from the spec's own documents through those retrieved for it,
    then the whole graph, so chains reach d where the graph allows; "spec" (our earlier behaviour) keeps
    them within the documents the spec cites. With "spec", `leave_spec` lets a chain go on to those
    retrieval finds when the spec is about fewer than d documents (each such spec gets a note).
    """
    if chains not in CHAIN_MODES:
        raise EvalcoreError(f"chains must be one of {', '.join(CHAIN_MODES)} (got '{chains}')")
    lengths = chain_lengths(d)
    if turns < 2:
        raise EvalcoreError(
            f"a conversation needs at least 2 turns: a CANNOTANSWER and the SYNTHESIS (got {turns})"
        )
    if per_spec < 1:
        raise EvalcoreError(f"conversations per spec must be at least 1 (got {per_spec})")
    chosen, note = choose_specs(store, project_id, specs)
    params = {
        "generator": GENERATOR, "specs": specs if isinstance(specs, str) else list(specs),
        "spec_ids": [s.id for s in chosen], "selection_note": note,
        "d": lengths[0] if len(lengths) == 1 else lengths, "turns": turns, "per_spec": per_spec,
        "seed": seed, "model": model, "judge": judge, "k": {**DEFAULT_K, **(k or {})}, "dense": dense,
        "leave_spec": leave_spec, "chains": chains,
    }  # fmt: skip
    return jobs.create(store, project_id, RUN_KIND, params, entry=resume, budget=budget)


def generate_conversations(
    store: Store,
    project_id: str,
    run_id: str | None = None,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    retry_failed: bool = False,
    **params: Any,
) -> DocQAOutcome:
    """Run (or resume) a doc-QA generation job; keyword parameters are those of `start_run`.

    A job (evalcore.jobs): each unit is claimed, then committed with its conversation, so several
    processes may work one run. `retry_failed` gives the failed units of the resumed run back. Call
    `on_progress(done, total)` in the caller's thread as units commit, counting those finished before;
    an exception raised there (e.g. Streamlit's rerun) stops the job between units, the run stopped.
    """
    run = store.run(run_id) if run_id else start_run(store, project_id, **params)
    run = store.start_run(project_id, run)
    if retry_failed:
        jobs.retry_failed(store, run.id)
    job = _Producer.start(store, project_id, run)
    report = jobs.run_units(
        store, run.id, list(job.units), job.work, concurrency=job.concurrency, on_progress=on_progress
    )
    return DocQAOutcome(
        report.run, len(job.added), report.failed, report.skipped, report.total,
        [*job.plan["messages"], *job.left_out], report.stopped, len(job.left_out),
    )  # fmt: skip


@dataclass
class _Producer:
    """One start of a doc-QA run: its plan (made at the first start) and what every unit needs to make,
    verify and commit its conversation."""

    store: Store
    project_id: str
    params: dict[str, Any]  # the run's parameters, its plan among them
    llm: ModelClient
    index: PassageIndex
    by_id: dict[str, Document]
    specs: dict[str, Spec]
    card_text: str
    ignore: list[str]
    names: Any  # what a customer calls each code (code_names)
    judge: Any  # the judge chosen for the generator's model (choose_judge)
    run_id: str
    added: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # messages on conversations not kept (`_leave_out`)

    @classmethod
    def start(cls, store: Store, project_id: str, run: Run) -> _Producer:
        """Read the run's documents and specs, plan it at its first start (the plan's messages become the
        run's warnings), and choose its judge."""
        p = run.params
        docs = store.documents(project_id)
        llm = ModelClient(store, project_id, run_id=run.id)
        index = build_index(docs, llm.embed if p.get("dense", True) else None)
        card_text, ignore = system_description(store, project_id)
        names = code_names(docs, ignore)
        specs = {s.id: s for s in choose_specs(store, project_id, p["spec_ids"])[0]}
        if "plan" not in p:
            p = {**p, "plan": _plan(store, project_id, llm, list(specs.values()), docs, index, p, ignore)}
            store.update_run_params(run.id, {"plan": p["plan"]})
            for warning in [p.get("selection_note"), *p["plan"]["messages"]]:
                if warning:
                    store.add_run_warning(run.id, warning)
        generator_model = llm.registry.choose("generator", p["model"]).model
        judge = choose_judge(llm.registry, generator_model, p["judge"])
        if judge.warning:
            store.add_run_warning(run.id, judge.warning)
        by_id = {doc.id: doc for doc in docs}
        return cls(store, project_id, p, llm, index, by_id, specs, card_text, ignore, names, judge, run.id)

    def __post_init__(self) -> None:
        self.plan: dict[str, Any] = self.params["plan"]  # see `_plan`
        self.units: dict[str, dict[str, Any]] = {u["key"]: u for u in self.plan["units"]}
        # The questions finished units asked, by document: a conversation is told those of its chain's
        # documents so it asks others (questions distinct across the run, not only within a spec).
        self.asked: dict[str, list[str]] = {}
        self.answered: dict[str, list[str]] = {}
        generator = self.llm.registry.choose("generator", self.params["model"]).model
        # Offline, units are made one at a time in plan order, so each is told every question of the units
        # before it (the heuristic is CPU-bound: little is lost) and the same project, specs and settings
        # give the same conversations (threads behind one lock took it in any order: one walk kept 106
        # conversations, the next 109); a model's calls run side by side, each told the questions of the
        # units finished when it starts.
        self.concurrency = 1 if generator == OFFLINE_MODEL else self.llm.concurrency
        for unit in self.store.finished_units(self.run_id).values():
            self._remember((unit or {}).get("result") or {})

    def _remember(self, result: dict[str, Any]) -> None:
        for doc in result.get("documents", []):
            self.asked.setdefault(doc, []).extend(result.get("questions", []))
            self.answered.setdefault(doc, []).extend(result.get("answers", []))

    def asked_of(self, chain: list[str], what: str = "questions") -> list[str]:
        """The questions (or answers) earlier conversations of the run had on these documents, latest
        last (at most ASKED_SHOWN, so the prompt stays short)."""
        had = self.asked if what == "questions" else self.answered
        return list(dict.fromkeys(q for doc in chain for q in had.get(doc, [])))[-ASKED_SHOWN:]

    def produce(self, unit: dict[str, Any]) -> dict[str, Any]:
        """One unit's conversation, verified: {"conversation"}, or {"error", "raw"} when the model gave
        none, or {"stopped"} when the budget stopped it."""
        p, llm = self.params, self.llm
        spec = self.specs[unit["spec_id"]]
        chain = [self.by_id[i] for i in unit["chain"] if i in self.by_id]
        policies = [self.by_id[i] for i in unit["policies"] if i in self.by_id]
        inputs = conversation_inputs(self.card_text, spec, chain, unit["bridges"], policies, p["turns"],
                                     unit["variant"], self.ignore, self.names, unit.get("fresh"),
                                     self._subject(spec),
                                     self.asked_of(unit["chain"]))  # fmt: skip
        if p.get("chains", "spec") == "graph":  # with "spec", our earlier behaviour whole
            # Offline only (no placeholder): every question and answer the run had so far, so a question
            # or fact is not asked again (the model is shown the questions on its chain's documents).
            inputs["asked_run"] = sorted({q for qs in self.asked.values() for q in qs})
            inputs["answered"] = sorted({a for answers in self.answered.values() for a in answers})
        else:
            inputs["asked"] = []
        result = llm.run_task(
            GENERATE_CONVERSATION, inputs, role="generator", model=p["model"], seed=p["seed"]
        )
        if result.status == "stopped":
            return {"stopped": result.error or "budget"}
        if not result.ok or result.output is None:
            return {"error": result.error or "no output", "raw": result.raw}
        conversation = to_conversation(
            result.output,
            conversation_id=new_id("conv"),
            spec_id=spec.id,
            provenance=result.provenance([spec.id, *unit["chain"]]),
            metadata=self._metadata(unit, result),
        )
        context = {
            d.id: inputs_doc
            for d, inputs_doc in zip(chain + policies, inputs["documents"] + inputs["policies"], strict=True)
        }
        spec_inputs = {
            k: inputs[k] for k in ("system_description", "probe", "probe_given", "probe_when", "probe_then")
        }
        verified = verify_conversation(
            llm, conversation, spec_inputs, self.index, context, unit["chain"], p["turns"],
            model=p["model"], judge=self.judge.model, seed=p["seed"],
        )  # fmt: skip
        if verified.stopped:
            return {"stopped": verified.stopped}
        return {"conversation": verified.conversation}

    def _subject(self, spec: Spec) -> list[str]:
        """What the first question asks about: the spec's subject; none with `chains="spec"` (our earlier
        behaviour, kept whole as the option)."""
        if self.params.get("chains", "spec") != "graph":
            return []
        context = " ".join((spec.given, spec.when, spec.then))
        return list(spec_subject(spec.scenario, self.names, self.ignore, context).terms)

    def _metadata(self, unit: dict[str, Any], result: TaskResult[Any]) -> dict[str, Any]:
        """What a conversation keeps of how it was made: its chain, policies, retrieval, model."""
        chain_meta = {
            "documents": unit["chain"],
            "bridges": unit["bridges"],
            "edge_kinds": unit["edge_kinds"],
            "requested_length": unit["requested"],
            "length": len(unit["chain"]),
            "note": unit["note"],
            "left_spec_documents": unit.get("left_spec_documents", False),
        }
        return {
            "chain": chain_meta,
            "policies": unit["policies"],
            "retrieved": self.plan["retrieved"].get(unit["spec_id"], {}),
            "n_documents": len(unit["chain"]),
            "num_turns": self.params["turns"],
            "variant": unit["variant"],
            "unit": unit["key"],
            "model": result.model,
            "offline": result.offline,
            "cache_hit": result.cache_hit,
        }

    def work(self, claim: jobs.Claim) -> None:
        """One unit: its conversation committed with the unit's done mark (or the unit failed)."""
        made = self.produce(self.units[claim.key])
        if "stopped" in made:
            raise jobs.UnitStopped(f"budget: {made['stopped']}")  # not done: a resume does it
        if "conversation" in made and (repeated := self._repeated(made["conversation"])):
            self._leave_out(claim, repeated)
            return
        with claim.commit() as writer:
            if "error" in made:
                writer.fail(made["error"], {"raw": made.get("raw")})
                return
            conversation = made["conversation"]
            add_conversation(self.store, self.project_id, conversation, conn=writer.conn)
            meta = conversation.metadata
            questions = [t.content for t in conversation.turns if t.role == "user"]
            answers = [t.content for t in conversation.turns if t.role == "assistant"]
            writer.result = {"conversation": conversation.id, "judge_passed": meta.get("judge_passed"),
                             "tier": conversation.tier.value, "questions": questions, "answers": answers,
                             "documents": self.units[claim.key]["chain"]}  # fmt: skip
        self._remember(writer.result)
        self.added.append(conversation.id)

    def _repeated(self, conversation: Any) -> list[str]:
        """The questions of `conversation` an earlier conversation of the run, or an earlier turn of its
        own, asked already (as benchmarks/content.py compares them: case and outer spaces aside); none
        with `chains="spec"` (our earlier behaviour, kept whole as the option)."""
        if self.params.get("chains", "spec") != "graph":
            return []
        seen = {q.strip().casefold() for qs in list(self.asked.values()) for q in qs}
        repeated = []
        for turn in conversation.turns:
            if turn.role == "user":
                key = turn.content.strip().casefold()
                repeated += [turn.content] if key in seen else []
                seen.add(key)
        return repeated

    def _leave_out(self, claim: jobs.Claim, repeated: list[str]) -> None:
        """A conversation that could only repeat questions is not kept (issue 33: a small corpus gives
        fewer conversations with a note, never near-copies): its unit is done with no conversation, and
        the run warns which spec's conversation was left out and what it would have asked again."""
        unit = self.units[claim.key]
        spec = self.specs[unit["spec_id"]]
        message = (
            f"spec '{spec.scenario}' ({spec.id}): conversation {unit['variant'] + 1} left out: the run had "
            f"already asked {len(repeated)} of its questions (e.g. '{repeated[0]}') and its documents hold "
            "nothing new to ask instead"
        )
        with claim.commit() as writer:
            writer.result = {"left_out": repeated, "documents": unit["chain"]}
        self.store.add_run_warning(self.run_id, message)
        self.left_out.append(message)


def resume(store: Store, run_id: str) -> DocQAOutcome:
    """Resume a doc-QA run with its own parameters (what a worker process calls)."""
    return generate_conversations(store, store.run_project(run_id), run_id)
