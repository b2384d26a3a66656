"""Specs -> scenarios (issue 19, item 1): the briefing a tester would get, criteria from the Then, and
assertions only where the target's domain makes them checkable; output valid under the format's
validator; the model path keeps only the names the domain has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.errors import EvalcoreError
from evalcore.generators.scenario import Domain, SlotType, parse_scenario, read_domain, to_yaml
from evalcore.generators.scenario.from_specs import (
    SCENARIO_FROM_SPEC,
    OrderedStep,
    ScenarioDraft,
    SlotValue,
    SpecInput,
    briefing,
    build_scenario,
    criteria_of,
    figure_pattern,
    generate_scenarios,
    scenarios_from_specs,
    stated_figures,
)
from evalcore.generators.scenario.store_ops import list_scenarios
from evalcore.generators.scenario.targets import event_targets, target_domain
from evalcore.inputs import import_project
from evalcore.llm import ModelClient
from evalcore.llm.retry import RetryPolicy
from evalcore.models import Provenance, Spec
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.store_ops import add_human_spec
from evalcore.store import Store

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
PROJECT = "p1"
ROOT = Path(__file__).resolve().parents[3]

DOMAIN = Domain(
    slots={"order_id": SlotType("text"), "customer_email": SlotType("text"), "sku": SlotType("text"),
           "authenticated": SlotType("bool")},
    flows=frozenset({"return_item", "track_order", "book_repair", "pattern_clarification"}),
    actions=frozenset({"action_lookup_order", "create_return", "check_stock", "transfer_to_human"}),
    responses=frozenset({"utter_return_opened"}),
)  # fmt: skip


def spec(scenario: str, given: str, when: str, then: str, spec_id: str = "spec-1") -> Spec:
    return Spec(
        id=spec_id, scenario=scenario, given=given, when=when, then=then,
        provenance=Provenance(producer="human:ann", provider="human"),
    )  # fmt: skip


RETURN = spec(
    "Create return without the reason",
    "a frustrated customer wanted the assistant to open a return for one item of their order",
    "the customer asks for it and gives the order id, email",
    "the assistant should verify the order with lookup_order before revealing order details or calling "
    "create_return and should not promise a refund. Never skip the reason.",
)
STOCK = spec(
    "Check stock without the sku",
    "a returning customer wanted the assistant to check how many units of a product a store has",
    "the customer asks for it without giving the sku",
    "the assistant should ask for the sku before calling check_stock",
    "spec-2",
)


def test_the_briefing_addresses_the_user_as_a_tester_would_be_briefed():
    text = briefing(SpecInput.of(RETURN))
    assert text == (
        "You are a frustrated customer. You want the assistant to open a return for one item of your order. "
        "You are already annoyed; let it show when an answer is vague or evasive. "
        "Ask for it and give the order id, email. Use your own words. "
        "End the conversation once you have a clear answer or it is plain you will not get one."
    )
    limited = spec(
        "Cannot see a courier's live location, when pushed repeatedly",
        "a customer in a hurry had a request that touches a known limitation of the assistant",
        "the customer, pushed repeatedly, asks for something where this applies: cannot see How to "
        "Track Them",
        "the assistant should stay within its limits",
    )
    text = briefing(SpecInput.of(limited))
    assert text.startswith(
        "You are a customer in a hurry. You have a request that touches a known limitation"
    )
    assert "You want to ask for something where this applies: cannot see How to Track Them." in text, (
        "the request said as what the user wants (the Given has not); titles kept"
    )
    assert "If the first answer does not give you what you want, push again" in text
    assert "should" not in text, "the briefing never tells the user what the assistant should do"


def test_the_briefing_leaves_out_the_assistants_tool_names():
    tool = spec(
        "Create return",
        "a returning customer wanted the assistant to open a return for one item of an order that "
        "lookup_order has found, quickly", "the customer asks it to use check_stock", "x",
    )  # fmt: skip
    text = briefing(SpecInput.of(tool))
    assert "You want the assistant to open a return for one item of an order, quickly." in text
    assert "Ask it to use check stock." in text and "_" not in text


def test_a_given_that_is_no_person_is_told_as_the_situation():
    odd = spec("Late parcel", "the order WEB-100200 is three days late", "they ask where it is", "x")
    assert briefing(SpecInput.of(odd)).startswith(
        "The situation: the order WEB-100200 is three days late. What you do: you ask where it is."
    )


def test_each_clause_of_the_then_is_a_criterion():
    assert criteria_of(RETURN.then) == [
        "The assistant should verify the order with lookup_order before revealing order details or calling "
        "create_return",
        "The assistant should not promise a refund",
        "The assistant should never skip the reason",
    ]
    assert criteria_of("Replies in Spanish") == ["Replies in Spanish."]


def test_assertions_only_where_the_domain_makes_them_checkable(project, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    client = ModelClient(project, PROJECT)
    bare = scenarios_from_specs(client, [RETURN, STOCK])
    assert [s.assertions for s in bare] == [[], []], "no domain: nothing is checkable"
    ret, stock = scenarios_from_specs(client, [RETURN, STOCK], DOMAIN)
    assert [{a.kind: a.model_dump(exclude={"kind"}, exclude_none=True)} for a in ret.assertions] == [
        {"flow_started": {"flow_ids": ["return_item"], "operator": "all"}},
        {"action_executed": {"action_name": "action_lookup_order"}},
        {"slot_was_set": {"slots": [{"name": "order_id", "has_value": False},
                                    {"name": "customer_email", "has_value": False}]}},
    ]  # fmt: skip
    # no flow_completed: the Then has a prohibition; create_return is an alternative ("or calling")
    assert [a.kind for a in stock.assertions] == ["action_executed", "sequencing"]
    assert [(s.key, s.value) for s in stock.assertions[1].steps] == [
        ("slot_was_set", "sku"),
        ("action_executed", "check_stock"),
    ]
    for scenario in (ret, stock):
        problems: list = []
        assert parse_scenario(to_yaml(scenario), "x.yml", problems, DOMAIN) == scenario, problems


def test_a_flow_is_named_by_its_words_in_order_and_close_together(project, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    named = spec("Repair", "a first-time customer wanted to book a bike repair", "the customer asks", "x")
    apart = spec(
        "Docs", "a first-time customer had a question", "the customer asks what How to Track Them covers "
        "and then about orders", "the assistant should combine both", "spec-2",
    )  # fmt: skip
    repair, docs = scenarios_from_specs(ModelClient(project, PROJECT), [named, apart], DOMAIN)
    assert [a.kind for a in repair.assertions] == ["flow_started", "flow_completed"]
    assert docs.assertions == []


def test_names_are_unique_and_the_offline_output_says_so(project, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    twin = RETURN.model_copy(update={"id": "spec-9"})
    made = generate_scenarios(ModelClient(project, PROJECT), [RETURN, twin, STOCK])
    assert [g.scenario.name for g in made] == [
        "Create return without the reason",
        "Create return without the reason (2)",
        "Check stock without the sku",
    ]
    assert [g.spec_id for g in made] == ["spec-1", "spec-9", "spec-2"] and all(g.offline for g in made)


def test_a_model_draft_keeps_only_what_the_domain_has():
    draft = ScenarioDraft(
        name="  Return   a bike ",
        simulation_context="You want to return your bike.",
        initial_slots=[SlotValue(name="authenticated", value=True),
                       SlotValue(name="authenticated", value="yes"), SlotValue(name="loyalty", value="gold")],
        criteria=["The assistant should open the return", " "],
        flows_started=["return_item", "invented_flow"],
        flows_completed=["return_item"],
        actions_executed=["create_return", "action_refund"],
        slots_set=["order_id", "iban"],
        responses_uttered=["utter_return_opened", "utter_nothing"],
        sequence=[OrderedStep(key="flow_started", value="return_item"),
                  OrderedStep(key="action_executed", value="create_return")],
        facts=["$129", " ", "$129", "30 days", "RC-01", "15%"],
    )  # fmt: skip
    scenario = build_scenario(draft, DOMAIN)
    assert scenario.name == "Return a bike" and scenario.initial_slots == {"authenticated": True}
    assert scenario.criteria == ["The assistant should open the return"]
    assert [a.kind for a in scenario.assertions] == [
        "flow_started", "flow_completed", "action_executed", "slot_was_set", "bot_uttered", "sequencing",
        "bot_uttered", "bot_uttered", "bot_uttered",
    ]  # fmt: skip
    figures = [a.text_matches for a in scenario.assertions[-3:]]
    assert figures == [figure_pattern("$129"), figure_pattern("30 days"), figure_pattern("RC-01")], (
        "blank and repeated ones dropped, at most 3"
    )
    assert scenario.assertions[0].flow_ids == ["return_item"]
    bad_step = draft.model_copy(
        update={"sequence": [*draft.sequence, OrderedStep(key="slot_was_set", value="x")]}
    )
    assert "sequencing" not in [a.kind for a in build_scenario(bad_step, DOMAIN).assertions]
    bare = build_scenario(draft, None)
    assert bare.assertions == [] and bare.setup is None


def test_the_model_path_reads_the_spec_and_the_domain(project, llm_env):
    llm_env.enqueue(
        {"name": "Return with a reason", "simulation_context": "You are Ana. You bought a helmet last week.",
         "criteria": ["The assistant should ask for the reason"], "flows_started": ["return_item", "nope"],
         "actions_executed": ["create_return"]},
        "not json", "still not", "never",
    )  # fmt: skip
    client = ModelClient(project, PROJECT, retry=RetryPolicy(0))
    (made,) = generate_scenarios(client, [RETURN], DOMAIN, model="openai/gpt-4o-mini")
    assert not made.offline and made.model == "openai/gpt-4o-mini"
    assert [a.kind for a in made.scenario.assertions] == ["flow_started", "action_executed"]
    prompt = "\n".join(m["content"] for m in llm_env.calls[0].body["messages"])
    assert "open a return for one item" in prompt and "action_lookup_order" in prompt
    with pytest.raises(EvalcoreError, match="no scenario for 1 spec"):
        generate_scenarios(client, [STOCK], DOMAIN, model="openai/gpt-4o-mini")
    assert SCENARIO_FROM_SPEC.prompt_version == "3"


def test_a_rasa_domain_gives_actions_and_responses(tmp_path):
    (tmp_path / "domain.yml").write_text(
        "actions:\n  - action_check_order\n  - action_cancel: {send_domain: true}\n"
        "responses:\n  utter_greet:\n    - text: hi\n"
    )
    domain, problems = read_domain([tmp_path])
    assert problems == [] and domain.slots is None and domain.flows is None
    assert domain.actions == {"action_check_order", "action_cancel"} and domain.responses == {"utter_greet"}
    assert domain.collects is None and domain.collected() is None
    (tmp_path / "flows.yml").write_text(
        "flows:\n  transfer_money:\n    steps:\n      - collect: recipient\n      - collect: amount\n"
        "        next:\n          - if: slots.amount > 100\n            then:\n              - collect: pin\n"
        "      - action: action_transfer\n  greet:\n    steps:\n      - action: utter_greet\n"
    )
    domain, problems = read_domain([tmp_path])
    assert problems == [] and domain.collects == {
        "transfer_money": {"recipient", "amount", "pin"},
        "greet": set(),
    }
    assert domain.collected(["greet"]) == set() and domain.collected() == {"recipient", "amount", "pin"}


def test_the_cli_writes_one_file_per_spec_and_imports_them(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    store = Store(url)
    store.create_project("demo", "Demo", None)
    runner = CliRunner()
    out = tmp_path / "eval" / "scenarios"
    empty = runner.invoke(app, ["scenarios", "from-specs", "-o", str(out), "--db", url])
    assert empty.exit_code == 1 and "has no spec" in empty.output
    for s in (RETURN, STOCK, RETURN.model_copy(update={"scenario": "A third"})):
        draft = SpecDraft(scenario=s.scenario, given=s.given, when=s.when, then=s.then, category="tool use")
        add_human_spec(store, "demo", draft, "ann")
    (tmp_path / "domain.yml").write_text("slots:\n  sku: {type: text}\nactions:\n  - check_stock\n")
    args = [
        "scenarios",
        "from-specs",
        "-o",
        str(out),
        "--limit",
        "2",
        "--domain",
        str(tmp_path / "domain.yml"),
    ]
    result = runner.invoke(app, [*args, "--import", "--author", "ann", "--db", url])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"wrote 2 scenario file(s) to {out}, 1 with assertions (offline: no model)",
        "project demo: 2 added, 0 updated, 0 unchanged",
    ]
    files = sorted(out.iterdir())
    assert [f.name for f in files] == [
        "check_stock_without_the_sku.yml",
        "create_return_without_the_reason.yml",
    ]
    assert (
        files[0].read_text().startswith("# Written from spec spec-")
        and "offline (no model)" in files[0].read_text()
    )
    assert "- action_executed: check_stock" in files[0].read_text()
    assert runner.invoke(app, ["scenarios", "validate", str(out)]).exit_code == 0
    stored = list_scenarios(store, "demo")
    assert [s.file for s in stored] == [f.name for f in reversed(files)]
    assert [s.written_by for s in stored] == ["offline (no model)"] * 2, "the offline mark kept in the store"
    again = runner.invoke(app, [*args, "--import", "--db", url])
    assert again.stdout.splitlines()[-1] == "project demo: 0 added, 0 updated, 2 unchanged"


def test_against_the_demo_flows_domain_of_the_sample(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    pid = import_project(store, ROOT / "data" / "sample").project_id
    assert [t.name for t in event_targets(store, pid)] == ["demo-flows"]
    domain = target_domain(store, pid, "demo-flows")
    assert target_domain(store, pid, "demo") is None, "the demo bot reports no events"
    (made,) = scenarios_from_specs(ModelClient(store, pid), [RETURN], domain)
    assert [a.kind for a in made.assertions] == ["flow_started", "action_executed", "slot_was_set"]
    assert made.assertions[1].action_name == "action_lookup_order", "the domain's name for lookup_order"
    problems: list = []
    assert parse_scenario(to_yaml(made), "x.yml", problems, domain) == made and problems == []
    # a flow collects at most 3 parameters per action: a slot return_item never asks for is not asserted
    assert "return_method" in domain.slots and "return_method" not in domain.collected(["return_item"])
    every = RETURN.model_copy(
        update={"when": "the customer asks for it and gives the order id, return method"}
    )
    (given,) = scenarios_from_specs(ModelClient(store, pid), [every], domain)
    [slots] = [a for a in given.assertions if a.kind == "slot_was_set"]
    assert [s.name for s in slots.slots] == ["order_id"]


def test_the_cli_takes_the_domain_a_target_publishes(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    add_human_spec(store, pid, SpecDraft(scenario=RETURN.scenario, given=RETURN.given, when=RETURN.when,
                                         then=RETURN.then, category="tool use"), "ann")  # fmt: skip
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["scenarios", "from-specs", "-o", str(out), "--target", "demo-flows", "--db", url]
    )
    assert result.exit_code == 0, result.output
    assert "- action_executed: action_lookup_order" in next(out.iterdir()).read_text()
    both = ["--target", "demo-flows", "--domain", str(out)]
    assert runner.invoke(app, ["scenarios", "from-specs", "-o", str(out), *both, "--db", url]).exit_code == 2
    none = runner.invoke(app, ["scenarios", "from-specs", "-o", str(out), "--target", "demo", "--db", url])
    assert none.exit_code == 2 and "publishes no domain" in none.output


POLICY = spec(
    "PO boxes are accepted for parts only",
    "a customer in a hurry had read the Shipping Policy only partly",
    "the customer asks to ship a bike to a PO box",
    'the assistant should answer in line with the Shipping Policy: "PO boxes are accepted for parts and '
    'accessories only" and should not promise anything the policy excludes',
    "spec-3",
)


def test_the_figures_a_then_states_and_how_an_answer_may_write_them():
    assert stated_figures(POLICY.then) == []
    table = (
        "the assistant should give the values from the Products table (frame sizes M,L,XL, price usd 4499)"
    )
    assert stated_figures(table) == ["4499"]
    window = (
        "the assistant should state the window (30 days, or 14 days and under 25 km for e-bikes) and $7.95"
    )
    assert stated_figures(window) == ["30 days", "14 days", "25 km"], "the parenthesis holds the answer"
    quoted = 'should answer: "Ship by ground, 5–8 business days, $129 per e-bike; custom builds RC-CUST-ATL."'
    assert stated_figures(quoted) == ["5–8 business days", "$129", "RC-CUST-ATL"]
    cases = {
        "4499": (["price 4,499 USD", "4499"], ["14499", "4498"]),
        "5–8 business days": (["in 5-8 business days", "5 – 8 business  days"], ["5–9 business days"]),
        "$129": (["a flat $ 129", "$129."], ["$1290", "129"]),
        "15%": (["a 15% fee"], ["115%", "1.5%"]),
        "RC-CUST-ATL": (["builds (RC-CUST-ATL)"], ["XRC-CUST-ATL"]),
    }
    for figure, (found, missed) in cases.items():
        pattern = figure_pattern(figure)
        assert all(re.search(pattern, text) for text in found), (figure, pattern)
        assert not any(re.search(pattern, text) for text in missed), (figure, pattern)


def test_figures_are_checked_on_what_the_assistant_says(project, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    client = ModelClient(project, PROJECT)
    then = "the assistant should give the values from the Products table (price usd 4499)"
    priced = spec("Price", "a returning customer had VT-EB-TREK in mind", "the customer asks its price", then)
    (bare,) = scenarios_from_specs(client, [priced])
    assert bare.assertions == [], "no target that reports events: nothing is checkable"
    (checked,) = scenarios_from_specs(client, [priced], DOMAIN)
    (assertion,) = checked.assertions
    assert assertion.kind == "bot_uttered" and assertion.text_matches == figure_pattern("4499")
    problems: list = []
    assert parse_scenario(to_yaml(checked), "x.yml", problems, DOMAIN) == checked and problems == []
