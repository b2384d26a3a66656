"""Scenario YAML (seed 003): the seed's example validates and round-trips, Rasa's short forms are accepted,
and every problem of a file is reported with its line and field."""

from __future__ import annotations

import yaml
from scenario_examples import SEED_DOMAIN, SEED_EXAMPLE, SEED_FLOWS

from evalcore.errors import Problem
from evalcore.generators.scenario import ASSERTION_MODELS, Domain, SlotType, read_domain, read_scenarios
from evalcore.generators.scenario.format import file_name, parse_scenario, to_data, to_yaml
from evalcore.generators.scenario.records import (
    ClarificationContainsAssertion,
    FlowStartedAssertion,
    GenerativeGroundedAssertion,
    SlotWasNotSetAssertion,
)


def parse(text: str, domain: Domain | None = None):
    problems: list[Problem] = []
    return parse_scenario(text, "s.yml", problems, domain), problems


def located(problems: list[Problem]) -> list[tuple[int | None, str | None]]:
    return [(p.line, p.field) for p in problems]


def test_the_seed_example_validates_with_all_twelve_kinds():
    scenario, problems = parse(SEED_EXAMPLE)
    assert problems == []
    assert scenario.name == "Agent handles delayed order gracefully"
    assert scenario.simulation_context.startswith("You are an impatient customer who escalates quickly")
    assert scenario.initial_slots == {"authenticated": True, "account_id": "12345", "order_id": "ORD-9981"}
    assert len(scenario.criteria) == 2
    assert [a.kind for a in scenario.assertions] == list(ASSERTION_MODELS)
    assert scenario.assertions[0] == FlowStartedAssertion(flow_ids=["check_order_status"], operator="any")
    assert scenario.assertions[5] == SlotWasNotSetAssertion(slots=[{"name": "transfer_amount"}])
    assert scenario.assertions[5].slots[0].has_value is False
    assert scenario.assertions[-1].steps[2].model_dump() == {"key": "slot_was_set", "value": "authenticated"}


def test_export_writes_the_same_yaml_back_and_reads_back_equal():
    scenario, _ = parse(SEED_EXAMPLE)
    assert to_data(scenario) == yaml.safe_load(SEED_EXAMPLE)  # the same document, key for key
    again, problems = parse(to_yaml(scenario))
    assert problems == [] and again == scenario
    assert "flow_ids: [check_order_status, track_shipment]" in to_yaml(scenario)


def test_rasa_short_forms_are_accepted_and_kept():
    text = """\
scenario:
  name: short forms
  simulation_context: You want to move money.
  goals:
    assertions:
      - flow_started: transfer_money
      - pattern_clarification_contains:
          - transfer_money
          - check_balance
      - slot_was_set:
          - name: amount
            value: null
      - generative_response_is_grounded:
"""
    scenario, problems = parse(text)
    assert problems == []
    started, clarification, slots, grounded = scenario.assertions
    assert started == FlowStartedAssertion(flow_id="transfer_money") and started.ids() == ["transfer_money"]
    assert clarification == ClarificationContainsAssertion(flow_names=["transfer_money", "check_balance"])
    assert slots.slots[0].has_value is True and slots.slots[0].value is None  # `value: null` is a value
    assert grounded == GenerativeGroundedAssertion() and grounded.limit() == 0.5
    assert scenario.setup is None and scenario.goals.criteria is None
    data = to_data(parse(to_yaml(scenario))[0])["scenario"]["goals"]["assertions"]
    assert data[0] == {"flow_started": "transfer_money"}
    assert data[1] == {"pattern_clarification_contains": ["transfer_money", "check_balance"]}
    assert data[2] == {"slot_was_set": [{"name": "amount", "value": None}]}
    assert data[3] == {"generative_response_is_grounded": {}}


BAD = """\
scenario:
  name: Bad one
  simulation_context: You want a refund.
  colour: blue
  setup:
    initial_slots:
      order_date: 2024-01-31
  goals:
    criteria:
      - ""
    assertions:
      - flow_started:
          flow_ids: [a]
          operator: some
      - flow_start: b
      - flow_completed: check_order_status
      - action_executed: 12
      - sequencing:
          - flow_started: a
            action_executed: b
          - bot_uttered: hi
      - bot_uttered: {}
      - bot_did_not_utter:
          text_matches: "(unclosed"
      - slot_was_set:
          - value: 3
      - generative_response_is_relevant:
          threshold: 2
      - flow_cancelled:
          flow_id: a
          step: b
      - flow_started: a
        operator: all
"""


def test_every_problem_is_reported_with_its_line_and_field():
    scenario, problems = parse(BAD)
    assert scenario is None
    at = "scenario.goals.assertions"
    assert located(problems) == [
        (4, "scenario.colour"),
        (7, "scenario.setup.initial_slots.order_date"),
        (10, "scenario.goals.criteria[0]"),
        (14, f"{at}[0].flow_started.operator"),
        (15, f"{at}[1].flow_start"),
        (16, f"{at}[2].flow_completed"),
        (17, f"{at}[3].action_executed"),
        (19, f"{at}[4].sequencing[0]"),
        (21, f"{at}[4].sequencing[1].bot_uttered"),
        (22, f"{at}[5].bot_uttered"),
        (24, f"{at}[6].bot_did_not_utter.text_matches"),
        (26, f"{at}[7].slot_was_set[0]"),
        (28, f"{at}[8].generative_response_is_relevant.threshold"),
        (31, f"{at}[9].flow_cancelled.step"),
        (32, f"{at}[10]"),
    ]
    messages = [p.message for p in problems]
    assert messages[0] == "unknown field"
    assert "a date is not a slot value" in messages[1]
    assert messages[3] == "operator must be 'any' or 'all', got 'some'"
    assert messages[4] == "unknown assertion kind 'flow_start' (did you mean 'flow_started'?)"
    assert "sequencing step's form" in messages[5]
    assert messages[6] == "expected a string, got a number"
    assert messages[7] == "a sequencing step has exactly one key, got keys flow_started, action_executed"
    assert messages[8].startswith("'bot_uttered' is not a sequencing step (allowed: flow_started,")
    assert messages[9] == "give at least one of utter_name, text_matches, buttons"
    assert messages[10].startswith("not a regular expression")
    assert messages[11] == "required field 'name' is missing"
    assert "less than or equal to 1" in messages[12]
    assert messages[13] == "unknown field"
    assert "got keys flow_started, operator" in messages[14]


def test_structure_problems():
    _, problems = parse("name: x\n")
    assert [(p.line, p.message) for p in problems] == [
        (1, "this file is not in the scenario format (it has name; a scenario file has one key, 'scenario')")
    ]
    _, problems = parse("scenario:\n  goals:\n    assertions: {flow_started: a}\n")
    assert [(p.field, p.message) for p in problems] == [
        ("scenario", "required field 'name' is missing"),
        ("scenario", "required field 'simulation_context' is missing"),
        ("scenario.goals.assertions", "expected a list of assertions, got a mapping"),
    ]
    _, problems = parse("scenario:\n  name: a\n  simulation_context: b\n  name: c\n")
    assert [(p.line, p.message) for p in problems] == [(4, "key 'name' is given twice (also on line 2)")]


def test_the_domain_checks_slots_their_types_and_flows(tmp_path):
    (tmp_path / "domain.yml").write_text(SEED_DOMAIN)
    (tmp_path / "flows.yml").write_text(SEED_FLOWS)
    domain, problems = read_domain([tmp_path / "domain.yml", tmp_path / "flows.yml"])
    assert problems == []
    assert domain.slots["authenticated"] == SlotType("bool")
    assert domain.flows == {"check_order_status", "verify_identity", "track_shipment"}
    assert parse(SEED_EXAMPLE, domain)[1] == []
    assert read_domain([tmp_path]) == (domain, [])  # a folder stands for its files

    text = (
        SEED_EXAMPLE.replace('account_id: "12345"', "account_id: 12345")
        .replace('order_id: "ORD-9981"\n\n', 'order_id: "ORD-9981"\n      loyalty_tier: gold\n\n')
        .replace("flow_id: verify_identity", "flow_id: verify_identty")
    )
    _, problems = parse(text, domain)
    assert [(p.line, p.field, p.message) for p in problems] == [
        (11, "scenario.setup.initial_slots.account_id",
         "slot 'account_id' cannot hold 12345: a text slot holds a string"),
        (13, "scenario.setup.initial_slots.loyalty_tier", "slot 'loyalty_tier' is not in the domain"),
        (26, "scenario.goals.assertions[2].flow_cancelled.flow_id",
         "flow 'verify_identty' is not in the domain (did you mean 'verify_identity'?)"),
    ]  # fmt: skip


def test_slot_types():
    assert SlotType("float").refuses(True) and not SlotType("float").refuses(3)
    assert SlotType("bool").refuses("yes") and not SlotType("bool").refuses(False)
    assert SlotType("list").refuses("a") and not SlotType("list").refuses(["a"])
    assert SlotType("categorical", ("Gold", "Silver")).refuses("bronze")
    assert not SlotType("categorical", ("Gold", "Silver")).refuses("gold")
    assert not SlotType("any").refuses({"a": 1}) and not SlotType("text").refuses(None)
    assert Domain(slots={}).has_flow("anything") and Domain(flows=frozenset()).has_flow("pattern_chitchat")


def test_folders_are_read_whole_and_a_name_used_twice_is_a_problem(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "order_delay.yml").write_text(SEED_EXAMPLE)
    (tmp_path / "b.yaml").write_text(SEED_EXAMPLE)
    (tmp_path / "notes.txt").write_text("not a scenario")
    found, problems = read_scenarios([tmp_path])
    assert [f.path for f in found] == [str(tmp_path / "a" / "order_delay.yml"), str(tmp_path / "b.yaml")]
    line = SEED_EXAMPLE.splitlines().index(next(x for x in SEED_EXAMPLE.splitlines() if "name:" in x)) + 1
    assert [str(p) for p in problems] == [
        f"{tmp_path / 'b.yaml'}:{line} [scenario.name]: scenario name 'Agent handles delayed order "
        f"gracefully' is also used by {tmp_path / 'a' / 'order_delay.yml'}:{line}"
    ]
    _, problems = read_scenarios([tmp_path / "missing.yml", tmp_path / "a" / "nothing"])
    assert [p.message for p in problems] == ["no such file or folder", "no such file or folder"]


def test_file_names():
    scenario, _ = parse(SEED_EXAMPLE)
    assert file_name(scenario) == "agent_handles_delayed_order_gracefully.yml"


def test_one_bad_key_does_not_hide_the_other_problems_of_its_mapping():
    text = """\
scenario:
  name: x
  simulation_context: y
  goals:
    assertions:
      - flow_completed:
          flow_id: [a]
          flow_step: b
      - generative_response_is_grounded:
          threshold: high
          ground_truth: 3
          source: z
"""
    _, problems = parse(text)
    assert [(p.line, p.field, p.message) for p in problems] == [
        (8, "scenario.goals.assertions[0].flow_completed.flow_step",
         "unknown field (did you mean 'flow_step_id'?)"),
        (7, "scenario.goals.assertions[0].flow_completed.flow_id", "Input should be a valid string"),
        (12, "scenario.goals.assertions[1].generative_response_is_grounded.source",
         "unknown field (did you mean 'utter_source'?)"),
        (10, "scenario.goals.assertions[1].generative_response_is_grounded.threshold",
         "Input should be a valid number, unable to parse string as a number"),
        (11, "scenario.goals.assertions[1].generative_response_is_grounded.ground_truth",
         "Input should be a valid string"),
    ]  # fmt: skip


REPLACEMENTS = [None, 2.5, ["a"], {"x": ""}]  # nothing, a scalar, a list, a mapping: every wrong shape


def _locations(data, loc=()):
    yield loc
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _locations(value, (*loc, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _locations(value, (*loc, i))


def _replaced(data, loc, value):
    if not loc:
        return value
    copy = dict(data) if isinstance(data, dict) else list(data)
    copy[loc[0]] = _replaced(data[loc[0]], loc[1:], value)
    return copy


def test_any_value_anywhere_gives_a_scenario_or_located_problems_never_an_exception():
    seed = yaml.safe_load(SEED_EXAMPLE)
    tried = 0
    for loc in _locations(seed):
        for value in REPLACEMENTS:
            text = yaml.safe_dump(_replaced(seed, loc, value), sort_keys=False)
            scenario, problems = parse(text)
            assert (scenario is None) == bool(problems), (loc, value, problems)
            assert all(p.line is not None for p in problems), (loc, value, problems)
            if scenario is not None:
                assert parse(to_yaml(scenario))[0] == scenario, (loc, value)
            tried += 1
    assert tried == 4 * 68  # every value and key of the seed's example


def test_domain_problems_are_reported_beside_format_problems():
    domain = Domain(slots={"order_id": SlotType("text")}, flows=frozenset({"track_order"}))
    text = """\
scenario:
  name: x
  simulation_context: y
  colour: red
  setup:
    initial_slots:
      loyalty_tier: gold
  goals:
    assertions:
      - flow_started: track_ordr
      - flow_start: track_order
"""
    scenario, problems = parse(text, domain)
    assert scenario is None
    assert [(p.line, p.field, p.message) for p in problems] == [
        (4, "scenario.colour", "unknown field"),
        (11, "scenario.goals.assertions[1].flow_start",
         "unknown assertion kind 'flow_start' (did you mean 'flow_started'?)"),
        (7, "scenario.setup.initial_slots.loyalty_tier", "slot 'loyalty_tier' is not in the domain"),
        (10, "scenario.goals.assertions[0].flow_started",
         "flow 'track_ordr' is not in the domain (did you mean 'track_order'?)"),
    ]  # fmt: skip


def test_yaml_12_booleans_and_operators_in_any_case():
    text = """\
scenario:
  name: x
  simulation_context: y
  goals:
    assertions:
      - bot_uttered:
          buttons:
            - title: Yes
              payload: /affirm
      - slot_was_set:
          - name: answer
            value: no
      - slot_was_not_set:
          - name: done
            value: false
      - flow_started:
          flow_ids: [a, b]
          operator: ANY
      - pattern_clarification_contains:
          flow_ids: [a, b]
          operator: All
"""
    scenario, problems = parse(text)
    assert problems == []
    buttons, was_set, not_set, started, clarified = scenario.assertions
    assert buttons.buttons[0].title == "Yes", "YAML 1.2, as Rasa reads it: Yes is text"
    assert was_set.slots[0].value == "no" and not_set.slots[0].value is False
    assert started.operator == "any" and clarified.operator == "all"


def test_a_file_of_another_format_is_named_in_one_line():
    other = "name: refund\ngoal: get a refund\nuser_instruction: be brief\nexpected: refund issued\n"
    _, problems = parse(other)
    assert len(problems) == 1 and "not in the scenario format (it has name, goal, user_instruction" in str(
        problems[0]
    )
    _, problems = parse("test_cases:\n  - test_case: t\n    steps:\n      - user: hi\n")
    assert [str(p) for p in problems] == [
        "s.yml:1: this file is a Rasa E2E test file (test_cases:): import it with "
        "`evalcore scenarios import-e2e`"
    ]
    _, problems = parse("flows:\n  transfer_money:\n    steps: []\n")
    assert "Rasa flows file, not a scenario" in str(problems[0]) and len(problems) == 1


def test_a_folder_import_skips_domain_and_flow_files_with_a_line_each(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "ok.yml").write_text(SEED_EXAMPLE)
    (tmp_path / "scenarios" / "flows.yml").write_text("flows:\n  a:\n    steps: []\n")
    (tmp_path / "scenarios" / "domain.yml").write_text("slots:\n  s:\n    type: text\n")
    skipped: list[str] = []
    found, problems = read_scenarios([tmp_path / "scenarios"], skipped=skipped)
    assert problems == [] and len(found) == 1
    assert [line.split(":")[0] for line in skipped] == [
        f"skipped {tmp_path / 'scenarios' / 'domain.yml'}",
        f"skipped {tmp_path / 'scenarios' / 'flows.yml'}",
    ]
    # a file named on its own is read as a scenario, so its problem is reported
    _, problems = read_scenarios([tmp_path / "scenarios" / "flows.yml"], skipped=skipped)
    assert "Rasa flows file" in str(problems[0])


def test_flow_and_slot_names_that_are_not_in_the_domain_get_a_did_you_mean(tmp_path):
    (tmp_path / "flows.yml").write_text(
        "flows:\n  transfer_money:\n    name: Transfer money\n    steps:\n      - collect: amount\n"
    )
    (tmp_path / "domain.yml").write_text("slots:\n  amount:\n    type: float\n")
    domain, problems = read_domain([tmp_path])
    assert problems == []
    text = (
        "scenario:\n  name: t\n  simulation_context: c\n  goals:\n    assertions:\n"
        "      - flow_started: Transfer money\n      - flow_completed:\n          flow_id: transfer_mony\n"
        "      - slot_was_set:\n          - name: amont\n"
    )
    _, problems = parse(text, domain)
    messages = [p.message for p in problems]
    assert messages == [
        "flow 'Transfer money' is not in the domain ('Transfer money' is the name of flow 'transfer_money': "
        "assertions name flows by id)",
        "flow 'transfer_mony' is not in the domain (did you mean 'transfer_money'?)",
        "slot 'amont' is not in the domain (did you mean 'amount'?)",
    ]
