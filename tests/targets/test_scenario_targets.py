"""Targets that report events (issue 19, item 3): the flow engine over the sample's procedures, the
demo-flows target with its defects, the Rasa target against a fake Rasa server (session start, then the
initial slots, then the conversation; events read from the tracker), and the generic HTTP target with an
event mapping."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from rasa_server import RasaServer, sample_engine

from evalcore.inputs import import_project
from evalcore.llm.client import ModelClient
from evalcore.llm.types import Message
from evalcore.models import Target
from evalcore.targets import TargetConfigError, TargetCrash, build_adapter, get_target, save_target
from evalcore.targets.events import (
    ActionExecuted,
    BotUttered,
    ClarificationRequested,
    FlowCancelled,
    FlowCompleted,
    FlowStarted,
    SlotSet,
    UserUttered,
)
from evalcore.targets.flow_engine import DEFECTS, Defects, flows_from_procedures
from evalcore.targets.sessions import EventTarget, reply_events

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
SLOTS = {"order_id": "WEB-204518", "email": "ana@example.com"}


@pytest.fixture(scope="module")
def engine():
    return sample_engine(str(SAMPLE))


@pytest.fixture
def sample(sqlite_store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    return sqlite_store, import_project(sqlite_store, SAMPLE).project_id


def _types(events):
    return [(e["event"], e.get("flow_id") or e.get("name") or (e.get("metadata") or {}).get("utter_action"))
            for e in events]  # fmt: skip


def test_procedures_become_flows_with_real_slots_actions_and_responses(engine):
    flows = {f.id: f for f in flows_from_procedures(engine_inputs()[0], engine_inputs()[1])}
    assert set(flows) == {"book_repair", "rent_ebike", "return_item", "track_order", "warranty_claim"}
    track = [(s.kind, s.name) for s in flows["track_order"].steps]
    assert track[:3] == [("collect", "order_id"), ("collect", "email"), ("action", "lookup_order")]
    assert ("action", "transfer_to_human") not in track, "a handover runs only when something calls for it"
    domain = engine.domain
    assert domain.slots["order_id"].type == "text" and domain.slots["reason"].type == "categorical"
    assert domain.slots["original_owner"].type == "bool" and "lookup_order_result" in domain.slots
    assert "utter_lookup_order_found" in engine.responses and "utter_ask_order_id" in engine.responses
    assert "WEB-204518" in engine.responses["utter_ask_order_id"], "the example comes from the tool schema"


def engine_inputs():
    from evalcore.inputs import load_project

    bundle = load_project(SAMPLE)
    return bundle.procedures, bundle.tools


def test_a_flow_collects_its_slots_runs_its_action_and_completes(engine):
    session = engine.session("c1")
    session.start()
    first = session.handle("Hi, I want to find out where my online order is.")
    assert ("flow_started", "track_order") in _types(first) and ("bot", "utter_ask_order_id") in _types(first)
    second = session.handle("My order id is WEB-204518.")
    assert {"event": "slot", "name": "order_id", "value": "WEB-204518"} in second
    third = session.handle("It is ana@example.com")
    kinds = _types(third)
    assert kinds.index(("slot", "email")) < kinds.index(("action", "action_lookup_order"))
    assert ("slot", "lookup_order_result") in kinds and ("bot", "utter_lookup_order_found") in kinds
    assert kinds[-2] == ("flow_completed", "track_order") and kinds[-1] == ("action", "action_listen")
    answer = session.handle("What are the late fees after the grace period?")
    [bot] = [e for e in answer if e["event"] == "bot"]
    assert bot["metadata"]["utter_source"] == "EnterpriseSearchPolicy" and "$10 per hour" in bot["text"]
    assert bot["metadata"]["search_results"], "a generative answer reports what it was built from"


def test_a_search_answer_states_the_row_asked_about_in_words_with_its_currency(engine):
    # the row is found by the names of its codes, and said with "$" as its columns' "usd" gives it
    answer, passage = engine.search(
        "I'd like to ask for the daily rate and the deposit of the Ridgeline Sprout 20 at the Pine Hollow "
        "store."
    )
    assert answer == (
        "The daily rate for the Ridgeline Sprout 20 (RC-KIDS-20) at the Ridgeline Cycles Pine Hollow (RC-03) "
        "is $20. The deposit for the Ridgeline Sprout 20 (RC-KIDS-20) at the Ridgeline Cycles Pine Hollow "
        "(RC-03) is $50."
    )
    assert passage.startswith("Rental Fleet — store_id: RC-03; sku: RC-KIDS-20"), (
        "the row as the table has it"
    )
    price, _ = engine.search("What is the price of the Ridgeline Atelier Custom Build?")
    assert price == "The Ridgeline Atelier Custom Build (RC-CUST-ATL) costs $3800."
    # words of the request ("I'd like to ask about") find nothing: the passage of the half day answers
    half, _ = engine.search("Hey, quick one: I'd like to ask about a half day.")
    assert "costs 60% of the daily rate" in half
    # a markdown table in a text: each row under its columns' headers
    cargo, _ = engine.search(
        "What is the daily rate and deposit in the rental policy for the Voltra Haul Cargo?"
    )
    assert cargo.startswith("Voltra Haul Cargo: daily rate $85; deposit $400.")
    # asked for more in the same conversation, it answers from another passage, not the same again
    question = "How long does voltra haul cargo usually take?"
    first, quoted = engine.search(question)
    more, other = engine.search(question, quoted={quoted})
    assert "fits riders from 160 to 195 cm" in first and other != quoted and "costs $5299" in more


def test_a_question_starts_a_flow_only_when_the_flow_is_about_what_it_asks(engine):
    # "rental" matches rent_ebike's "rent", but no flow is about late fees: search answers it
    late = engine.session("q1").handle("I'd like to ask what the late fee is when a rental comes back late.")
    assert not any(e["event"] == "flow_started" for e in late)
    [bot] = [e for e in late if e["event"] == "bot"]
    assert bot["metadata"]["utter_source"] == "EnterpriseSearchPolicy"
    # rent_ebike's description is about deposits: the question starts it, as does a plain request
    deposit = engine.session("q2").handle("What is the deposit for an e-bike rental?")
    assert ("flow_started", "rent_ebike") in _types(deposit)
    assert ("flow_started", "rent_ebike") in _types(engine.session("q3").handle("I want to rent an e-bike."))


def test_a_request_for_a_person_is_a_handover_in_any_of_its_usual_words(engine):
    for n, text in enumerate([
        "I want the assistant to hand the conversation to the Ridgeline support team.",
        "Can I speak to an agent?",
        "Please put me through to someone from your staff.",
        "I'd like to talk to a human.",
    ]):  # fmt: skip
        assert ("action", "action_transfer_to_human") in _types(engine.session(f"h{n}").handle(text)), text
    # a team or staff named in a question is no request for one
    asked = engine.session("h9").handle("Does the workshop team fix hydraulic brakes?")
    assert ("action", "action_transfer_to_human") not in _types(asked)


def test_cancel_interrupt_clarify_and_a_slot_asked_twice_in_vain(engine):
    session = engine.session("c2")
    session.handle("I'd like to return an item for a refund.")
    cancelled = session.handle("Actually never mind, cancel that.")
    assert ("flow_cancelled", "return_item") in _types(cancelled)
    assert ("bot", "utter_flow_cancelled") in _types(cancelled)
    session = engine.session("c3")
    session.handle("I want to find out where my online order is.")
    moved = session.handle("Wait, first I need to book a repair for my bike with a service at the workshop")
    assert ("flow_interrupted", "track_order") in _types(moved) and ("flow_started", "book_repair") in _types(
        moved
    )
    session = engine.session("c4")
    session.handle("I want to find out where my online order is.")
    session.handle("I don't know it")
    moved_on = session.handle("no idea, sorry")
    assert ("bot", "utter_ask_email") in _types(moved_on), (
        "asked twice in vain, the flow goes on to the next slot"
    )
    ask = engine.session("c5").handle("I want to book something for my e-bike.")
    [clarification] = [
        e for e in ask if e["event"] == "flow_started" and e["flow_id"] == "pattern_clarification"
    ]
    assert clarification["metadata"]["clarification_ids"] == ["book_repair", "rent_ebike"], "two flows match"
    [bot] = [e for e in ask if e["event"] == "bot"]
    assert [b["payload"] for b in bot["data"]["buttons"]] == ["/book_repair", "/rent_ebike"]


def test_every_defect_kind_is_known_and_an_unknown_one_refused():
    assert len(DEFECTS) == 12
    with pytest.raises(ValueError, match="unknown defect"):
        Defects(inject=("typo_kind",))


def test_injected_defects_change_what_the_events_show():
    def run(*inject):
        engine = sample_engine(str(SAMPLE), Defects(inject=inject))
        session = engine.session("d")
        session.set_slots(SLOTS)
        events = session.handle("I want to find out where my online order is.")
        return _types(events)

    clean = run()
    assert ("action", "action_lookup_order") in clean and ("flow_completed", "track_order") in clean
    assert ("action", "action_lookup_order") not in run("action_executed")
    assert ("flow_completed", "track_order") not in run("flow_completed")
    assert ("bot", "utter_dont_know") in run("bot_did_not_utter")
    assert ("bot", "utter_default") in run("bot_uttered")
    assert ("action", "action_transfer_to_human") in run("slot_was_not_set")
    early = run("sequencing")
    assert early.index(("flow_completed", "track_order")) < early.index(("action", "action_lookup_order"))
    assert ("flow_started", "track_order") not in run("flow_started")


def test_the_demo_flows_target_reports_events_per_reply_and_publishes_its_domain(sample):
    store, pid = sample
    target = get_target(store, pid, "demo-flows")
    adapter = build_adapter(store, pid, target, ModelClient(store, pid))
    assert isinstance(adapter, EventTarget) and "track_order" in adapter.domain().flows
    session = adapter.open_session("conv-1", SLOTS)
    assert [e for e in session.setup_events if isinstance(e, SlotSet)] == [
        SlotSet(name="order_id", value="WEB-204518"), SlotSet(name="email", value="ana@example.com")
    ]  # fmt: skip
    reply = session.reply([Message("user", "I want to find out where my online order is.")])
    events = reply_events(reply)
    assert isinstance(events[0], UserUttered) and FlowStarted(flow_id="track_order") in events
    assert ActionExecuted(action_name="action_lookup_order") in events
    assert "I found order WEB-204518" in reply.text
    plain = adapter.reply([Message("user", "I'd like to return an item for a refund.")])
    assert "order id" in plain.text.lower(), "a plain reply works too, for runs that play conversations"
    quiet = Target(name="flaky", kind="demo_flows", config={"inject": ["bot_uttered"], "defect_rate": 0})
    saved = save_target(store, pid, quiet)
    assert saved.config["inject"] == ["bot_uttered"]
    with pytest.raises(TargetConfigError):
        save_target(store, pid, Target(name="bad", kind="demo_flows", config={"defect_rate": 2}))


# ------------------------------------------------------------------------------------------- rasa


def _rasa(store, pid, url, **config):
    target = save_target(store, pid, Target(name="rasa", kind="rasa", config={"url": url, **config}))
    return build_adapter(store, pid, target, ModelClient(store, pid))


def test_the_rasa_target_starts_the_session_then_injects_slots_then_talks(sample, engine):
    store, pid = sample
    with RasaServer(engine) as server:
        adapter = _rasa(store, pid, server.url)
        session = adapter.open_session("scn-1", SLOTS)
        calls = [(m, p, b) for m, p, b in server.calls]
        assert (
            calls[0][:2] == ("POST", "/webhooks/rest/webhook") and calls[0][2]["message"] == "/session_start"
        )
        assert calls[1][1].endswith("/tracker/events") and calls[1][2] == [
            {"event": "slot", "name": "order_id", "value": "WEB-204518"},
            {"event": "slot", "name": "email", "value": "ana@example.com"},
        ], "slots are injected after the session started, on top of it"
        assert SlotSet(name="order_id", value="WEB-204518") in session.setup_events
        assert not any(isinstance(e, UserUttered) for e in session.setup_events), (
            "/session_start is no user turn"
        )
        reply = session.reply([Message("user", "I want to find out where my online order is.")])
        events = reply_events(reply)
        assert FlowStarted(flow_id="track_order") in events and "WEB-204518" in reply.text
        assert FlowCompleted(flow_id="track_order", step_id="track_order_step_3") in events
        assert any(isinstance(e, BotUttered) and e.utter_name == "utter_lookup_order_found" for e in events)
        assert not any(isinstance(e, SlotSet) and e.name == "email" for e in events), (
            "earlier events not repeated"
        )
        ask = session.reply([Message("user", "Cancel that.")])
        assert reply_events(ask)[0] == UserUttered(text="Cancel that.")


def test_the_rasa_target_reports_clarifications_and_cancellations(sample, engine):
    store, pid = sample
    with RasaServer(engine) as server:
        session = _rasa(store, pid, server.url).open_session("scn-2")
        session.reply([Message("user", "I'd like to return an item for a refund.")])
        cancel = reply_events(session.reply([Message("user", "never mind")]))
        assert FlowCancelled(flow_id="return_item", step_id="collect_order_id") in cancel
        asked = (
            _rasa(store, pid, server.url)
            .open_session("x")
            .reply([Message("user", "I want to book something for my e-bike.")])
        )
        [clarification] = [e for e in reply_events(asked) if isinstance(e, ClarificationRequested)]
        assert clarification.flow_ids == ["book_repair", "rent_ebike"] and len(clarification.flow_names) == 2


def test_the_rasa_target_needs_its_token_and_turns_failures_into_crashes(sample, engine, monkeypatch):
    store, pid = sample
    with RasaServer(engine, token="s3cret-token") as server:
        with pytest.raises(TargetConfigError, match="RASA_TOKEN"):
            _rasa(store, pid, server.url, token_env="RASA_TOKEN")
        monkeypatch.setenv("RASA_TOKEN", "s3cret-token")
        session = _rasa(store, pid, server.url, token_env="RASA_TOKEN").open_session("t", SLOTS)
        assert session.setup_events
        monkeypatch.setenv("RASA_TOKEN", "wrong")
        with pytest.raises(TargetCrash, match="401"):
            _rasa(store, pid, server.url, token_env="RASA_TOKEN").open_session("t2")
    with pytest.raises(TargetConfigError, match="url"):
        save_target(store, pid, Target(name="r", kind="rasa", config={"url": "localhost:5005"}))


def test_the_rasa_target_publishes_the_domain_of_its_files(sample, tmp_path):
    from scenario_examples import SEED_DOMAIN, SEED_FLOWS

    store, pid = sample
    (tmp_path / "domain.yml").write_text(SEED_DOMAIN, encoding="utf-8")
    (tmp_path / "flows.yml").write_text(SEED_FLOWS, encoding="utf-8")
    adapter = _rasa(store, pid, "http://127.0.0.1:9", domain=[str(tmp_path)])
    domain = adapter.domain()
    assert domain.slots["authenticated"].type == "bool" and "check_order_status" in domain.flows
    (tmp_path / "broken.yml").write_text("slots: [1, 2", encoding="utf-8")
    with pytest.raises(TargetConfigError, match="domain"):
        _rasa(store, pid, "http://127.0.0.1:9", domain=[str(tmp_path / "broken.yml")])


# -------------------------------------------------------------------------------------- http_events


class _EventsBot(BaseHTTPRequestHandler):
    """A JSON bot with its own event names: {"answer": ..., "trace": [{"kind": ..., ...}]}."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        trace = [{"kind": "FlowStart", "flow": "track_order"}]
        if body.get("slots"):
            trace += [{"kind": "Slot", "slot": k, "val": v} for k, v in body["slots"].items()]
        trace += [{"kind": "ToolCall", "tool": "action_lookup_order"},
                  {"kind": "Say", "text": "Found it.", "meta": {"template": "utter_found"}},
                  {"kind": "Unknown"}]  # fmt: skip
        data = json.dumps({"answer": f"Found it ({body['session']}).", "trace": trace}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_the_http_events_target_maps_its_response_to_events(sample):
    store, pid = sample
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _EventsBot)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        config = {
            "url": f"http://127.0.0.1:{httpd.server_address[1]}/chat",
            "request_template": {
                "q": "{{message}}", "session": "{{conversation_id}}", "slots": "{{initial_slots}}"
            },
            "response_path": "answer", "events_path": "trace", "type_field": "kind",
            "event_types": {"FlowStart": "flow_started", "Slot": "slot_set", "ToolCall": "action_executed",
                            "Say": "bot_uttered"},
            "event_fields": {"flow_id": "flow", "name": "slot", "value": "val", "action_name": "tool",
                             "utter_name": "meta.template"},
        }  # fmt: skip
        target = save_target(store, pid, Target(name="evbot", kind="http_events", config=config))
        adapter = build_adapter(store, pid, target, ModelClient(store, pid))
        reply = adapter.open_session("conv-9", {"order_id": "WEB-1"}).reply([Message("user", "where is it?")])
        assert reply.text == "Found it (conv-9)."
        assert reply_events(reply) == [
            FlowStarted(flow_id="track_order"),
            SlotSet(name="order_id", value="WEB-1"),
            ActionExecuted(action_name="action_lookup_order"),
            BotUttered(text="Found it.", utter_name="utter_found"),
        ]
        cumulative = save_target(
            store,
            pid,
            Target(name="evbot2", kind="http_events", config={**config, "events_cumulative": True}),
        )
        session = build_adapter(store, pid, cumulative, ModelClient(store, pid)).open_session("c", {})
        assert len(reply_events(session.reply([Message("user", "one")]))) == 3
        assert reply_events(session.reply([Message("user", "two")])) == [], "the history's new tail only"
    finally:
        httpd.shutdown()
        httpd.server_close()
