"""Simulation runs in the store (seed 002; issue 18, items 5 and 6): import a ChatChecker run, read a run's
dialogues back, compute its statistics, export it as a ChatChecker run folder.

A simulation run is a `runs` row of kind `simulation`; its parameters say where it came from and whether
the target is task-oriented (which decides the breakdown types counted). Each dialogue is a Conversation
of generator `simulation` made by the run (its provenance names the run), each persona a `persona` item.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore import jobs
from evalcore.auth.audit import importing
from evalcore.auth.roles import Actor
from evalcore.errors import NotFoundError, Problem, ValidationFailed
from evalcore.generators.simulation import stats
from evalcore.generators.simulation.chatchecker import RUN_INFO, ChatCheckerRun, read_run, write_run
from evalcore.generators.simulation.personas import list_personas, stored_persona
from evalcore.generators.simulation.records import (
    GENERATOR,
    RUN_KIND,
    Dialogue,
    from_conversation,
    to_conversation,
)
from evalcore.items.store_ops import add_conversation, list_conversations
from evalcore.models import Conversation, Persona, Provenance, Run, RunStatus
from evalcore.models.common import content_hash
from evalcore.store import Store, schema
from evalcore.store.store import new_id

PERSONA_KIND = "persona"
IMPORT_PROVIDER = "chatchecker"  # not "offline": these dialogues were made by ChatChecker's models


@dataclass(frozen=True)
class ImportedRun:
    """What an import wrote."""

    run_id: str
    project_id: str
    project_created: bool
    dialogues: int
    personas: int
    already: bool = False  # the same run was imported into the project before; nothing was added


@dataclass(frozen=True)
class SimulationRun:
    """A simulation run and its dialogues, in the order ChatChecker reads a run folder."""

    project_id: str
    run: Run
    dialogues: list[Dialogue]
    personas: dict[str, Persona]

    @property
    def task_oriented(self) -> bool:
        """Whether the target is judged against all 26 breakdown types (else the first 17)."""
        return bool(self.run.params.get("task_oriented", True))

    @property
    def rating_dimensions(self) -> list[str] | None:
        """The rated dimensions in their order, when the run records it."""
        return self.run.params.get("rating_dimensions") or None


def _project_for(
    store: Store, project_id: str | None, chatbot_id: str | None, label: str
) -> tuple[str, bool]:
    """The project to import into and whether it must be created: the one named, else the project named
    after the run's chatbot (as `evalcore import` names a project after its card); created when missing."""
    wanted = project_id or chatbot_id or label
    limit = schema.projects.c.id.type.length
    if len(wanted) > limit:
        where = "--project" if project_id else f"{label}/{RUN_INFO} [chatbot_id]"
        raise ValidationFailed(
            [Problem(where, f"project id too long: {len(wanted)} characters, at most {limit}")]
        )
    return wanted, wanted not in {p.id for p in store.projects()}


def import_chatchecker_run(
    store: Store, folder: Path, project_id: str | None = None, *, actor: Actor | None = None
) -> ImportedRun:
    """Import a ChatChecker run folder as a finished simulation run, validated whole first; the actor must
    hold the import permission.

    A folder with problems raises ValidationFailed and writes nothing. The run row is recorded first (the
    store records runs in their own transaction); the project, personas and dialogues are then written in
    one transaction, which also marks the run finished. Should that transaction fail, the run is marked
    failed with the reason and holds nothing.
    """
    with importing(store, actor, "import.chatchecker", project_id=project_id, target=folder.name):
        return _import_run(store, folder, project_id)


def _persona_hash(persona: Persona) -> str:
    return content_hash(persona.model_dump(mode="json"))


def _import_run(store: Store, folder: Path, project_id: str | None) -> ImportedRun:
    source = read_run(folder)
    pid, create = _project_for(store, project_id, source.chatbot_id, folder.resolve().name)
    digest = _run_hash(source)
    earlier = None if create else _imported_before(store, pid, digest)
    if earlier is not None:
        return ImportedRun(earlier.id, pid, False, 0, 0, already=True)
    if create:
        store.create_project(pid, source.chatbot_id or pid, str(folder))
    params = {
        # ChatChecker's own run id tells two imports of one chatbot apart (their start times may not).
        "name": f"ChatChecker {source.run_id}",
        "source": "chatchecker",
        "path": str(folder),
        "chatchecker_run_id": source.run_id,
        "chatbot_id": source.chatbot_id,
        "task_oriented": source.task_oriented,
        "rating_dimensions": source.rating_dimensions,
        "files": source.files,  # the run's own files, so an export keeps their timings and costs
        "content_hash": digest,  # a second import of the same run finds the first by it
    }
    run = jobs.create(store, pid, RUN_KIND, params, pending=False)
    producer = str(source.files.get(RUN_INFO, {}).get("user_simulator_llm") or "chatchecker")
    # Another run of the same personas (ChatChecker's seeds share them) points at the personas already
    # here, unchanged, rather than adding each again: the project's persona list stays one per persona.
    known = {} if create else {_persona_hash(p): item for item, p in list_personas(store, pid).items()}
    try:
        with store.write() as conn:
            persona_items: dict[str, str] = {}
            for user, persona in source.personas.items():
                item_id = known.get(_persona_hash(persona))
                if item_id is None:
                    item_id = new_id("persona")
                    body = persona.model_dump(mode="json")
                    store.add_item(pid, PERSONA_KIND, body, producer, item_id=item_id, generator=GENERATOR,
                                   run_id=run.id, conn=conn)  # fmt: skip
                persona_items[user] = item_id
            for dialogue in source.dialogues:
                persona_item = persona_items.get(dialogue.user_name)
                provenance = Provenance(
                    producer=producer,
                    provider=IMPORT_PROVIDER,
                    task="chatchecker.import",
                    inputs=[persona_item] if persona_item else [],
                    run_id=run.id,
                )
                dialogue = dialogue.model_copy(update={"persona_item": persona_item})
                add_conversation(store, pid, to_conversation(dialogue, new_id("sim"), provenance), conn=conn)
            store.finish_run(run.id, RunStatus.finished, conn=conn)
    except BaseException as exc:
        store.finish_run(run.id, RunStatus.failed, f"import failed: {exc.__class__.__name__}: {exc}")
        raise
    return ImportedRun(run.id, pid, create, len(source.dialogues), len(source.personas))


def _run_hash(source: ChatCheckerRun) -> str:
    """What makes two imports the same run: its dialogues, personas and files, wherever its folder is."""
    return content_hash(
        {
            "run_id": source.run_id,
            "dialogues": [d.model_dump(mode="json") for d in source.dialogues],
            "personas": {user: p.model_dump(mode="json") for user, p in source.personas.items()},
            "files": source.files,
        }
    )


def _imported_before(store: Store, project_id: str, digest: str) -> Run | None:
    """The finished import of the same run in the project, if there is one."""
    return next(
        (
            run
            for run in store.runs(project_id, kind=RUN_KIND)
            if run.status == RunStatus.finished and run.params.get("content_hash") == digest
        ),
        None,
    )


def run_project(store: Store, run_id: str) -> str:
    """The project a simulation run belongs to; NotFoundError when no project has it."""
    for project in store.projects():
        if any(r.id == run_id for r in store.runs(project.id, kind=RUN_KIND)):
            return project.id
    store.run(run_id)  # a run of another kind is named as such; an unknown id raises NotFoundError here
    raise NotFoundError(f"run '{run_id}' is not a simulation run")


def _of_run(conversation: Conversation, run_id: str) -> bool:
    return conversation.provenance.run_id == run_id


def run_dialogues(store: Store, run_id: str) -> tuple[str, list[tuple[str, Dialogue]]]:
    """The run's project and its dialogues with their conversation ids, in ChatChecker's reading order."""
    pid = run_project(store, run_id)
    found = [
        (view.conversation.id, from_conversation(view.conversation))
        for view in list_conversations(store, pid, generator=GENERATOR)
        if _of_run(view.conversation, run_id)
    ]
    return pid, sorted(found, key=lambda pair: pair[1].sort_key())


def load_simulation_run(store: Store, run_id: str) -> SimulationRun:
    """A simulation run with its dialogues (in ChatChecker's reading order) and personas by user."""
    pid, pairs = run_dialogues(store, run_id)
    dialogues = [dialogue for _, dialogue in pairs]
    personas: dict[str, Persona] = {}
    for dialogue in dialogues:
        if dialogue.persona_item and dialogue.user_name not in personas:
            body = store.current(dialogue.persona_item).body or {}
            personas[dialogue.user_name] = stored_persona(body, dialogue.persona_item)
    return SimulationRun(pid, store.run(run_id), dialogues, personas)


def simulation_statistics(store: Store, run_id: str) -> dict[str, Any]:
    """The run's statistics under ChatChecker's names (stats.SUMMARY_KEYS)."""
    sim = load_simulation_run(store, run_id)
    return stats.summary(sim.dialogues, sim.task_oriented, sim.rating_dimensions)


def export_chatchecker_run(store: Store, run_id: str, out: Path) -> list[Path]:
    """Write a simulation run as a ChatChecker run folder at `out` (new or empty); return the files."""
    sim = load_simulation_run(store, run_id)
    params = sim.run.params
    source = ChatCheckerRun(
        run_id=params.get("chatchecker_run_id") or run_id,
        dialogues=sim.dialogues,
        personas=sim.personas,
        files=params.get("files") or {},
        task_oriented=sim.task_oriented,
        rating_dimensions=sim.rating_dimensions or stats.rating_dimensions(sim.dialogues),
    )
    return write_run(source, out)
