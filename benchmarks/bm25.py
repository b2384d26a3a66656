"""BM25: the bm25s library (evalcore.documents.retrieval.BM25) against the two hand-written BM25s it
replaced (retrieval's numpy postings and annotation grounding's per-unit sums, as of commit 0d1ad09),
index and query time, wall and CPU, on the same inputs in the same run.

    .venv/bin/python benchmarks/bm25.py             # sample project, 5,000 synthetic passages, grounding
    .venv/bin/python benchmarks/bm25.py --quick     # 1,000 synthetic passages, 200 queries

Workloads: (1) the sample project's passages, one query per passage (its first 12 words); (2) a synthetic
corpus of Zipf-distributed words (20,000-word vocabulary, 40-120 tokens a passage) with 8-word queries;
(3) the Annotate page's grounding: for every sample document, an index over its own sentences or rows
and one query per unit (half its words, shuffled), i.e. many tiny indexes. Times are the best of
`--repeat` runs; CPU (process time) is given beside wall time because the machine may be shared, which
inflates wall time only. The scores of old and new are compared, so speed is not bought with a change.
"""

from __future__ import annotations

import argparse
import math
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalcore.documents.retrieval import BM25, split_passages, tokenize  # noqa: E402
from evalcore.inputs import load_project  # noqa: E402
from evalcore.models import Document, DocumentKind  # noqa: E402
from evalcore.review.grounding import _units  # noqa: E402


class HandWrittenBM25:
    """retrieval.BM25 as of 0d1ad09: Okapi BM25 with per-term numpy postings (same formula and scale)."""

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.size = len(corpus)
        lengths = np.array([len(tokens) for tokens in corpus], dtype=float)
        avgdl = float(lengths.mean()) if self.size and lengths.mean() > 0 else 1.0
        norm = k1 * (1 - b + b * lengths / avgdl)
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for i, tokens in enumerate(corpus):
            for term, tf in Counter(tokens).items():
                idx, weights = postings.setdefault(term, ([], []))
                idx.append(i)
                weights.append(tf * (k1 + 1) / (tf + norm[i]))
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term, (idx, weights) in postings.items():
            idf = math.log(1 + (self.size - len(idx) + 0.5) / (len(idx) + 0.5))
            self.postings[term] = (np.array(idx, dtype=np.int64), np.array(weights) * idf)

    def scores(self, query_tokens: Iterable[str]) -> np.ndarray:
        scores = np.zeros(self.size)
        for term, count in Counter(query_tokens).items():
            posting = self.postings.get(term)
            if posting is not None:
                scores[posting[0]] += count * posting[1]
        return scores


def hand_written_grounding(units: list[set[str]], lengths: list[int], wanted: set[str]) -> list[float]:
    """grounding._bm25 as of 0d1ad09: k1 = 1.2, b = 0.75, binary term frequency, pure Python."""
    n = len(units)
    average = sum(lengths) / n if n else 1.0
    df = {w: sum(w in u for u in units) for w in wanted}
    idf = {w: math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w in wanted if df[w]}
    return [
        sum(idf[w] * 2.2 / (1 + 1.2 * (0.25 + 0.75 * length / average)) for w in wanted & unit if w in idf)
        for unit, length in zip(units, lengths, strict=True)
    ]


def _timed(fn: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """(best wall seconds, best CPU seconds, result of the last run)."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus), out


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f}"


def retrieval(name: str, corpus: list[list[str]], queries: list[list[str]], repeat: int) -> None:
    print(f"\n{name}: {len(corpus):,} passages, {len(queries):,} queries")
    print(f"{'':24}{'index wall':>12}{'index CPU':>12}{'queries wall':>14}{'queries CPU':>13}  (ms)")
    results = {}
    for label, cls in (("hand-written (numpy)", HandWrittenBM25), ("bm25s (evalcore)", BM25)):
        iw, ic, index = _timed(lambda cls=cls: cls(corpus), repeat)
        qw, qc, scores = _timed(lambda index=index: [index.scores(q) for q in queries], repeat)
        results[label] = scores
        print(f"{label:24}{_ms(iw):>12}{_ms(ic):>12}{_ms(qw):>14}{_ms(qc):>13}")
    old, new = results.values()
    diff = max(float(np.abs(a - b).max()) for a, b in zip(old, new, strict=True))
    same_top = np.mean([int(np.argmax(a)) == int(np.argmax(b)) for a, b in zip(old, new, strict=True)])
    print(f"max |score difference| {diff:.1e}; same best passage for {same_top:.0%} of the queries")


def grounding(documents: list[Document], repeat: int) -> None:
    rng = random.Random(0)
    cases = []
    for doc in documents:
        if doc.kind == DocumentKind.table and doc.rows:
            texts = [" ".join(str(v) for v in row.values()) for row in doc.rows]
        else:
            texts = [u for _, u in _units(doc.text)]
        for text in texts:
            words = text.split()
            cases.append((texts, " ".join(rng.sample(words, max(1, len(words) // 2)))))

    def old() -> list[list[float]]:
        out = []
        for texts, query in cases:
            units = [set(tokenize(t)) for t in texts]
            out.append(hand_written_grounding(units, [len(t.split()) for t in texts], set(tokenize(query))))
        return out

    def new() -> list[list[float]]:
        return [
            BM25([tokenize(t) for t in texts]).scores(sorted(set(tokenize(query)))).tolist()
            for texts, query in cases
        ]

    print(f"\nGrounding (Annotate page): {len(documents)} documents, {len(cases)} (index, query) pairs")
    print(f"{'':24}{'wall':>12}{'CPU':>12}{'per pair':>12}  (ms)")
    tops = {}
    for label, fn in (("hand-written (Python)", old), ("bm25s (evalcore)", new)):
        wall, cpu, scores = _timed(fn, repeat)
        tops[label] = [int(np.argmax(s)) if s and max(s) > 0 else -1 for s in scores]
        print(f"{label:24}{_ms(wall):>12}{_ms(cpu):>12}{_ms(wall / len(cases)):>12}")
    a, b = tops.values()
    print(f"same best unit for {np.mean([x == y for x, y in zip(a, b, strict=True)]):.0%} of the pairs")


def import_time() -> None:
    code = "import time, numpy; t = time.perf_counter(); import bm25s; print(time.perf_counter() - t)"
    seconds = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
    print(f"\nimport bm25s in a fresh interpreter (numpy already imported): {seconds:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 synthetic passages, 200 queries")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best is shown)")
    args = parser.parse_args()

    documents = load_project(ROOT / "data" / "sample").documents
    passages = split_passages(documents)
    corpus = [tokenize(p.indexed_text) for p in passages]
    queries = [tokenize(" ".join(p.text.split()[:12])) for p in passages]
    BM25([["warm", "up"]])  # the one-off import of bm25s is measured apart, below
    retrieval("Sample project", corpus, queries, args.repeat)

    size, n_queries = (1000, 200) if args.quick else (5000, 1000)
    rng = np.random.default_rng(0)
    vocabulary = np.array([f"w{i}" for i in range(20000)])
    zipf = 1 / np.arange(1, len(vocabulary) + 1)
    zipf /= zipf.sum()
    synthetic = [list(rng.choice(vocabulary, size=rng.integers(40, 121), p=zipf)) for _ in range(size)]
    synthetic_queries = [list(rng.choice(vocabulary, size=8, p=zipf)) for _ in range(n_queries)]
    retrieval("Synthetic", synthetic, synthetic_queries, args.repeat)

    grounding(documents, args.repeat)
    import_time()


if __name__ == "__main__":
    main()
