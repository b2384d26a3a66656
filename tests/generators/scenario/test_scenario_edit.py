"""Editing a stored scenario (the Scenarios page's editor): a valid edit is a new revision, an invalid one
is refused with every problem located and changes nothing, a stale one is refused."""

from __future__ import annotations

import pytest
from scenario_examples import SEED_EXAMPLE

from evalcore.errors import StaleVersionError, ValidationFailed
from evalcore.generators.scenario import Domain, import_scenarios, list_scenarios
from evalcore.generators.scenario.store_ops import add_scenario, get_scenario, save_scenario
from evalcore.store import Store

OTHER = "scenario:\n  name: Other\n  simulation_context: You want something else.\n"


@pytest.fixture
def store(tmp_path) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'store.db'}")
    store.create_project("demo", "Demo", None)
    folder = tmp_path / "eval"
    folder.mkdir()
    (folder / "order_delay.yml").write_text(SEED_EXAMPLE)
    (folder / "other.yml").write_text(OTHER)
    import_scenarios(store, "demo", [folder], "ann")
    return store


def test_a_valid_edit_is_a_new_revision_and_keeps_the_file_name(store):
    first = list_scenarios(store, "demo")[0]
    edited = SEED_EXAMPLE.replace("impatient customer", "patient customer")
    assert save_scenario(store, "demo", first.item_id, edited, "bob", first.version) == first.version + 1
    now = get_scenario(store, first.item_id)
    assert "patient customer" in now.scenario.simulation_context and now.file == "order_delay.yml"
    assert store.history(first.item_id)[-1].author == "bob"
    assert save_scenario(store, "demo", first.item_id, edited, "bob", now.version) == now.version, "no change"
    with pytest.raises(StaleVersionError):
        save_scenario(store, "demo", first.item_id, SEED_EXAMPLE, "eve", first.version)


def test_who_wrote_a_scenario_is_kept_through_imports_and_edits(store, tmp_path):
    path = tmp_path / "written.yml"
    path.write_text(OTHER.replace("name: Other", "name: Written"))
    import_scenarios(store, "demo", [path], "ann", written_by={str(path): "offline (no model)"})
    (written,) = [s for s in list_scenarios(store, "demo") if s.scenario.name == "Written"]
    assert written.written_by == "offline (no model)"
    assert store.history(written.item_id)[-1].note.endswith("written by offline (no model)")
    assert import_scenarios(store, "demo", [path], "ann").updated == ["Written"], "now as a person's file"
    assert get_scenario(store, written.item_id).written_by is None
    import_scenarios(store, "demo", [path], "ann", written_by={str(path): "openai/gpt-4o"})
    edited = OTHER.replace("name: Other", "name: Written").replace("something else", "a refund")
    save_scenario(store, "demo", written.item_id, edited, "bob", written.version + 2)
    assert get_scenario(store, written.item_id).written_by == "openai/gpt-4o", "an edit keeps who wrote it"
    assert [s.written_by for s in list_scenarios(store, "demo")][:2] == [None, None]


def test_an_invalid_edit_reports_every_problem_and_changes_nothing(store):
    first, second = list_scenarios(store, "demo")
    bad = SEED_EXAMPLE.replace(
        "operator: any\n      - flow_completed", "operator: some\n      - flow_completed"
    )
    bad = bad.replace("- action_executed: action_check_order_status", "- action_ran: x")
    with pytest.raises(ValidationFailed) as raised:
        save_scenario(store, "demo", first.item_id, bad, "bob", first.version)
    assert [(p.file, p.field) for p in raised.value.problems] == [
        ("order_delay.yml", "scenario.goals.assertions[0].flow_started.operator"),
        ("order_delay.yml", "scenario.goals.assertions[3].action_ran"),
    ]
    assert all(p.line for p in raised.value.problems)
    with pytest.raises(ValidationFailed, match="used by another scenario"):
        save_scenario(store, "demo", second.item_id, SEED_EXAMPLE, "bob", second.version)
    with pytest.raises(ValidationFailed, match="not in the domain"):
        save_scenario(
            store, "demo", first.item_id, SEED_EXAMPLE, "bob", first.version, Domain(flows=frozenset())
        )
    assert [s.version for s in list_scenarios(store, "demo")] == [first.version, second.version]


def test_a_new_scenario_is_stored_only_when_valid(store):
    text = OTHER.replace("name: Other", "name: Third")
    item_id = add_scenario(store, "demo", text, "bob")
    assert get_scenario(store, item_id).scenario.name == "Third" and get_scenario(store, item_id).file is None
    with pytest.raises(ValidationFailed) as raised:
        add_scenario(store, "demo", text.replace("simulation_context", "simulation_contxt"), "bob")
    assert [(p.file, p.line, p.field) for p in raised.value.problems] == [
        ("new scenario", 3, "scenario.simulation_contxt"),
        ("new scenario", 1, "scenario"),
    ]
    with pytest.raises(ValidationFailed, match="used by another scenario"):
        add_scenario(store, "demo", OTHER, "bob")
    assert [s.scenario.name for s in list_scenarios(store, "demo")] == [
        "Agent handles delayed order gracefully", "Other", "Third",
    ]  # fmt: skip
