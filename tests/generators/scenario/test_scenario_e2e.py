"""Rasa E2E test files (issue 30, item 1): written as Rasa's documentation describes them ("Test cases
reference": test_cases, fixtures, the user, bot, utter, slot_was_set and slot_was_not_set steps;
"Assertions reference": assertions on a user step, assertion_order_enabled), imported as scripted tests,
played against the demo flow assistant (defects off) and checked with verdicts worked out by hand from
the sample's track_order procedure: the assistant asks for the order id, then the email, then looks the
order up and completes the flow; a question outside every flow is answered by search."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.errors import ValidationFailed
from evalcore.generators.scenario import list_scenarios, read_scenarios
from evalcore.generators.scenario.e2e import read_e2e
from evalcore.generators.scenario.run import create_scenario_run, execute_scenario_run, load_scenario_results
from evalcore.generators.scenario.store_ops import import_e2e, import_uploads
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.models import RunStatus, Target
from evalcore.targets import save_target

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "data" / "sample"

E2E_FILE = """\
fixtures:
  - known_customer:
      - customer_name: Jane

test_cases:
  - test_case: track an order step by step
    fixtures:
      - known_customer
    steps:
      - slot_was_set:
          - customer_name: Jane
      - user: I want to track my order
      - utter: utter_ask_order_id
      - user: WEB-204518
      - slot_was_set:
          - order_id: WEB-204518
      - bot: What is your email?
      - user: jane@example.com
      - slot_was_set:
          - email
          - lookup_order_result: found
      - utter: utter_lookup_order_found
      - slot_was_not_set:
          - order_id

  - test_case: expectations the assistant does not meet
    steps:
      - user: I want to track my order
      - bot: What is your order number?
      - utter: utter_ask_order_id
      - slot_was_not_set:
          - order_id
      - user: WEB-204518
      - slot_was_set:
          - order_id: WEB-999999

  - test_case: track an order with assertions
    steps:
      - user: I want to track my order
        assertions:
          - flow_started: track_order
          - bot_uttered:
              utter_name: utter_ask_order_id
              text_matches: "order id"
          - bot_did_not_utter:
              utter_name: utter_anything_else
          - slot_was_not_set:
              - name: order_id
      - user: WEB-204518
        assertion_order_enabled: true
        assertions:
          - slot_was_set:
              - name: order_id
                value: WEB-204518
          - action_executed: utter_ask_email
      - user: jane@example.com
        assertions:
          - action_executed: action_lookup_order
          - flow_completed:
              flow_id: track_order
          - flow_cancelled:
              flow_id: track_order

  - test_case: assertion order is checked when asked
    steps:
      - user: I want to track my order
      - user: WEB-204518
        assertion_order_enabled: true
        assertions:
          - action_executed: utter_ask_email
          - slot_was_set:
              - name: order_id

  - test_case: a question answered from the documents
    steps:
      - user: Where is my order?
        metadata: first_question
        assertions:
          - generative_response_is_grounded:
              threshold: 0.5
          - generative_response_is_relevant:
              threshold: 0.2
          - pattern_clarification_contains:
              - track_order
              - return_item
"""

# case -> (verdict, [outcome passed, ...]) worked out from the events described in the module docstring
EXPECTED = {
    "track an order step by step": (True, [True] * 7),
    "expectations the assistant does not meet": (False, [False, True, True, False]),
    "track an order with assertions": (
        False,
        [True, True, True, True, True, True, True, True, False],
    ),
    "assertion order is checked when asked": (False, [True, False]),
    "a question answered from the documents": (False, [True, True, False]),
}


@pytest.fixture
def sample(sqlite_store, monkeypatch, tmp_path):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, SAMPLE).project_id
    save_target(sqlite_store, pid, Target(name="clean", kind="demo_flows", config={"defect_rate": 0}))
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "e2e_test_cases.yml").write_text(E2E_FILE)
    return sqlite_store, pid, tmp_path / "tests" / "e2e_test_cases.yml"


def test_every_step_and_fixture_is_read_with_its_line(sample):
    _, _, path = sample
    cases, problems = read_e2e([path])
    assert problems == []
    assert [c.name for c in cases] == list(EXPECTED)
    first = cases[0]
    assert first.initial_slots == {"customer_name": "Jane"} and first.fixtures == ["known_customer"]
    assert [s.kind for s in first.steps] == [
        "slot_was_set", "user", "utter", "user", "slot_was_set", "bot", "user", "slot_was_set", "utter",
        "slot_was_not_set",
    ]  # fmt: skip
    assert first.line == E2E_FILE.splitlines().index("  - test_case: track an order step by step") + 1
    assert first.user_messages == ["I want to track my order", "WEB-204518", "jane@example.com"]
    ordered = cases[2].steps[1]
    assert ordered.ordered and [a.kind for a in ordered.assertions] == ["slot_was_set", "action_executed"]


def test_scripted_tests_are_played_as_written_and_checked_as_rasa_checks_them(sample):
    store, pid, path = sample
    result = import_e2e(store, pid, [path.parent], "ana")
    assert result.added == list(EXPECTED)
    stored = list_scenarios(store, pid)
    assert all(s.e2e is not None for s in stored)
    run = create_scenario_run(store, pid, "clean", stored)
    outcome = execute_scenario_run(store, run.id)
    assert outcome.run.status == RunStatus.finished
    results = {r.scenario: r.verdict for r in load_scenario_results(store, run.id)}
    got = {name: (v.passed, [o.passed for o in v.assertions]) for name, v in results.items()}
    assert got == EXPECTED
    failed = results["expectations the assistant does not meet"].assertions
    assert failed[0].message.startswith("line ") and "What is your order number?" in failed[0].message
    assert "user turn 2" in failed[3].message and "WEB-999999" in failed[3].message
    conversations = [v.conversation for v in list_conversations(store, pid, generator="scenario")]
    scripted = next(c for c in conversations if c.metadata["scenario"] == "track an order step by step")
    assert [t.content for t in scripted.turns if t.role.value == "user"] == [
        "I want to track my order", "WEB-204518", "jane@example.com",
    ]  # fmt: skip
    assert scripted.metadata["scripted"] and scripted.provenance.task == "rasa_e2e_script"
    again = import_e2e(store, pid, [path], "ana")
    assert again.unchanged == list(EXPECTED) and again.added == []


def test_as_scenarios_writes_seed_003_scenarios_from_the_test_cases(sample, tmp_path):
    store, pid, path = sample
    import_e2e(store, pid, [path], "ana", as_scenarios=tmp_path / "scenarios")
    found, problems = read_scenarios([tmp_path / "scenarios"])
    assert problems == [] and len(found) == len(EXPECTED)
    by_name = {f.scenario.name: f.scenario for f in found}
    stepwise = by_name["track an order step by step"]
    assert stepwise.initial_slots == {"customer_name": "Jane"}
    assert '1. "I want to track my order"' in stepwise.simulation_context
    assert [a.kind for a in stepwise.assertions] == [
        "slot_was_set", "bot_uttered", "slot_was_set", "bot_uttered", "slot_was_set", "bot_uttered",
        "slot_was_not_set",
    ]  # fmt: skip
    assert stepwise.assertions[3].text_matches == r"^What\ is\ your\ email\?$"
    assert len(by_name["track an order with assertions"].assertions) == 9


def test_broken_e2e_files_are_refused_with_located_lines_and_nothing_is_stored(sample, tmp_path):
    store, pid, _ = sample
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "test_cases:\n  - test_case: t\n    fixtures: [premium]\n    steps:\n"
        "      - usr: hello\n      - user: hi\n        assertions:\n          - flow_start: x\n"
    )
    with pytest.raises(ValidationFailed) as failure:
        import_e2e(store, pid, [bad], "ana")
    assert [str(p) for p in failure.value.problems] == [
        f"{bad}:3 [test_cases[0].fixtures[0]]: no fixture 'premium' in this file",
        f"{bad}:5 [test_cases[0].steps[0]]: a step has exactly one of user, bot, utter, slot_was_set, "
        "slot_was_not_set, got usr (did you mean 'user'?)",
        f"{bad}:8 [test_cases[0].steps[1].assertions[0].flow_start]: unknown assertion kind 'flow_start' "
        "(did you mean 'flow_started'?)",
    ]
    scenario = tmp_path / "scenario.yml"
    scenario.write_text("scenario:\n  name: a\n  simulation_context: b\n")
    with pytest.raises(ValidationFailed, match="this file is a scenario: import it with"):
        import_e2e(store, pid, [scenario], "ana")
    assert list_scenarios(store, pid) == []


def test_the_cli_imports_e2e_files_and_validate_points_to_it(sample, tmp_path):
    store, pid, path = sample
    db = ["--db", store.url]
    result = CliRunner().invoke(
        app, ["scenarios", "import-e2e", str(path), "--as-scenarios", str(tmp_path / "out"), *db]
    )
    assert result.exit_code == 0, result.output
    assert f"project {pid}: 5 added, 0 updated, 0 unchanged scripted test(s)" in result.output
    assert len(list((tmp_path / "out").glob("*.yml"))) == 5
    validate = CliRunner().invoke(app, ["scenarios", "validate", str(path)])
    assert validate.exit_code == 1
    assert "this file is a Rasa E2E test file (test_cases:): import it with" in validate.output
    assert yaml.safe_load(path.read_text())["test_cases"]  # the file itself is left as it was


def test_uploaded_files_are_imported_under_their_base_names(sample):
    store, pid, path = sample
    done = import_uploads(store, pid, [("../../e2e.yml", path.read_bytes())], "ana", e2e=True)
    assert done.added == list(EXPECTED)
    with pytest.raises(ValidationFailed) as failure:
        import_uploads(store, pid, [("dir/bad.yml", b"test_cases: 3\n")], "ana", e2e=True)
    assert str(failure.value) == (
        "bad.yml:1 [test_cases]: expected a list of test cases, got a number; nothing was written"
    )


def test_a_scripted_test_is_shown_as_its_steps_and_changed_only_through_its_file(sample):
    from evalcore.errors import EvalcoreError
    from evalcore.generators.scenario.e2e import case_yaml
    from evalcore.generators.scenario.store_ops import save_scenario

    store, pid, path = sample
    import_e2e(store, pid, [path], "ana")
    stored = next(
        s for s in list_scenarios(store, pid) if s.scenario.name == "track an order with assertions"
    )
    shown = case_yaml(stored.e2e)
    again = read_e2e_text("test_cases:\n" + "\n".join("  " + line for line in shown.splitlines()))

    def lineless(steps):
        return [s.model_copy(update={"line": None}) for s in steps]

    assert lineless(again.steps) == lineless(stored.e2e.steps)
    with pytest.raises(EvalcoreError, match=r"is a scripted test from the Rasa E2E file e2e_test_cases\.yml"):
        save_scenario(store, pid, stored.item_id, "scenario:\n  name: x\n  simulation_context: y\n", "ana", 1)


def read_e2e_text(text: str):
    from evalcore.generators.scenario.e2e import parse_e2e

    problems: list = []
    [case] = parse_e2e(text, "shown.yml", problems)
    assert problems == []
    return case


def test_the_same_tests_against_a_rasa_assistant_reach_the_same_verdicts(sample):
    from rasa_server import RasaServer, sample_engine

    store, pid, path = sample
    import_e2e(store, pid, [path], "ana")
    with RasaServer(sample_engine(str(SAMPLE))) as server:
        save_target(store, pid, Target(name="rasa", kind="rasa", config={"url": server.url}))
        run = create_scenario_run(store, pid, "rasa", list_scenarios(store, pid))
        assert execute_scenario_run(store, run.id).run.status == RunStatus.finished
    results = {r.scenario: r.verdict for r in load_scenario_results(store, run.id)}
    got = {name: (v.passed, [o.passed for o in v.assertions]) for name, v in results.items()}
    assert got == EXPECTED
