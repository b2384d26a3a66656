"""Importing project folders: ChatChecker configs load unchanged; every bad record is reported with its file,
line and field, all at once, and a bad folder changes nothing in the store."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from chatchecker_reference import chatchecker_dir

from evalcore.errors import Problem, ValidationFailed
from evalcore.inputs import import_project, load_project
from evalcore.inputs.project import load_system_card
from evalcore.models import DocumentKind, SystemCard
from evalcore.store import Store

REPO = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------ a small project

SYSTEM_YAML = """\
id: spoke
chatbot_info:
  name: Spoke Support
  description: Helps cyclists of the Spoke bike shop book repairs and understand policies.
  task: Book repairs and answer questions about prices and policies.
  constraints:
    - Never promise a repair date before checking availability.
user_simulation_config:
  typical_user_turn_length: "8 words"
  max_user_turn_length: "30 words"
  max_user_turns: 10
behaviors:
  - books a repair
"""

PROJECT_FILES = {
    "system.yaml": SYSTEM_YAML,
    "documents/opening_hours.md": "# Opening hours\n\nThe shop is open Monday to Saturday, 9:00 to 18:00.\n",
    "policies/returns.md": "---\ntitle: Returns policy\nowner: support\n---\n"
    "Parts can be returned within 30 days with a receipt.\n",
    "tables/prices.csv": "service,price,duration\ntune-up,40,1 day\nbrake fix,25,2 hours\n",
    "tools/book_repair.json": """\
{
  "name": "book_repair",
  "description": "Book a repair slot.",
  "parameters": {
    "type": "object",
    "properties": {
      "day": {"type": "string"},
      "service": {"type": "string"}
    },
    "required": ["day"]
  }
}
""",
    "procedures/book_repair.yaml": """\
name: book_repair
intent: book a repair
description: Book a repair for a customer.
steps:
  - kind: message
    text: Ask which service and which day.
  - kind: api
    api: book_repair
    outcomes:
      ok: confirm the booking
      full: offer another day
""",
}


def write_project(root: Path) -> Path:
    """A minimal valid project: a system card, one document of each kind, a tool and a procedure."""
    for relative, content in PROJECT_FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


def replace(root: Path, relative: str, old: str, new: str) -> None:
    path = root / relative
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {relative}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def add_file(root: Path, relative: str, content: str | bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def problems_of(folder: Path) -> list[Problem]:
    with pytest.raises(ValidationFailed) as caught:
        load_project(folder)
    return caught.value.problems


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "spoke")


# ---------------------------------------------------------- good inputs load


def test_the_minimal_project_loads(project: Path):
    bundle = load_project(project)
    assert bundle.card.id == "spoke"
    assert bundle.card.user_simulation_config.max_user_turns == 10
    docs = {d.id: d for d in bundle.documents}
    assert set(docs) == {"opening-hours", "returns", "prices"}
    assert docs["opening-hours"].kind == DocumentKind.text
    assert docs["opening-hours"].title == "Opening hours"
    assert docs["returns"].kind == DocumentKind.policy
    assert docs["returns"].title == "Returns policy"
    assert docs["returns"].metadata == {"owner": "support"}
    assert docs["returns"].text == "Parts can be returned within 30 days with a receipt."
    assert docs["prices"].columns == ["service", "price", "duration"]
    assert docs["prices"].rows[1] == {"service": "brake fix", "price": "25", "duration": "2 hours"}
    assert [t.name for t in bundle.tools] == ["book_repair"]
    assert bundle.procedures[0].apis == ["book_repair"]


@pytest.mark.parametrize("name", ["autotod_multiwoz_config.yaml", "study_goal_assistant_config.yaml"])
def test_chatchecker_target_configs_load_as_system_cards_unchanged(name: str, tmp_path: Path):
    source = chatchecker_dir() / name
    raw = yaml.safe_load(source.read_text(encoding="utf-8"))
    problems: list[Problem] = []
    card = load_system_card(source, name, problems)
    assert problems == []
    assert isinstance(card, SystemCard)
    dumped = card.model_dump(mode="json")
    for section, value in raw.items():
        if isinstance(value, dict):
            assert {k: dumped[section][k] for k in value} == value, section
        else:
            assert dumped[section] == value, section

    # and as the system card of a project folder
    folder = tmp_path / "chatchecker"
    folder.mkdir()
    shutil.copy(source, folder / "system.yaml")
    assert load_project(folder).card == card


def test_a_chatchecker_project_imports_into_the_store(sqlite_store: Store, tmp_path: Path):
    folder = tmp_path / "goal"
    folder.mkdir()
    shutil.copy(chatchecker_dir() / "study_goal_assistant_config.yaml", folder / "system.yaml")
    result = import_project(sqlite_store, folder)
    assert result.project_id == "study_goal_assistant"
    assert sqlite_store.project("study_goal_assistant").title == "Goal Setting Assistant"
    assert sqlite_store.system_card("study_goal_assistant").user_simulation_config.max_user_turns == 25


# ------------------------------------------------------------- bad inputs


@dataclass(frozen=True)
class Case:
    """A way to break the minimal project, and the one problem it must produce (in the file it breaks)."""

    id: str
    file: str
    change: tuple[str, str] | str | bytes  # (old, new) in an existing file, or the content of a new one
    line: int | None
    field: str | None
    says: str

    def breaks(self, root: Path) -> None:
        if isinstance(self.change, tuple):
            replace(root, self.file, *self.change)
        else:
            add_file(root, self.file, self.change)


SYSTEM, TOOL, PROCEDURE = "system.yaml", "tools/book_repair.json", "procedures/book_repair.yaml"
NAME_LINE = "  name: Spoke Support\n"
LATIN_1 = "Opening hours\nCaf\u00e9 open \u00e9t\u00e9\n".encode("latin-1")

CASES = [
    Case("invalid-yaml", SYSTEM, ("behaviors:\n", "behaviors:\n  bad: : value\n"), 13, None, "invalid YAML"),
    Case(
        "misspelt-field", SYSTEM, (NAME_LINE, NAME_LINE + "  colour: blue\n"),
        4, "chatbot_info.colour", "unknown field",
    ),
    Case(
        "required-field-missing", SYSTEM, (NAME_LINE, ""),
        2, "chatbot_info.name", "required field is missing",
    ),
    Case(
        "wrong-type", SYSTEM, ("max_user_turns: 10", 'max_user_turns: "many"'),
        11, "user_simulation_config.max_user_turns", "valid integer",
    ),
    Case(
        "ragged-csv-row", "tables/parts.csv", "part,price\nchain,20\ntyre,15,extra\nbell,5\n",
        3, None, "row has 3 cells but the header has 2",
    ),
    Case(
        "invalid-json-schema", TOOL, ('"day": {"type": "string"}', '"day": {"type": "strnig"}'),
        7, "parameters.properties.day.type", "not a valid JSON schema",
    ),
    Case(
        "parameters-not-an-object", TOOL, ('"type": "object"', '"type": "array"'),
        5, "parameters.type", "type 'object'",
    ),
    Case("invalid-json", TOOL, ('"required": ["day"]', '"required": ["day"],'), 11, None, "invalid JSON"),
    Case(
        "unknown-document-kind", "documents/memo.md", "---\ntitle: Memo\nkind: memo\n---\nInternal memo.\n",
        3, "kind", "'text', 'table' or 'policy'",
    ),
    Case("not-utf8", "documents/notes.txt", LATIN_1, 2, None, "not UTF-8"),
    Case(
        "unsupported-file-type", "documents/manual.pdf", b"%PDF-1.4\n",
        None, None, "unsupported document type '.pdf'",
    ),
    Case(
        "unknown-tool-in-procedure", PROCEDURE, ("api: book_repair", "api: cancel_repair"),
        8, "steps[1].api", "unknown tool 'cancel_repair'",
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_bad_record_is_reported_with_file_line_and_field(case: Case, project: Path):
    case.breaks(project)
    problems = problems_of(project)
    assert len(problems) == 1, problems
    problem = problems[0]
    assert problem.file == f"spoke/{case.file}"
    assert problem.line == case.line
    assert problem.field == case.field
    assert case.says in problem.message
    where = (
        f"spoke/{case.file}"
        + (f":{case.line}" if case.line else "")
        + (f" [{case.field}]" if case.field else "")
    )
    assert str(problem).startswith(where)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_bad_folder_changes_nothing_in_the_store(case: Case, project: Path, sqlite_store: Store, snapshot):
    import_project(sqlite_store, project)
    sqlite_store.create_project("other", "Other")
    before = snapshot(sqlite_store)
    case.breaks(project)
    with pytest.raises(ValidationFailed) as caught:
        import_project(sqlite_store, project)
    assert "nothing was written" in str(caught.value)
    assert snapshot(sqlite_store) == before
    # under a project id that does not exist yet, not even the project is created
    with pytest.raises(ValidationFailed):
        import_project(sqlite_store, project, project_id="fresh")
    assert [p.id for p in sqlite_store.projects()] == ["spoke", "other"]


def test_a_bad_folder_changes_nothing_on_either_backend(project: Path, store: Store, snapshot):
    import_project(store, project)
    before = snapshot(store)
    replace(project, "tables/prices.csv", "brake fix,25,2 hours", "brake fix,25")
    replace(
        project, "policies/returns.md", "Parts can be returned within 30", "Parts can be returned within 14"
    )
    with pytest.raises(ValidationFailed):
        import_project(store, project)
    assert snapshot(store) == before
    assert {d.id: d.text for d in store.documents("spoke")}["returns"].endswith(
        "within 30 days with a receipt."
    )


def test_a_folder_with_several_problems_reports_all_of_them(project: Path, sqlite_store: Store, snapshot):
    replace(project, "system.yaml", "max_user_turns: 10", "max_user_turns: many")
    replace(project, "system.yaml", "  name: Spoke Support\n", "")
    add_file(project, "tables/parts.csv", "part,price\nchain,20\ntyre\n")
    add_file(project, "documents/memo.md", "---\nkind: memo\n---\nInternal memo.\n")
    add_file(project, "documents/manual.pdf", b"%PDF-1.4\n")
    add_file(project, "policies/old.txt", b"\xff\xfe old policy")
    replace(project, "tools/book_repair.json", '"required": ["day"]', '"required": ["day"],')
    add_file(
        project,
        "procedures/cancel.yaml",
        "name: cancel\nintent: cancel\nsteps:\n  - kind: api\n    api: cancel_it\n",
    )
    before = snapshot(sqlite_store)

    with pytest.raises(ValidationFailed) as caught:
        import_project(sqlite_store, project)
    found = sorted((p.file, p.line, p.field) for p in caught.value.problems)
    assert found == sorted(
        [
            ("spoke/system.yaml", 2, "chatbot_info.name"),
            ("spoke/system.yaml", 10, "user_simulation_config.max_user_turns"),
            ("spoke/tables/parts.csv", 3, None),
            ("spoke/documents/memo.md", 2, "kind"),
            ("spoke/documents/manual.pdf", None, None),
            ("spoke/policies/old.txt", 1, None),
            ("spoke/tools/book_repair.json", 11, None),
            ("spoke/procedures/cancel.yaml", 5, "steps[0].api"),
        ]
    ), caught.value.problems
    message = str(caught.value)
    assert message.startswith("8 problem(s) in the project folder spoke; nothing was written:")
    assert message.count("\n") == 8
    assert snapshot(sqlite_store) == before


def test_a_broken_tool_is_not_reported_again_by_the_procedures_that_use_it(project: Path):
    """One mistake, one problem: the procedure naming a tool whose file is broken is not blamed too."""
    replace(project, "tools/book_repair.json", '"type": "string"', '"type": "strnig"')
    problems = problems_of(project)
    assert [p.file for p in problems] == ["spoke/tools/book_repair.json"]
    # ... also when the file name is not the tool's name
    (project / "tools" / "book_repair.json").rename(project / "tools" / "booking.json")
    assert [p.file for p in problems_of(project)] == ["spoke/tools/booking.json"]


def test_a_missing_system_card_is_reported(project: Path):
    (project / "system.yaml").unlink()
    problems = problems_of(project)
    assert len(problems) == 1
    assert "no system card" in problems[0].message
    assert "system.yaml" in problems[0].message


def test_values_the_store_cannot_hold_are_reported_not_half_written(project: Path, store: Store, snapshot):
    """A title longer than the store's column is a bad record on every backend (PostgreSQL would refuse it
    half-way through an import; SQLite would take it silently)."""
    add_file(project, "documents/long.md", "---\ntitle: " + "T" * 400 + "\n---\nBody.\n")
    before = snapshot(store)
    with pytest.raises(ValidationFailed) as caught:
        import_project(store, project)
    assert [(p.file, p.line, p.field) for p in caught.value.problems] == [
        ("spoke/documents/long.md", 2, "title")
    ]
    assert "300" in caught.value.problems[0].message
    assert snapshot(store) == before


# ---------------------------------------------------------------- re-imports


def test_importing_the_same_folder_twice_duplicates_nothing(project: Path, store: Store, snapshot):
    first = import_project(store, project)
    assert first.project_id == "spoke"
    assert first.changes.total_written == 6
    before = snapshot(store)

    again = import_project(store, project)
    assert again.changes.total_written == 0
    assert sum(len(v) for v in again.changes.unchanged.values()) == 6
    assert snapshot(store) == before
    assert [p.id for p in store.projects()] == ["spoke"]


def test_a_changed_file_is_reimported_as_an_update(project: Path, store: Store):
    import_project(store, project)
    replace(project, "tables/prices.csv", "tune-up,40", "tune-up,45")
    add_file(project, "documents/faq.md", "# FAQ\n\nWe fix all brands.\n")
    changes = import_project(store, project).changes
    assert changes.updated == {"documents": ["prices"]}
    assert changes.added == {"documents": ["faq"]}
    assert changes.total_written == 2
    prices = {d.id: d for d in store.documents("spoke")}["prices"]
    assert prices.rows[0]["price"] == "45"
    assert len(store.documents("spoke")) == 4


def test_import_under_another_project_id(project: Path, store: Store):
    import_project(store, project)
    result = import_project(store, project, project_id="spoke-copy")
    assert result.changes.total_written == 6
    assert [p.id for p in store.projects()] == ["spoke", "spoke-copy"]
    assert store.project("spoke-copy").source_path == str(project.resolve())
    assert store.tools("spoke-copy") == store.tools("spoke")


# ---------------------------------------------------------- the sample project

SAMPLE = REPO / "data" / "sample"


def test_the_sample_project_is_valid_and_has_every_kind_of_input():
    bundle = load_project(SAMPLE)
    assert {d.kind for d in bundle.documents} == set(DocumentKind)
    assert bundle.tools and bundle.procedures
    tool_names = {t.name for t in bundle.tools}
    for procedure in bundle.procedures:
        assert set(procedure.apis) <= tool_names, procedure.name
    for doc in bundle.documents:
        assert (SAMPLE.parent / doc.path).is_file(), doc.path
        assert doc.text.strip(), doc.id


def test_the_sample_project_imports_once_and_reimports_as_a_no_op(store: Store, snapshot):
    first = import_project(store, SAMPLE)
    bundle = first.bundle
    assert first.changes.total_written == 1 + len(bundle.documents) + len(bundle.tools) + len(
        bundle.procedures
    )
    assert store.system_card(first.project_id) == bundle.card
    assert sorted(d.id for d in store.documents(first.project_id)) == sorted(d.id for d in bundle.documents)
    before = snapshot(store)
    assert import_project(store, SAMPLE).changes.total_written == 0
    assert snapshot(store) == before


def test_a_failure_while_writing_leaves_no_empty_project(sqlite_store, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(sqlite_store, "save_inputs", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        import_project(sqlite_store, SAMPLE)
    assert sqlite_store.projects() == []
