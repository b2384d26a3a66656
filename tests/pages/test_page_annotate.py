"""Page tests (AppTest) of Annotate and Agreement, on SQLite and PostgreSQL: the queue, a review saved in
one go, the next item opening, a stale save refused with Reload, a lead's decision, the report tabs."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.inputs import import_project
from evalcore.review import ItemVerdict, assign_items, open_item, save_review
from evalcore.store import DATABASE_URL_ENV, Store
from pages._common import md
from tests.annotation_data import add_conversations

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def seeded(db_url: str, monkeypatch) -> tuple[Store, list[str]]:
    """The sample project with 30 conversations, assigned to ann and bea (overlap 2)."""
    monkeypatch.setenv(DATABASE_URL_ENV, db_url)
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    ids = add_conversations(store, pid, 30)
    assign_items(store, pid, ["ann", "bea"], 2, "lee")
    yield store, ids
    store.close()


def page(name: str | None, page_file: str = "pages/annotate.py", **query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if name:
        at.session_state["user_name"] = name
    at.run()
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page(page_file).run()
    assert not at.exception, at.exception
    return at


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def save(at: AppTest) -> AppTest:
    return button(at, "Save & next").click().run()


def accept_whole(at: AppTest, item: str) -> AppTest:
    """Pick 'accept' for the whole conversation: the one action that accepts it."""
    at.segmented_control(key=f"cv:{item}").set_value("accept")
    return at


def test_without_a_name_nobody_can_act(seeded):
    at = page(None)
    assert any("Type your name" in w.value for w in at.warning)
    assert not any(b.label == "Save & next" for b in at.button)


def test_the_queue_shows_one_page_with_progress_and_filters(seeded):
    _, ids = seeded
    at = page("ann")
    frame = at.dataframe[0].value
    assert list(frame["conversation"]) == ids[:25], "25 per page, oldest first"
    assert any("0 / 30 assigned done" in str(p.proto.text) for p in at.get("progress"))
    button(at, "Next page ▶").click().run()
    assert list(at.dataframe[0].value["conversation"]) == ids[25:]

    at.toggle(key="q_mine").set_value(False)
    at.selectbox(key="q_gen").set_value("procedure").run()
    assert set(at.dataframe[0].value["generator"]) == {"Procedure tests"}, "the generator in words"
    assert any("**8** conversation(s)" in c.value for c in at.caption)


def test_review_saved_in_one_go_then_the_next_item_opens(seeded):
    store, ids = seeded
    at = page("ann")
    button(at, "Review next").click().run()
    assert at.query_params["item"] == [ids[0]] or at.query_params["item"] == ids[0]
    at.segmented_control(key=f"tv:{ids[0]}:3").set_value("not grounded")
    at.text_input(key=f"tn:{ids[0]}:3").input("the policy says 14 days")
    at.text_area(key=f"te:{ids[0]}:5").input("Corrected: 2 years or 500 charge cycles.")
    save(at)
    assert not at.exception
    opened = at.query_params["item"]
    assert (opened[0] if isinstance(opened, list) else opened) == ids[1], "the next item opened"

    history = store.annotations(ids[0])
    mine = {a.turn_index: a for a in history}
    assert (mine[3].label.value, mine[3].reason, mine[3].note) == (
        "reject",
        "not grounded",
        "the policy says 14 days",
    )
    assert (mine[5].reason, mine[5].edited_content) == (
        "wrong answer",
        "Corrected: 2 years or 500 charge cycles.",
    )
    assert 1 not in mine, "a turn nobody looked at has no verdict, not an accept"
    assert (mine[None].label.value, mine[None].reason) == ("reject", "not grounded"), "an uncorrected reject"
    assert open_item(store, ids[0]).content(5) == "Corrected: 2 years or 500 charge cycles."


def test_accepting_is_one_action_and_reopening_shows_my_verdicts(seeded):
    store, ids = seeded
    at = page("ann", item=ids[2])
    save(accept_whole(at, ids[2]))
    view = open_item(store, ids[2], "ann")
    assert view.mine[None].label.value == "accept" and len(view.mine) == 1, "no turn is said accepted"

    at = page("ann", item=ids[2])
    assert at.segmented_control(key=f"cv:{ids[2]}").value == "accept", "my verdict is pre-filled"
    button(at, "Reopen my verdict").click().run()
    assert open_item(store, ids[2], "ann").mine == {}


def test_saving_with_turns_left_unmarked_saves_nothing_and_names_them(seeded):
    store, ids = seeded
    at = page("ann", item=ids[3])
    at.segmented_control(key=f"tv:{ids[3]}:1").set_value("accept")
    save(at)
    assert not at.exception
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any("turn(s) 3, 5, 7, 9 have no verdict yet" in e for e in errors), errors
    assert store.annotations(ids[3]) == [], "nothing is saved"
    opened = at.query_params["item"]
    assert (opened[0] if isinstance(opened, list) else opened) == ids[3], "the conversation stays open"


def test_the_agreement_page_reads_without_a_name_and_asks_for_one_only_to_change(seeded):
    at = page(None, "pages/agreement.py")
    assert not at.warning, "nothing blocks reading"
    assert any(m.label == "gold" for m in at.metric)
    at.session_state["agreement_tab"] = "Assignments"
    at.run()
    assert not at.exception
    assert all(b.disabled for b in at.get("form_submit_button")), "assigning needs a name"


def test_a_stale_save_is_refused_naming_who_saved_and_reload_keeps_the_draft(seeded):
    store, ids = seeded
    item = ids[4]
    ann = page("ann", item=item)
    bea = page("bea", item=item)
    save(accept_whole(ann, item))

    bea.segmented_control(key=f"tv:{item}:1").set_value("unsafe")
    bea.text_input(key=f"tn:{item}:1").input("tells the user to ride without brakes")
    save(bea)
    assert not bea.exception
    messages = " ".join(w.value for w in bea.warning)
    assert "changed by ann" in messages and "refused" in messages
    assert [a.author for a in store.annotations(item)] == ["ann"] * len(store.annotations(item))

    button(bea, "Reload").click().run()
    assert bea.segmented_control(key=f"tv:{item}:1").value == "unsafe", "the draft survives a reload"
    save(bea)
    assert [(r.version, r.author) for r in store.history(item)] == [(1, "offline"), (2, "ann"), (3, "bea")]
    assert open_item(store, item, "lee").state.needs_adjudication


def test_a_lead_decides_a_disagreement_and_it_is_recorded_as_such(seeded):
    store, ids = seeded
    item = ids[6]
    v = save_review(store, item, "ann", 1, [], ItemVerdict(label="accept")).version
    save_review(store, item, "bea", v, [], ItemVerdict(label="reject", reason="off-spec"))
    at = page("lee", item=item)
    # One label set: the lead's buttons read as the annotators' on the conversation and on each turn, with
    # the same key shown on each; the value stays the stored label.
    shown = at.segmented_control(key=f"lead_d:{item}").options
    assert (
        shown
        == at.segmented_control(key=f"cv:{item}").options
        == at.segmented_control(key=f"tv:{item}:1").options
    )
    assert shown[:3] == [
        "Accept :gray-badge[1]",
        "Wrong answer :gray-badge[2]",
        "Not grounded :gray-badge[3]",
    ]
    at.segmented_control(key=f"lead_d:{item}").set_value("accept")
    next(b for b in at.button if b.label == "Record lead decision").click().run()
    assert not at.exception
    last = store.annotations(item)[-1]
    assert (last.author, last.role, last.label.value) == ("lee", "lead", "accept")
    assert open_item(store, item).state.tier.value == "gold"


def test_agreement_page_tabs_render(seeded):
    store, ids = seeded
    for item in ids[:6]:
        for who in ("ann", "bea"):
            verdict = ItemVerdict(label="accept") if (item, who) != (ids[0], "bea") else None
            verdict = verdict or ItemVerdict(label="reject", reason="unsafe")
            save_review(store, item, who, open_item(store, item).version, [], verdict)
    at = page("lee", "pages/agreement.py")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["gold"] == "5" and metrics["disagreement"] == "1"
    assert "Cohen's kappa" in metrics
    pairs = at.dataframe[0].value
    assert list(pairs.columns[:2]) == ["annotator A", "annotator B"], "two columns, told apart"
    assert pairs["shared"].tolist() == [6] and metrics["Cohen's kappa"] != "n/a", "6 shared items reach 5"
    for tab, check in [
        ("Adjudication", lambda: list(at.dataframe[0].value["conversation"]) == [ids[0]]),
        ("Silver calibration", lambda: len(at.get("vega_lite_chart")) == 1),
        ("Assignments", lambda: set(at.dataframe[0].value["annotator"]) == {"ann", "bea"}),
        ("Export", lambda: len(at.get("download_button")) == 3),  # gold, silver, another tool's format
    ]:
        at.session_state["agreement_tab"] = tab
        at.run()
        assert not at.exception, tab
        assert check(), tab


def test_reload_shows_a_correction_saved_in_between_and_saving_does_not_undo_it(seeded):
    store, ids = seeded
    item = ids[8]
    ann = page("ann", item=item)
    bea = page("bea", item=item)
    bea.text_area(key=f"te:{item}:1").input("Corrected by bea.")
    save(accept_whole(bea, item))

    ann.segmented_control(key=f"tv:{item}:3").set_value("unsafe")
    save(ann)
    assert any("changed by bea" in w.value for w in ann.warning)
    button(ann, "Reload").click().run()
    assert ann.text_area(key=f"te:{item}:1").value == "Corrected by bea.", "the latest text is shown"
    assert ann.segmented_control(key=f"tv:{item}:3").value == "unsafe", "the unsaved choice is kept"
    save(ann)
    view = open_item(store, item)
    assert view.content(1) == "Corrected by bea."
    assert not [a for a in view.annotations if a.author == "ann" and a.edited_content], (
        "ann corrected nothing"
    )


def test_home_shows_the_tiers_and_what_waits_for_me(seeded):
    store, ids = seeded
    save_review(store, ids[0], "ann", 1, [], ItemVerdict(label="accept"))
    at = page("ann", "pages/home.py")
    metrics = {m.label: m.value for m in at.metric}
    tiers = ("Not reviewed", "Accepted by the judge", "Accepted by a person")  # unreviewed, silver, gold
    assert metrics["Accepted by a person"] == "1" and sum(int(metrics[t]) for t in tiers) == 30
    assert any("29 conversation(s) assigned to ann wait for your verdict" in c.value for c in at.caption)
    assert not any("wait for your verdict" in c.value for c in page(None, "pages/home.py").caption)


def test_kappa_on_one_shared_conversation_is_not_a_number_and_says_why(seeded):
    store, ids = seeded
    for who, label in (("ann", "accept"), ("bea", "reject")):
        verdict = ItemVerdict(label=label, reason="unsafe" if label == "reject" else None)
        save_review(store, ids[0], who, open_item(store, ids[0]).version, [], verdict)
    at = page(None, "pages/agreement.py")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Cohen's kappa"] == "n/a", "not 0.00 from a single conversation"
    assert any(
        "needs at least 5 conversations labelled by two annotators; 1 so far" in c.value for c in at.caption
    )
    pairs = at.dataframe[0].value
    assert pairs[["annotator A", "annotator B", "shared", "Cohen's kappa"]].values.tolist() == [
        ["ann", "bea", 1, "n/a"]
    ]


def _markdowns(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown] + [m.value for m in at.sidebar.markdown]


def test_the_conversation_is_titled_by_its_first_question_and_my_progress_counts_saves(seeded):
    store, ids = seeded
    at = page("ann", item=ids[0])
    question = open_item(store, ids[0]).first_question
    heading = next(m for m in at.markdown if m.value.startswith("#### "))
    assert md(question) in heading.value and ids[0] not in heading.value, "titled by words, not its id"
    assert any(p.proto.text == "0 of 30 done" for p in at.get("progress")), "all 30 assigned to ann"
    accept_whole(at, ids[0])
    save(at)
    assert any(p.proto.text == "1 of 30 done · 1 saved in this session" for p in at.get("progress"))


def test_a_spec_titles_its_conversations_and_the_first_question_is_shown_under_it(db_url, monkeypatch):
    from evalcore.specs.generation import generate_specs
    from evalcore.specs.store_ops import list_specs

    monkeypatch.setenv(DATABASE_URL_ENV, db_url)
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    generate_specs(store, pid, m=5)
    spec = list_specs(store, pid)[0].spec
    [item] = add_conversations(store, pid, 1, spec_ids=[spec.id])
    at = page("ann", item=item)
    heading = next(m.value for m in at.markdown if m.value.startswith("#### "))
    assert heading.startswith(f"#### {md(spec.scenario)} ")
    assert f"**First question:** {md(open_item(store, item).first_question)}" in _markdowns(at)
    store.close()


def test_the_guidelines_are_beside_the_task_with_nothing_live_and_a_lead_edits_them(seeded):
    from evalcore.review.guidelines import edit_guidelines, guidelines

    store, ids = seeded
    pid = open_item(store, ids[0]).project_id
    rules = guidelines(store, pid)
    assert rules is not None, "data/sample/guidelines.md is imported with the project"
    edit_guidelines(
        store, pid, "## Rules\n\n- **Accept** grounded answers <img src=x onerror=alert(1)>", "lee", 1
    )
    at = page("ann", item=ids[0])
    shown = next(m.value for m in at.sidebar.markdown if "Rules" in m.value)
    assert shown.startswith("## Rules") and "**Accept**" in shown, "Markdown stays Markdown"
    assert "\\<img" in shown and "<img" not in shown.replace("\\<img", ""), "HTML in the file is text"

    at = page("lee")  # the local user holds every role: a lead may edit
    assert not at.text_area, "the editor is drawn only once its section is opened"
    at.session_state["annotate_guidelines"] = True
    at.run()
    at.text_area(key="guidelines_text").input("## Rules v3\n\nReject anything not in a document.")
    button(at, "Save guidelines").click().run()
    assert not at.exception
    assert (guidelines(store, pid).version, guidelines(store, pid).saved_by) == (3, "lee")
