"""A project folder: system card, documents, policies, tables, tools and procedures, validated whole.

Layout (every part but the system card is optional):

    system.yaml            the SystemCard (a ChatChecker target config loads as one)
    documents/*.md|.txt    prose; kind `text` unless front matter says `kind: policy`
    policies/*.md|.txt     prose of kind `policy`
    tables/*.csv           tables with a header row
    tools/*.json           one Tool each (name, description, parameters: JSON schema), or tools as
                           OpenAI, Anthropic or an MCP tools/list hold them (inputs/tool_formats.py)
    procedures/*.yaml      one Procedure each: name, intent, description, steps
    guidelines.md          the annotation guidelines annotators read beside the task (inputs/guidelines.py)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
from pydantic import ValidationError

from evalcore.auth.audit import authorize, record
from evalcore.auth.roles import Actor, Permission
from evalcore.errors import Problem, ValidationFailed
from evalcore.inputs.documents import PROSE_SUFFIXES, TABLE_SUFFIXES, read_prose, read_table
from evalcore.inputs.folder import SYSTEM_CARD_NAMES, list_project_files
from evalcore.inputs.guidelines import import_guidelines, read_guidelines
from evalcore.inputs.sources import (
    Located,
    check_length,
    dotted,
    parse_json,
    parse_yaml,
    read_text,
    validation_problems,
)
from evalcore.inputs.tool_formats import entry_names, is_foreign, read_tools
from evalcore.models import Document, DocumentKind, Procedure, SystemCard, Tool
from evalcore.store import Store, schema
from evalcore.store.store import InputChanges


@dataclass
class ProjectBundle:
    """Everything read from a project folder, and where each thing came from."""

    root: Path
    card: SystemCard
    documents: list[Document] = field(default_factory=list)
    tools: list[Tool] = field(default_factory=list)
    procedures: list[Procedure] = field(default_factory=list)
    guidelines: str | None = None  # guidelines.md: what annotators should know (Markdown)


@dataclass(frozen=True)
class ImportResult:
    """What an import did."""

    project_id: str
    changes: InputChanges
    bundle: ProjectBundle


def load_system_card(path: Path, shown: str, problems: list[Problem]) -> SystemCard | None:
    """A system card from YAML, with line-numbered problems."""
    text = read_text(path, shown, problems)
    located = parse_yaml(text, shown, problems) if text is not None else None
    if located is None:
        return None
    if not isinstance(located.data, dict):
        problems.append(Problem(shown, "a system card must be a mapping of fields", 1))
        return None
    try:
        card = SystemCard.model_validate(located.data)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, shown, located))
        return None
    check_length(card.id, schema.projects.c.id, shown, problems, located, ("id",))
    check_length(
        card.chatbot_info.name, schema.projects.c.title, shown, problems, located, ("chatbot_info", "name")
    )
    return card


def _load_tool(path: Path, shown: str, problems: list[Problem], broken: set[str]) -> Tool | None:
    """A tool from JSON; when the file is bad, the names it meant to define are added to `broken`."""
    broken.add(path.stem)
    text = read_text(path, shown, problems)
    located = parse_json(text, shown, problems) if text is not None else None
    if located is None:
        return None
    if not isinstance(located.data, dict):
        problems.append(Problem(shown, "a tool must be a JSON object", 1))
        return None
    if isinstance(located.data.get("name"), str):
        broken.add(located.data["name"])
    try:
        tool = Tool.model_validate(located.data)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, shown, located))
        return None
    check_length(tool.name, schema.tools.c.name, shown, problems, located, ("name",))
    if not _check_schema(tool, shown, located, problems):
        return None
    broken.difference_update({path.stem, tool.name})
    return tool


def _load_tools(path: Path, shown: str, problems: list[Problem], broken: set[str]) -> list[Tool]:
    """The tools of one file: ours (one tool), or a file as teams hold it (OpenAI function tools,
    Anthropic tools, an MCP tools/list result: evalcore.inputs.tool_formats), read unchanged."""
    text = read_text(path, shown, [])  # bounded as every input; _load_tool reports what is wrong with it
    try:
        data = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        data = None
    if text is None or not is_foreign(data):
        tool = _load_tool(path, shown, problems, broken)
        return [tool] if tool else []
    try:
        read = [r.tool for r in read_tools(text, shown)]
    except ValidationFailed as exc:
        problems.extend(exc.problems)
        broken.update({path.stem} | entry_names(data))
        return []
    for tool in read:
        check_length(tool.name, schema.tools.c.name, shown, problems, None, ("name",))
    return read


_META_SCHEMA = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)


def _check_schema(tool: Tool, shown: str, located: Located, problems: list[Problem]) -> bool:
    """The tool's parameters must be a valid JSON schema describing an object; every problem is recorded."""
    found = len(problems)
    errors = sorted(
        _META_SCHEMA.iter_errors(tool.parameters), key=lambda e: [str(p) for p in e.absolute_path]
    )
    for error in errors:
        loc = ("parameters", *error.absolute_path)
        problems.append(
            Problem(shown, f"not a valid JSON schema: {error.message}", located.line_of(loc), dotted(loc))
        )
    if tool.parameters.get("type") != "object":
        loc = ("parameters", "type")
        problems.append(
            Problem(shown, "the parameters schema must have type 'object'", located.line_of(loc), dotted(loc))
        )
    return len(problems) == found


def _load_procedure(path: Path, shown: str, problems: list[Problem]) -> tuple[Procedure, Located] | None:
    text = read_text(path, shown, problems)
    located = parse_yaml(text, shown, problems) if text is not None else None
    if located is None:
        return None
    if not isinstance(located.data, dict):
        problems.append(Problem(shown, "a procedure must be a mapping of fields", 1))
        return None
    try:
        procedure = Procedure.model_validate(located.data)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, shown, located))
        return None
    check_length(procedure.name, schema.procedures.c.name, shown, problems, located, ("name",))
    return procedure, located


def load_project(folder: str | Path, *, label: str | None = None) -> ProjectBundle:
    """Read and validate a whole project folder; raise ValidationFailed listing every problem found.

    `label` names the folder in problems and stored document paths (default: the folder's name); an
    archive passes its own name, so messages name the member, not a temporary folder.
    """
    root = Path(folder).resolve()
    problems: list[Problem] = []
    if not root.is_dir():
        raise ValidationFailed([Problem(str(folder), "no such folder")], "project folder")
    files = list_project_files(root, label or root.name or str(root), problems)
    card = None
    if files.card is not None:
        card = load_system_card(files.card, files.shown(files.card), problems)
    elif not files.card_refused:
        problems.append(
            Problem(files.label, f"no system card: expected one of {', '.join(SYSTEM_CARD_NAMES)}")
        )

    documents: list[Document] = []
    for sub, kind in (("documents", DocumentKind.text), ("policies", DocumentKind.policy)):
        for path in files.folders[sub]:
            shown = files.shown(path)
            if path.suffix.lower() in TABLE_SUFFIXES:
                doc = read_table(path, shown, problems)
            elif path.suffix.lower() in PROSE_SUFFIXES:
                doc = read_prose(path, shown, kind, problems)
            else:
                problems.append(
                    Problem(shown, f"unsupported document type '{path.suffix}' (use .md, .txt or .csv)")
                )
                continue
            if doc:
                documents.append(doc)
    for path in files.folders["tables"]:
        shown = files.shown(path)
        if path.suffix.lower() not in TABLE_SUFFIXES:
            problems.append(Problem(shown, f"unsupported table type '{path.suffix}' (use .csv)"))
        elif doc := read_table(path, shown, problems):
            documents.append(doc)
    seen: dict[str, str] = {}
    for doc in documents:
        if doc.id in seen:
            problems.append(
                Problem(doc.path, f"document id '{doc.id}' is also used by {seen[doc.id]}", None, "id")
            )
        seen.setdefault(doc.id, doc.path)

    tools: list[Tool] = []
    broken_tools: set[str] = set()  # named by a tool file already reported: procedures are not blamed too
    for path in files.folders["tools"]:
        shown = files.shown(path)
        if path.suffix.lower() != ".json":
            problems.append(Problem(shown, f"unsupported tool file '{path.suffix}' (use .json)"))
        else:
            for tool in _load_tools(path, shown, problems, broken_tools):
                if any(t.name == tool.name for t in tools):
                    problems.append(Problem(shown, f"tool name '{tool.name}' is defined twice", None, "name"))
                tools.append(tool)

    procedures: list[Procedure] = []
    tool_names = {t.name for t in tools}
    for path in files.folders["procedures"]:
        shown = files.shown(path)
        if path.suffix.lower() not in (".yaml", ".yml"):
            problems.append(Problem(shown, f"unsupported procedure file '{path.suffix}' (use .yaml)"))
            continue
        loaded = _load_procedure(path, shown, problems)
        if loaded is None:
            continue
        procedure, located = loaded
        if any(p.name == procedure.name for p in procedures):
            problems.append(
                Problem(
                    shown,
                    f"procedure name '{procedure.name}' is defined twice",
                    located.line_of(("name",)),
                    "name",
                )
            )
        for i, step in enumerate(procedure.steps):
            if step.api and step.api not in tool_names and step.api not in broken_tools:
                loc = ("steps", i, "api")
                problems.append(
                    Problem(
                        shown,
                        f"unknown tool '{step.api}' (no tools/*.json defines it)",
                        located.line_of(loc),
                        dotted(loc),
                    )
                )
        procedures.append(procedure)

    guidelines = read_guidelines(root, files.label, problems)
    if problems or card is None:
        raise ValidationFailed(problems, f"project folder {files.label}")
    return ProjectBundle(
        root=root, card=card, documents=documents, tools=tools, procedures=procedures, guidelines=guidelines
    )


def import_project(
    store: Store,
    folder: str | Path,
    project_id: str | None = None,
    *,
    label: str | None = None,
    actor: Actor | None = None,
) -> ImportResult:
    """Validate a project folder whole, then write it in one transaction; a re-import adds no duplicates.

    `label` (an archive's name) replaces the folder's name in problems, stored paths and the source.
    The actor must hold the import permission (a lead's)."""
    who = authorize(store, actor, Permission.import_inputs, "import.project", target=label or str(folder))
    bundle = load_project(folder, label=label)
    pid = project_id or bundle.card.id
    source = label or str(bundle.root)
    with store.write() as conn:  # one transaction: a failure leaves no empty project behind
        store.create_project(pid, bundle.card.chatbot_info.name, source, conn=conn)
        changes = store.save_inputs(
            pid, bundle.card, bundle.documents, bundle.tools, bundle.procedures, conn=conn
        )
        guided = import_guidelines(store, pid, bundle.guidelines, source, conn)
    if changes.total_written or guided:  # a re-import that wrote nothing leaves no trace either
        record(
            store,
            who,
            "import.project",
            project_id=pid,
            target=source,
            detail=f"{changes.total_written} written" + (", guidelines" if guided else ""),
        )
    return ImportResult(pid, changes, bundle)
