"""Documents (the arrows "specs -> retrieval -> document graph -> DFS chains" of seed 000).

`retrieval`: passages and documents for a query (the one BM25, + embeddings); `entities`: the one entity
extractor, whose model path is the `extract_entities` task in `entity_task`; `graph`: documents linked
by shared entities and table fields; `chains`: chains of length d through that graph.
"""
