"""The Spec review table (issue 15, item 5): built once per change of the specs, filtered in memory, and
never stale: any save, review, lock or selection changes the stamp the page caches it on."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.inputs import import_project
from evalcore.models import SpecStatus
from evalcore.specs.browse import filter_specs, spec_counts, spec_table
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.selecting import select_specs
from evalcore.specs.store_ops import add_human_spec, edit_spec, list_specs, lock_spec, review_spec, spec_stamp
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "ridgeline_support"


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    url = f"sqlite:///{tmp_path / 'specs.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    import_project(store, ROOT / "data" / "sample")
    for topic, category in (("helmet returns", "policy"), ("opening hours", "store information"),
                            ("tubeless tyres", "product information")):  # fmt: skip
        draft = SpecDraft(scenario=f"Asking about {topic}", given="a customer",
                          when=f"they ask about {topic}", then="the assistant answers", category=category,
                          documents=["inventory"])  # fmt: skip
        add_human_spec(store, PROJECT, draft, "ana")
    return store


def test_table_counts_and_filters(store):
    ids = [v.spec.id for v in list_specs(store, PROJECT)]
    review_spec(store, ids[1], "ana", 1, SpecStatus.rejected, "duplicate")
    table = spec_table(list_specs(store, PROJECT))
    assert spec_counts(table) == {"Candidates": 3, "Selected": 0, "Accepted": 0, "Rejected": 1, "offline": 0}
    assert list(filter_specs(table, "TUBELESS")["id"]) == [ids[2]]
    assert list(filter_specs(table, "they ask about opening")["id"]) == [ids[1]]  # the steps are searched
    assert list(filter_specs(table, statuses=["rejected"])["id"]) == [ids[1]]
    assert list(filter_specs(table, categories=["policy"])["id"]) == [ids[0]]
    assert filter_specs(table, only_selected=True).empty


def test_every_change_of_the_specs_changes_the_stamp(store):
    ids = [v.spec.id for v in list_specs(store, PROJECT)]
    stamps = [spec_stamp(store, PROJECT)]
    edit_spec(store, ids[0], "ana", 1, scenario="Asking about worn helmets")
    stamps.append(spec_stamp(store, PROJECT))
    lock_spec(store, ids[1], "ana", 1)
    stamps.append(spec_stamp(store, PROJECT))
    select_specs(store, PROJECT, 2)
    stamps.append(spec_stamp(store, PROJECT))
    draft = SpecDraft(scenario="New", given="g", when="w", then="t", category="policy")
    add_human_spec(store, PROJECT, draft, "ana")
    stamps.append(spec_stamp(store, PROJECT))
    assert len(set(stamps)) == len(stamps)
    assert spec_stamp(store, PROJECT) == stamps[-1]  # nothing changed: the page's cache is hit


def test_the_page_shows_a_change_made_elsewhere_on_its_next_rerun(store):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["user_name"] = "ana"
    at.run()
    at.switch_page("pages/specs.py").run()
    spec_id = list_specs(store, PROJECT)[0].spec.id
    edit_spec(store, spec_id, "ben", 1, scenario="Renamed by Ben elsewhere")
    at.run()
    assert not at.exception, at.exception
    shown = at.dataframe[0].value
    assert "Renamed by Ben elsewhere" in set(shown["scenario"]) and "text" not in shown.columns
