"""Passages and hybrid retrieval over a project's documents (seed 000, Algorithm 2, lines 1-3).

- `split_passages` cuts documents into passages: prose into groups of paragraphs, list items or sentences of
  about `min_words`..`max_words` words that never cross a heading (each passage starts with its heading);
  tables into one passage per row, rendered 'column: value; ...' after the table title, so a row is
  found by its content and by its schema.
- `BM25` is the one BM25 of evalcore (the bm25s library behind a two-method class); the annotation
  page's grounding passages use it too.
- `PassageIndex` ranks passages with Okapi BM25 (k1=1.5, b=0.75, idf = ln(1 + (N - n + 0.5)/(n + 0.5)),
  which is never negative) and, when an `embed(texts) -> array` callable is given, fuses BM25 with cosine
  similarity by reciprocal rank fusion (RRF, k=60). RRF is used rather than a normalised score sum because
  BM25 scores and cosines live on unrelated scales and min-max normalisation lets one outlier passage set
  the scale for all the others; ranks need no calibration.
- Retrieval filters by document kind, because the generators retrieve text, policy and table documents
  separately.

Pure and in-memory: bm25s keeps a sparse matrix of precomputed term weights, so a query costs a few vector
additions (thousands of queries over a few hundred passages take well under a second).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from evalcore.documents.sentences import split_sentences
from evalcore.models import Document, DocumentKind

Embed = Callable[[Sequence[str]], np.ndarray]
Filter = Iterable[str] | None  # document kinds or document ids to keep; None keeps all

_STOPWORDS = """a an and are as at be been but by can could did do does for from had has have how i if in
into is it its me my no nor not of on or our so than that the their them then there these they this those to
too us was we were what when where which while who whom why will with would you your yours"""
STOPWORDS = frozenset(_STOPWORDS.split())
_TOKEN = re.compile(r"[^\W_]+(?:[-./:'’][^\W_]+)*")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def _fold(word: str) -> str:
    """Light plural folding ('batteries' -> 'battery', 'e-bikes' -> 'e-bike'), so plurals match."""
    if len(word) <= 3 or not word[-1].isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _is_id(raw: str) -> bool:
    """Codes such as RC-01, VT-BAT-500, WB-STD: hyphenated, and mixing letters with digits or all capitals."""
    if "-" not in raw and "/" not in raw:
        return False
    has_digit = any(c.isdigit() for c in raw)
    return (has_digit and any(c.isalpha() for c in raw)) or raw.isupper()


def tokenize(text: str) -> list[str]:
    """Lower-case unicode word tokens; ids kept whole; stopwords dropped; plurals folded.

    A hyphenated word that is not an id yields itself and its parts ('tubeless-ready' -> 'tubeless-ready',
    'tubeless', 'ready'), so a query for either form finds it; an id yields only itself, because its
    parts ('rc', '01') would match every other id.
    """
    tokens: list[str] = []
    for match in _TOKEN.finditer(text):
        raw = re.sub(r"['’]s$", "", match.group(0))
        word = raw.casefold()
        if _is_id(raw):
            tokens.append(word)
            continue
        if word not in STOPWORDS and (len(word) > 1 or word.isdigit()):
            tokens.append(_fold(word))
        if "-" in word or "/" in word:
            parts = [p for p in re.split(r"[-/]", word) if len(p) > 1 and p not in STOPWORDS]
            tokens.extend(_fold(p) for p in parts)
    return tokens


@dataclass(frozen=True)
class Passage:
    """A retrievable piece of a document; `id` is stable ('<document id>#p<n>' or '<document id>#r<row>')."""

    id: str
    document_id: str
    kind: str
    title: str
    heading: str
    text: str

    @property
    def indexed_text(self) -> str:
        """What is indexed: the document title, then the passage (which starts with its heading)."""
        return f"{self.title}\n{self.text}"


@dataclass(frozen=True)
class Hit:
    """A retrieved passage: the fused score, its BM25 score and its cosine (None without a dense scorer)."""

    passage: Passage
    score: float
    bm25: float
    dense: float | None


Hits = list[Hit]


def _words(text: str) -> int:
    return len(text.split())


def _units(block: str, max_words: int) -> list[str]:
    """A block small enough as is, else its lines (list items), else its sentences."""
    if _words(block) <= max_words:
        return [block]
    lines = [line for line in block.splitlines() if line.strip()]
    if len(lines) > 1:
        return [unit for line in lines for unit in _units(line, max_words)]
    return split_sentences(block)


def _group(units: list[str], min_words: int, max_words: int) -> list[str]:
    """Greedy grouping to about min..max words; a small remainder joins the previous group."""
    groups: list[list[str]] = []
    size = 0
    for unit in units:
        n = _words(unit)
        if groups and size and size + n > max_words and (size >= min_words or size + n > 1.5 * max_words):
            groups.append([])
            size = 0
        if not groups:
            groups.append([])
        groups[-1].append(unit)
        size += n
    if len(groups) > 1 and size < min_words / 2 and sum(map(_words, groups[-2])) + size <= 1.25 * max_words:
        groups[-2].extend(groups.pop())
    joiner = "\n"
    return [joiner.join(group) for group in groups]


def _sections(doc: Document) -> list[tuple[str, str]]:
    """(heading, body) pairs of a prose document; text before any sub-heading goes under the title."""
    sections: list[tuple[str, list[str]]] = [(doc.title, [])]
    for line in doc.text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            name = heading.group(1).strip()
            if name.casefold() != doc.title.casefold() or sections[-1][1]:
                sections.append((name, []))
            continue
        sections[-1][1].append(line)
    return [(name, "\n".join(lines).strip()) for name, lines in sections if "\n".join(lines).strip()]


def _prose_passages(doc: Document, min_words: int, max_words: int) -> list[Passage]:
    passages: list[Passage] = []
    for heading, body in _sections(doc):
        blocks = [b.strip() for b in re.split(r"\n\s*\n", body) if b.strip()]
        units = [unit for block in blocks for unit in _units(block, max_words)]
        for chunk in _group(units, min_words, max_words):
            text = chunk if heading == doc.title else f"{heading}\n{chunk}"
            pid = f"{doc.id}#p{len(passages)}"
            passages.append(Passage(pid, doc.id, str(doc.kind), doc.title, heading, text))
    return passages


def render_row(title: str, columns: Sequence[str], row: dict[str, str]) -> str:
    """One table row as text: 'Stores — store_id: RC-01; name: ...' (empty cells left out)."""
    cells = "; ".join(f"{col}: {row.get(col, '')}" for col in columns if str(row.get(col, "")).strip())
    return f"{title} — {cells}"


def split_passages(documents: Iterable[Document], min_words: int = 60, max_words: int = 120) -> list[Passage]:
    """Passages of every document, in document order (see the module docstring for the rules)."""
    passages: list[Passage] = []
    for doc in documents:
        if doc.kind == DocumentKind.table:
            if not doc.rows:  # an empty table is still findable by its schema
                schema = f"{doc.title} — columns: {', '.join(doc.columns)}"
                passages.append(Passage(f"{doc.id}#r0", doc.id, "table", doc.title, doc.title, schema))
            for i, row in enumerate(doc.rows):
                text = render_row(doc.title, doc.columns, row)
                passages.append(Passage(f"{doc.id}#r{i}", doc.id, "table", doc.title, doc.title, text))
        else:
            passages.extend(_prose_passages(doc, min_words, max_words))
    return passages


class BM25:
    """Okapi BM25 over tokenized passages, computed by the bm25s library: the one BM25 of evalcore.

    Scores are Robertson's classic form, k1 = 1.5 and b = 0.75 by default,
    idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)), with the idf that is never negative,
    idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)). bm25s's "lucene" method is the same up to the constant
    factor (k1 + 1), which it drops; it is multiplied back so scores keep the scale thresholds were set on
    (the demo bot's `min_score`). A query term repeated in the query counts again, as in Okapi; terms not
    in the corpus score nothing.

    Why a library rather than our own postings: benchmarks/bm25.py finds it as fast on the sample project
    (147 passages), ~1.6x faster to index 5,000 passages with queries as fast, and the same scores to
    1e-14; it is slower only for the annotation page's one-document indexes (~0.5 ms more per document).
    bm25s is imported on first use, because its import (it loads numba and scipy) takes 1-3 s.
    """

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75) -> None:
        import bm25s

        # bm25s sets its logger to DEBUG on import, which would print index-building chatter wherever
        # the root logger has a handler (the CLI, a worker).
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        self.size = len(corpus)
        self._scale = k1 + 1
        self._index: bm25s.BM25 | None = None
        if any(corpus):  # bm25s cannot index a corpus without a single token; nothing would match anyway
            self._index = bm25s.BM25(k1=k1, b=b, method="lucene", dtype="float64")
            self._index.index([list(tokens) for tokens in corpus], show_progress=False)

    def scores(self, query_tokens: Iterable[str]) -> np.ndarray:
        """BM25 score of every passage for the query (a repeated query term counts again, as in Okapi)."""
        known = self._index.get_tokens_ids(list(query_tokens)) if self._index is not None else []
        if self._index is None or not known:
            return np.zeros(self.size)
        return self._index.get_scores_from_ids(known) * self._scale


def _ranks(values: np.ndarray) -> np.ndarray:
    """1-based rank of each value, highest first; ties broken by position, so results are deterministic."""
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=float)
    ranks[order] = np.arange(1, len(values) + 1)
    return ranks


class PassageIndex:
    """BM25 (plus an optional dense scorer) over passages; see the module docstring for the fusion rule."""

    def __init__(
        self, passages: Sequence[Passage], embed: Embed | None = None, *, k1: float = 1.5, b: float = 0.75
    ) -> None:
        self.passages = list(passages)
        self.embed = embed
        self.rrf_k = 60  # the usual RRF constant (Cormack et al. 2009): damps the weight of top ranks
        self.bm25 = BM25([tokenize(p.indexed_text) for p in self.passages], k1=k1, b=b)
        self._kinds = np.array([p.kind for p in self.passages], dtype=object)
        self._doc_ids = list(dict.fromkeys(p.document_id for p in self.passages))
        position = {doc: i for i, doc in enumerate(self._doc_ids)}
        self._doc_of = np.array([position[p.document_id] for p in self.passages], dtype=np.int64)
        self._vectors: np.ndarray | None = None

    def _unit(self, vectors: np.ndarray) -> np.ndarray:
        vectors = np.asarray(vectors, dtype=float)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)

    def _passage_vectors(self) -> np.ndarray:
        if self._vectors is None:  # embedded once, on first dense query
            assert self.embed is not None
            self._vectors = self._unit(self.embed([p.indexed_text for p in self.passages]))
        return self._vectors

    def _mask(self, kinds: Filter, document_ids: Filter) -> np.ndarray:
        mask = np.ones(len(self.passages), dtype=bool)
        if kinds is not None:
            mask &= np.isin(self._kinds, [str(kind) for kind in kinds])
        if document_ids is not None:
            wanted = set(document_ids)
            mask &= np.array([p.document_id in wanted for p in self.passages], dtype=bool)
        return mask

    def _score(
        self, query: str, qvec: np.ndarray | None, mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(fused, bm25, dense) over all passages; passages outside the mask get fused score -inf."""
        bm25 = self.bm25.scores(tokenize(query))
        if qvec is None:
            fused = np.where(bm25 > 0, bm25, -np.inf)  # no shared term: not a hit
            return np.where(mask, fused, -np.inf), bm25, None
        dense = self._passage_vectors() @ qvec
        keep = np.flatnonzero(mask)
        fused = np.full(len(self.passages), -np.inf)
        sub_bm25 = bm25[keep]
        rrf = 1.0 / (self.rrf_k + _ranks(dense[keep]))
        rrf += np.where(sub_bm25 > 0, 1.0 / (self.rrf_k + _ranks(sub_bm25)), 0.0)
        fused[keep] = rrf
        return fused, bm25, dense

    def _query_vectors(self, queries: Sequence[str]) -> list[np.ndarray | None]:
        if self.embed is None or not self.passages:
            return [None] * len(queries)
        return list(self._unit(self.embed(list(queries))))

    def retrieve_many(
        self, queries: Sequence[str], k: int = 10, kinds: Filter = None, document_ids: Filter = None
    ) -> list[list[Hit]]:
        """`retrieve` for many queries, embedding them in one batch."""
        mask = self._mask(kinds, document_ids)
        results = []
        for query, qvec in zip(queries, self._query_vectors(queries), strict=True):
            fused, bm25, dense = self._score(query, qvec, mask)
            top = np.argsort(-fused, kind="stable")[:k]
            hits = []
            for i in top[np.isfinite(fused[top])]:
                cosine = None if dense is None else float(dense[i])
                hits.append(Hit(self.passages[i], float(fused[i]), float(bm25[i]), cosine))
            results.append(hits)
        return results

    def retrieve(self, query: str, k: int = 10, kinds: Filter = None, document_ids: Filter = None) -> Hits:
        """The k best passages for `query`, optionally only of the given document kinds or documents.

        Without a dense scorer, `score` is the BM25 score and passages sharing no term are left out; with
        one, `score` is the RRF score and every passage in the filter is ranked.
        """
        return self.retrieve_many([query], k, kinds, document_ids)[0]

    def document_scores(self, query: str, kinds: Filter = None) -> list[tuple[str, float]]:
        """(document id, best passage score) for every document with a hit, best first."""
        fused, _, _ = self._score(query, self._query_vectors([query])[0], self._mask(kinds, None))
        best = np.full(len(self._doc_ids), -np.inf)
        np.maximum.at(best, self._doc_of, fused)
        order = np.argsort(-best, kind="stable")
        return [(self._doc_ids[i], float(best[i])) for i in order if np.isfinite(best[i])]

    def retrieve_documents(self, query: str, k: int = 10, kinds: Filter = None) -> list[str]:
        """Ids of the k best documents, each scored by its best passage (max over passages)."""
        return [doc for doc, _ in self.document_scores(query, kinds)[:k]]


def build_index(
    documents: Iterable[Document], embed: Embed | None = None, *, min_words: int = 60, max_words: int = 120
) -> PassageIndex:
    """Split `documents` into passages and index them (BM25, plus `embed` for dense scores if given)."""
    return PassageIndex(split_passages(documents, min_words, max_words), embed)
