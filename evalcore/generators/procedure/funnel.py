"""Table 1 of seed 001 (ALMITA, Section 4.1): how many items survive each stage of one procedure
generation run, from procedures to tests, so a QA analyst sees where a run lost its material (a
procedure calling an API the project lacks, a flowgraph that broke a rule, conversations that broke the
A.6 rules).
"""

from __future__ import annotations

from evalcore.generators.procedure.apis import GENERATED_TOOLS
from evalcore.generators.procedure.job import RUN_KIND, list_graphs
from evalcore.items.store_ops import list_conversations, list_tests
from evalcore.models import Procedure
from evalcore.store import Store

STAGES = (
    "procedures",
    "with known APIs",
    "valid flowgraphs",
    "valid conversation graphs",
    "conversations",
    "keeping the A.6 rules",
    "tests",
)


def funnel(store: Store, project_id: str, run_id: str) -> list[tuple[str, int]]:
    """(stage, count) of the run, in Table 1's order (STAGES)."""
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise ValueError(f"'{run_id}' is not a procedure generation run (kind {run.kind})")
    generated = [Procedure.model_validate(b) for b in run.params.get("generated_procedures") or []]
    by_name = {p.name: p for p in store.procedures(project_id)} | {p.name: p for p in generated}
    chosen = [by_name[n] for n in run.params.get("procedures") or [] if n in by_name]
    tools = {t.name for t in store.tools(project_id)} | {
        t["name"] for t in run.params.get(GENERATED_TOOLS) or []
    }
    graphs = list_graphs(store, project_id, run_id)
    conversations = [
        v.conversation
        for v in list_conversations(store, project_id, generator="procedure")
        if v.conversation.provenance.run_id == run_id
    ]
    tests = [t for t in list_tests(store, project_id) if t.provenance.run_id == run_id]
    counts = (
        len(chosen),
        sum(set(p.apis) <= tools for p in chosen),
        sum(g.flowgraph.valid for g in graphs),
        sum(bool(g.conversation_graph and g.conversation_graph.valid) for g in graphs),
        len(conversations),
        sum(not c.metadata.get("problems") for c in conversations),
        len(tests),
    )
    return list(zip(STAGES, counts, strict=True))


def funnel_line(stages: list[tuple[str, int]]) -> str:
    """The stages as one line: 'procedures 6 -> with known APIs 6 -> ... -> tests 180'."""
    return " -> ".join(f"{name} {count}" for name, count in stages)
