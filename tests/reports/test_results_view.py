"""The results view's library (reports.results, reports.result_detail) and the compare on both backends:
rows of two demo runs with a seeded change, filtered, searched and paged in SQL; an opened row."""

from __future__ import annotations

import pytest
from results_support import two_demo_runs

from evalcore.errors import UsageError
from evalcore.models import Annotation
from evalcore.reports.compare import BROKEN, FIXED, compare_to_baseline
from evalcore.reports.result_detail import result_detail
from evalcore.reports.results import ResultFilters, filter_choices, judgment_query, page_query, results_page


def _all(store, pid, filters):
    page = results_page(store, pid, filters, limit=1000)
    return page.rows


def test_rows_filters_search_and_pages(store):
    pid, base, now, broken, fixed = two_demo_runs(store)
    rows = _all(store, pid, ResultFilters(run_ids=[now]))
    assert [r.verdict for r in rows] == sorted(
        (r.verdict for r in rows), key=["fail", "unscored", "pass"].index
    )
    failing = {(r.item_id, r.turn_index) for r in rows if r.verdict == "fail"}
    assert broken <= failing and not fixed & failing
    assert all(r.spec and not r.spec.startswith("spec-") and r.generator == "doc_qa" for r in rows)
    # Two runs: the run's rows, then the baseline's; a page cut across them holds the right rows.
    both = _all(store, pid, ResultFilters(run_ids=[now, base]))
    assert [r.run_id for r in both] == [now] * len(rows) + [base] * (len(both) - len(rows))
    page = results_page(store, pid, ResultFilters(run_ids=[now, base]), offset=len(rows) - 2, limit=4)
    assert page.rows == both[len(rows) - 2 : len(rows) + 2] and page.total == len(both)
    assert page.verdicts["fail"] == sum(r.verdict == "fail" for r in both)
    # Filters: verdict, spec, generator, and a search through the texts (question, reply, reason).
    spec_id = rows[0].spec_id
    kept = _all(store, pid, ResultFilters(run_ids=[now], verdict="pass", spec_id=spec_id))
    assert kept and all(r.verdict == "pass" and r.spec_id == spec_id for r in kept)
    assert not _all(store, pid, ResultFilters(run_ids=[now], generator="procedure"))
    assert _all(store, pid, ResultFilters(run_ids=[now], generator="doc_qa")) == rows
    assert {r.generator for r in rows} == {"doc_qa"}  # each row's generator, read for its page
    word = rows[0].spec.split()[-1].upper()  # a word of a spec title, in another case
    found = _all(store, pid, ResultFilters(run_ids=[now], text=word))
    assert (
        {r.ref for r in rows if word.lower() in r.spec.lower()}
        <= {r.ref for r in found}
        < {r.ref for r in rows}
    )
    assert _all(store, pid, ResultFilters(run_ids=[now], text="no such words anywhere")) == []
    generators, specs = filter_choices(store, pid, [now])
    assert generators == ["doc_qa"] and spec_id in specs
    with pytest.raises(UsageError, match="positive size"):
        results_page(store, pid, ResultFilters(run_ids=[now]), limit=0)


def test_rejected_items_are_left_out_unless_asked_and_an_opened_row_shows_its_history(store):
    pid, base, now, broken, fixed = two_demo_runs(store)
    item = sorted(broken)[0][0]
    head = store.history(item)[-1].version
    store.annotate(item, [Annotation(item_kind="conversation", item_id=item, label="reject", reason="wrong",
                                     author="ann")], "ann", head)  # fmt: skip
    rows = _all(store, pid, ResultFilters(run_ids=[now]))
    assert item not in {r.item_id for r in rows}
    rows = _all(store, pid, ResultFilters(run_ids=[now], include_rejected=True))
    row = next(r for r in rows if r.item_id == item and r.verdict == "fail")
    detail = result_detail(store, row)
    assert detail.expected and detail.actual and detail.reason
    assert [x.index for x in detail.transcript if x.highlighted] == [row.turn_index]
    assert [a.label for a in detail.reviews] == ["reject"] and detail.documents
    # The compare leaves the rejected item out too, on either backend.
    cmp = compare_to_baseline(store, now, base)
    flipped = {(r.item_id, r.turn_index, r.change) for r in cmp.flipped().itertuples()}
    assert flipped == {(i, t, BROKEN) for i, t in broken if i != item} | {
        (i, t, FIXED) for i, t in fixed if i != item
    }


def test_a_simulation_lists_one_row_per_dialogue_at_its_first_breakdown(sqlite_store):
    from runs_support import sample_project

    from evalcore.generators.simulation import load_simulation_run
    from evalcore.generators.simulation.job import simulate

    store = sqlite_store
    pid, _ = sample_project(store)
    run = simulate(store, pid, "demo", standard=2).run
    rows = _all(store, pid, ResultFilters(run_ids=[run.id]))
    dialogues = load_simulation_run(store, run.id).dialogues
    assert len(rows) == len(dialogues) == 2 and {r.generator for r in rows} == {"simulation"}
    for row in rows:
        detail = result_detail(store, row)
        if row.verdict == "fail":
            assert [x.index for x in detail.transcript if x.highlighted] == [row.turn_index]
            assert row.error_type and detail.reason
        else:
            assert row.turn_index is None and not any(x.highlighted for x in detail.transcript)


def test_two_simulations_are_compared_dialogue_by_dialogue_of_each_persona(sqlite_store):
    """Each simulation writes new conversations: the compare pairs them by persona and dialogue."""
    from runs_support import sample_project

    from evalcore.generators.simulation.job import simulate
    from evalcore.reports.compare import STILL_FAILING, STILL_PASSING

    store = sqlite_store
    pid, _ = sample_project(store)
    base = simulate(store, pid, "demo", standard=2).run.id
    now = simulate(store, pid, "demo", standard=2).run.id
    rows = {run: {r.pair: r for r in _all(store, pid, ResultFilters(run_ids=[run]))} for run in (base, now)}
    assert len(rows[base]) == 2 and set(rows[base]) == set(rows[now])
    assert not {r.item_id for r in rows[base].values()} & {r.item_id for r in rows[now].values()}
    changes = {(True, True): STILL_FAILING, (True, False): FIXED, (False, True): BROKEN}
    changes[(False, False)] = STILL_PASSING
    expected = {
        pair: changes[(was.verdict == "fail", rows[now][pair].verdict == "fail")]
        for pair, was in rows[base].items()
        if "unscored" not in (was.verdict, rows[now][pair].verdict)
    }
    cmp = compare_to_baseline(store, now, base)
    assert dict(zip(cmp.items["item_id"], cmp.items["change"], strict=True)) == expected
    assert cmp.overall.n == len(expected) and cmp.items["judgment_id"].isna().all()


def test_a_page_of_a_run_is_read_in_index_order_not_sorted(store):
    """The first page of a run comes from ix_judgments_results on both backends: the order's expressions
    are written as the index writes them (a bound parameter in place of a constant would not match, and
    every page would sort the whole run)."""
    pid, _, now, _, _ = two_demo_runs(store)
    query = page_query(judgment_query(ResultFilters(run_ids=[now]), pid, now, []), 0, 50)
    with store.read() as conn:
        # Explained with its parameters bound as the view sends them (inlined, a parameter would match).
        compiled = query.compile(conn)
        sql = str(compiled)
        if conn.dialect.name == "postgresql":
            # A demo run is small enough for a plain sort to be cheapest: ask whether the index can serve it.
            conn.exec_driver_sql("SET LOCAL enable_sort = off")
            conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
            plan = "\n".join(conn.exec_driver_sql("EXPLAIN " + sql, compiled.params).scalars())
            assert "ix_judgments_results" in plan and "Sort" not in plan, plan
        else:
            params = tuple(compiled.params[name] for name in compiled.positiontup)
            plan = "\n".join(row[-1] for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, params))
            assert "ix_judgments_results" in plan and "ORDER BY" not in plan, plan


def test_scenarios_written_from_specs_list_their_spec(sqlite_store, tmp_path):
    """A scenario `scenarios from-specs --import` wrote keeps the spec it came from: its rows name it, and
    the spec filter finds them (they said '(no spec)')."""
    from runs_support import sample_project

    from evalcore.generators.scenario import list_scenarios
    from evalcore.generators.scenario.run import run_scenarios
    from evalcore.generators.scenario.store_ops import write_from_specs
    from evalcore.generators.scenario.targets import target_domain
    from evalcore.llm import ModelClient
    from evalcore.reports.results import spec_titles
    from evalcore.specs.choice import selected_first

    store = sqlite_store
    pid, _ = sample_project(store)
    domain = target_domain(store, pid, "demo-flows")
    written = write_from_specs(
        store, pid, tmp_path, ModelClient(store, pid), limit=2, domain=domain, import_as="dana"
    )
    assert len(written.files) == 2
    run = run_scenarios(store, pid, "demo-flows", list_scenarios(store, pid)).run
    titles = spec_titles(store, pid)
    wanted = {titles[s.id] for s in selected_first(store, pid, 2)}
    rows = _all(store, pid, ResultFilters(run_ids=[run.id]))
    assert {r.spec for r in rows} == wanted and all(r.spec_id for r in rows)
    one = rows[0].spec_id
    kept = _all(store, pid, ResultFilters(run_ids=[run.id], spec_id=one))
    assert kept and {r.spec_id for r in kept} == {one}


def test_procedure_tests_are_listed_at_their_turn_under_their_procedure(sqlite_store, monkeypatch):
    """A procedure test has no spec: its row names its procedure (what it is for) and the turn it tests,
    and the compare counts per procedure (it said '(no spec)' for every test, and tests of one
    conversation read alike)."""
    from pathlib import Path

    from evalcore.generators.procedure.job import generate
    from evalcore.inputs import import_project
    from evalcore.items.current import read_items
    from evalcore.models import Target
    from evalcore.runs.procedure_tests import create_procedure_run, execute_procedure_run
    from evalcore.targets import save_target

    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    store = sqlite_store
    pid = import_project(store, Path(__file__).resolve().parents[2] / "data" / "sample").project_id
    generation = generate(store, pid, procedures=["track_order", "return_item"], paths=1, seed=0).run.id
    played = []
    for agent in ("oracle", "null"):
        save_target(store, pid, Target(name=agent, kind="agent", config={"agent": agent}))
        run = create_procedure_run(store, pid, agent, generation=generation)
        execute_procedure_run(store, run.id)
        played.append(run.id)
    rows = _all(store, pid, ResultFilters(run_ids=[played[1]]))
    tests = read_items(store, [r.item_id for r in rows])
    assert all(r.turn_index == len(tests[r.item_id].test().context) for r in rows)
    intents = {p.name: p.intent for p in store.procedures(pid)}
    assert {r.spec for r in rows} == {
        f"procedure: {intents['track_order']}",
        f"procedure: {intents['return_item']}",
    }
    cmp = compare_to_baseline(store, played[1], played[0])
    assert set(cmp.by_spec) == {r.spec for r in rows} and cmp.overall.broken > 0
