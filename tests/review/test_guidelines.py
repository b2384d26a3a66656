"""The project's annotation guidelines (issue 28): guidelines.md read on import, kept as versions; a lead's
edit on top (version-checked, in the audit trail), never undone by importing the same file again; an
annotator may not edit them; a file that is no text or links out of the folder is refused on import."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalcore.auth.audit import trail
from evalcore.auth.roles import Actor, PermissionDenied, Role
from evalcore.errors import EvalcoreError, StaleVersionError, ValidationFailed
from evalcore.inputs import import_project
from evalcore.review.guidelines import edit_guidelines, guidelines
from evalcore.store import Store

ROOT = Path(__file__).resolve().parents[2]
LEAD = Actor(name="lee", role=Role.lead)


@pytest.fixture
def project(tmp_path) -> Path:
    folder = tmp_path / "sample"
    shutil.copytree(ROOT / "data" / "sample", folder)
    return folder


def test_the_sample_projects_bring_their_guidelines(store: Store):
    for folder in ("sample", "retail"):
        pid = import_project(store, ROOT / "data" / folder).project_id
        rules = guidelines(store, pid)
        assert rules is not None and rules.version == 1 and rules.saved_by == "import"
        assert rules.text == (ROOT / "data" / folder / "guidelines.md").read_text(encoding="utf-8")
        assert "**Not grounded**" in rules.text and "**Wrong answer**" in rules.text, "the page's label words"


def test_a_leads_edit_is_a_version_and_a_reimport_of_the_same_file_keeps_it(store: Store, project: Path):
    pid = import_project(store, project).project_id
    assert edit_guidelines(store, pid, "# Rules\n\nAccept only grounded answers.", "lee", 1, actor=LEAD) == 2
    import_project(store, project)  # the file did not change: the lead's edit stays current
    rules = guidelines(store, pid)
    assert (rules.version, rules.saved_by, rules.text) == (
        2,
        "lee",
        "# Rules\n\nAccept only grounded answers.",
    )

    (project / "guidelines.md").write_text("# New rules from the file\n", encoding="utf-8")
    import_project(store, project)  # the file changed: its text is the next version; the edit is history
    rules = guidelines(store, pid)
    assert (rules.version, rules.saved_by, rules.text) == (3, "import", "# New rules from the file\n")
    actions = [(e.action, e.actor) for e in trail(store, project_id=pid)]
    assert ("review.guidelines", "lee") in actions and ("guidelines.saved", "lee") in actions


def test_only_a_lead_edits_and_a_stale_or_empty_edit_changes_nothing(store: Store, project: Path):
    pid = import_project(store, project).project_id
    annotator = Actor(name="ann", role=Role.annotator)
    with pytest.raises(PermissionDenied, match="lead"):
        edit_guidelines(store, pid, "my own rules", "ann", 1, actor=annotator)
    refused = [e for e in trail(store, project_id=None) if e.outcome == "refused"]
    assert refused and refused[0].action == "review.guidelines" and refused[0].actor == "ann"
    edit_guidelines(store, pid, "first edit", "lee", 1, actor=LEAD)
    with pytest.raises(StaleVersionError):
        edit_guidelines(
            store, pid, "an edit on the old version", "dana", 1, actor=Actor(name="dana", role=Role.lead)
        )
    with pytest.raises(EvalcoreError, match="empty"):
        edit_guidelines(store, pid, "  \n", "lee", 2, actor=LEAD)
    assert guidelines(store, pid).text == "first edit"


def test_a_project_without_guidelines_gets_its_first_from_a_lead(store: Store, project: Path):
    (project / "guidelines.md").unlink()
    pid = import_project(store, project).project_id
    assert guidelines(store, pid) is None
    assert edit_guidelines(store, pid, "Be kind.", "lee", None, actor=LEAD) == 1
    assert guidelines(store, pid).text == "Be kind."


def test_guidelines_that_are_not_text_or_link_out_of_the_folder_are_refused(
    store: Store, project: Path, tmp_path
):
    (project / "guidelines.md").write_bytes(b"\xff\xfe bad bytes")
    with pytest.raises(ValidationFailed) as bad:
        import_project(store, project)
    assert any(p.file == "sample/guidelines.md" for p in bad.value.problems)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for annotators", encoding="utf-8")
    (project / "guidelines.md").unlink()
    (project / "guidelines.md").symlink_to(secret)
    with pytest.raises(ValidationFailed, match="outside the project folder"):
        import_project(store, project)
    assert store.projects() == [], "a refused import changes nothing"
