"""The procedure generation job (seed 001, Sections 3.4-3.9, Figure 1; issue 17, items 2-7 and 11).

`create_generation` records a run (kind `procedures.generate`) with its parameters: the procedures, n
paths per graph, the walk that samples them (`weighted`, Algorithm 1, the default; or `coverage`, a
deviation aimed at the issue's edge-coverage goal; paths.py), the noise probability p, the seed and the
model; with `intents=k` it first generates k new intents and a procedure for each (intents.py), kept in
the run's parameters and worked like the project's own; an API such a procedure calls that the project
lacks is generated (apis.py) and kept in the run's parameters too, marked generated wherever it is shown.
`execute_generation` works one unit per procedure, claimed before it is worked (evalcore.jobs):
flowgraph (task `generate_flowgraph`), its rule check; conversation graph (task
`generate_conversation_graph`), its rule check; noise (messages from task `generate_noise`, the bundled
list offline or when the model gives none); n walks; one conversation per path (task
`generate_conversation`) checked against A.6's conditions; the tests of every conversation that keeps
them. A unit commits in one transaction a `procedure_graphs` item (both graphs with their broken rules,
the noisy graph, the paths and their edge coverage) and its conversations and tests, so a stopped or
crashed run resumes at the next procedure. A graph that breaks a rule, or a model reply that is not a
graph, is kept with the reason and the procedure goes no further.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from evalcore import jobs
from evalcore.documents.retrieval import PassageIndex, split_passages
from evalcore.errors import EvalcoreError, NotFoundError, UsageError
from evalcore.generators.procedure.apis import (
    GENERATE_API,
    GENERATED_TOOLS,
    api_inputs,
    as_tool,
    missing_apis,
)
from evalcore.generators.procedure.conversations import (
    GENERATE_CONVERSATION,
    GENERATOR,
    GeneratedConversation,
    conversation_problems,
    to_conversation,
)
from evalcore.generators.procedure.convgraph import GENERATE_CONVERSATION_GRAPH, build_conversation_graph
from evalcore.generators.procedure.cut import cut_tests
from evalcore.generators.procedure.flowgraph import GENERATE_FLOWGRAPH, build_flowgraph, flowgraph_inputs
from evalcore.generators.procedure.graphs import Graph, GraphBody, Kind
from evalcore.generators.procedure.intents import GENERATE_INTENTS, GENERATE_PROCEDURE, as_procedure
from evalcore.generators.procedure.noise import DEFAULT_P, GENERATE_NOISE, NOISE_MESSAGES, add_noise
from evalcore.generators.procedure.origins import RUN_KIND
from evalcore.generators.procedure.path_check import path_problems
from evalcore.generators.procedure.paths import WALKS, edge_coverage
from evalcore.generators.procedure.policy import read_policies
from evalcore.inputs.tool_values import with_table_returns
from evalcore.items.store_ops import add_conversation, add_test
from evalcore.llm.client import ModelClient
from evalcore.llm.tasks import Task
from evalcore.llm.types import T, TaskResult
from evalcore.models import Conversation, DocumentKind, Procedure, Provenance, Run, Test, Tool
from evalcore.models.common import Record
from evalcore.store import Store
from evalcore.store.store import new_id

GRAPHS_KIND = "procedure_graphs"
DEFAULT_PATHS = 5  # conversations per graph: enough to cover most branches of the sample's procedures


class ProcedureGraphs(Record):
    """What one procedure became: its graphs (with broken rules), paths and their edge coverage."""

    id: str = Field(description="Item id.")
    procedure: str = Field(description="Procedure name.")
    flowgraph: Graph = Field(description="The flowgraph, with the rules it breaks.")
    conversation_graph: Graph | None = Field(default=None, description="Made only from a valid flowgraph.")
    noisy_graph: Graph | None = Field(default=None, description="The conversation graph with noise added.")
    paths: list[list[str]] = Field(
        default_factory=list, description="Sampled paths (node ids of noisy_graph)."
    )
    coverage: float | None = Field(
        default=None, description="Share of the noisy graph's edges the paths cover."
    )
    conversations: list[str] = Field(default_factory=list, description="Ids of the conversations written.")
    generated_apis: list[str] = Field(
        default_factory=list, description="APIs it calls that were generated, not the project's (A.3)."
    )
    provenance: Provenance = Field(description="Models (or offline) that produced the graphs.")


@dataclass(frozen=True)
class GenerationOutcome:
    """What one `execute_generation` call did, and where the run stands."""

    run: Run
    done: int
    total: int
    failed: list[str]


def create_generation(
    store: Store,
    project_id: str,
    *,
    procedures: list[str] | None = None,
    paths: int = DEFAULT_PATHS,
    walk: str = "weighted",
    p: float = DEFAULT_P,
    seed: int = 0,
    model: str | None = None,
    intents: int = 0,
    budget: dict[str, float] | None = None,
) -> Run:
    """Record a new generation run (status pending) over the project's procedures (all, or those named),
    and over procedures generated for `intents` new intents."""
    if walk not in WALKS:
        raise UsageError(f"unknown walk '{walk}' (choose one of: {', '.join(WALKS)})")
    known = {pr.name for pr in store.procedures(project_id)}
    generated, apis = (
        _generated_procedures(store, project_id, intents, seed, model) if intents > 0 else ([], [])
    )
    # procedures read from the policies, for the tasks no hand-written procedure covers (issue 26)
    read = read_policies(store.documents(project_id), store.tools(project_id), store.procedures(project_id))
    from_policy = [p for p in read.procedures if procedures is None or p.name in procedures]
    generated = from_policy + generated
    chosen = (procedures or sorted(known)) + [g.name for g in generated]
    known |= {g.name for g in generated}
    missing = [name for name in chosen if name not in known]
    if missing:
        raise NotFoundError(f"no procedure(s) {', '.join(missing)} in project '{project_id}'")
    if not chosen:
        raise EvalcoreError(f"project '{project_id}' has no procedures (add procedures/*.yaml and import it)")
    if not 0.0 <= p <= 1.0 or paths < 1:
        raise EvalcoreError("the noise probability must be within 0..1 and paths at least 1")
    params: dict[str, Any] = {
        "project_id": project_id,
        "procedures": chosen,
        "paths": paths,
        "walk": walk,
        "p": p,
        "seed": seed,
        "model": model,
        "generated_procedures": [g.model_dump(mode="json") for g in generated],
        GENERATED_TOOLS: [t.model_dump(mode="json") for t in apis],
    }
    # the model layer stops a call that would exceed the run's budget; the unit is released, not failed
    short = (
        [f"made {len(generated) - len(from_policy)} of the {intents} procedures asked for new intents"]
        if len(generated) - len(from_policy) < intents
        else []
    ) + read.warnings
    return jobs.create(
        store, project_id, RUN_KIND, params, entry=execute_generation, total=len(chosen), budget=budget,
        warnings=short,
    )  # fmt: skip


def _generated_procedures(
    store: Store, project_id: str, count: int, seed: int, model: str | None
) -> tuple[list[Procedure], list[Tool]]:
    """Procedures for `count` new intents (A.1, then A.2 per intent), one per distinct name, and the APIs
    they call that the project lacks (A.3; one that cannot be generated is left unknown: the flowgraph
    then lists it and is not used)."""
    llm = ModelClient(store, project_id)
    tools = store.tools(project_id)
    used = sorted({api for p in store.procedures(project_id) for api in p.apis})
    inputs = {"tools": [t.model_dump(mode="json") for t in tools], "used_tools": used, "count": count}
    found = llm.run_task(GENERATE_INTENTS, inputs, "generator", model=model, seed=seed)
    if not found.ok or found.output is None:
        raise EvalcoreError(f"no intents generated: {found.error}")
    made: dict[str, Procedure] = {}
    apis: dict[str, Tool] = {}
    passages = _policy_passages(store, project_id)
    for intent in found.output.intents[:count]:
        policy = passages(intent)
        draft = llm.run_task(
            GENERATE_PROCEDURE,
            {"intent": intent, "tools": inputs["tools"], "policy": policy or "(no policy passage found)"},
            model=model,
            seed=seed,
        )
        if not draft.ok or draft.output is None:
            llm.warn(f"no procedure for intent '{intent}': {draft.error}")
            continue
        procedure = as_procedure(draft.output)
        made.setdefault(procedure.name, procedure)
        for step in missing_apis(procedure, {t.name for t in tools} | set(apis)):
            api = llm.run_task(GENERATE_API, api_inputs(procedure, step), model=model, seed=seed)
            tool = as_tool(api.output, step.api or "") if api.ok and api.output else None
            if tool is None:
                llm.warn(
                    f"no API {step.api} generated for procedure '{procedure.name}': {api.error or 'invalid'}"
                )
            else:
                apis[tool.name] = tool
    return list(made.values()), list(apis.values())


POLICY_PASSAGES = 4  # passages per intent in the procedure prompt: its rules, bounded in size


def _policy_passages(store: Store, project_id: str) -> Callable[[str], str]:
    """The policy passages most relevant to an intent (BM25 over the project's policy documents), as
    'file: text' lines for the procedure prompt (A.2 given the project's own rules); none without a
    policy."""
    policies = [d for d in store.documents(project_id) if d.kind == DocumentKind.policy]
    index = PassageIndex(split_passages(policies)) if policies else None

    def relevant(intent: str) -> str:
        if index is None:
            return ""
        hits = index.retrieve(intent, k=POLICY_PASSAGES)
        return "\n".join(f"- {h.passage.document_id}: {h.passage.text}" for h in hits)

    return relevant


class _Worker:
    def __init__(self, store: Store, run: Run, llm: ModelClient) -> None:
        self.store, self.run, self.llm = store, run, llm
        self.pid = run.params["project_id"]
        generated = [Procedure.model_validate(g) for g in run.params.get("generated_procedures") or []]
        self.procedures = {pr.name: pr for pr in [*store.procedures(self.pid), *generated]}
        self.generated_tools = [Tool.model_validate(t) for t in run.params.get(GENERATED_TOOLS) or []]
        # the project's tables, so offline conversations use stores, SKUs and codes that exist
        self.tables = [[d.id, d.rows] for d in store.documents(self.pid) if d.kind == DocumentKind.table]
        # a tool without a return schema answers with the record its tables hold (issue 26)
        self.tools: list[Tool] = with_table_returns(store.tools(self.pid) + self.generated_tools, self.tables)

    def _task(self, task: Task[T], inputs: dict[str, Any], seed: int, models: list[str]) -> TaskResult[T]:
        """Run a task; `models` collects the unit's producers (for the graphs' provenance)."""
        result = self.llm.run_task(task, inputs, "generator", model=self.run.params.get("model"), seed=seed)
        if result.status == "stopped":
            raise jobs.UnitStopped(result.error or "budget")  # not done: a resume with more budget does it
        models.append("offline" if result.offline else result.model)
        return result

    def _graph(self, kind: Kind, procedure: Procedure, result: TaskResult[GraphBody]) -> Graph:
        """The checked graph, or a kept empty one saying why the model's reply was not a graph."""
        tools = [t.name for t in self.tools]
        if not result.ok or result.output is None:
            reason = f"the model's reply is not a valid graph: {result.error}"
            return Graph(kind=kind, procedure=procedure.name, nodes=[], edges=[], broken=[reason])
        body = GraphBody.model_validate(result.output.model_dump())
        if kind == "flowgraph":
            return build_flowgraph(procedure, self.tools, body)
        return build_conversation_graph(procedure.name, body, tools)

    def work(self, claim: jobs.Claim) -> None:
        """One procedure: its flowgraph, then from a valid one its conversations and tests; one commit."""
        procedure = self.procedures[claim.key]
        seed = int(self.run.params["seed"])
        inputs = flowgraph_inputs(procedure, self.tools)
        models: list[str] = []
        flow = self._graph("flowgraph", procedure, self._task(GENERATE_FLOWGRAPH, inputs, seed, models))
        provenance = Provenance(
            producer="offline",
            task=GENERATE_FLOWGRAPH.name,
            inputs=[procedure.name],
            seed=seed,
            run_id=self.run.id,
        )
        made = {t.name for t in self.generated_tools}
        record = ProcedureGraphs(
            id=new_id("pgraph"),
            procedure=procedure.name,
            flowgraph=flow,
            provenance=provenance,
            generated_apis=[api for api in dict.fromkeys(procedure.apis) if api in made],
        )
        conversations: list[Conversation] = []
        tests: list[Test] = []
        if flow.valid:
            conversations, tests = self._conversations(record, procedure, inputs["apis"], seed, models)
        record.conversations = [c.id for c in conversations]
        offline = all(m == "offline" for m in models)
        record.provenance = provenance.model_copy(
            update={
                "producer": ", ".join(dict.fromkeys(models)),
                "provider": "offline" if offline else "model",
            }
        )
        self._commit(claim, record, conversations, tests)

    def _conversations(
        self, record: ProcedureGraphs, procedure: Procedure, apis: Any, seed: int, models: list[str]
    ) -> tuple[list[Conversation], list[Test]]:
        """From a valid flowgraph: the conversation graph, its noisy copy, the paths walked on it (kept in
        `record`), one conversation per path and the tests of those without problems; none past an
        invalid conversation graph."""
        flow = record.flowgraph
        flow_body = {
            "nodes": [n.model_dump() for n in flow.nodes],
            "edges": [e.model_dump() for e in flow.edges],
        }
        graph_inputs = {"flowgraph": flow_body, "intent": procedure.intent}
        conv = self._graph(
            "conversation", procedure, self._task(GENERATE_CONVERSATION_GRAPH, graph_inputs, seed, models)
        )
        record.conversation_graph = conv
        if not conv.valid:
            return [], []
        noise = self._task(GENERATE_NOISE, {"domain": procedure.intent, "count": 6}, seed, models)
        given = noise.output.messages if noise.ok and noise.output else ()
        messages = given or NOISE_MESSAGES  # the bundled list offline or when the model gives none
        noisy = add_noise(conv, p=float(self.run.params["p"]), seed=seed, messages=messages)
        record.noisy_graph = noisy
        # runs recorded before the walk was a parameter sampled with Algorithm 1
        walk = WALKS[self.run.params.get("walk", "weighted")]
        record.paths = walk(noisy, int(self.run.params["paths"]), seed)
        record.coverage = edge_coverage(noisy, record.paths)
        conversations, tests = [], []
        for k, path in enumerate(record.paths):
            conversation, problems = self._conversation(
                procedure, record.id, noisy, path, apis, seed * 1000 + k, models
            )
            conversations.append(conversation)
            if not problems:
                tests += cut_tests(conversation)
        return conversations, tests

    def _conversation(
        self,
        procedure: Procedure,
        graphs_id: str,
        noisy: Graph,
        path: list[str],
        apis: Any,
        seed: int,
        models: list[str],
    ) -> tuple[Conversation, list[str]]:
        """The conversation along one path, and the problems that keep its tests from being cut."""
        conversation_inputs = {
            "graph": noisy.model_dump(mode="json"),
            "path": path,
            "apis": apis,
            "intent": procedure.intent,
            "tables": self.tables,
        }
        result = self._task(GENERATE_CONVERSATION, conversation_inputs, seed, models)
        if not result.ok or result.output is None:
            generated, problems = GeneratedConversation(turns=[]), [f"no conversation: {result.error}"]
        else:
            generated = GeneratedConversation.model_validate(result.output.model_dump())
            problems = conversation_problems(generated.turns, {t.name: t.parameters for t in self.tools})
            # a model may stray from the path it was given: such a conversation yields no tests
            problems += path_problems(generated.turns, noisy, path)
        made_by = Provenance(
            producer="offline" if result.offline else result.model,
            provider="offline" if result.offline else result.provider,
            task=GENERATE_CONVERSATION.name,
            prompt_version=GENERATE_CONVERSATION.prompt_version,
            inputs=[procedure.name, graphs_id],
            seed=seed,
            run_id=self.run.id,
        )
        conversation = to_conversation(
            new_id("proc"), generated, graph=noisy, path=path, problems=problems, provenance=made_by
        )
        return conversation, problems

    def _commit(
        self, claim: jobs.Claim, record: ProcedureGraphs, conversations: list[Conversation], tests: list[Test]
    ) -> None:
        """The graphs item, its conversations and tests, in the unit's one transaction."""
        with claim.commit() as writer:
            body = record.model_dump(mode="json")
            self.store.add_item(
                self.pid,
                GRAPHS_KIND,
                body,
                record.provenance.producer,
                item_id=record.id,
                generator=GENERATOR,
                run_id=self.run.id,
                conn=writer.conn,
            )
            for conversation in conversations:
                add_conversation(self.store, self.pid, conversation, conn=writer.conn)
            for test in tests:
                add_test(self.store, self.pid, test, conn=writer.conn)
            writer.result = {
                "flowgraph_valid": record.flowgraph.valid,
                "conversation_graph_valid": bool(
                    record.conversation_graph and record.conversation_graph.valid
                ),
                "conversations": len(conversations),
                "tests": len(tests),
                "coverage": record.coverage,
            }


def execute_generation(
    store: Store,
    run_id: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    retry_failed: bool = False,
) -> GenerationOutcome:
    """Work the run's procedures not done yet (a first start or a resume); see the module docstring."""
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is not a procedure generation run (kind {run.kind})")
    run = store.start_run(run.params["project_id"], run)
    if retry_failed:
        jobs.retry_failed(store, run.id)
    llm = ModelClient(store, run.params["project_id"], run_id=run.id)
    worker = _Worker(store, run, llm)
    keys = list(run.params["procedures"])
    report = jobs.run_units(store, run.id, keys, worker.work, concurrency=1, on_progress=on_progress)
    done = jobs.progress(store, report.run)[0]
    return GenerationOutcome(report.run, done, len(keys), report.failed)


def generate(store: Store, project_id: str, **options: Any) -> GenerationOutcome:
    """Create a generation run (options as for `create_generation`) and work it to the end."""
    on_progress = options.pop("on_progress", None)
    run = create_generation(store, project_id, **options)
    return execute_generation(store, run.id, on_progress=on_progress)


def list_graphs(store: Store, project_id: str, run_id: str | None = None) -> list[ProcedureGraphs]:
    """The project's procedure graphs, oldest first (of one run, when given)."""
    found = [ProcedureGraphs.model_validate(r.body) for r in store.list_current(project_id, GRAPHS_KIND)]
    return [g for g in found if run_id is None or g.provenance.run_id == run_id]


def latest_run(store: Store, project_id: str) -> Run | None:
    """The newest procedure generation run of the project, if any."""
    runs = store.runs(project_id, kind=RUN_KIND)
    return runs[0] if runs else None


def known_procedures(store: Store, project_id: str) -> list[Procedure]:
    """The project's procedures, and those its generation runs generated for new intents (the first of a
    name wins: the project's own before generated ones)."""
    found = {p.name: p for p in store.procedures(project_id)}
    for run in reversed(store.runs(project_id, kind=RUN_KIND)):
        for body in run.params.get("generated_procedures") or []:
            procedure = Procedure.model_validate(body)
            found.setdefault(procedure.name, procedure)
    return list(found.values())
