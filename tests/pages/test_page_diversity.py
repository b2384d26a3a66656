"""The Diversity and coverage page with AppTest (issue 15, items 3 and 8): it reads the map a worker
computed, never fits one itself, says when the map is stale, and labels its plots."""

from pathlib import Path

import pytest
from page_app import open_page
from queue_support import work_the_queue
from streamlit.testing.v1 import AppTest
from vega import from_spec

from evalcore.inputs import import_project
from evalcore.models import RunStatus
from evalcore.specs.charts import PALETTE, STAR, coverage_chart, gap_chart, map_chart, map_frame
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.selecting import select_specs
from evalcore.specs.spec_map import MAP_KIND, map_status, read_map
from evalcore.specs.store_ops import add_human_spec, list_specs
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "ridgeline_support"
TOPICS = ["returns of worn helmets", "opening hours on holidays", "bike fitting appointments", "gift cards",
          "warranty of e-bike batteries", "delivery to islands", "rentals for a weekend", "repairs of wheels",
          "memberships", "trade-ins of old bikes"]  # fmt: skip


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    url = f"sqlite:///{tmp_path / 'diversity.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    store = Store(url)
    import_project(store, ROOT / "data" / "sample")
    documents = [d.id for d in store.documents(PROJECT)]
    for i, topic in enumerate(TOPICS):
        draft = SpecDraft(scenario=f"A customer asks about {topic}", given="a customer of the shop",
                          when=f"the customer asks about {topic}", then="the assistant answers",
                          category=["product information", "policy", "store information"][i % 3],
                          documents=[documents[i % len(documents)]])  # fmt: skip
        add_human_spec(store, PROJECT, draft, "ana")
    select_specs(store, PROJECT, 4)
    return store


def _text(at: AppTest) -> str:
    return "\n".join(str(e.value) for e in [*at.info, *at.warning, *at.caption, *at.error])


def test_the_first_visit_queues_the_map_and_the_page_shows_it_once_a_worker_is_done(store):
    at = open_page("pages/diversity.py", "ana")
    job = map_status(store, PROJECT).job
    assert job is not None and job.kind == MAP_KIND and job.status == RunStatus.pending
    assert "waiting for a worker" in _text(at)
    assert "Waiting for a worker: `evalcore serve` runs one" in _text(at), "who holds it: nobody yet"
    assert not at.get("vega_lite_chart")  # the page fits nothing itself

    work_the_queue(store.url)
    at.run()
    assert not at.exception, at.exception
    assert len(at.get("vega_lite_chart")) == 1, "the map; the other views are drawn when their tab is opened"
    assert "10 candidates" in _text(at) and "stale" not in _text(at)
    assert "UMAP layout fitted at" in _text(at) or "PCA layout fitted at" in _text(at)
    assert len(store.runs(PROJECT, kind=MAP_KIND)) == 1  # a second view queues nothing

    at.session_state["diversity_view"] = "Which documents the selected specs cover"
    at.run()
    assert len(at.get("vega_lite_chart")) == 1 and "candidates" not in _text(at)
    assert f"of {len(store.documents(PROJECT))} documents covered" in _text(at)
    at.session_state["diversity_view"] = "What Greedy and Max-Min gain over Random"
    at.run()
    assert len(at.get("vega_lite_chart")) == 1 and "minus Random's (mean of 10 seeds)" in _text(at)
    assert not at.exception, at.exception


def test_a_new_spec_makes_the_map_stale_and_update_places_it(store):
    open_page("pages/diversity.py", "ana")
    work_the_queue(store.url)
    add_human_spec(store, PROJECT, SpecDraft(scenario="A customer asks about bike lights", given="g",
                                             when="w", then="t", category="policy"), "ana")  # fmt: skip
    at = open_page("pages/diversity.py", "ana")
    assert "The map is stale: since it was drawn, 1 spec(s) were added" in _text(at)
    next(b for b in at.button if b.label == "Update the map").click().run()
    work_the_queue(store.url)
    at.run()
    assert "stale" not in _text(at) and "1 spec(s) placed since by their nearest neighbours" in _text(at)
    latest = read_map(store, map_status(store, PROJECT).latest)
    assert len(latest.points) == 11 and latest.placed == 1


def test_the_plots_are_labelled_and_their_colours_distinct(store):
    open_page("pages/diversity.py", "ana")
    work_the_queue(store.url)
    spec_map = read_map(store, map_status(store, PROJECT).latest)
    selected = {v.spec.id for v in list_specs(store, PROJECT) if v.spec.selected}
    frame = map_frame(spec_map, selected)
    scatter = from_spec(map_chart(frame, "category"))
    hue = scatter.spec["layer"][0]["encoding"]["color"]
    colours = dict(zip(hue["scale"]["domain"], hue["scale"]["range"], strict=True))
    assert len(set(colours.values())) == len(colours) == 3 and len(set(PALETTE)) == len(PALETTE) >= 40
    assert set(colours) == set(frame["category"]) and hue["title"] == "Category"
    assert hue["legend"]["orient"] == "bottom" and hue["legend"]["symbolLimit"] >= 3  # under the plot, all
    stars, points = scatter.table("selected"), scatter.table("points")
    assert len(stars) == len(selected) > 0 and len(points) == len(frame) - len(selected)
    assert scatter.spec["layer"][1]["mark"]["shape"] == STAR, "the selected specs drawn as stars, on top"
    assert scatter.spec["layer"][1]["encoding"]["color"] == hue, "in their group's colour"
    tips = [t["field"] for t in scatter.spec["layer"][0]["encoding"]["tooltip"]]
    assert tips == ["scenario", "group"] and set(points["scenario"]) <= set(frame["scenario"])

    chosen = [(p.id, p.scenario, p.documents) for p in spec_map.points if p.id in selected]
    documents = [(d.id, d.title) for d in store.documents(PROJECT)]
    heat = from_spec(coverage_chart(chosen, documents))
    x, y = heat.spec["encoding"]["x"], heat.spec["encoding"]["y"]
    assert x["title"] == "Selected spec" and y["title"] == "Document"
    assert len(x["scale"]["domain"]) == len(chosen)
    assert all(label.startswith("A customer asks about") for label in x["scale"]["domain"])
    assert y["scale"]["domain"] == [title for _, title in documents]
    titles = dict(documents)
    cited = {(s, titles[d]) for _, s, docs in chosen for d in docs}
    assert set(zip(heat.table()["scenario"], heat.table()["document"], strict=True)) == cited

    gaps = from_spec(gap_chart(spec_map.curves))
    assert set(gaps.table()["method"]) == {"Greedy", "Max-Min"}  # Random is the zero line
    assert gaps.spec["facet"]["column"]["sort"] == ["SPWD", "Var Div", "Coverage (documents)"]
    assert set(gaps.table()["metric"]) == set(gaps.spec["facet"]["column"]["sort"])
    line, zero = gaps.spec["spec"]["layer"]
    assert line["encoding"]["y"]["title"] == "minus Random" and zero["encoding"]["y"] == {"datum": 0}
