"""Documents (the arrows "specs -> retrieval -> document graph -> DFS chains" of seed 000).

`retrieval`: passages and documents for a query (BM25 + embeddings); `entities`: the one offline entity
extractor and the `extract_entities` task; `graph`: documents linked by shared entities and table
fields; `chains`: chains of length d through that graph.
"""
