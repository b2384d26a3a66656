"""The project's stages as a checklist (evalcore/reports/checklist.py): counts from the store, done once a
stage holds something, the next thing to do the first stage that does not."""

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.inputs import import_project
from evalcore.reports.checklist import checklist, next_stage
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.store_ops import add_human_spec


def test_a_fresh_import_has_documents_and_specs_come_next(sqlite_store):
    pid = import_project(sqlite_store, SAMPLE_PROJECT).project_id
    stages = checklist(sqlite_store, pid)
    assert [s.key for s in stages] == [
        "documents", "specs", "reviewed_specs", "generated", "reviewed", "runs", "reports",
    ]  # fmt: skip
    assert stages[0].count == len(sqlite_store.documents(pid)) and stages[0].done
    assert [s.count for s in stages[1:]] == [0] * 6 and not any(s.done for s in stages[1:])
    assert next_stage(stages).key == "specs"


def test_a_spec_written_by_a_person_moves_the_next_step_on(sqlite_store):
    pid = import_project(sqlite_store, SAMPLE_PROJECT).project_id
    draft = SpecDraft(
        scenario="Says the return window", given="A customer", when="asks", then="30 days", category="policy"
    )
    add_human_spec(sqlite_store, pid, draft, "dana")
    stages = checklist(sqlite_store, pid)
    assert stages[1].count == 1 and stages[1].done
    assert next_stage(stages).key == "reviewed_specs"
