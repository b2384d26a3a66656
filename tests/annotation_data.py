"""Conversations to annotate, built directly (any generator writes this one shape), for tests, the
annotation benchmark and screenshots: Ridgeline Cycles questions grounded in the sample's documents."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta

import sqlalchemy as sa

from evalcore.items.store_ops import add_conversation
from evalcore.models import Conversation, Provenance, Turn, now_utc
from evalcore.store import Store
from evalcore.store import schema as t

# (document id, question, answer) pairs consistent with data/sample.
QA: list[tuple[str, str, str]] = [
    ("return-policy", "How long do I have to return a bike I bought in store?",
     "Most items, bikes included, can be returned within 30 days of the purchase date on your receipt, "
     "as long as the bike is undamaged and only test-ridden."),
    ("return-policy", "And if it is an e-bike?",
     "E-bikes have a shorter window: 14 days, and the display must show fewer than 25 km ridden."),
    ("return-policy", "Can I return a custom Atelier build?",
     "No. Ridgeline Atelier custom builds are made to measure and are not returnable; defects are "
     "handled under the warranty policy."),
    ("warranty-policy", "What does the warranty cover on an e-bike battery?",
     "E-bike motors and batteries are covered for 2 years or 500 charge cycles, whichever comes first."),
    ("warranty-policy", "Is the frame covered too?",
     "Yes. Frames of new e-bikes carry a lifetime warranty for the original owner."),
    ("ebike-battery-care-guide", "Which battery does the Metro E8 use?",
     "The Metro E8 uses the Voltra PowerPack 500Wh (SKU VT-BAT-500)."),
    ("ebike-battery-care-guide", "How long does a full charge take with the fast charger?",
     "About 3.5 hours for the 500Wh pack and 4.5 hours for the 625Wh pack with the Voltra 4A charger."),
    ("shipping-delivery-policy", "Do you ship parts to Hawaii?",
     "No, we only ship to addresses in the continental United States, not to Alaska or Hawaii."),
    ("shipping-delivery-policy", "How much is standard shipping on a $60 order?",
     "Standard shipping is $7.95 on orders under $75; it is free from $75."),
    ("rental-fleet", "Can I rent a cargo e-bike at the first store, and what is the deposit?",
     "Yes, store RC-01 has 2 VT-EB-CARGO bikes at $85 a day with a $400 deposit."),
    ("rental-policy", "Do I need to bring ID to rent?",
     "Yes, a government photo ID and a card for the deposit are needed at pick-up."),
    ("stores", "Which store is open on Sundays?",
     "Please check the store list: opening hours differ per store."),
]  # fmt: skip
QUERY_TYPES = ["SINGLE-DOC", "MULTI-DOC", "PRE-FILLER", "FILLER", "SINGLE-DOC", "SYNTHESIS"]
GENERATORS = ["doc_qa", "procedure", "simulation", "tool_case"]


def make_conversation(
    index: int, *, pairs: int = 5, generator: str | None = None, spec_id: str | None = None, seed: int = 0
) -> Conversation:
    """Conversation number `index`: `pairs` user/assistant pairs (2 * pairs turns), grounded in sample
    documents, with a judge verdict and score in its metadata (about 70% pass)."""
    rng = random.Random(seed * 1_000_003 + index)
    turns: list[Turn] = []
    for k in range(pairs):
        doc, question, answer = QA[(index + k) % len(QA)]
        query_type = QUERY_TYPES[min(k, len(QUERY_TYPES) - 1)] if k < pairs - 1 else "SYNTHESIS"
        turns.append(Turn(index=2 * k, role="user", content=question, query_type=query_type, grounding=[doc]))
        turns.append(
            Turn(index=2 * k + 1, role="assistant", content=answer, query_type=query_type, grounding=[doc])
        )
    score = round(rng.random(), 3)
    return Conversation(
        id=f"conv-{index:05d}",
        generator=generator or GENERATORS[index % len(GENERATORS)],
        spec_id=spec_id,
        turns=turns,
        metadata={"judge_passed": score >= 0.3, "judge_score": score, "judge": "offline-judge"},
        provenance=Provenance(producer="offline", task="test_data", seed=seed),
    )


def add_conversations(
    store: Store,
    project_id: str,
    n: int,
    *,
    pairs: int = 5,
    start: int = 0,
    spec_ids: list[str] | None = None,
) -> list[str]:
    """Add `n` conversations in one transaction (oldest first, one second apart); return their ids."""
    ids = []
    base = now_utc() - timedelta(days=1)
    with store.write() as conn:
        for k in range(start, start + n):
            spec = spec_ids[k % len(spec_ids)] if spec_ids else None
            ids.append(
                add_conversation(
                    store, project_id, make_conversation(k, pairs=pairs, spec_id=spec), conn=conn
                )
            )
        # Distinct creation times make the queue order (created_at, id) independent of insert speed.
        for k, item_id in enumerate(ids):
            conn.execute(
                sa.update(t.items)
                .where(t.items.c.id == item_id)
                .values(created_at=base + timedelta(seconds=start + k))
            )
    return ids


def iter_ids(start: int, n: int) -> Iterator[str]:
    """The ids `add_conversations` gives."""
    return (f"conv-{k:05d}" for k in range(start, start + n))
