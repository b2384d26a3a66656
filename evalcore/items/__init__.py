"""Items (conversations and tests): storage, JSONL in and out, and the read model of "the current item".

Every generator writes its items here; review, runs, reports and every export read them back through
one read model, so human corrections, tiers and judge verdicts mean the same everywhere:

- `store_ops`: add items as generators write them, read back what was stored;
- `tiers`: the pure rules that make a tier of an item's annotation history;
- `state`: the project's tier policy and the derived per-item state (`annotation_states`) SQL filters on;
- `current`: the read model: content with corrections applied, tier, judge verdict, reviewers, in bulk;
- `jsonl`: the one JSONL exporter of items and the validating importer; `exports`: the inputs bundle and
  the atomic line writer.
"""
