"""The doc-QA generation job: specs -> retrieval -> document graph -> chains -> conversations -> verification.

A run (kind `conversations.doc_qa`) records its parameters and, on its first start, its plan: for every
spec the retrieved documents, the chains and one unit per (spec, conversation index) with its chain. Each
unit generates one conversation, verifies it, and commits it together with the unit's done mark, so a
stopped, killed or crashed job resumes (`run_id=...`) with the units left and never regenerates a
finished conversation; model calls are cached, so even an interrupted unit costs nothing twice. It is a
job of evalcore.jobs: units are claimed before they are worked, so two processes never generate the same
conversation; its progress and stop request are that package's (`jobs.progress`, `jobs.request_stop`).

Chains run through the spec's own documents D_s (seed 000 draws them from the documents retrieved for
the spec; ours are the ones the spec is about, so a conversation tests its spec). A spec about fewer
than d documents gets shorter chains and a message; one whose documents are policies only gets chains
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
from evalcore.generators.doc_qa.verify import verify_conversation
from evalcore.items.store_ops import add_conversation
from evalcore.llm import ModelClient, choose_judge
from evalcore.models import Document, Run, Spec
from evalcore.models.common import content_hash
from evalcore.specs.choice import choose_specs
from evalcore.store import Store
from evalcore.store.store import new_id

RUN_KIND = "conversations.doc_qa"


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
    built = build_document_graph(llm, docs, ignore=ignore, model=params["model"], seed=params["seed"])
    by_id = {d.id: d for d in docs}
    kinds = {d.id: d.kind.value for d in docs}
    with_policies: Any = None  # the graph with policies as nodes, built only for a spec that needs it
    policy_specs = 0
    units: list[dict[str, Any]] = []
    messages: list[str] = []
    retrieved: dict[str, Any] = {}
    facts_of = {d.id: document_facts(document_input(d)) for d in docs}
    asked: dict[tuple[str, str], int] = {}  # (document, fact) -> conversations of this run it is fresh for
    lengths, n = chain_lengths(params["d"]), params["per_spec"]
    for spec in specs:
        found = retrieve_for_spec(index, spec, docs, params["k"])
        retrieved[spec.id] = found.to_json()
        label = f"spec '{spec.scenario}' ({spec.id})"
        own = [i for i in spec.documents if kinds.get(i) in ("text", "table")]
        own_policies = [i for i in spec.documents if kinds.get(i) == "policy"]
        if not own and not own_policies and not params.get("leave_spec"):
            messages.append(f"{label}: it cites no document (a card behaviour or tool spec), so no "
                            "conversation grounded in documents tests it; skipped")  # fmt: skip
            continue
        ranked, left, as_nodes = _chain_nodes(
            own, own_policies, found, max(lengths), params.get("leave_spec")
        )
        graph = built.graph
        if as_nodes:
            if with_policies is None:
                model, seed = params["model"], params["seed"]
                with_policies = build_document_graph(
                    llm, docs, ignore=ignore, model=model, seed=seed, include_policies=True
                ).graph
            graph = with_policies
            policy_specs += 1
        # Conversation m of a spec uses length lengths[m % len(lengths)], so n conversations spread evenly.
        wanted = {d: sum(1 for m in range(n) if lengths[m % len(lengths)] == d) for d in lengths}
        picks = {d: chains_for_spec(graph, ranked, d, n=count, seed=params["seed"])
                 for d, count in wanted.items()}  # fmt: skip
        if not any(p.chains for p in picks.values()):
            reason = next((p.reason for p in picks.values() if p.reason), "")
            messages.append(f"{label}: {reason or 'no text or table document retrieved'}; skipped")
            continue
        # D_policy: the spec's own policies; retrieval's (own first) when chains may leave the spec.
        context_policies = found.policy if left or params.get("leave_spec") else own_policies
        leaving = sum(1 for p in picks.values() for c in p.chains if not set(c.doc_ids) <= set(own))
        if own and leaving:
            messages.append(
                f"{label}: {leaving} of its chains leave its {len(own)} document(s) to reach the length asked"
            )
        if left:
            messages.append(f"{label}: it cites no text or table document, so its chains leave it for "
                            "the documents retrieval finds")  # fmt: skip
        for d, picked in picks.items():
            if picked.chains and picked.used != d:
                about = picked.reason if left else f"it is about {len(ranked)} document(s); {picked.reason}"
                messages.append(f"{label}: {about} (chains of {picked.used} document(s) instead of {d})")
            if picked.chains and len(picked.chains) < wanted[d]:
                messages.append(
                    f"{label}: only {len(picked.chains)} distinct chain(s) of {picked.used}; "
                    f"its {wanted[d]} conversations of that length reuse them"
                )
        # A small corpus cannot give n conversations of L turns distinct facts: say so, not only repeat.
        used = {i for p in picks.values() for c in p.chains for i in c.doc_ids} | set(context_policies)
        facts = sum(len(document_facts(document_input(by_id[i]))) for i in used if i in by_id)
        answers = n * (params["turns"] - 1)  # every pair but the unanswerable one
        if facts < answers:
            messages.append(
                f"{label}: its documents hold {facts} facts for {n} conversations of {params['turns']} "
                "turns: the conversations repeat facts (fewer conversations per spec avoid it)"
            )
        query = set(tokenize(" ".join([spec.scenario, spec.given, spec.when, spec.then])))
        turns = params["turns"]
        seen: dict[int, int] = {}
        repeating = 0
        for m in range(n):
            d = lengths[m % len(lengths)]
            picked = picks[d] if picks[d].chains else next(p for p in picks.values() if p.chains)
            chain = picked.chains[seen.get(d, 0) % len(picked.chains)]
            seen[d] = seen.get(d, 0) + 1
            # After its first, a spec's conversation is planned only while its chain holds a fact no earlier
            # conversation of the run was given: else it would only re-ask theirs.
            unasked = sum(1 for i in chain.doc_ids for f in facts_of.get(i, []) if not asked.get((i, f.text)))
            if m and not unasked:
                repeating += 1
                continue
            policies = [i for i in context_policies if i not in chain.doc_ids]
            units.append(
                {
                    "key": f"{spec.id}/{m:03d}",
                    "spec_id": spec.id,
                    "variant": m,
                    "chain": list(chain.doc_ids),
                    "bridges": chain.bridges,
                    "edge_kinds": list(chain.edge_kinds),
                    "requested": d,
                    "note": picked.reason,
                    "left_spec_documents": not set(chain.doc_ids) <= set(own or own_policies),
                    "policies": policies,
                    "fresh": _fresh_facts(facts_of, asked, query, list(chain.doc_ids), policies, turns),
                }
            )
        if repeating:
            messages.append(
                f"{label}: {n - repeating} of {n} conversations planned: earlier conversations of the run "
                "were given the facts of its documents the others would ask"
            )
    if policy_specs:
        messages.append(
            f"policies took part as graph nodes for {policy_specs} spec(s) whose documents are policies only "
            "(our extension of seed 000, where policies are context)"
        )
    stats = graph_stats(built.graph)
    graph = {
        "extractor": built.extractor,
        "failed": built.failed,
        "nodes": stats["nodes"],
        "edges": stats["edges"],
        "policy_nodes": policy_specs > 0,
    }
    return {"units": units, "messages": messages, "retrieved": retrieved, "graph": graph}


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
    leave_spec: bool = False,
) -> Run:  # fmt: skip
    """Record a new doc-QA run with its parameters (validated); `generate_conversations` runs it.

    `leave_spec` lets a chain go on from a spec's documents to those retrieval finds, when the spec is
    about fewer than d documents (the seed's behaviour; each spec whose chains leave it gets a note).
    """
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
        "leave_spec": leave_spec,
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
    p = run.params
    docs = store.documents(project_id)
    by_id = {doc.id: doc for doc in docs}
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
    plan = p["plan"]
    generator_model = llm.registry.choose("generator", p["model"]).model
    judge = choose_judge(llm.registry, generator_model, p["judge"])
    if judge.warning:
        store.add_run_warning(run.id, judge.warning)
    units = {u["key"]: u for u in plan["units"]}
    added: list[str] = []

    def produce(unit: dict[str, Any]) -> dict[str, Any]:
        spec = specs[unit["spec_id"]]
        chain = [by_id[i] for i in unit["chain"] if i in by_id]
        policies = [by_id[i] for i in unit["policies"] if i in by_id]
        inputs = conversation_inputs(card_text, spec, chain, unit["bridges"], policies, p["turns"],
                                     unit["variant"], ignore, names, unit.get("fresh"))  # fmt: skip
        result = llm.run_task(
            GENERATE_CONVERSATION, inputs, role="generator", model=p["model"], seed=p["seed"]
        )
        if result.status == "stopped":
            return {"stopped": result.error or "budget"}
        if not result.ok or result.output is None:
            return {"error": result.error or "no output", "raw": result.raw}
        chain_meta = {
            "documents": unit["chain"],
            "bridges": unit["bridges"],
            "edge_kinds": unit["edge_kinds"],
            "requested_length": unit["requested"],
            "length": len(unit["chain"]),
            "note": unit["note"],
            "left_spec_documents": unit.get("left_spec_documents", False),
        }
        metadata = {
            "chain": chain_meta,
            "policies": unit["policies"],
            "retrieved": plan["retrieved"].get(spec.id, {}),
            "n_documents": len(unit["chain"]),
            "num_turns": p["turns"],
            "variant": unit["variant"],
            "unit": unit["key"],
            "model": result.model,
            "offline": result.offline,
            "cache_hit": result.cache_hit,
        }
        provenance = result.provenance([spec.id, *unit["chain"]])
        conversation = to_conversation(
            result.output,
            conversation_id=new_id("conv"),
            spec_id=spec.id,
            provenance=provenance,
            metadata=metadata,
        )
        context = {
            d.id: inputs_doc
            for d, inputs_doc in zip(chain + policies, inputs["documents"] + inputs["policies"], strict=True)
        }
        spec_inputs = {
            k: inputs[k] for k in ("system_description", "probe", "probe_given", "probe_when", "probe_then")
        }
        verified = verify_conversation(
            llm, conversation, spec_inputs, index, context, unit["chain"], p["turns"],
            model=p["model"], judge=judge.model, seed=p["seed"],
        )  # fmt: skip
        if verified.stopped:
            return {"stopped": verified.stopped}
        return {"conversation": verified.conversation}

    def work(claim: jobs.Claim) -> None:
        unit = units[claim.key]
        made = produce(unit)
        if "stopped" in made:
            raise jobs.UnitStopped(f"budget: {made['stopped']}")  # not done: a resume does it
        with claim.commit() as writer:
            if "error" in made:
                writer.fail(made["error"], {"raw": made.get("raw")})
                return
            conversation = made["conversation"]
            add_conversation(store, project_id, conversation, conn=writer.conn)
            meta = conversation.metadata
            writer.result = {"conversation": conversation.id, "judge_passed": meta.get("judge_passed"),
                             "tier": conversation.tier.value}  # fmt: skip
        added.append(conversation.id)

    report = jobs.run_units(
        store, run.id, list(units), work, concurrency=llm.concurrency, on_progress=on_progress
    )
    return DocQAOutcome(
        report.run, len(added), report.failed, report.skipped, report.total, list(plan["messages"]),
        report.stopped,
    )  # fmt: skip


def resume(store: Store, run_id: str) -> DocQAOutcome:
    """Resume a doc-QA run with its own parameters (what a worker process calls)."""
    return generate_conversations(store, store.run_project(run_id), run_id)
