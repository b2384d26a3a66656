"""Page test (AppTest): Scenarios lists the project's scenarios, validates an edit live with every problem's
line and field, refuses an invalid save (nothing changes) and saves a valid one as a new revision; with a
run, shows the pass share per scenario, accuracy per assertion kind, and a failing repetition's checks,
events and transcript, all as text; repetitions whose simulated user was at fault are named with the pass
count over all repetitions and without them (issue 31, item 1: the lead sees which failures to discount)."""

from __future__ import annotations

from pathlib import Path

import pytest
from page_app import open_page
from scenario_examples import SEED_EXAMPLE
from scenario_results import DELAY, TRANSFER, store_run
from streamlit.testing.v1 import AppTest

from evalcore.generators.scenario import import_scenarios, list_scenarios
from evalcore.generators.scenario.run import RUN_KIND
from evalcore.inputs import import_project
from evalcore.jobs.queue import open_queue
from evalcore.models import Conversation, Turn
from evalcore.models.wording import words
from evalcore.store import DATABASE_URL_ENV, Store
from pages._common import md

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    store = Store(url)
    store.create_project("demo", "Demo", None)
    return store


def frame(at: AppTest, column: str):
    """The first table of the page with this column."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def save_button(at):
    return next(b for b in at.button if b.label == "Save as a new revision")


def test_without_scenarios_or_runs_the_page_says_how_to_get_them(store):
    at = open_page("pages/scenarios.py", "ann")
    infos = [str(i.value) for i in at.info]
    assert any("No scenario in this project yet" in i for i in infos)
    assert any("No scenario run in this project yet" in i for i in infos)


def test_the_editor_validates_live_refuses_an_invalid_save_and_saves_a_valid_edit(store, tmp_path):
    (tmp_path / "order_delay.yml").write_text(SEED_EXAMPLE)
    import_scenarios(store, "demo", [tmp_path / "order_delay.yml"], "ann")
    at = open_page("pages/scenarios.py", "ann")
    listed = frame(at, "assertions")
    assert listed["scenario"].tolist() == ["Agent handles delayed order gracefully"]
    assert listed["file"].tolist() == ["order_delay.yml"] and listed["criteria"].tolist() == [2]
    assert listed["written by"].tolist() == ["ann"] and not any(
        "Offline output" in str(i.value) for i in at.info
    )
    assert any("Valid" in str(s.value) for s in at.success)

    area = at.text_area[0]
    original = area.value
    bad = original.replace("operator: any", "operator: some", 1).replace("action_executed:", "action_ran:", 1)
    area.input(bad).run()
    assert any("2 problem(s)" in str(e.value) for e in at.error)
    problems = frame(at, "problem")
    assert problems["field"].tolist() == [
        "scenario.goals.assertions[0].flow_started.operator",
        "scenario.goals.assertions[3].action_ran",
    ]
    assert all(line > 0 for line in problems["line"])
    save_button(at).click().run()
    assert any("Not saved" in str(e.value) for e in at.error)
    assert [s.version for s in list_scenarios(store, "demo")] == [1], "an invalid edit changes nothing"

    at.text_area[0].input(original.replace("impatient customer", "calm customer")).run()
    assert not at.error
    save_button(at).click().run()
    assert not at.exception, at.exception
    (saved,) = list_scenarios(store, "demo")
    assert saved.version == 2 and "calm customer" in saved.scenario.simulation_context
    assert store.history(saved.item_id)[-1].author == "ann"
    assert any("as version 2" in str(s.value) for s in at.success)


def test_results_per_scenario_and_kind_and_a_failing_repetition_as_text(store):
    store_run(store, "demo")
    at = open_page("pages/scenarios.py", "ann")
    rates = frame(at, "share_passed")
    assert rates["scenario"].tolist() == [DELAY, TRANSFER, "All"]
    assert rates["share_passed"].tolist() == pytest.approx([1 / 3, 1.0, 0.5])
    kinds = frame(at, "kind")
    assert kinds.set_index("kind").loc[words("slot_was_set"), "accuracy"] == pytest.approx(2 / 3)
    assert kinds.set_index("kind").loc[words("generative_response_is_relevant"), "unscored"] == 1
    each = frame(at, "assertion")
    assert each["assertion"].tolist()[:2] == [
        "Flow check_order_status started",
        'order_id set to "ORD-9981"',
    ], "each assertion in words, the domain's names kept"
    assert any("Offline output" in str(i.value) for i in at.info)
    produced = next(str(c.value) for c in at.caption if "target: " in str(c.value))
    assert "target: demo" in produced and "judge: " in produced, "what produced the numbers, by name"
    assert not produced.startswith("run"), "the run's id is not its name"

    repetition = next(b for b in at.selectbox if b.label == "Repetition")
    assert repetition.options == [f"{DELAY} · repetition 2 · failed", f"{DELAY} · repetition 3 · unscored"]
    checks = frame(at, "outcome")
    assert checks["outcome"].tolist() == ["passed", "failed", "passed", "failed"]
    assert checks["events"][1] == 'turn 1 · order_id set to "ORD-0000"'
    texts = [str(t.value) for t in at.text]
    assert "It is <i>late</i>." in texts and "Where is **my** order?" in texts, "turns shown as plain text"
    assert not any("<i>" in str(m.value) for m in at.markdown), "no text from a target is live markup"
    event = 'The assistant said "It is <i>late</i>." (response utter_late)'
    assert any(md(event) in str(c.value) for c in at.caption), "a turn's events under it, escaped"
    assert not any("turn 1 · " in str(c.value) for c in at.caption), "under its turn, an event needs no turn"

    at.toggle[0].set_value(False).run()
    repetition = next(b for b in at.selectbox if b.label == "Repetition")
    assert len(repetition.options) == 4


RETURN = """\
scenario:
  name: Return a helmet
  simulation_context: You bought a helmet two weeks ago and want to return it for a refund.
  goals:
    assertions:
      - flow_started: return_item
"""


def test_validate_against_a_target_domain_and_start_a_run_through_the_queue(store, tmp_path):
    import_project(store, ROOT / "data" / "sample", project_id="demo")
    (tmp_path / "return.yml").write_text(RETURN)
    (tmp_path / "order_delay.yml").write_text(SEED_EXAMPLE)
    import_scenarios(store, "demo", [tmp_path], "ann")
    at = open_page("pages/scenarios.py", "ann")
    assert any("Valid" in str(s.value) for s in at.success), "the format alone"
    next(b for b in at.selectbox if b.label.startswith("Check slots and flows")).select("demo-flows").run()
    problems = frame(at, "problem")
    assert "flow 'check_order_status' is not in the domain" in problems["problem"].tolist()

    at.multiselect[0].set_value([s.item_id for s in list_scenarios(store, "demo") if s.file == "return.yml"])
    next(n for n in at.number_input if n.label.startswith("Repetitions")).set_value(2)
    next(b for b in at.button if b.label == "Start run").click().run()
    assert not at.exception, at.exception
    (run,) = store.runs("demo", kind=RUN_KIND)
    assert run.status.value == "pending" and run.params["run_count"] == 2, "queued, not played by the page"
    queue = open_queue(store.url)  # a worker's part, in this process: take the task and run it
    queue.huey.execute(queue.huey.dequeue())
    assert store.run(run.id).status.value == "finished"
    at.run()
    assert not at.exception, at.exception
    rates = frame(at, "share_passed")
    assert rates["scenario"].tolist() == ["Return a helmet", "All"] and rates["repetitions"].tolist() == [
        2,
        2,
    ]


def test_write_a_new_scenario_validated_live(store):
    at = open_page("pages/scenarios.py", "ann")
    area = next(a for a in at.text_area if a.label == "New scenario YAML")
    assert any("Valid" in str(s.value) for s in at.success), "the starting example is valid"
    area.input(RETURN.replace("flow_started: return_item", "flow_startd: return_item")).run()
    assert frame(at, "problem")["field"].tolist() == ["scenario.goals.assertions[0].flow_startd"]
    next(b for b in at.button if b.label == "Add scenario").click().run()
    assert any("Not added" in str(e.value) for e in at.error) and list_scenarios(store, "demo") == []
    next(a for a in at.text_area if a.label == "New scenario YAML").input(RETURN).run()
    next(b for b in at.button if b.label == "Add scenario").click().run()
    assert not at.exception, at.exception
    assert [s.scenario.name for s in list_scenarios(store, "demo")] == ["Return a helmet"]
    assert any("Scenario added" in str(s.value) for s in at.success)
    assert next(a for a in at.text_area if a.label == "New scenario YAML").value.startswith(
        "scenario:\n  name: Customer"
    )


def test_scenarios_written_offline_are_marked(store, tmp_path):
    path = tmp_path / "return.yml"
    path.write_text(RETURN)
    import_scenarios(store, "demo", [path], "ann", written_by={str(path): "offline (no model)"})
    at = open_page("pages/scenarios.py", "ann")
    assert frame(at, "assertions")["written by"].tolist() == ["offline (no model)"]
    assert any("Offline output: scenarios written by offline \\(no model\\)" in str(i.value) for i in at.info)


def test_without_a_fault_every_verdict_counts(store):
    store_run(store, "demo")
    at = open_page("pages/scenarios.py", "ann")
    said = " ".join(str(c.value) for c in at.caption)
    assert "No simulated user was at fault in the 4 repetition(s) played" in said
    assert not at.warning


def test_a_repetition_whose_user_broke_character_is_named_with_the_pass_count_without_it(store):
    store_run(store, "demo")
    body = Conversation.model_validate(store.current("conv-d1").body)
    turns = [
        Turn(index=0, role="user", content="As an AI language model, I cannot have an order."),
        *body.turns[1:],
    ]
    edited = body.model_copy(update={"turns": turns}).model_dump(mode="json")
    store.save_revision("conv-d1", edited, "test", store.current("conv-d1").version)
    at = open_page("pages/scenarios.py", "ann")
    warned = " ".join(str(w.value) for w in at.warning).replace("\\", "")
    assert (
        "1 of 4 repetition(s) had a simulated user at fault: 2 of 4 passed over all, 1 of 3 without them"
        in warned
    )
    faults = next(d.value for d in at.dataframe if "reason" in d.value.columns)
    assert faults[["repetition", "turn", "kind"]].values.tolist() == [
        [f"{DELAY} · repetition 1 · passed", 1, "Broke character"]
    ]
