"""Conversations and tests in the store: add (as a job unit writes them), read one, list a page.

Every generator writes the same Conversation model; annotators and runs read it back from here.
The content is a versioned item, read back here as it was stored. Whatever shows, plays or exports an item
reads it through the read model instead (`evalcore.items.current`: corrections applied, tier under the
project's policy).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from evalcore.errors import EvalcoreError
from evalcore.models import Conversation, Test
from evalcore.store import Revision, Store

KIND = "conversation"
TEST_KIND = "test"


@dataclass(frozen=True)
class ConversationView:
    """A conversation's current content, the version it is at, and who saved it last."""

    conversation: Conversation
    version: int
    saved_by: str
    saved_at: datetime


def _view(rev: Revision) -> ConversationView:
    if rev.kind != KIND:
        raise EvalcoreError(f"'{rev.item_id}' is a {rev.kind}, not a conversation")
    return ConversationView(Conversation.model_validate(rev.body), rev.version, rev.author, rev.created_at)


def add_conversation(
    store: Store, project_id: str, conversation: Conversation, *, conn: sa.Connection | None = None
) -> str:
    """Store a generated conversation (version 1, authored by its producer); return its id."""
    body = conversation.model_dump(mode="json")
    return store.add_item(
        project_id,
        KIND,
        body,
        conversation.provenance.producer,
        item_id=conversation.id,
        generator=conversation.generator,
        spec_id=conversation.spec_id,
        run_id=conversation.provenance.run_id,
        conn=conn,
    )


def list_conversations(
    store: Store,
    project_id: str,
    *,
    generator: str | None = None,
    spec_id: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[ConversationView]:
    """A page of a project's conversations, oldest first, optionally of one generator or spec."""
    revisions = store.list_current(
        project_id, KIND, generator=generator, spec_id=spec_id, limit=limit, offset=offset
    )
    return [_view(rev) for rev in revisions]


def add_test(store: Store, project_id: str, test: Test, *, conn: sa.Connection | None = None) -> str:
    """Store a generated test (a context and its expected next turn); return its id."""
    return store.add_item(
        project_id,
        TEST_KIND,
        test.model_dump(mode="json"),
        test.provenance.producer,
        item_id=test.id,
        generator=test.generator,
        spec_id=test.spec_id,
        run_id=test.provenance.run_id,
        conn=conn,
    )


def list_tests(store: Store, project_id: str, *, limit: int | None = None, offset: int = 0) -> list[Test]:
    """A page of a project's tests, oldest first."""
    return [
        Test.model_validate(r.body)
        for r in store.list_current(project_id, TEST_KIND, limit=limit, offset=offset)
    ]
