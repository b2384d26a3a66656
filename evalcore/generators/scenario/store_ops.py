"""Scenarios in the store (seed 003: "Each scenario is an individual YAML file in eval/scenarios/"):
import files as items of kind `scenario`, list them, edit one (its YAML text, validated whole), export
them back one file each.

A scenario's identity is its name within the project: importing a file whose scenario is already stored
with the same content adds nothing; with other content it appends a revision (the item keeps its
history). The files are validated whole first; one problem anywhere and nothing is stored.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalcore.auth.audit import authorized, importing
from evalcore.auth.roles import Actor, Permission
from evalcore.errors import EvalcoreError, Problem, ValidationFailed
from evalcore.generators.scenario.e2e import E2ETestCase, as_scenario, read_e2e
from evalcore.generators.scenario.format import file_name, parse_scenario, read_scenarios, to_yaml
from evalcore.generators.scenario.from_specs import OFFLINE_MARK, generate_scenarios
from evalcore.generators.scenario.records import Scenario
from evalcore.inputs.paths import path_inside, safe_file_name
from evalcore.llm.client import ModelClient
from evalcore.specs.choice import selected_first
from evalcore.store import Revision, Store
from evalcore.store.store import new_id
from evalcore.targets.domain import Domain

KIND = "scenario"
FILE_KEY = "file"  # the body's record of the file a scenario came from, so an export can keep its name
WRITTEN_BY_KEY = "written_by"  # the model that wrote a scenario (e.g. from a spec), or the offline mark
SOURCE_KEY = "source"  # the file's own text, so an export of an unedited scenario keeps its comments
E2E_KEY = "e2e"  # a Rasa E2E test case: a scripted test, its user turns played as written


@dataclass(frozen=True)
class StoredScenario:
    """A scenario as stored: its item id, version, the file name it came from, and the model that wrote
    it ('offline (no model)' for the offline implementation; None when a person did)."""

    item_id: str
    version: int
    scenario: Scenario
    file: str | None
    written_by: str | None = None
    source: str | None = None  # the text it was imported from (its comments), None once edited
    e2e: E2ETestCase | None = None  # set for a scripted test (a Rasa E2E test case)
    author: str | None = None  # who saved the current version (the person, where no model wrote it)


@dataclass
class ImportedScenarios:
    """What an import did, by scenario name."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # a line per file of a folder that is no scenario


def _body(
    scenario: Scenario, file: str | None, written_by: str | None = None, source: str | None = None
) -> dict:
    body = {**scenario.model_dump(mode="json"), FILE_KEY: file, WRITTEN_BY_KEY: written_by}
    return body | ({SOURCE_KEY: source} if source is not None else {})


def _stored(revision: Revision) -> StoredScenario:
    body = dict(revision.body or {})
    file, written_by = body.pop(FILE_KEY, None), body.pop(WRITTEN_BY_KEY, None)
    source, script = body.pop(SOURCE_KEY, None), body.pop(E2E_KEY, None)
    scenario = Scenario.model_validate(body)
    e2e = E2ETestCase.model_validate(script) if script is not None else None
    return StoredScenario(
        revision.item_id, revision.version, scenario, file, written_by, source, e2e, revision.author
    )


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
    old = get_scenario(store, item_id)
    if old.e2e is not None:
        raise EvalcoreError(
            f"'{old.scenario.name}' is a scripted test from the Rasa E2E file {old.file}: edit the file and "
            "import it again"
        )
    scenario, problems = check_scenario_text(store, project_id, item_id, text, domain)
    if scenario is None:
        raise ValidationFailed(problems, f"scenario {old.file or file_name(old.scenario)}")
    if scenario == old.scenario and scenario_text(old) == text and old.version == expected_version:
        return old.version  # a change of comments alone is a change
    body = _body(scenario, old.file, old.written_by, text)  # the editor's text: its comments stay
    return store.save_revision(item_id, body, author, expected_version, note="edited")


def scenario_text(stored: StoredScenario) -> str:
    """The scenario as a file's text: the text it was imported or saved as (its comments and layout),
    unless that no longer reads as the scenario; else written out afresh."""
    if stored.source is not None and parse_scenario(stored.source, "stored", []) == stored.scenario:
        return stored.source
    return to_yaml(stored.scenario)


def _save_all(
    store: Store,
    project_id: str,
    author: str,
    entries: list[tuple[str, dict, str]],
    skipped: list[str],
    spec_ids: Mapping[str, str] | None = None,
) -> ImportedScenarios:
    """Store each (name, body, note) in one transaction, a scenario being known by its name: added when the
    project has none of that name, unchanged when the stored body is the same, else a new revision. A name
    in `spec_ids` is added as of that spec (the spec it was written from)."""
    stored = {(r.body or {}).get("name"): r for r in store.list_current(project_id, KIND)}
    result = ImportedScenarios(skipped=skipped)
    with store.write() as conn:
        for name, body, note in entries:
            old = stored.get(name)
            if old is None:
                store.add_item(
                    project_id, KIND, body, author, item_id=new_id(KIND), note=note, conn=conn,
                    spec_id=(spec_ids or {}).get(name),
                )  # fmt: skip
                result.added.append(name)
            elif old.body == body:
                result.unchanged.append(name)
            else:
                store.save_revision(old.item_id, body, author, old.version, note=note, conn=conn)
                result.updated.append(name)
    return result


def import_scenarios(
    store: Store,
    project_id: str,
    paths: Iterable[Path],
    author: str,
    domain: Domain | None = None,
    written_by: Mapping[str, str] | None = None,
    *,
    actor: Actor | None = None,
) -> ImportedScenarios:
    """Validate every file named (folders: their .yml/.yaml files) and store their scenarios; raise
    ValidationFailed with every problem, storing nothing, when any file has one. `written_by` names the
    model that wrote a file (by its path as given). The actor must hold the import permission; a signed-in
    one imports as themself."""
    store.project(project_id)
    with importing(store, actor, "import.scenarios", project_id=project_id, author=author) as name:
        return _import_scenarios(store, project_id, paths, name, domain, written_by)


def _import_scenarios(
    store: Store,
    project_id: str,
    paths: Iterable[Path],
    author: str,
    domain: Domain | None = None,
    written_by: Mapping[str, str] | None = None,
    from_specs: Mapping[str, str] | None = None,
) -> ImportedScenarios:
    """import_scenarios without the permission check: also for the scenarios a generation job just wrote
    (writing them needs the generation permission, checked where the job starts), each of the spec
    `from_specs` names for its path."""
    skipped: list[str] = []
    found, problems = read_scenarios(paths, domain, skipped)
    if problems:
        raise ValidationFailed(problems, "scenario files")
    if not found:
        raise ValidationFailed([Problem("(arguments)", "no scenario file given")], "scenario files")
    entries, spec_ids = [], {}
    for item in found:
        if item.path in (from_specs or {}):
            spec_ids[item.scenario.name] = from_specs[item.path]
        by = (written_by or {}).get(item.path)
        body = _body(item.scenario, Path(item.path).name, by, item.text)
        entries.append(
            (item.scenario.name, body, f"imported from {item.path}" + (f", written by {by}" if by else ""))
        )
    return _save_all(store, project_id, author, entries, skipped, spec_ids)


def import_e2e(
    store: Store,
    project_id: str,
    paths: Iterable[Path],
    author: str,
    as_scenarios: Path | None = None,
    *,
    actor: Actor | None = None,
) -> ImportedScenarios:
    """Validate Rasa E2E test files (folders: their E2E files; others skipped with a line) and store each
    test case as a scripted test, known by its name like a scenario; raise ValidationFailed with every
    problem, storing nothing, when any file has one. With `as_scenarios`, also write a seed-003 scenario
    file per test case into that folder (`e2e.as_scenario`). The actor must hold the import permission."""
    store.project(project_id)
    with importing(store, actor, "import.e2e", project_id=project_id, author=author) as name:
        return _import_e2e(store, project_id, paths, name, as_scenarios)


def _import_e2e(
    store: Store, project_id: str, paths: Iterable[Path], author: str, as_scenarios: Path | None
) -> ImportedScenarios:
    skipped: list[str] = []
    cases, problems = read_e2e(paths, skipped)
    if problems:
        raise ValidationFailed(problems, "E2E test files")
    if not cases:
        raise ValidationFailed([Problem("(arguments)", "no Rasa E2E test case found")], "E2E test files")
    entries = [
        (case.name, {**_body(as_scenario(case), Path(case.file).name), E2E_KEY: case.model_dump(mode="json")},
         f"imported from {case.file}:{case.line} (Rasa E2E test)")
        for case in cases
    ]  # fmt: skip
    result = _save_all(store, project_id, author, entries, skipped)
    if as_scenarios is not None:
        files = [(file_name(as_scenario(c)), to_yaml(as_scenario(c)), str(i)) for i, c in enumerate(cases)]
        write_files(as_scenarios, files)
    return result


def import_uploads(
    store: Store,
    project_id: str,
    uploads: Sequence[tuple[str, bytes]],
    author: str,
    *,
    e2e: bool = False,
    domain: Domain | None = None,
    actor: Actor | None = None,
) -> ImportedScenarios:
    """Import files a page received ((file name, content) pairs) as scenario files, or with `e2e` as Rasa
    E2E test files: each written under its own base name into a temporary folder, then imported as from
    disk (problems name the file as uploaded)."""
    with tempfile.TemporaryDirectory(prefix="evalcore-upload-") as folder:
        paths = []
        for name, content in uploads:
            path = Path(folder) / Path(name).name  # a name's folders (or '..') are never followed
            path.write_bytes(content)
            paths.append(path)
        try:
            if e2e:
                return import_e2e(store, project_id, paths, author, actor=actor)
            return import_scenarios(store, project_id, paths, author, domain, actor=actor)
        except (
            ValidationFailed
        ) as exc:  # name the files as the person uploaded them, not the temporary folder
            shown = [Problem(Path(p.file).name, p.message, p.line, p.field) for p in exc.problems]
            raise ValidationFailed(shown, exc.what) from None


def export_scenarios(store: Store, project_id: str, out: Path) -> list[Path]:
    """Write each of the project's scenarios to its own YAML file in `out` (created if missing), named as
    the file it was imported from, else after its name; return the files written."""
    files = [
        (stored.file or file_name(stored.scenario), scenario_text(stored), stored.item_id)
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


@dataclass(frozen=True)
class WrittenScenarios:
    """Scenario files written from specs, and what became of them."""

    files: list[Path]  # one per spec, in the specs' order
    written_by: list[str]  # the model that wrote each, or the offline mark
    with_assertions: int  # how many carry deterministic assertions (none without a domain)
    imported: ImportedScenarios | None  # the import into the project, when asked for

    @property
    def offline(self) -> bool:
        """Whether any was written offline (no model)."""
        return OFFLINE_MARK in self.written_by


def write_from_specs(
    store: Store,
    project_id: str,
    out: Path,
    llm: ModelClient,
    *,
    limit: int | None = None,
    domain: Domain | None = None,
    model: str | None = None,
    import_as: str | None = None,
) -> WrittenScenarios:
    """Write a scenario file for each spec not rejected (selected ones first, at most `limit`) into `out`,
    each headed by the spec and the model that wrote it; with `import_as`, import them as that author."""
    made = generate_scenarios(llm, selected_first(store, project_id, limit), domain, model=model)
    files, by = [], []
    for g in made:
        by.append(OFFLINE_MARK if g.offline else g.model)
        header = f"# Written from spec {g.spec_id} by {by[-1]}: review it before relying on it.\n"
        files.append((file_name(g.scenario), header + to_yaml(g.scenario), g.spec_id))
    written = write_files(out, files)
    imported = None
    if import_as is not None:
        origins = {str(path): who for path, who in zip(written, by, strict=True)}
        specs = {str(path): g.spec_id for path, g in zip(written, made, strict=True)}
        imported = _import_scenarios(store, project_id, written, import_as, domain, origins, specs)
    checkable = sum(1 for g in made if g.scenario.assertions)
    return WrittenScenarios(written, by, checkable, imported)


def write_and_import_from_specs(
    store: Store,
    project_id: str,
    llm: ModelClient,
    author: str,
    *,
    limit: int | None = None,
    domain: Domain | None = None,
    model: str | None = None,
    actor: Actor | None = None,
) -> WrittenScenarios:
    """`write_from_specs` into a temporary folder and import them as `author`: a page's "Write scenarios
    from the specs" (no folder of the server's to name). Writing is generation: an analyst's or a lead's."""
    with (
        authorized(store, actor, Permission.start_generation, "scenarios.from_specs", project_id=project_id),
        tempfile.TemporaryDirectory(prefix="evalcore-scenarios-") as folder,
    ):
        return write_from_specs(
            store, project_id, Path(folder), llm, limit=limit, domain=domain, model=model, import_as=author
        )
