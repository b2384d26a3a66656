"""The entity extractor (evalcore.documents.entities, and its model path documents.entity_task) and the
document graph (documents.graph)."""

from __future__ import annotations

import json
import random
from typing import get_args

from evalcore.documents import entity_task
from evalcore.documents.entities import Entity, extract_entities
from evalcore.documents.graph import build_graph, graph_stats
from evalcore.inputs import load_project
from evalcore.models import Document


def prose(doc_id: str, text: str, kind: str = "text") -> Document:
    return Document(id=doc_id, kind=kind, title=doc_id.title(), text=text)


def table(doc_id: str, columns: list[str], rows: list[list[str]]) -> Document:
    rows_ = [dict(zip(columns, row, strict=True)) for row in rows]
    return Document(id=doc_id, kind="table", title=doc_id.title(), columns=columns, rows=rows_)


CORPUS = [
    prose("guide", "The Voltra Metro E8 is sold at Alder Creek. Its battery is the VT-BAT-500."),
    prose(
        "returns",
        "Spare batteries such as the VT-BAT-500 can be returned within 30 days at Harbor Point. "
        "Ridgeline Cycles inspects them.",
        kind="policy",
    ),
    prose("history", "Dana Whitlock opened Alder Creek in 1998 and later Harbor Point."),
    prose(
        "gifts",
        "Gift cards from Ridgeline Cycles never expire. They are valid for 30 days after a refund.",
        kind="policy",
    ),
    table("stores", ["store_id", "city"], [["RC-01", "Alder Creek"], ["RC-02", "Harbor Point"]]),
    table("stock", ["store_id", "sku", "qty"], [["RC-01", "VT-BAT-500", "3"], ["RC-03", "VT-BAT-625", "0"]]),
    table("prices", ["sku", "price"], [["XX-1", "10"], ["VT-BAT-999", "3"]]),
]


def edges(graph) -> dict[tuple[str, str], tuple[str, list[str], dict]]:
    return {
        tuple(sorted((u, v))): (data["kind"], data["bridges"], data.get("fields", {}))
        for u, v, data in graph.edges(data=True)
    }


def test_entities_from_a_handmade_sentence():
    text = (
        "Voltra batteries last 2 years or 500 charge cycles. The Metro E8 costs $2,799 at Alder Creek "
        "(RC-01), with a 15% discount within 14 days. Order WEB-12345 includes VT-BAT-500."
    )
    assert extract_entities(text) == [
        Entity("2 years", "quantity", "2 year"),
        Entity("500 charge cycles", "quantity", "500 charge cycle"),
        Entity("Metro E8", "name", "metro e8"),
        Entity("$2,799", "quantity", "$2799"),
        Entity("Alder Creek", "name", "alder creek"),
        Entity("RC-01", "id", "RC-01"),
        Entity("15%", "quantity", "15%"),
        Entity("14 days", "quantity", "14 day"),
        Entity("WEB-12345", "id", "WEB-12345"),
        Entity("VT-BAT-500", "id", "VT-BAT-500"),
    ]


def test_entities_skip_sentence_initial_words_and_normalise_forms():
    found = extract_entities(
        "Bikes ship in 2-hour slots. **Harbor Point** opened on 1 March 2025; see the SKU list."
    )
    assert [(e.kind, e.canonical) for e in found] == [
        ("quantity", "2 hour"),
        ("name", "harbor point"),
        ("quantity", "1 march 2025"),
    ]
    assert extract_entities("the Ridge E-MTB 29 and the Commuter 300") == [
        Entity("Ridge E-MTB 29", "name", "ridge e-mtb 29"),
        Entity("Commuter 300", "name", "commuter 300"),
    ]
    assert extract_entities("codes WB-STD and WBAT-500 but not E-MTB alone")[:2] == [
        Entity("WB-STD", "id", "WB-STD"),
        Entity("WBAT-500", "id", "WBAT-500"),
    ]


def test_the_task_offline_is_the_extractor_and_model_entities_take_its_matching_form():
    text = "Harbor Point opened on 1 March 2025; returns within 14 days, order WEB-12345."
    offline = entity_task.offline_entities({"passage": text}, random.Random(0))
    assert [e.text for e in offline.entities] == [e.text for e in extract_entities(text)]
    assert [e.kind for e in offline.entities] == ["name", "date", "quantity", "identifier"]
    # What a model writes is matched like what the extractor finds: same canonical forms, back and forth.
    assert [entity_task.as_entity(e) for e in offline.entities] == extract_entities(text)

    def from_model(text: str, kind: str) -> Entity | None:
        return entity_task.as_entity(entity_task.Entity(text=text, kind=kind))

    assert from_model("2 years", "quantity") == Entity("2 years", "quantity", "2 year")
    assert from_model("the spring sale", "name") == Entity("the spring sale", "name", "the spring sale")
    assert from_model("ab12", "identifier").kind == "id"
    assert from_model("  ", "name") is None
    # seed 000's eight categories: names are matched by their words, dates and time intervals by value
    assert from_model("Alder Creek", "location") == Entity("Alder Creek", "name", "alder creek")
    assert from_model("Jane Doe", "person").kind == from_model("Voltra", "organization").kind == "name"
    assert from_model("the spring", "time").kind == "quantity"
    assert set(entity_task.SEED_KINDS) < set(get_args(entity_task.EntityKind))


def test_graph_on_a_handmade_corpus_has_exactly_the_expected_edges():
    graph = build_graph(CORPUS, ignore=["Ridgeline Cycles"])
    assert edges(graph) == {
        ("guide", "history"): ("text", ["Alder Creek"], {}),
        ("guide", "returns"): ("text", ["VT-BAT-500"], {}),
        ("history", "returns"): ("text", ["Harbor Point"], {}),
        ("guide", "stock"): ("cross_modal", ["VT-BAT-500"], {"sku": ["VT-BAT-500"]}),
        ("guide", "stores"): ("cross_modal", ["Alder Creek"], {"city": ["Alder Creek"]}),
        ("history", "stores"): (
            "cross_modal",
            ["Harbor Point", "Alder Creek"],  # equally rare, so the longer name first
            {"city": ["Harbor Point", "Alder Creek"]},
        ),
        ("returns", "stock"): ("cross_modal", ["VT-BAT-500"], {"sku": ["VT-BAT-500"]}),
        ("returns", "stores"): ("cross_modal", ["Harbor Point"], {"city": ["Harbor Point"]}),
        # same column and a shared value; stock-prices share the column `sku` but no value: no edge
        ("stock", "stores"): ("table", ["RC-01"], {"store_id": ["RC-01"]}),
    }
    stats = graph_stats(graph)
    assert stats["nodes"] == {"text": 2, "table": 3, "policy": 2}
    assert stats["edges"] == {"text": 3, "table": 1, "cross_modal": 5}
    assert stats["isolated"] == ["gifts", "prices"]
    assert graph.nodes["returns"] == {"kind": "policy", "title": "Returns"}


def test_business_name_is_ignored_and_quantities_alone_make_no_edge():
    linked = edges(build_graph(CORPUS))  # without `ignore` the business name links returns and gifts
    assert linked[("gifts", "returns")] == ("text", ["Ridgeline Cycles", "30 days"], {})
    ignored = edges(build_graph(CORPUS, ignore=["ridgeline  cycles"]))
    assert ("gifts", "returns") not in ignored  # '30 days' is still shared, but a quantity alone is weak


def test_entities_in_most_documents_are_ignored():
    docs = [prose(f"d{i}", f"Open on Pacific Time, the Quiet Lane number {i}.") for i in range(4)]
    docs.append(prose("d4", "Pacific Time applies at Alder Creek and at the Quiet Lane."))
    docs.append(prose("d5", "Nothing else here, only the Alder Creek store."))
    graph = build_graph(docs)  # 'Pacific Time' and 'Quiet Lane' are in 5 of 6 documents (> 60%)
    assert edges(graph) == {("d4", "d5"): ("text", ["Alder Creek"], {})}
    assert graph.number_of_edges() == 1
    assert build_graph(docs, max_doc_share=1.0).number_of_edges() == 11  # 10 pairs among d0-d4, plus d4-d5


def test_the_extractor_is_a_parameter():
    def hashtags(text: str) -> list[Entity]:
        return [Entity(w, "name", w.lower()) for w in text.split() if w.startswith("#")]

    docs = [prose("a", "about #Bikes and #rain"), prose("b", "#bikes only"), prose("c", "#rain only")]
    assert edges(build_graph(docs, extractor=hashtags)) == {
        ("a", "b"): ("text", ["#Bikes"], {}),
        ("a", "c"): ("text", ["#rain"], {}),
    }


def test_sample_project_graph_has_edges_of_all_three_kinds():
    bundle = load_project("data/sample")
    graph = build_graph(bundle.documents, ignore=[bundle.card.chatbot_info.business])
    stats = graph_stats(graph)
    print("\nsample document graph:", json.dumps(stats))
    assert stats["nodes"] == {"text": 6, "table": 6, "policy": 5}
    assert all(stats["edges"][kind] > 0 for kind in ("text", "table", "cross_modal"))
    assert stats["components"] == 1 and stats["isolated"] == []
    found = edges(graph)
    kind, bridges, fields = found[("inventory", "stores")]
    assert kind == "table" and set(fields) == {"store_id"} and "RC-01" in bridges
    assert found[("products", "warranty-terms")][2].keys() == {"warranty_code"}
    kind, bridges, _ = found[("ebike-battery-care-guide", "warranty-policy")]
    assert kind == "text" and "VT-BAT-500" in bridges
    kind, bridges, fields = found[("about-us-and-stores", "stores")]
    assert kind == "cross_modal" and "RC-01" in bridges and "Alder Creek" in fields["city"]
    kind, bridges, fields = found[("ebike-battery-care-guide", "products")]
    assert kind == "cross_modal" and "VT-BAT-500" in fields["sku"]
    assert all(data["bridges"] for _, _, data in graph.edges(data=True))
    assert not any("Ridgeline Cycles" in data["bridges"] for _, _, data in graph.edges(data=True))
