"""Page test (AppTest): on Scenarios a person writes scenarios from the project's specs without the CLI
(issue 28): stored at once, with checks of events only when a target's domain is chosen, and refused in
one line (nothing stored) for a project with no spec or a signed-in annotator."""

from __future__ import annotations

from pathlib import Path

import pytest
from page_app import open_page

from evalcore.auth.roles import Actor, PermissionDenied, Role
from evalcore.generators.scenario import list_scenarios
from evalcore.generators.scenario.store_ops import write_and_import_from_specs
from evalcore.inputs import import_project
from evalcore.llm import ModelClient
from evalcore.specs.generation import generate_specs
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path, monkeypatch) -> tuple[Store, str]:
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    store = Store(url)
    return store, import_project(store, ROOT / "data" / "sample").project_id


def test_scenarios_are_written_from_the_specs_and_stored(project):
    store, pid = project
    generate_specs(store, pid, m=4, from_card=False)
    at = open_page("pages/scenarios.py", "ana")
    next(n for n in at.number_input if n.label.startswith("At most this many specs")).set_value(3)
    next(b for b in at.button if b.label == "Write scenarios").click().run()
    assert not at.exception, at.exception
    stored = list_scenarios(store, pid)
    assert len(stored) == 3
    assert any("Wrote 3 scenario" in str(s.value) for s in at.success), [s.value for s in at.success]
    assert all(s.scenario.assertions == [] for s in stored)  # no target chosen: no domain to check against

    at = open_page("pages/scenarios.py", "ana")
    next(s for s in at.selectbox if s.label.startswith("Check slots and flows")).set_value("demo-flows").run()
    next(b for b in at.button if b.label == "Write scenarios").click().run()
    assert not at.exception, at.exception
    assert len(list_scenarios(store, pid)) == 4, "4 specs: the 3 again (with checks now) and 1 more"
    assert any(s.scenario.assertions for s in list_scenarios(store, pid))


def test_no_spec_or_an_annotator_is_refused_and_nothing_is_stored(project):
    store, pid = project
    at = open_page("pages/scenarios.py", "ana")
    next(b for b in at.button if b.label == "Write scenarios").click().run()
    assert not at.exception and any("no spec to write from" in str(e.value) for e in at.error)
    generate_specs(store, pid, m=2, from_card=False)
    with pytest.raises(PermissionDenied, match="analyst"):
        write_and_import_from_specs(
            store, pid, ModelClient(store, pid), "cy", actor=Actor(name="cy", role=Role.annotator)
        )
    assert list_scenarios(store, pid) == []
