"""Scenarios in the store (seed 003: "Each scenario is an individual YAML file in eval/scenarios/"):
import files as items of kind `scenario`, list them, edit one (its YAML text, validated whole), export
them back one file each.

A scenario's identity is its name within the project: importing a file whose scenario is already stored
with the same content adds nothing; with other content it appends a revision (the item keeps its
history). The files are validated whole first; one problem anywhere and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalcore.errors import Problem, ValidationFailed
from evalcore.generators.scenario.domain import Domain
from evalcore.generators.scenario.format import file_name, parse_scenario, read_scenarios, to_yaml
from evalcore.generators.scenario.records import Scenario
from evalcore.inputs.paths import path_inside, safe_file_name
from evalcore.store import Revision, Store
from evalcore.store.store import new_id

KIND = "scenario"
FILE_KEY = "file"  # the body's record of the file a scenario came from, so an export can keep its name
WRITTEN_BY_KEY = "written_by"  # the model that wrote a scenario (e.g. from a spec), or the offline mark


@dataclass(frozen=True)
class StoredScenario:
    """A scenario as stored: its item id, version, the file name it came from, and the model that wrote
    it ('offline (no model)' for the offline implementation; None when a person did)."""

    item_id: str
    version: int
    scenario: Scenario
    file: str | None
    written_by: str | None = None


@dataclass
class ImportedScenarios:
    """What an import did, by scenario name."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def _body(scenario: Scenario, file: str | None, written_by: str | None = None) -> dict:
    return {**scenario.model_dump(mode="json"), FILE_KEY: file, WRITTEN_BY_KEY: written_by}


def _stored(revision: Revision) -> StoredScenario:
    body = dict(revision.body or {})
    file, written_by = body.pop(FILE_KEY, None), body.pop(WRITTEN_BY_KEY, None)
    return StoredScenario(revision.item_id, revision.version, Scenario.model_validate(body), file, written_by)


def list_scenarios(store: Store, project_id: str) -> list[StoredScenario]:
    """The project's scenarios (current versions), oldest first."""
    return [_stored(revision) for revision in store.list_current(project_id, KIND)]


def get_scenario(store: Store, item_id: str) -> StoredScenario:
    """One scenario's current version."""
    return _stored(store.current(item_id))


NEW_FILE = "new scenario"  # how a scenario not stored yet is named in its problems


def check_scenario_text(
    store: Store, project_id: str, item_id: str | None, text: str, domain: Domain | None = None
) -> tuple[Scenario | None, list[Problem]]:
    """The scenario in the YAML `text` written for the stored scenario `item_id` (None: a new one), and
    every problem with it (file, line, field): the format's, the domain's when given, and a name another
    scenario of the project has. The scenario is None when there is any problem."""
    shown = NEW_FILE
    if item_id is not None:
        old = get_scenario(store, item_id)
        shown = old.file or file_name(old.scenario)
    problems: list[Problem] = []
    scenario = parse_scenario(text, shown, problems, domain)
    if scenario is not None:
        others = {s.scenario.name for s in list_scenarios(store, project_id) if s.item_id != item_id}
        if scenario.name in others:
            message = f"scenario name '{scenario.name}' is used by another scenario of the project"
            problems.append(Problem(shown, message, field="scenario.name"))
    return (None, problems) if problems else (scenario, problems)


def add_scenario(store: Store, project_id: str, text: str, author: str, domain: Domain | None = None) -> str:
    """Store the scenario written in the YAML `text` as a new one of the project and return its item id;
    raise ValidationFailed with every problem (see `check_scenario_text`), storing nothing, on any."""
    store.project(project_id)
    scenario, problems = check_scenario_text(store, project_id, None, text, domain)
    if scenario is None:
        raise ValidationFailed(problems, NEW_FILE)
    return store.add_item(
        project_id, KIND, _body(scenario, None), author, item_id=new_id(KIND), note="written"
    )


def save_scenario(
    store: Store,
    project_id: str,
    item_id: str,
    text: str,
    author: str,
    expected_version: int,
    domain: Domain | None = None,
) -> int:
    """Save the edited YAML `text` of a scenario as a new revision on top of `expected_version` and
    return the version now current. Raise ValidationFailed with every problem (see
    `check_scenario_text`), saving nothing, when it has any; StaleVersionError when someone saved in
    between. An edit that changes nothing saves nothing."""
    scenario, problems = check_scenario_text(store, project_id, item_id, text, domain)
    old = get_scenario(store, item_id)
    if scenario is None:
        raise ValidationFailed(problems, f"scenario {old.file or file_name(old.scenario)}")
    if scenario == old.scenario and old.version == expected_version:
        return old.version
    body = _body(scenario, old.file, old.written_by)
    return store.save_revision(item_id, body, author, expected_version, note="edited")


def import_scenarios(
    store: Store,
    project_id: str,
    paths: Iterable[Path],
    author: str,
    domain: Domain | None = None,
    written_by: Mapping[str, str] | None = None,
) -> ImportedScenarios:
    """Validate every file named (folders: their .yml/.yaml files) and store their scenarios; raise
    ValidationFailed with every problem, storing nothing, when any file has one. `written_by` names the
    model that wrote a file (by its path as given), for scenarios a model wrote."""
    store.project(project_id)
    found, problems = read_scenarios(paths, domain)
    if problems:
        raise ValidationFailed(problems, "scenario files")
    if not found:
        raise ValidationFailed([Problem("(arguments)", "no scenario file given")], "scenario files")
    stored = {s.scenario.name: s for s in list_scenarios(store, project_id)}
    result = ImportedScenarios()
    with store.write() as conn:
        for item in found:
            name, file = item.scenario.name, Path(item.path).name
            by = (written_by or {}).get(item.path)
            old = stored.get(name)
            note = f"imported from {item.path}" + (f", written by {by}" if by else "")
            if old is None:
                body = _body(item.scenario, file, by)
                store.add_item(project_id, KIND, body, author, item_id=new_id(KIND), note=note, conn=conn)
                result.added.append(name)
            elif (old.scenario, old.file, old.written_by) == (item.scenario, file, by):
                result.unchanged.append(name)
            else:
                body = _body(item.scenario, file, by)
                store.save_revision(old.item_id, body, author, old.version, note=note, conn=conn)
                result.updated.append(name)
    return result


def export_scenarios(store: Store, project_id: str, out: Path) -> list[Path]:
    """Write each of the project's scenarios to its own YAML file in `out` (created if missing), named as
    the file it was imported from, else after its name; return the files written."""
    files = [
        (stored.file or file_name(stored.scenario), to_yaml(stored.scenario), stored.item_id)
        for stored in list_scenarios(store, project_id)
    ]
    return write_files(out, files)


def write_files(out: Path, files: Sequence[tuple[str, str, str]]) -> list[Path]:
    """Write each (file name, text, tag) to its own file in `out` (created if missing), a name already
    written getting `_<tag>` before its suffix; return the files written."""
    named: list[tuple[str, str]] = []
    taken: set[str] = set()
    for name, text, tag in files:
        if name in taken:  # e.g. two scenarios imported from files of one name in different folders
            name = f"{Path(name).stem}_{tag}{Path(name).suffix}"
        taken.add(safe_file_name(name, "scenario file name"))  # every name checked before any file is written
        named.append((name, text))
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, text in named:
        path_inside(out, name, "scenario file name")
        path = out / name
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)  # never half a file, even after a crash
        written.append(path)
    return written
