"""The store on SQLite and PostgreSQL: projects, inputs, versioned items, annotations and job units.

Each rule of DESIGN.md's "The store" section has its own test here.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from evalcore.errors import NotFoundError, StaleVersionError
from evalcore.models import (
    Annotation,
    ChatbotInfo,
    Document,
    DocumentKind,
    Procedure,
    ProcedureStep,
    Provenance,
    Run,
    RunStatus,
    Spec,
    SystemCard,
    Tool,
)
from evalcore.store import Store
from evalcore.store import schema as t

# ------------------------------------------------------------------ helpers


def spec_body(
    spec_id: str, scenario: str = "Customer asks for a refund", then: str = "Explain policy"
) -> dict:
    return Spec(
        id=spec_id,
        scenario=scenario,
        given="a customer with a broken bike",
        when="they ask for their money back",
        then=then,
        provenance=Provenance(producer="offline"),
    ).model_dump(mode="json")


def conversation_body(conv_id: str, generator: str = "doc_qa", spec_id: str | None = None) -> dict:
    return {
        "id": conv_id,
        "generator": generator,
        "spec_id": spec_id,
        "turns": [
            {"index": 0, "role": "user", "content": "Can I return my bike?", "query_type": "SINGLE-DOC"},
            {"index": 1, "role": "assistant", "content": "Yes, within 30 days."},
        ],
        "provenance": {"producer": "offline"},
    }


def card(name: str = "Spoke Support") -> SystemCard:
    return SystemCard(
        id="spoke",
        chatbot_info=ChatbotInfo(name=name, description="Helps cyclists book repairs."),
        behaviors=["books repairs"],
    )


def inputs(doc_text: str = "Returns within 30 days.") -> tuple:
    docs = [
        Document(id="returns", kind=DocumentKind.policy, title="Returns", text=doc_text),
        Document(
            id="prices",
            kind=DocumentKind.table,
            title="Prices",
            columns=["service", "price"],
            rows=[{"service": "tune-up", "price": "40"}],
        ),
    ]
    tools = [
        Tool(
            name="book_repair",
            description="Book a repair slot.",
            parameters={"type": "object", "properties": {"day": {"type": "string"}}},
        )
    ]
    procedures = [
        Procedure(
            name="book",
            intent="book a repair",
            steps=[
                ProcedureStep(kind="message", text="Ask the day"),
                ProcedureStep(kind="api", api="book_repair"),
            ],
        )
    ]
    return card(), docs, tools, procedures


def rows_of(store: Store, table: sa.Table, **where) -> int:
    with store.read() as conn:
        query = sa.select(sa.func.count()).select_from(table)
        for column, value in where.items():
            query = query.where(table.c[column] == value)
        return conn.scalar(query)


def populate(store: Store, project_id: str) -> dict[str, str]:
    """A project with inputs, a spec, an annotated conversation and a run with one finished unit."""
    store.create_project(project_id, f"Project {project_id}")
    store.save_inputs(project_id, *inputs())
    spec = store.add_item(project_id, "spec", spec_body(f"{project_id}-spec"), "alice")
    conv = store.add_item(
        project_id, "conversation", conversation_body(f"{project_id}-conv"), "offline", generator="doc_qa"
    )
    store.annotate(
        conv, [Annotation(item_kind="conversation", item_id=conv, label="accept", author="ann")], "ann", 1
    )
    run = store.start_run(project_id, Run(id=f"{project_id}-run", kind="specs.generate"))
    with store.unit(run.id, "u1") as unit:
        unit.result = {"ok": True}
    return {"spec": spec, "conversation": conv, "run": run.id}


# ----------------------------------------------------------------- projects


def test_a_store_holds_several_projects(store: Store):
    store.create_project("alpha", "Alpha", "/data/alpha")
    store.create_project("beta", "Beta")
    assert [p.id for p in store.projects()] == ["alpha", "beta"]
    assert store.project("alpha").title == "Alpha"
    assert store.project("alpha").source_path == "/data/alpha"
    assert store.project("beta").source_path is None
    assert store.project("beta").settings == {}


def test_create_project_is_idempotent(store: Store):
    first = store.create_project("alpha", "Alpha", "/data/alpha")
    again = store.create_project("alpha", "Alpha renamed")
    assert [p.id for p in store.projects()] == ["alpha"]
    assert again.title == "Alpha renamed"
    assert again.created_at == first.created_at
    assert again.source_path == "/data/alpha", "a re-create without a source keeps the known one"
    assert rows_of(store, t.projects) == 1


def test_unknown_project_error_lists_the_existing_ones(store: Store):
    with pytest.raises(NotFoundError, match="none yet"):
        store.project("ghost")
    store.create_project("alpha", "Alpha")
    store.create_project("beta", "Beta")
    with pytest.raises(NotFoundError) as caught:
        store.project("ghost")
    message = str(caught.value)
    assert "ghost" in message
    assert "alpha" in message
    assert "beta" in message


def test_settings_are_merged_and_none_removes_a_key(store: Store):
    store.create_project("alpha", "Alpha")
    store.create_project("beta", "Beta")
    assert store.update_settings("alpha", {"model": "gpt", "k": 30, "nested": {"a": 1}}) == {
        "model": "gpt",
        "k": 30,
        "nested": {"a": 1},
    }
    merged = store.update_settings("alpha", {"k": 10, "model": None, "judge": "claude"})
    assert merged == {"k": 10, "nested": {"a": 1}, "judge": "claude"}
    assert store.project("alpha").settings == merged
    assert store.project("beta").settings == {}
    with pytest.raises(NotFoundError):
        store.update_settings("ghost", {"k": 1})


def test_delete_project_removes_everything_and_only_that(store: Store):
    store.create_project("keep", "Keep")
    kept = populate(store, "keep")
    populate(store, "gone")
    before = {table.name: rows_of(store, table) for table in t.metadata.sorted_tables}
    assert all(before[name] >= 2 for name in ("revisions", "turns", "documents", "tools", "items"))

    store.delete_project("gone")

    assert [p.id for p in store.projects()] == ["keep"]
    for table in (t.system_cards, t.documents, t.tools, t.procedures, t.items, t.runs):
        assert rows_of(store, table, project_id="gone") == 0, table.name
    with store.read() as conn:
        item_ids = set(conn.scalars(sa.select(t.items.c.id)))
        run_ids = set(conn.scalars(sa.select(t.runs.c.id)))
        for table in (t.revisions, t.turns, t.annotations):
            assert set(conn.scalars(sa.select(table.c.item_id))) <= item_ids, table.name
        assert set(conn.scalars(sa.select(t.run_units.c.run_id))) <= run_ids
    # the other project is whole: every table lost exactly what the deleted project had
    after = {table.name: rows_of(store, table) for table in t.metadata.sorted_tables}
    for name, count in after.items():
        if name in ("schema_migrations",):
            assert count == before[name]
        elif name == "projects":
            assert count == before[name] - 1
        else:
            assert count * 2 == before[name], name
    assert store.current(kept["conversation"]).version == 2
    assert len(store.annotations(kept["conversation"])) == 1
    assert set(store.finished_units(kept["run"])) == {"u1"}


# ------------------------------------------------------------------- inputs


def test_save_inputs_adds_then_leaves_identical_inputs_untouched(store: Store, snapshot):
    store.create_project("spoke", "Spoke")
    first = store.save_inputs("spoke", *inputs())
    assert first.added == {
        "system card": ["spoke"],
        "documents": ["returns", "prices"],
        "tools": ["book_repair"],
        "procedures": ["book"],
    }
    assert first.total_written == 5
    before = snapshot(store)

    again = store.save_inputs("spoke", *inputs())
    assert again.total_written == 0
    assert again.added == {} and again.updated == {}
    assert sorted(again.unchanged["documents"]) == ["prices", "returns"]
    assert snapshot(store) == before, "re-saving identical inputs must write nothing (not even a timestamp)"


def test_save_inputs_reports_a_changed_document_as_updated(store: Store):
    store.create_project("spoke", "Spoke")
    store.save_inputs("spoke", *inputs())
    changed = store.save_inputs("spoke", *inputs("Returns within 14 days."))
    assert changed.updated == {"documents": ["returns"]}
    assert changed.added == {}
    assert changed.total_written == 1
    assert "prices" in changed.unchanged["documents"]
    by_id = {d.id: d for d in store.documents("spoke")}
    assert by_id["returns"].text == "Returns within 14 days."
    assert rows_of(store, t.documents) == 2


def test_inputs_read_back_as_models_and_stay_per_project(store: Store):
    store.create_project("spoke", "Spoke")
    store.create_project("other", "Other")
    system_card, docs, tools, procedures = inputs()
    store.save_inputs("spoke", system_card, docs, tools, procedures)
    assert store.system_card("spoke") == system_card
    assert [d.id for d in store.documents("spoke")] == ["prices", "returns"]
    assert {d.id: d for d in store.documents("spoke")}["prices"] == docs[1]
    assert store.tools("spoke") == tools
    assert store.procedures("spoke") == procedures
    assert store.system_card("other") is None
    assert store.documents("other") == []


# -------------------------------------------------------------------- items


def test_add_item_current_and_history(store: Store):
    store.create_project("spoke", "Spoke")
    body = conversation_body("conv-1", spec_id="spec-1")
    item = store.add_item("spoke", "conversation", body, "offline", generator="doc_qa", spec_id="spec-1")
    assert item == "conv-1"
    current = store.current(item)
    assert (current.kind, current.version, current.author, current.note) == (
        "conversation",
        1,
        "offline",
        "created",
    )
    assert current.body == body
    assert [(r.version, r.author) for r in store.history(item)] == [(1, "offline")]
    with store.read() as conn:
        turns = conn.execute(
            sa.select(t.turns.c.idx, t.turns.c.role, t.turns.c.query_type, t.turns.c.content)
            .where(t.turns.c.item_id == item)
            .order_by(t.turns.c.idx)
        ).all()
    assert [tuple(r) for r in turns] == [
        (0, "user", "SINGLE-DOC", "Can I return my bike?"),
        (1, "assistant", None, "Yes, within 30 days."),
    ]


def test_add_item_without_id_gets_a_fresh_one(store: Store):
    store.create_project("spoke", "Spoke")
    first = store.add_item("spoke", "persona", {"task": "x"}, "offline")
    second = store.add_item("spoke", "persona", {"task": "x"}, "offline")
    assert first != second
    assert first.startswith("persona-")
    assert store.current(first).body == {"task": "x"}


def test_unknown_item_is_not_found(store: Store):
    with pytest.raises(NotFoundError, match="nope"):
        store.current("nope")
    with pytest.raises(NotFoundError, match="nope"):
        store.save_revision("nope", {"x": 1}, "alice", 1)
    assert store.history("nope") == []


def test_rule_a_edits_are_appended_as_versions_never_overwritten(store: Store):
    """DESIGN: every human action is a row with who and when; edits are new versions; current is derived."""
    store.create_project("spoke", "Spoke")
    start = datetime.now(UTC) - timedelta(seconds=5)
    item = store.add_item("spoke", "spec", spec_body("spec-1", then="v1"), "offline")
    assert store.save_revision(item, spec_body("spec-1", then="v2"), "alice", 1) == 2
    assert store.save_revision(item, spec_body("spec-1", then="v3"), "bob", 2, note="fixed wording") == 3

    history = store.history(item)
    assert [(r.version, r.author, r.body["then"]) for r in history] == [
        (1, "offline", "v1"),
        (2, "alice", "v2"),
        (3, "bob", "v3"),
    ]
    assert [r.note for r in history] == ["created", "edited", "fixed wording"]
    stamps = [r.created_at for r in history]
    assert all(s.tzinfo is not None for s in stamps), "times are stored with their time zone"
    assert all(start <= s <= datetime.now(UTC) + timedelta(seconds=5) for s in stamps)
    assert stamps == sorted(stamps)
    assert rows_of(store, t.revisions, item_id=item) == 3

    current = store.current(item)
    assert (current.version, current.author, current.body["then"]) == (3, "bob", "v3")
    assert store.list_current("spoke", "spec")[0].body["then"] == "v3"


def test_rule_b_stale_save_is_refused_naming_the_spec_and_who_changed_it(store: Store):
    """DESIGN: two people edit the same item; the second save is refused with a clear message."""
    store.create_project("spoke", "Spoke")
    item = store.add_item("spoke", "spec", spec_body("spec-1", scenario="Refund after 40 days"), "offline")
    opened_by_alice = store.current(item).version
    opened_by_bob = store.current(item).version
    store.save_revision(
        item, spec_body("spec-1", scenario="Refund after 40 days", then="alice"), "alice", opened_by_alice
    )

    with pytest.raises(StaleVersionError) as caught:
        store.save_revision(item, spec_body("spec-1", then="bob"), "bob", opened_by_bob)
    error = caught.value
    message = str(error)
    assert "Refund after 40 days" in message
    assert "alice" in message
    assert "version 2" in message and "version 1" in message
    assert (error.item_kind, error.item_id, error.expected_version, error.current_version) == (
        "spec",
        item,
        1,
        2,
    )
    assert error.changed_by == "alice"
    assert error.changed_at == store.current(item).created_at
    assert [(r.version, r.author) for r in store.history(item)] == [(1, "offline"), (2, "alice")]
    assert store.current(item).body["then"] == "alice"

    # bob reloads and saves again on top of alice's version: both edits are in the history
    assert store.save_revision(item, spec_body("spec-1", then="bob"), "bob", 2) == 3
    assert [r.body["then"] for r in store.history(item)] == ["Explain policy", "alice", "bob"]


def test_rule_b_stale_save_on_an_item_without_scenario_names_the_item(store: Store):
    store.create_project("spoke", "Spoke")
    item = store.add_item("spoke", "conversation", conversation_body("conv-7"), "offline")
    store.save_revision(item, conversation_body("conv-7"), "carol", 1)
    with pytest.raises(StaleVersionError, match=r"Conversation 'conv-7' was changed by carol"):
        store.save_revision(item, conversation_body("conv-7"), "dave", 1)


def race(store: Store, item: str, writers: int) -> dict[str, object]:
    """`writers` threads, released together, each saving on version 1; author -> new version or error."""
    barrier = threading.Barrier(writers)
    outcomes: dict[str, object] = {}

    def save(author: str) -> None:
        barrier.wait()
        try:
            outcomes[author] = store.save_revision(item, spec_body(item, then=author), author, 1)
        except Exception as exc:  # collected and checked by the caller
            outcomes[author] = exc

    threads = [threading.Thread(target=save, args=(f"user{i}",)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


def test_rule_b_concurrent_saves_on_the_same_version_exactly_one_wins(store: Store):
    """Real threads saving on version 1 at once: one succeeds, the others are refused; nothing is lost."""
    store.create_project("spoke", "Spoke")
    writers = 4
    for round_ in range(3):
        item = store.add_item("spoke", "spec", spec_body(f"race-{round_}"), "offline")
        outcomes = race(store, item, writers)
        winners = [author for author, outcome in outcomes.items() if outcome == 2]
        losers = [o for o in outcomes.values() if isinstance(o, StaleVersionError)]
        assert len(outcomes) == writers
        assert len(winners) == 1, outcomes
        assert len(losers) == writers - 1, outcomes
        assert all(e.changed_by == winners[0] and e.current_version == 2 for e in losers)
        history = store.history(item)
        assert [(r.version, r.author) for r in history] == [(1, "offline"), (2, winners[0])]
        assert history[1].body["then"] == winners[0]


def test_rule_b_a_save_waiting_on_an_uncommitted_one_is_refused_when_it_commits(store: Store):
    """The interleaving the version check must survive: B saves while A's save is still uncommitted."""
    store.create_project("spoke", "Spoke")
    item = store.add_item("spoke", "spec", spec_body("spec-1", scenario="Late delivery"), "offline")
    outcome: dict[str, object] = {}
    started = threading.Event()

    def bob() -> None:
        started.set()
        try:
            body = spec_body("spec-1", scenario="Late delivery", then="bob")
            outcome["bob"] = store.save_revision(item, body, "bob", 1)
        except Exception as exc:  # checked below
            outcome["bob"] = exc

    with store.write() as conn:
        body = spec_body("spec-1", scenario="Late delivery", then="alice")
        store.save_revision(item, body, "alice", 1, conn=conn)
        thread = threading.Thread(target=bob)
        thread.start()
        started.wait()
        time.sleep(0.5)  # bob is now blocked on alice's open transaction (row lock / write lock)
        assert "bob" not in outcome, "bob must wait for alice's transaction, not decide without it"
    thread.join(timeout=60)
    assert isinstance(outcome["bob"], StaleVersionError), outcome
    assert outcome["bob"].changed_by == "alice"
    assert "Late delivery" in str(outcome["bob"])
    assert [(r.version, r.author) for r in store.history(item)] == [(1, "offline"), (2, "alice")]


# --------------------------------------------------------------- job units


def run_job(store: Store, run_id: str, keys: list[str], calls: list[str], fail_at: str | None = None) -> None:
    """A job in the shape DESIGN asks for: each unit writes its item and its mark in one transaction."""
    done = store.finished_units(run_id)
    for key in keys:
        if key in done:
            continue
        with store.unit(run_id, key) as unit:
            calls.append(key)  # stands for the model call the resume must not repeat
            store.add_item(
                "spoke", "spec", spec_body(f"spec-{key}"), "offline", run_id=run_id, conn=unit.conn
            )
            if key == fail_at:
                raise RuntimeError(f"model crashed on {key}")
            unit.result = {"spec": f"spec-{key}"}


def test_rule_c_units_are_committed_one_by_one_and_a_resume_skips_them(store: Store):
    """DESIGN: pipeline runs persist each finished unit; a crash loses nothing, a re-run resumes."""
    store.create_project("spoke", "Spoke")
    run = store.start_run("spoke", Run(id="run-1", kind="specs.generate", params={"m": 5}))
    keys = ["u1", "u2", "u3", "u4", "u5"]
    calls: list[str] = []
    with pytest.raises(RuntimeError, match="u3"):
        run_job(store, run.id, keys, calls, fail_at="u3")
    assert calls == ["u1", "u2", "u3"]

    # what another process (a fresh store on the same database) sees after the crash
    other = Store(store.url)
    try:
        assert set(other.finished_units(run.id)) == {"u1", "u2"}
        assert other.finished_units(run.id)["u1"] == {
            "status": "done",
            "result": {"spec": "spec-u1"},
            "error": None,
        }
        assert [r.item_id for r in other.list_current("spoke", "spec")] == ["spec-u1", "spec-u2"]
        with pytest.raises(NotFoundError):
            other.current("spec-u3")
        assert rows_of(other, t.revisions, item_id="spec-u3") == 0
        assert other.run(run.id).status == "running"
    finally:
        other.close()

    # resume: the same job skips u1 and u2, redoes u3 and carries on
    store.start_run("spoke", Run(id="run-1", kind="specs.generate", params={"m": 5}))
    run_job(store, run.id, keys, calls)
    assert calls == ["u1", "u2", "u3", "u3", "u4", "u5"]
    assert set(store.finished_units(run.id)) == set(keys)
    assert [r.item_id for r in store.list_current("spoke", "spec")] == [f"spec-{k}" for k in keys]
    assert store.count_items("spoke") == {"spec": 5}
    assert len(store.runs("spoke")) == 1

    # a third start does nothing at all
    run_job(store, run.id, keys, calls)
    assert len(calls) == 6


def test_a_unit_marked_failed_is_kept_with_its_reason(store: Store):
    store.create_project("spoke", "Spoke")
    run = store.start_run("spoke", Run(id="run-2", kind="run"))
    with store.unit(run.id, "test-9") as unit:
        unit.fail("judge output unparseable", {"raw": "???"})
    assert store.finished_units(run.id) == {
        "test-9": {"status": "failed", "result": {"raw": "???"}, "error": "judge output unparseable"}
    }


def test_runs_are_recorded_updated_and_listed(store: Store):
    store.create_project("spoke", "Spoke")
    with pytest.raises(NotFoundError):
        store.run("run-x")
    run = store.start_run("spoke", Run(id="run-x", kind="run", target="demo", budget={"usd": 1.0}))
    assert run.status == "running"
    store.update_run(run.model_copy(update={"status": RunStatus.stopped, "stopped_reason": "budget"}))
    loaded = store.run("run-x")
    assert (loaded.status, loaded.stopped_reason, loaded.budget) == ("stopped", "budget", {"usd": 1.0})
    store.start_run("spoke", Run(id="run-y", kind="specs.generate"))
    assert [r.id for r in store.runs("spoke", kind="run")] == ["run-x"]
    assert {r.id for r in store.runs("spoke")} == {"run-x", "run-y"}


# -------------------------------------------------------------- annotations


def accept(item: str, turn: int | None = None, author: str = "ann") -> Annotation:
    return Annotation(item_kind="conversation", item_id=item, turn_index=turn, label="accept", author=author)


def test_annotate_appends_a_revision_and_keeps_the_content(store: Store):
    store.create_project("spoke", "Spoke")
    body = conversation_body("conv-1")
    item = store.add_item("spoke", "conversation", body, "offline")
    reject = Annotation(
        item_kind="conversation",
        item_id=item,
        turn_index=1,
        label="reject",
        reason="wrong",
        note="30 not 14",
        edited_content="Yes, within 14 days.",
        author="ann",
    )
    assert store.annotate(item, [accept(item, 0), reject], "ann", 1) == 2

    current = store.current(item)
    assert (current.version, current.author, current.note) == (2, "ann", "annotated")
    assert current.body == body, "an annotation revision carries no body; the content is the latest body"
    assert [(r.version, r.body is None) for r in store.history(item)] == [(1, False), (2, True)]
    saved = store.annotations(item)
    assert [(a.turn_index, a.label, a.reason, a.edited_content) for a in saved] == [
        (0, "accept", None, None),
        (1, "reject", "wrong", "Yes, within 14 days."),
    ]
    assert all(a.item_kind == "conversation" and a.item_id == item and a.author == "ann" for a in saved)
    assert saved[1].note == "30 not 14"

    # a second annotator on the current version appends; nothing earlier is touched
    assert store.annotate(item, [accept(item, 1, "lead")], "lead", 2) == 3
    assert [a.author for a in store.annotations(item)] == ["ann", "ann", "lead"]
    listed = store.list_current("spoke", "conversation")
    assert [(r.version, r.body) for r in listed] == [(3, body)]


def test_annotate_on_a_stale_version_is_refused_and_adds_nothing(store: Store):
    store.create_project("spoke", "Spoke")
    item = store.add_item("spoke", "conversation", conversation_body("conv-1"), "offline")
    store.annotate(item, [accept(item, 0, "ann")], "ann", 1)
    with pytest.raises(StaleVersionError) as caught:
        store.annotate(item, [accept(item, 0, "bea")], "bea", 1)
    assert caught.value.changed_by == "ann"
    assert [a.author for a in store.annotations(item)] == ["ann"]
    assert rows_of(store, t.annotations) == 1
    assert store.current(item).version == 2


def test_a_failure_after_annotations_were_inserted_leaves_the_previous_state_whole(store: Store, snapshot):
    store.create_project("spoke", "Spoke")
    item = store.add_item("spoke", "conversation", conversation_body("conv-1"), "offline")
    store.annotate(item, [accept(item, 0)], "ann", 1)
    before = snapshot(store)

    with pytest.raises(RuntimeError, match="lost connection"), store.write() as conn:
        store.annotate(item, [accept(item, 1, "bea"), accept(item, None, "bea")], "bea", 2, conn=conn)
        assert conn.scalar(sa.select(sa.func.count()).select_from(t.annotations)) == 3
        raise RuntimeError("lost connection")

    assert snapshot(store) == before
    assert store.current(item).version == 2
    assert len(store.annotations(item)) == 1
    # and the version that failed to land is still free to use
    assert store.annotate(item, [accept(item, 1, "bea")], "bea", 2) == 3


def test_annotating_an_unknown_item_is_not_found(store: Store):
    with pytest.raises(NotFoundError):
        store.annotate("ghost", [accept("ghost")], "ann", 1)
    assert rows_of(store, t.annotations) == 0


# ------------------------------------------------------------------- lists


def test_list_current_pages_with_limit_and_offset(store: Store):
    store.create_project("spoke", "Spoke")
    ids = [store.add_item("spoke", "spec", spec_body(f"spec-{i}"), "offline") for i in range(5)]
    page = lambda **kw: [r.item_id for r in store.list_current("spoke", "spec", **kw)]  # noqa: E731
    assert page() == ids
    assert page(limit=2) == ids[:2]
    assert page(limit=2, offset=2) == ids[2:4]
    assert page(limit=2, offset=4) == ids[4:]
    assert page(offset=3) == ids[3:]
    assert page(limit=2, offset=10) == []
    assert page(limit=0) == []


def test_list_current_shows_latest_content_at_the_head_version(store: Store):
    store.create_project("spoke", "Spoke")
    a = store.add_item("spoke", "spec", spec_body("spec-a", then="a1"), "offline")
    b = store.add_item("spoke", "spec", spec_body("spec-b", then="b1"), "offline")
    store.save_revision(a, spec_body("spec-a", then="a2"), "alice", 1)
    store.annotate(a, [Annotation(item_kind="spec", item_id=a, label="accept", author="lead")], "lead", 2)
    listed = {r.item_id: r for r in store.list_current("spoke", "spec")}
    assert (listed[a].version, listed[a].body["then"], listed[a].author) == (3, "a2", "alice")
    assert (listed[b].version, listed[b].body["then"]) == (1, "b1")
    assert store.current(a).version == 3 and store.current(a).body["then"] == "a2"


def test_list_current_filters_by_kind_generator_spec_and_project(store: Store):
    store.create_project("spoke", "Spoke")
    store.create_project("other", "Other")
    add = store.add_item
    add("spoke", "spec", spec_body("spec-1"), "offline")
    add(
        "spoke",
        "conversation",
        conversation_body("c1", "doc_qa", "spec-1"),
        "o",
        generator="doc_qa",
        spec_id="spec-1",
    )
    add("spoke", "conversation", conversation_body("c2", "procedure"), "o", generator="procedure")
    add(
        "spoke",
        "conversation",
        conversation_body("c3", "doc_qa", "spec-2"),
        "o",
        generator="doc_qa",
        spec_id="spec-2",
    )
    add(
        "other",
        "conversation",
        conversation_body("c4", "doc_qa", "spec-1"),
        "o",
        generator="doc_qa",
        spec_id="spec-1",
    )

    ids = lambda **kw: [r.item_id for r in store.list_current("spoke", "conversation", **kw)]  # noqa: E731
    assert ids() == ["c1", "c2", "c3"]
    assert ids(generator="doc_qa") == ["c1", "c3"]
    assert ids(generator="procedure") == ["c2"]
    assert ids(spec_id="spec-1") == ["c1"]
    assert ids(generator="doc_qa", spec_id="spec-2") == ["c3"]
    assert ids(generator="doc_qa", limit=1, offset=1) == ["c3"]
    assert ids(generator="simulation") == []
    assert [r.item_id for r in store.list_current("spoke", "spec")] == ["spec-1"]
    assert [r.item_id for r in store.list_current("other", "conversation")] == ["c4"]
    assert all(r.kind == "conversation" for r in store.list_current("spoke", "conversation"))


def test_count_items_per_kind_and_project(store: Store):
    store.create_project("spoke", "Spoke")
    store.create_project("other", "Other")
    assert store.count_items("spoke") == {}
    for i in range(3):
        store.add_item("spoke", "spec", spec_body(f"s{i}"), "offline")
    for i in range(2):
        item = store.add_item("spoke", "conversation", conversation_body(f"c{i}"), "offline")
        store.annotate(item, [accept(item)], "ann", 1)  # new revisions are not new items
    store.add_item("other", "test", {"id": "t1"}, "offline")
    assert store.count_items("spoke") == {"spec": 3, "conversation": 2}
    assert store.count_items("other") == {"test": 1}
    assert store.count_items("ghost") == {}
