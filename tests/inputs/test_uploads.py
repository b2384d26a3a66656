"""A project sent as loose files (evalcore.inputs.uploads, Home's upload): the sample's files sent flat
import as the folder does; every refused file is named on its own line and nothing is written; a zip
member's name is held to the same one file-name rule; importing is a lead's."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from evalcore.auth.roles import Actor, PermissionDenied, Role
from evalcore.errors import ValidationFailed
from evalcore.inputs import import_project
from evalcore.inputs.archive import import_archive
from evalcore.inputs.limits import MAX_FILE_MB_ENV
from evalcore.inputs.uploads import folder_for, import_files
from evalcore.store import Store

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"


def sent(folder: str) -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted((SAMPLE / folder).iterdir())]


def everything_but_policies() -> list[tuple[str, bytes]]:
    files = [("system.yaml", (SAMPLE / "system.yaml").read_bytes())]
    for folder in ("documents", "tables", "tools", "procedures"):
        files += sent(folder)
    return files


def contents(store: Store, pid: str) -> tuple:
    return (
        sorted((d.id, d.kind.value, d.title) for d in store.documents(pid)),
        sorted(t.name for t in store.tools(pid)),
        sorted(p.name for p in store.procedures(pid)),
        store.system_card(pid),
    )


def test_the_sample_sent_as_files_imports_as_its_folder_does(tmp_path):
    folder_store = Store(f"sqlite:///{tmp_path / 'folder.db'}")
    pid = import_project(folder_store, SAMPLE).project_id
    upload_store = Store(f"sqlite:///{tmp_path / 'upload.db'}")
    done = import_files(upload_store, everything_but_policies(), policies=sent("policies"))
    assert done.project_id == pid and done.changes.total_written > 0
    assert contents(upload_store, pid) == contents(folder_store, pid)
    assert {d.path.split("/")[0] for d in upload_store.documents(pid)} == {"upload"}
    again = import_files(upload_store, everything_but_policies(), policies=sent("policies"))
    assert again.changes.total_written == 0, "sent again: nothing new"


def test_files_go_to_the_folder_of_their_kind():
    assert [folder_for(n) for n in ("system.yaml", "a.MD", "t.csv", "x.json", "p.yml", "x.exe")] == [
        "", "documents", "tables", "tools", "procedures", None,
    ]  # fmt: skip
    assert folder_for("rules.md", policy=True) == "policies"


def test_every_refused_file_is_named_and_nothing_is_written(tmp_path, monkeypatch):
    store = Store(f"sqlite:///{tmp_path / 'u.db'}")
    good = everything_but_policies()
    bad = [
        ("../escape.md", b"x"),
        (".hidden.md", b"x"),
        ("tab\tname.md", b"x"),
        ("notes.exe", b"x"),
        ("products.csv", b"name\nagain\n"),  # a second products.csv
    ]
    with pytest.raises(ValidationFailed) as caught:
        import_files(store, good + bad)
    why = {p.file: p.message for p in caught.value.problems}
    assert why["../escape.md"].startswith("a file name cannot hold a path separator")
    assert why[".hidden.md"].startswith("a file name cannot start with a dot")
    assert why["tab\tname.md"].startswith("a file name cannot hold NUL or other control characters")
    assert why["notes.exe"].startswith("no project folder reads this kind of file")
    assert why["products.csv"] == "sent twice; refused"
    assert all("\n" not in p.message for p in caught.value.problems)
    assert store.projects() == []

    with pytest.raises(ValidationFailed, match="no system card"):
        import_files(store, sent("documents"))
    monkeypatch.setenv(MAX_FILE_MB_ENV, "0.001")  # about 1 KB
    with pytest.raises(ValidationFailed) as caught:
        import_files(store, good)
    assert any(f"(set {MAX_FILE_MB_ENV})" in p.message for p in caught.value.problems)
    assert store.projects() == []


def test_only_a_lead_imports(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'u.db'}")
    with pytest.raises(PermissionDenied, match="lead"):
        import_files(store, everything_but_policies(), actor=Actor(name="ana", role=Role.analyst))
    assert store.projects() == []


def test_a_zip_member_named_against_the_file_name_rule_is_refused(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'z.db'}")
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("system.yaml", (SAMPLE / "system.yaml").read_bytes())
        archive.writestr("documents/bell\x07.md", b"# Bell\n\ntext\n")
        archive.writestr(".DS_Store", b"\0")  # hidden: skipped as a folder's are, not refused
    with pytest.raises(ValidationFailed) as caught:
        import_archive(store, data.getvalue(), "p.zip")
    [problem] = caught.value.problems
    assert problem.file == "p.zip/documents/bell\x07.md" and "control characters; refused" in problem.message
    assert store.projects() == []
