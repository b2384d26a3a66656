"""Scenarios in the store: validated whole before anything is stored, identity by name (a re-import adds
nothing twice, a changed file appends a revision), one YAML file per scenario out."""

from __future__ import annotations

import pytest
from scenario_examples import SEED_EXAMPLE

from evalcore.errors import ValidationFailed
from evalcore.generators.scenario import KIND, export_scenarios, import_scenarios, list_scenarios
from evalcore.generators.scenario.format import read_scenarios
from evalcore.generators.scenario.store_ops import save_scenario
from evalcore.store import Store

SECOND = """\
scenario:
  name: User changes their mind
  simulation_context: You start a transfer, then cancel it.
  goals:
    assertions:
      - flow_started: transfer_money
      - flow_cancelled:
          flow_id: transfer_money
"""


@pytest.fixture
def store(tmp_path) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'store.db'}")
    store.create_project("demo", "Demo", None)
    return store


def write(folder, files: dict[str, str]):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_import_is_idempotent_and_a_change_is_a_new_revision(store, tmp_path):
    folder = write(tmp_path / "eval" / "scenarios", {"order_delay.yml": SEED_EXAMPLE, "cancel.yml": SECOND})
    first = import_scenarios(store, "demo", [folder], "ana")
    assert sorted(first.added) == ["Agent handles delayed order gracefully", "User changes their mind"]
    again = import_scenarios(store, "demo", [folder], "ana")
    assert again.added == [] and again.updated == [] and len(again.unchanged) == 2
    assert store.count_items("demo") == {KIND: 2}

    (folder / "cancel.yml").write_text(SECOND.replace("then cancel it", "then cancel it politely"))
    changed = import_scenarios(store, "demo", [folder], "bo")
    assert changed.updated == ["User changes their mind"] and changed.added == []
    stored = {s.scenario.name: s for s in list_scenarios(store, "demo")}
    cancel = stored["User changes their mind"]
    assert (
        cancel.version == 2
        and cancel.file == "cancel.yml"
        and "politely" in cancel.scenario.simulation_context
    )
    assert [r.author for r in store.history(cancel.item_id)] == ["ana", "bo"]


def test_a_bad_file_stores_nothing(store, tmp_path):
    folder = write(
        tmp_path / "s", {"a.yml": SECOND, "b.yml": SEED_EXAMPLE.replace("operator: any", "operator: most", 1)}
    )
    with pytest.raises(ValidationFailed) as failure:
        import_scenarios(store, "demo", [folder], "ana")
    assert [(p.line, p.field) for p in failure.value.problems] == [
        (21, "scenario.goals.assertions[0].flow_started.operator")
    ]
    assert store.count_items("demo") == {}


def test_export_writes_one_file_per_scenario_that_reads_back_equal(store, tmp_path):
    folder = write(tmp_path / "in", {"order_delay.yml": SEED_EXAMPLE, "cancel.yml": SECOND})
    import_scenarios(store, "demo", [folder], "ana")
    written = export_scenarios(store, "demo", tmp_path / "out")
    assert sorted(p.name for p in written) == ["cancel.yml", "order_delay.yml"]
    found, problems = read_scenarios([tmp_path / "out"])
    assert problems == []
    assert {f.scenario.name: f.scenario for f in found} == {
        s.scenario.name: s.scenario for s in list_scenarios(store, "demo")
    }
    again = import_scenarios(store, "demo", [tmp_path / "out"], "ana")
    assert again.added == [] and again.updated == []  # the exported files are the stored scenarios


def test_comments_survive_import_edit_and_export(store, tmp_path):
    commented = "# owner: payments team\n" + SEED_EXAMPLE.replace(
        "scenario:\n", "scenario:  # checked every release\n", 1
    )
    folder = write(tmp_path / "in", {"order_delay.yml": commented})
    import_scenarios(store, "demo", [folder], "ana")
    written = export_scenarios(store, "demo", tmp_path / "out")
    assert written[0].read_text() == commented
    stored = list_scenarios(store, "demo")[0]
    edited = commented.replace("# owner: payments team", "# owner: the refunds team")
    save_scenario(store, "demo", stored.item_id, edited, "ben", stored.version)
    assert export_scenarios(store, "demo", tmp_path / "out2")[0].read_text() == edited
