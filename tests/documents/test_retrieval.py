"""Passages, the tokenizer, BM25 and hybrid retrieval (evalcore.documents.retrieval)."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from evalcore.documents.retrieval import BM25, PassageIndex, build_index, split_passages, tokenize
from evalcore.inputs import load_project
from evalcore.models import Document


def prose(doc_id: str, text: str, kind: str = "text", title: str | None = None) -> Document:
    return Document(id=doc_id, kind=kind, title=title or doc_id.title(), text=text)


def table(doc_id: str, columns: list[str], rows: list[list[str]], title: str | None = None) -> Document:
    return Document(
        id=doc_id,
        kind="table",
        title=title or doc_id.title(),
        columns=columns,
        rows=[dict(zip(columns, row, strict=True)) for row in rows],
    )


CORPUS = [
    prose("battery", "# Battery\n\nThe PowerPack VT-BAT-500 battery is covered for 500 charge cycles."),
    prose("sizing", "# Sizing\n\nChoose a frame size from your height and inseam."),
    prose("returns", "# Returns\n\nMost items can be returned within 30 days of delivery.", kind="policy"),
    table("stores", ["store_id", "city", "opening_hours"], [["RC-01", "Alder Creek", "Mon-Sat 09:00-19:00"]]),
]


@pytest.fixture(scope="module")
def sample_index() -> PassageIndex:
    return build_index(load_project("data/sample").documents)


def test_tokenizer_keeps_ids_whole():
    tokens = tokenize("Order WEB-204518 from RC-01: a VT-BAT-500 and WB-STD cover.")
    assert {"web-204518", "rc-01", "vt-bat-500", "wb-std"} <= set(tokens)
    assert not {"rc", "01", "bat", "500", "web"} & set(tokens)


def test_tokenizer_lowercases_drops_stopwords_folds_plurals_and_splits_words():
    assert tokenize("The Batteries and the E-Bikes") == ["battery", "e-bike", "bike"]
    assert tokenize("Tubeless-ready tyres in Zürich, 3.5 hours") == [
        "tubeless-ready",
        "tubeless",
        "ready",
        "tyre",
        "zürich",
        "3.5",
        "hour",
    ]


def test_prose_passages_keep_headings_and_stay_near_the_target_size():
    sentence = "The workshop checks brakes, gears and wheels on every bike it services. "
    body = "\n\n".join(sentence * 3 for _ in range(8))  # 8 paragraphs of 36 words
    doc = prose("workshop", f"# Workshop\n\nShort intro.\n\n## Services\n\n{body}\n\n## Booking\n\nCall us.")
    passages = split_passages([doc])
    assert [p.id for p in passages] == [f"workshop#p{i}" for i in range(len(passages))]
    assert passages[0].heading == "Workshop" and passages[0].text == "Short intro."
    services = [p for p in passages if p.heading == "Services"]
    assert len(services) >= 2
    assert all(p.text.startswith("Services\n") for p in services)
    assert all(60 <= len(p.text.split()) - 1 <= 130 for p in services)
    assert passages[-1].heading == "Booking" and passages[-1].text == "Booking\nCall us."
    assert split_passages([doc]) == passages  # stable


def test_table_passages_are_rows_with_title_and_columns():
    passages = split_passages([CORPUS[3]])
    assert len(passages) == 1
    assert passages[0].id == "stores#r0" and passages[0].kind == "table"
    assert (
        passages[0].text == "Stores — store_id: RC-01; city: Alder Creek; opening_hours: Mon-Sat 09:00-19:00"
    )


def test_bm25_matches_the_okapi_formula():
    corpus = [["battery", "battery", "cycle"], ["frame", "size"], ["battery", "return", "day", "window"]]
    scores = BM25(corpus).scores(["battery"])
    avgdl = 3.0
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))

    def expected(tf: int, dl: int) -> float:
        return idf * tf * 2.5 / (tf + 1.5 * (1 - 0.75 + 0.75 * dl / avgdl))

    assert scores == pytest.approx([expected(2, 3), 0.0, expected(1, 4)])


def test_bm25_counts_a_repeated_query_term_again_and_ignores_unknown_terms():
    index = BM25([["battery", "cycle"], ["frame"]])
    once = index.scores(["battery"])
    assert index.scores(["battery", "battery"]) == pytest.approx(2 * once)
    assert index.scores(["battery", "zebra"]) == pytest.approx(once)
    assert index.scores(["zebra"]).tolist() == [0.0, 0.0] == index.scores([]).tolist()


def test_bm25_of_an_empty_corpus_or_empty_passages_scores_zero():
    assert BM25([]).scores(["battery"]).tolist() == []
    assert BM25([[], []]).scores(["battery"]).tolist() == [0.0, 0.0]
    # An empty passage still counts in N and in the average length.
    idf, norm = math.log(1 + 1.5 / 1.5), 1.5 * (0.25 + 0.75 * 1 / 0.5)
    assert BM25([["x"], []]).scores(["x"]) == pytest.approx([idf * 2.5 / (1 + norm), 0.0])


def test_bm25_ranks_the_obvious_passage_first_on_a_handmade_corpus():
    index = build_index(CORPUS)
    assert index.retrieve("how many charge cycles does the battery last")[0].passage.document_id == "battery"
    assert index.retrieve("return an item after delivery")[0].passage.document_id == "returns"
    assert index.retrieve("VT-BAT-500")[0].passage.document_id == "battery"
    assert index.retrieve("frame size for my height")[0].passage.document_id == "sizing"
    assert index.retrieve("zebra") == []  # no shared term, no hit


def test_kind_filter():
    index = build_index(CORPUS)
    assert [h.passage.kind for h in index.retrieve("Alder Creek battery returns", kinds=["table"])] == [
        "table"
    ]
    assert {h.passage.kind for h in index.retrieve("battery returns days", kinds=["policy"])} == {"policy"}
    assert {h.passage.kind for h in index.retrieve("battery returns days", kinds=["text", "policy"])} == {
        "text",
        "policy",
    }
    assert index.retrieve_documents("battery returns Alder Creek", k=5, kinds=["text"]) == ["battery"]


def test_dense_scorer_is_fused_by_reciprocal_rank():
    def embed(texts):  # a toy embedding: does the text talk about money?
        return np.array([[1.0, 0.1] if ("30 days" in t or "refund" in t) else [0.1, 1.0] for t in texts])

    index = build_index(CORPUS, embed=embed)
    hits = index.retrieve("refund", k=4)
    assert hits[0].passage.document_id == "returns"  # no shared term: the dense scorer alone finds it
    assert hits[0].bm25 == 0 and hits[0].dense == pytest.approx(1.0)
    assert hits[0].score == pytest.approx(1 / 61)
    assert len(hits) == 4  # with a dense scorer every passage in the filter is ranked
    both = index.retrieve("returned within 30 days", k=1)[0]
    assert both.passage.document_id == "returns" and both.score == pytest.approx(2 / 61)
    many = index.retrieve_many(["refund", "battery"], k=2, kinds=["text"])
    assert [h.passage.kind for hits in many for h in hits] == ["text"] * 4


def test_retrieve_documents_takes_the_best_passage_per_document():
    docs = [*CORPUS, prose("faq", "# FAQ\n\nBattery battery battery charge cycles.\n\n" + "filler " * 200)]
    index = build_index(docs)
    scores = dict(index.document_scores("battery charge cycles"))
    best = {}
    for hit in index.retrieve("battery charge cycles", k=100):
        best[hit.passage.document_id] = max(best.get(hit.passage.document_id, 0.0), hit.score)
    assert scores == pytest.approx(best)
    assert index.retrieve_documents("battery charge cycles", k=1) == [max(best, key=best.get)]


def test_sample_project_battery_warranty_question_finds_the_battery_and_warranty_documents(sample_index):
    query = "How many charge cycles does the e-bike battery warranty cover?"
    top = sample_index.retrieve_documents(query, k=4)
    assert top[0] == "ebike-battery-care-guide"
    assert {"warranty-terms", "warranty-policy"} <= set(top)
    assert sample_index.retrieve_documents(query, k=1, kinds=["table"]) == ["warranty-terms"]
    assert sample_index.retrieve_documents(query, k=1, kinds=["policy"]) == ["warranty-policy"]
    assert sample_index.retrieve(query, k=1)[0].passage.heading == "Charge cycles and the warranty"


def test_sample_project_store_hours_question_finds_the_stores_row(sample_index):
    hit = sample_index.retrieve("Alder Creek opening hours", k=1)[0]
    assert hit.passage.id == "stores#r0" and "Alder Creek" in hit.passage.text
    assert (
        sample_index.retrieve("Alder Creek opening hours", k=1, kinds=["table"])[0].passage.id == "stores#r0"
    )
    assert sample_index.retrieve("opening hours", kinds=["policy"])[0].passage.kind == "policy"


def test_thousands_of_queries_are_fast(sample_index):
    queries = [f"e-bike battery warranty cycles {i} RC-0{i % 4}" for i in range(3000)]
    start = time.perf_counter()
    results = sample_index.retrieve_many(queries, k=10, kinds=["text", "policy"])
    elapsed = time.perf_counter() - start
    assert len(results) == 3000 and all(results)
    assert elapsed < 5, f"3000 queries took {elapsed:.2f}s"
