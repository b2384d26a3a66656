"""Greedy vs Random coverage on the sample project (issue 13, item 4; seed 000, Table 5): with the
spec's own documents (no padding), the greedy selection touches more documents than random picks."""

from __future__ import annotations

import numpy as np

from evalcore.inputs import import_project
from evalcore.specs.generation import generate_specs
from evalcore.specs.selecting import load_candidates, measure, pick
from evalcore.specs.selection import DEFAULT_ALPHA, median_heuristic_gamma


def test_greedy_covers_more_documents_than_random_at_k_8_and_15(sqlite_store):
    project_id = import_project(sqlite_store, "data/sample").project_id
    generate_specs(sqlite_store, project_id, m=60)
    candidates = load_candidates(sqlite_store, project_id)
    gamma = median_heuristic_gamma(candidates.embeddings)
    reachable = len(set().union(*candidates.doc_sets))
    for k in (8, 15):
        greedy = measure(candidates, pick(candidates, k, "greedy", DEFAULT_ALPHA, gamma, 0)).coverage
        random = [measure(candidates, pick(candidates, k, "random", DEFAULT_ALPHA, gamma, s)).coverage
                  for s in range(10)]  # fmt: skip
        assert greedy > np.mean(random) and greedy > max(random) - 1, (k, greedy, random)
        assert greedy <= reachable
