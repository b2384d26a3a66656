"""Helpers for the run, report and page tests: doc-QA-shaped conversations on the sample project.

Written the way seed 000's generator writes them (a spec, a chain of documents, question/answer pairs
with query types, follow-ups that refer back, a CANNOTANSWER turn, a final synthesis turn), with answers
taken from the sample documents. They are not tuned to any target: the demo bot fails where it fails.
No tests here; the module is imported by the test modules.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.inputs import import_project
from evalcore.items.store_ops import add_conversation
from evalcore.models import Conversation, Provenance, Turn
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.store_ops import add_specs
from evalcore.store import Store

# (spec scenario, chain of documents, [(question, answer, query_type, grounding)])
SAMPLE: list[tuple[str, list[str], list[tuple[str, str, str, list[str]]]]] = [
    (
        "Return windows for e-bikes and batteries",
        ["return-policy", "ebike-battery-care-guide"],
        [
            ("How long do I have to return an e-bike I bought?",
             "E-bikes can be returned within 14 days, and the display must show fewer than 25 km ridden.",
             "SINGLE-DOC", ["return-policy"]),
            ("And what if it shows more than that?",
             "Beyond 25 km Ridgeline can only offer an exchange for a different size.",
             "SINGLE-DOC", ["return-policy"]),
            ("Can I return an opened spare battery?",
             "An opened spare battery is accepted within 30 days with a 15% restocking fee, after a battery "
             "health check shows no damage.",
             "MULTI-DOC", ["return-policy", "ebike-battery-care-guide"]),
            ("Can I send it back by post?",
             "No. Batteries cannot be returned by post; bring them to a store.",
             "PRE-FILLER", ["return-policy"]),
            ("Do you buy back used batteries for cash?", "CANNOTANSWER", "SINGLE-DOC", []),
            ("So overall, what do I need for an opened battery and for the e-bike itself?",
             "The e-bike within 14 days and under 25 km; the opened battery within 30 days with a 15% "
             "restocking fee, brought to a store.",
             "SYNTHESIS", ["return-policy", "ebike-battery-care-guide"]),
        ],
    ),
    (
        "Renting an e-bike at the right store",
        ["rental-policy", "stores", "rental-fleet"],
        [
            ("Which stores rent e-bikes?",
             "E-bikes are rented only at Alder Creek (RC-01) and Harbor Point (RC-02).",
             "SINGLE-DOC", ["rental-policy"]),
            ("What are the opening hours of the first one on Sundays?",
             "Alder Creek is open on Sundays from 10:00 to 17:00.",
             "MULTI-DOC", ["stores"]),
            ("What is the late fee if I bring an e-bike back late?",
             "After a 15-minute grace period, late fees are $15 per hour for e-bikes.",
             "SINGLE-DOC", ["rental-policy"]),
            ("Is there a loyalty discount for returning renters?", "CANNOTANSWER", "SINGLE-DOC", []),
            ("Putting it together: where can I rent one, and what does a late return cost?",
             "At Alder Creek (RC-01) or Harbor Point (RC-02); late returns cost $15 per hour after a "
             "15-minute grace period.",
             "SYNTHESIS", ["rental-policy", "stores", "rental-fleet"]),
        ],
    ),
    (
        "Rental damage waiver",
        ["rental-policy"],
        [
            ("How much is the damage waiver for an e-bike rental?",
             "The damage waiver costs $12 per day for e-bikes.",
             "SINGLE-DOC", ["rental-policy"]),
            ("What does it limit my cost to?",
             "It limits what the renter pays for accidental damage to $150 for an e-bike.",
             "SINGLE-DOC", ["rental-policy"]),
        ],
    ),
    (
        "Rental deposits",
        ["rental-policy"],
        [
            ("How is the rental deposit taken?",
             "The deposit is held on a credit card at pick-up and released within 3 business days of return.",
             "SINGLE-DOC", ["rental-policy"]),
        ],
    ),
]  # fmt: skip


def conversation(
    cid: str, spec_id: str, chain: list[str], qa: list[tuple[str, str, str, list[str]]], **meta: Any
):
    """A doc-QA conversation: user/assistant pairs with query types and grounding."""
    turns = []
    for question, answer, query_type, grounding in qa:
        turns.append(
            Turn(index=len(turns), role="user", content=question, query_type=query_type, grounding=grounding)
        )
        turns.append(
            Turn(
                index=len(turns), role="assistant", content=answer, query_type=query_type, grounding=grounding
            )
        )
    return Conversation(
        id=cid,
        generator="doc_qa",
        spec_id=spec_id,
        turns=turns,
        metadata={"chain": chain, **meta},
        provenance=Provenance(producer="offline", task="doc_qa"),
    )


def sample_project(store: Store) -> tuple[str, list[str]]:
    """Import the sample project, add the sample specs and conversations; (project id, conversation ids)."""
    project_id = import_project(store, SAMPLE_PROJECT).project_id
    ids = []
    for n, (scenario, chain, qa) in enumerate(SAMPLE):
        draft = SpecDraft(
            scenario=scenario,
            given="a customer of Ridgeline Cycles asked",
            when=f"the customer asks about {scenario.lower()}",
            then="the assistant should answer from the documents and say when they hold no answer",
            category="policy",
            documents=chain,
        )
        (spec_id,) = add_specs(store, project_id, [draft], Provenance(producer="offline"))
        cid = f"conv-sample-{n}"
        add_conversation(store, project_id, conversation(cid, spec_id, chain, qa, judge_passed=n % 2 == 0))
        ids.append(cid)
    return project_id, ids


def logging_bot(messages: list[dict[str, str]]) -> str:
    """A python target for resume tests: logs every call (pid, question, message count) to $EC8_BOT_LOG,
    answers by echoing, and hangs once more than $EC8_BOT_BLOCK_AFTER calls are logged (a stuck system)."""
    log = Path(os.environ["EC8_BOT_LOG"])
    question = messages[-1]["content"]
    # Write and count under one lock: two workers writing at once must not both count the other's line
    # (then both would hang and the run would stop one call short of the promised number).
    with log.open("a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(json.dumps({"pid": os.getpid(), "q": question, "n": len(messages)}) + "\n")
        handle.flush()
        handle.seek(0)
        calls = len(handle.read().splitlines())
        fcntl.flock(handle, fcntl.LOCK_UN)
    block = int(os.environ.get("EC8_BOT_BLOCK_AFTER") or 0)
    if block and calls > block:
        time.sleep(3600)
    return f"Echo: {question}"


def slow_bot(messages: list[dict[str, str]]) -> str:
    """A python target that takes a while per reply (for stop requests)."""
    time.sleep(float(os.environ.get("EC8_BOT_DELAY") or 0.2))
    return f"Slowly: {messages[-1]['content']}"
