"""Items (conversations and tests): storage, JSONL in and out, and the read model of "the current item".

Every generator writes its items here; review, runs, reports and every export read them back through
one read model, so human corrections, tiers and judge verdicts mean the same everywhere.
"""
