"""Every page in plain words (issue 28): rendered with AppTest on the sample project filled at every stage
(tests/filled_project.py), no page shows a bare id, an enum's snake_case name, a literal None or a term of
the papers outside a tooltip (tests/page_text.py says what is read and what counts). Each tab of a page
with tabs is opened in turn. A planted bad string proves the scan can fail."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
import sqlalchemy as sa
from filled_project import PROJECT, fill
from page_text import offences, project_vocabulary, visible_texts
from streamlit.testing.v1 import AppTest

from evalcore.auth.audit import AuditEntry
from evalcore.store import DATABASE_URL_ENV, Store
from evalcore.store import schema as t

ROOT = Path(__file__).resolve().parents[2]
# page -> (session key of its tabs, tab labels); pages whose tabs render only when open.
TABS = {
    "tool_cases": ("tool_cases_tab", ["Catalog", "Conversations", "Gold and silver", "Rubrics",
                                      "Rubric methods compared", "Rubric scores"]),
    "agreement": ("agreement_tab", ["Agreement", "Adjudication", "Silver calibration", "Assignments",
                                    "Export"]),
    "diversity": ("diversity_view", ["Candidates on a 2D map", "Which documents the selected specs cover",
                                     "What Greedy and Max-Min gain over Random"]),
    "reports": ("report_tab", ["By spec", "By error type", "By kind of error", "By number of documents",
                               "By query type", "First vs later turns", "By tier"]),
}  # fmt: skip
PAGES = ["home", "settings", "specs", "diversity", "conversations", "annotate", "agreement", "tool_cases",
         "procedures", "runs", "reports", "results", "simulations", "scenarios"]  # fmt: skip


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    mp = pytest.MonkeyPatch()
    mp.setenv("EVALCORE_OFFLINE", "1")
    folder = tmp_path_factory.mktemp("plain_words")
    fill(folder / "filled.db", folder / "scenarios").close()
    mp.undo()
    return folder / "filled.db"


@pytest.fixture
def filled(template, tmp_path, monkeypatch) -> Store:
    # SQLite's backup, not a file copy: the filling CLI's stores may still hold its last writes in the
    # write-ahead log beside the file, which a copy of the file alone would leave behind.
    with (
        closing(sqlite3.connect(template)) as source,
        closing(sqlite3.connect(tmp_path / "pages.db")) as copy,
    ):
        source.backup(copy)
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    store = Store(url)
    yield store
    store.close()


def rendered(page: str, tab: tuple[str, str] | None = None, **query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["user_name"] = "dana"
    at.run()
    for key, value in query.items():
        at.query_params[key] = value
    if page != "home":
        at.switch_page(f"pages/{page}.py")
        if tab:  # set after the first run, which would drop the state of a widget it did not draw
            at.session_state[tab[0]] = tab[1]
        at.run()
    assert not at.exception, at.exception[0].value
    return at


def is_audit_trail(frame) -> bool:
    """The audit trail (Settings): the record of every action by the ids it acted on, for a lead to
    look up and export; its ids are what it is for."""
    return set(AuditEntry.model_fields) <= set(frame.columns)


def what_fails(at: AppTest, allowed: set[str]) -> list[str]:
    return sorted({f"{o}   in [{where}] {text[:100]!r}" for where, text in visible_texts(at, is_audit_trail)
                   for o in offences(text, allowed)})  # fmt: skip


@pytest.mark.parametrize("page", PAGES)
def test_the_page_speaks_plain_words(filled, page):
    allowed = project_vocabulary(filled, PROJECT)
    key, labels = TABS.get(page, (None, [None]))
    failing = []
    for label in labels:
        at = rendered(page, (key, label) if key else None)
        failing += [f"{label or page}: {line}" for line in what_fails(at, allowed)]
    assert not failing, "\n".join(failing)


@pytest.mark.parametrize("generator", ["doc_qa", "procedure", "tool_case", "simulation", "scenario"])
def test_a_conversation_open_in_annotate_speaks_plain_words(filled, generator):
    """Annotate with one conversation of each generator open (the queue alone is the page test above):
    its heading, tier, generator, turns and their tool calls in words."""
    with filled.read() as conn:
        item_id = conn.scalar(
            sa.select(t.items.c.id).where(t.items.c.generator == generator, t.items.c.kind == "conversation")
        )
    assert item_id, f"the filled sample has a {generator} conversation"
    at = rendered("annotate", item=item_id)
    assert any(b.label == "Save & next" for b in at.button), "the conversation is open"
    failing = what_fails(at, project_vocabulary(filled, PROJECT))
    assert not failing, "\n".join(failing)


def test_the_scan_flags_a_planted_bad_string(filled):
    """The same scan on Home with bad strings planted in what it shows: each is flagged, each where the
    user reads it (the project's title is a heading; a None cell; a tooltip is never read)."""
    with filled.write() as conn:
        conn.execute(
            t.projects.update().values(title="Run run-0123abcd4567 user_ended_chat seed 004 SPUR None")
        )
    at = rendered("home")
    found = what_fails(at, project_vocabulary(filled, PROJECT))
    for expected in ("an id: run-0123abcd4567", "snake_case word: user_ended_chat", "research term: seed 004",
                     "research term: SPUR", "None: None"):  # fmt: skip
        assert any(expected in line for line in found), (expected, found)
    assert sorted(offences("products\\#r11 and 4f1c2e9a7b3d")) == [
        "a hex id: 4f1c2e9a7b3d",
        "a passage id: products#r11",
    ]
    assert offences("return by POS-114210 in the shop") == [], "data that only looks like a term passes"
    assert offences("check_stock", {"check_stock"}) == [], "the project's own names pass"


def test_home_is_a_checklist_with_the_next_step_as_a_link(filled):
    """On the filled sample every stage holds something but no spec was accepted or rejected yet: Home
    counts each stage from the store and sends the user to Spec review."""
    at = rendered("home")
    shown = "\n".join(str(m.value) for m in at.markdown)
    made = sum(filled.count_items(PROJECT).get(k, 0) for k in ("conversation", "test", "scenario"))
    assert "**Conversations and tests made**" in shown and f"**{made:,}**" in shown
    assert "**Next:** Accept or reject specs on Spec review." in shown
    links = [(link.proto.page, link.proto.label) for link in at.get("page_link")]
    assert ("specs", "Accept or reject specs on Spec review") in links
    assert ("reports", "Reports") in links, "a stage done links to where its things are seen"
