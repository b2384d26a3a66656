"""Page test (AppTest) of Results: two demo runs with a seeded change; the compare lists exactly the turns
that flipped, with McNemar's p as scipy's exact binomial gives it; filters and pages work; an opened row
shows expected and actual, the reason and the item with its judged turn marked."""

from __future__ import annotations

from pathlib import Path

import pytest
from results_support import two_demo_runs
from scipy.stats import binomtest
from streamlit.testing.v1 import AppTest

from evalcore.reports.item_titles import item_titles
from evalcore.reports.results import spec_titles
from evalcore.review import ItemVerdict, open_item, save_review
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def seeded(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    return two_demo_runs(Store(url))


def titles_of(pid: str, ids: set[str]) -> dict[str, str]:
    store = Store()
    try:
        return item_titles(store, ids, spec_titles(store, pid))
    finally:
        store.close()


def open_results() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/results.py").run()
    assert not at.exception, at.exception
    return at


def test_the_compare_lists_exactly_the_turns_that_flipped(seeded):
    pid, base, now, broken, fixed = seeded
    at = open_results()
    at.multiselect(key="results_runs").set_value([now]).run()
    at.selectbox(key="results_baseline").set_value(base).run()
    assert not at.exception, at.exception
    flipped = at.dataframe[1].value  # after the results table: the flipped turns, then the specs
    listed = {(r.item, r.turn): r.change for r in flipped.itertuples()}
    # Items in words: what each conversation's user first asks (one conversation, one question here).
    titles = titles_of(pid, {k[0] for k in broken | fixed})
    assert len(set(titles.values())) == len(titles)
    assert not any(v.startswith("conv-") for v in titles.values())
    expected = {(titles[i], t): "broken" for i, t in broken} | {(titles[i], t): "fixed" for i, t in fixed}
    assert listed == expected
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Broken"], metrics["Fixed"]) == ("3", "1")
    assert float(metrics["McNemar p"]) == pytest.approx(binomtest(3, 4, 0.5).pvalue, rel=1e-3)
    specs = at.dataframe[2].value  # the specs, after the flipped turns
    assert (specs["broken"].sum(), specs["fixed"].sum()) == (3, 1)
    net = (specs["broken"] - specs["fixed"]).tolist()
    assert net == sorted(net, reverse=True), "regressions first"
    assert specs[["baseline %", "now %"]].stack().between(0, 100).all()
    # Only what did not move, asked for and nothing: said in words, not an empty table.
    at.multiselect(key="results_changes").set_value([]).run()
    assert "No turn is chosen." in [c.value for c in at.caption]


def test_filters_pages_and_an_opened_row(seeded):
    pid, _, now, broken, _ = seeded
    at = open_results()
    at.multiselect(key="results_runs").set_value([now]).run()
    table = at.dataframe(key="results_table").value
    assert list(table.columns)[:5] == ["run", "item", "turn", "generator", "spec"]
    assert table["spec"].str.len().min() > 0 and not table["spec"].str.startswith("spec-").any()  # titles
    assert list(table["verdict"]) == sorted(table["verdict"], key=["fail", "unscored", "pass"].index)
    at.selectbox(key="results_size").set_value(25).run()
    at.selectbox[1].set_value("fail").run()  # the verdict filter
    failing = at.dataframe(key="results_table").value
    assert set(failing["verdict"]) == {"fail"}
    titles = titles_of(pid, {i for i, _ in broken})
    assert {(r.item, int(r.turn)) for r in failing.itertuples()} >= {(titles[i], t) for i, t in broken}
    assert not failing["run"].str.contains(now).any()  # the run by its name, not its id
    item = sorted(broken)[0][0]
    at.text_input[0].input(item).run()
    assert set(at.dataframe(key="results_table").value["item"]) == {titles_of(pid, {item})[item]}
    # Opening a row: the selection a click makes.
    at.session_state["results_table"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert not at.exception, at.exception
    words = "\n".join(str(m.value) for m in [*at.markdown, *at.caption, *at.error])
    assert "**Expected**" in words and "**Actual**" in words and "Review history" in words
    assert len(at.error) == 1  # exactly the judged turn is marked


def test_pass_k_of_a_repeated_run_is_shown_beside_the_failure_rate(tmp_path, monkeypatch):
    from runs_support import sample_project

    from evalcore.reports.pass_k import pass_k_line, run_pass_k
    from evalcore.runs import execute_run
    from evalcore.runs.repetitions import create_repetitions

    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    pid, _ = sample_project(store)
    runs = create_repetitions(store, pid, "demo", 2, judge="offline", limit=1, name="steady")
    for run in runs:
        execute_run(store, run.id)
    at = open_results()
    at.multiselect(key="results_runs").set_value([runs[0].id]).run()
    words = "\n".join(str(c.value) for c in at.caption)
    assert "failure rate" in words
    assert "over 2 repetitions" in words and pass_k_line(run_pass_k(store, runs[0])) in words


def test_a_verdict_given_after_the_page_was_opened_shows_on_its_next_run(seeded):
    _, _, now, broken, _ = seeded
    at = open_results()
    at.multiselect(key="results_runs").set_value([now]).run()
    total = next(c.value for c in at.caption if " rows · failure rate" in c.value)
    item = sorted(broken)[0][0]
    store = Store()
    try:  # an annotator rejects the item: the view leaves it out unless rejected items are included
        rejected = ItemVerdict(label="reject", reason="unsafe")
        save_review(store, item, "ann", open_item(store, item).version, [], rejected)
    finally:
        store.close()
    at.run()
    after = next(c.value for c in at.caption if " rows · failure rate" in c.value)
    assert after != total, "the cached page was read again: the stamp names the new annotation"
    assert int(after.split()[0].replace(",", "")) < int(total.split()[0].replace(",", ""))
