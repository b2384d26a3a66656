"""Every importer a page or the CLI calls asks for the import permission (a lead's) in the library: an
analyst is refused with the role named, the store keeps nothing but the refusal in the audit log, a lead's
import is kept in the trail under their name, and a signed-in lead cannot import as someone else."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from evalcore.auth import audit
from evalcore.auth.roles import Actor, PermissionDenied, Role, require_signed_in_actors
from evalcore.generators.scenario.store_ops import import_e2e, import_scenarios, import_uploads
from evalcore.generators.simulation.personas import import_personas
from evalcore.generators.simulation.store_ops import import_chatchecker_run
from evalcore.inputs import import_project
from evalcore.items.interop import import_file, import_text
from evalcore.items.jsonl import import_jsonl
from evalcore.specs.store_ops import list_specs
from evalcore.specs.transfer import import_specs, import_specs_file
from evalcore.store import Store
from tests.chatchecker_reference import chatchecker_dir, reference_run
from tests.scenario_examples import SEED_EXAMPLE as SCENARIO

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
ANALYST = Actor(name="ana", role=Role.analyst)
LEAD = Actor(name="lena", role=Role.lead)

SPECS = """- scenario: Late fees after the grace period
  given: a customer returning a rental late
  when: they ask what they owe
  then: the assistant states the late fee after the 15-minute grace period
  category: policy
"""
E2E = """test_cases:
  - test_case: greets
    steps:
      - user: hello
      - bot: Hi! How can I help?
"""
JSONL = json.dumps(
    {
        "id": "conv-auth-1",
        "generator": "doc_qa",
        "turns": [{"index": 0, "role": "user", "content": "hi"}],
        "provenance": {"producer": "x"},
    }
)
DEEPEVAL = json.dumps([{"input": "Can I return a bike after 30 days?", "expected_output": "No."}])


@pytest.fixture
def project(store: Store) -> str:
    return import_project(store, SAMPLE).project_id


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    made = {"specs": tmp_path / "specs.yaml", "scenario": tmp_path / "greets.yml"}
    made["e2e"] = tmp_path / "e2e.yml"
    made["jsonl"] = tmp_path / "items.jsonl"
    made["deepeval"] = tmp_path / "goldens.json"
    for key, text in [("specs", SPECS), ("scenario", SCENARIO), ("e2e", E2E), ("jsonl", JSONL)]:
        made[key].write_text(text, encoding="utf-8")
    made["deepeval"].write_text(DEEPEVAL, encoding="utf-8")
    made["personas"] = tmp_path / "personas"
    made["personas"].mkdir()
    shutil.copy(chatchecker_dir() / "generated_standard_persona_01.yaml", made["personas"])
    return made


def importers(
    project: str, files: dict[str, Path], actor: Actor | None
) -> dict[str, Callable[[Store], object]]:
    """Each importer, called as a page or the CLI calls it, by `actor` (the form's name is theirs)."""
    name = actor.name if actor else "bea"
    return {
        "import.specs": lambda s: import_specs_file(s, project, files["specs"], name, actor=actor),
        "import.scenarios": lambda s: import_scenarios(s, project, [files["scenario"]], name, actor=actor),
        "import.e2e": lambda s: import_e2e(s, project, [files["e2e"]], name, actor=actor),
        "import.jsonl": lambda s: import_jsonl(s, project, files["jsonl"], actor=actor),
        "import.deepeval": lambda s: import_file(s, project, "deepeval", files["deepeval"], actor=actor),
        "import.personas": lambda s: import_personas(s, project, files["personas"], actor=actor),
        "import.chatchecker": lambda s: import_chatchecker_run(s, reference_run(), project, actor=actor),
    }


def without_audit(rows: dict[str, list[str]]) -> dict[str, list[str]]:
    return {name: values for name, values in rows.items() if name != "audit_log"}


def test_an_analyst_is_refused_every_import_and_nothing_changes(store: Store, project: str, files, snapshot):
    before = without_audit(snapshot(store))
    for action, attempt in importers(project, files, ANALYST).items():
        with pytest.raises(PermissionDenied, match="importing needs the lead role; ana is an analyst"):
            attempt(store)
        assert ("ana", action, "refused") in [(e.actor, e.action, e.outcome) for e in audit.trail(store)]
    with pytest.raises(PermissionDenied, match="needs the lead role"):
        import_uploads(store, project, [("greets.yml", SCENARIO.encode())], "ana", actor=ANALYST)
    with pytest.raises(PermissionDenied, match="needs the lead role"):
        import_text(store, project, "deepeval", DEEPEVAL, "goldens.json", actor=ANALYST)
    assert without_audit(snapshot(store)) == before


def test_a_lead_imports_everything_and_the_trail_keeps_each_import(store: Store, project: str, files):
    for action, attempt in importers(project, files, LEAD).items():
        attempt(store)
        assert ("lena", action, "done") in [(e.actor, e.action, e.outcome) for e in audit.trail(store)]
    authors = {v.spec.scenario: v.saved_by for v in list_specs(store, project)}
    assert authors["Late fees after the grace period"] == "lena"


def test_a_signed_in_lead_cannot_import_as_someone_else(store: Store, project: str, snapshot):
    before = without_audit(snapshot(store))
    with pytest.raises(PermissionDenied, match="lena cannot save as bob"):
        import_specs(store, project, SPECS, "specs.yaml", "bob", actor=LEAD)
    assert without_audit(snapshot(store)) == before


def test_where_people_sign_in_an_import_naming_no_actor_is_refused(store: Store, project: str, files):
    require_signed_in_actors(True)
    try:
        for attempt in importers(project, files, None).values():
            with pytest.raises(PermissionDenied):
                attempt(store)
    finally:
        require_signed_in_actors(False)


def test_the_local_user_imports_as_before_under_the_name_given(store: Store, project: str, files):
    import_specs_file(store, project, files["specs"], "bea")
    authors = {v.spec.scenario: v.saved_by for v in list_specs(store, project)}
    assert authors["Late fees after the grace period"] == "bea"
