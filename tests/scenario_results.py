"""Hand-made results of a scenario run, for the report and page tests: two scenarios, four repetitions
(passed, failed, unscored; passed), and a way to store them as a run's units with their conversations.

Scenario "Order delay" x3: flow_started passes each time; slot_was_set passes, fails (the slot took
another value), passes; the relevance assertion passes twice and is unscored in repetition 3; the
criterion fails in repetition 2. Scenario "Transfer" x1: a sequencing assertion passes.
"""

from __future__ import annotations

from evalcore.generators.scenario import CriterionResult, Outcome, Scenario, ScenarioVerdict, parse_scenario
from evalcore.generators.scenario.run import RUN_KIND, ScenarioResult, unit_key
from evalcore.models import Conversation, Provenance, Run, RunStatus, Turn
from evalcore.store import Store
from evalcore.targets.events import (
    ActionExecuted,
    BotUttered,
    FlowStarted,
    SlotSet,
    UserUttered,
    with_events,
)

DELAY, TRANSFER = "Order delay", "Transfer <b>money</b>"
CRITERION = "Agent explains the delay"
WRONG_SLOT = SlotSet(name="order_id", value="ORD-0000", turn=1)


def criterion(passed: bool | None) -> CriterionResult:
    rationale = {True: "It explains the carrier delay.", False: "It never says why.", None: "unparseable"}
    return CriterionResult(
        criterion=CRITERION,
        passed=passed,
        rationale=rationale[passed],
        model="offline/heuristic",
        offline=True,
    )


def verdict(name: str, passed: bool | None, assertions: list[Outcome], criteria: list[CriterionResult]):
    return ScenarioVerdict(scenario=name, passed=passed, assertions=assertions, criteria=criteria)


STARTED = Outcome(
    kind="flow_started",
    passed=True,
    message="check_order_status started",
    events=[FlowStarted(flow_id="check_order_status", turn=1)],
)
SLOT_OK = Outcome(
    kind="slot_was_set",
    passed=True,
    message="order_id was set to 'ORD-9981'",
    events=[SlotSet(name="order_id", value="ORD-9981", turn=1)],
)
SLOT_BAD = Outcome(
    kind="slot_was_set", passed=False, message="order_id was never set to 'ORD-9981'", events=[WRONG_SLOT]
)
RELEVANT_OK = Outcome(kind="generative_response_is_relevant", passed=True, message="scored 0.81", score=0.81)
RELEVANT = Outcome(
    kind="generative_response_is_relevant", passed=None, message="no user message to score against"
)
SEQUENCE = Outcome(
    kind="sequencing",
    passed=True,
    message="all 2 steps matched in order",
    events=[
        FlowStarted(flow_id="transfer_money", turn=1),
        ActionExecuted(action_name="action_transfer", turn=1),
    ],
)

RESULTS = [
    ScenarioResult(
        scenario=DELAY,
        repetition=1,
        conversation_id="conv-d1",
        verdict=verdict(DELAY, True, [STARTED, SLOT_OK, RELEVANT_OK], [criterion(True)]),
    ),
    ScenarioResult(
        scenario=DELAY,
        repetition=2,
        conversation_id="conv-d2",
        verdict=verdict(DELAY, False, [STARTED, SLOT_BAD, RELEVANT_OK], [criterion(False)]),
    ),
    ScenarioResult(
        scenario=DELAY,
        repetition=3,
        conversation_id="conv-d3",
        verdict=verdict(DELAY, None, [STARTED, SLOT_OK, RELEVANT], [criterion(True)]),
    ),
    ScenarioResult(
        scenario=TRANSFER,
        repetition=1,
        conversation_id="conv-t1",
        verdict=verdict(TRANSFER, True, [SEQUENCE], []),
    ),
]


SCENARIOS = {
    DELAY: f"""\
scenario:
  name: {DELAY}
  simulation_context: You want to know why your order is late.
  goals:
    criteria:
      - {CRITERION}
    assertions:
      - flow_started: check_order_status
      - slot_was_set:
          - name: order_id
            value: ORD-9981
      - generative_response_is_relevant:
""",
    TRANSFER: f"""\
scenario:
  name: "{TRANSFER}"
  simulation_context: You send money to a friend.
  goals:
    assertions:
      - sequencing:
          - flow_started: transfer_money
          - action_executed: action_transfer
""",
}


def scenario(name: str) -> Scenario:
    """The scenario of the hand-made results named `name`."""
    problems: list = []
    parsed = parse_scenario(SCENARIOS[name], f"{name}.yml", problems)
    assert parsed is not None, problems
    return parsed


def turns(conversation_id: str) -> list[Turn]:
    """The conversation of a repetition: the user asks, the assistant answers (markup kept as text)."""
    user = with_events(
        Turn(index=0, role="user", content="Where is **my** order?"),
        [UserUttered(text="Where is **my** order?")],
    )
    events = [
        FlowStarted(flow_id="check_order_status"),
        WRONG_SLOT if conversation_id == "conv-d2" else SlotSet(name="order_id", value="ORD-9981"),
        BotUttered(text="It is <i>late</i>.", utter_name="utter_late"),
    ]
    bot = with_events(Turn(index=1, role="assistant", content="It is <i>late</i>."), events)
    return [user, bot]


def store_run(store: Store, project_id: str, results: list[ScenarioResult] = RESULTS) -> str:
    """A finished scenario run holding `results` as its units (in load_scenario_results' shape) and their
    conversations; returns the run id."""
    entries = [{"name": n, "scenario": scenario(n).model_dump(mode="json")} for n in SCENARIOS]
    run = store.start_run(
        project_id,
        Run(
            id="run-scn",
            kind=RUN_KIND,
            params={"scenarios": entries},
            target="demo-flows",
            judge="offline/heuristic",
        ),
    )
    order = list(dict.fromkeys(r.scenario for r in results))
    for r in results:
        conversation = Conversation(
            id=r.conversation_id,
            generator="scenario",
            turns=turns(r.conversation_id),
            provenance=Provenance(producer="offline", provider="offline"),
        )
        store.add_item(
            project_id,
            "conversation",
            conversation.model_dump(mode="json"),
            "offline",
            item_id=r.conversation_id,
            generator="scenario",
            run_id=run.id,
        )
        with store.unit(run.id, unit_key(order.index(r.scenario), r.repetition)) as unit:
            unit.result = {
                "scenario": r.scenario,
                "repetition": r.repetition,
                "conversation": r.conversation_id,
                "verdict": r.verdict.model_dump(mode="json"),
            }
    store.finish_run(run.id, RunStatus.finished)
    return run.id
