"""The current shape of the store's tables, used by queries. Migrations build it; a test checks they agree."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

metadata = sa.MetaData()

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)


def _project_fk() -> sa.ForeignKey:
    return sa.ForeignKey("projects.id", ondelete="CASCADE")


schema_migrations = sa.Table(
    "schema_migrations",
    metadata,
    sa.Column("name", sa.String(200), primary_key=True),
    sa.Column("applied_at", TS, nullable=False),
)

projects = sa.Table(
    "projects",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("title", sa.String(300), nullable=False),
    sa.Column("source_path", sa.Text, nullable=True),
    sa.Column("settings", JSON, nullable=False),
    sa.Column("created_at", TS, nullable=False),
)

system_cards = sa.Table(
    "system_cards",
    metadata,
    sa.Column("project_id", sa.String(64), _project_fk(), primary_key=True),
    sa.Column("body", JSON, nullable=False),
    sa.Column("content_hash", sa.String(64), nullable=False),
    sa.Column("imported_at", TS, nullable=False),
)

documents = sa.Table(
    "documents",
    metadata,
    sa.Column("project_id", sa.String(64), _project_fk(), primary_key=True),
    sa.Column("id", sa.String(200), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("title", sa.String(300), nullable=False),
    sa.Column("body", JSON, nullable=False),
    sa.Column("content_hash", sa.String(64), nullable=False),
    sa.Column("imported_at", TS, nullable=False),
)

tools = sa.Table(
    "tools",
    metadata,
    sa.Column("project_id", sa.String(64), _project_fk(), primary_key=True),
    sa.Column("name", sa.String(200), primary_key=True),
    sa.Column("body", JSON, nullable=False),
    sa.Column("content_hash", sa.String(64), nullable=False),
    sa.Column("imported_at", TS, nullable=False),
)

procedures = sa.Table(
    "procedures",
    metadata,
    sa.Column("project_id", sa.String(64), _project_fk(), primary_key=True),
    sa.Column("name", sa.String(200), primary_key=True),
    sa.Column("body", JSON, nullable=False),
    sa.Column("content_hash", sa.String(64), nullable=False),
    sa.Column("imported_at", TS, nullable=False),
)

# Every versioned item (spec, conversation, test ...) has a row here; its content lives in revisions.
items = sa.Table(
    "items",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("project_id", sa.String(64), _project_fk(), nullable=False, index=True),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("generator", sa.String(32), nullable=True),
    sa.Column("spec_id", sa.String(64), nullable=True),
    sa.Column("run_id", sa.String(64), nullable=True),
    sa.Column("created_at", TS, nullable=False),
    sa.Index("ix_items_project_kind", "project_id", "kind"),
)

# Append-only history: one row per save. The (item_id, version) key makes a stale save fail atomically.
revisions = sa.Table(
    "revisions",
    metadata,
    sa.Column("item_id", sa.String(64), sa.ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("body", JSON, nullable=True),
    sa.Column("author", sa.String(200), nullable=False),
    sa.Column("note", sa.Text, nullable=False),
    sa.Column("created_at", TS, nullable=False),
)

turns = sa.Table(
    "turns",
    metadata,
    sa.Column("item_id", sa.String(64), sa.ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("idx", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("query_type", sa.String(32), nullable=True),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("body", JSON, nullable=False),
)

annotations = sa.Table(
    "annotations",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("item_id", sa.String(64), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("turn_index", sa.Integer, nullable=True),
    sa.Column("label", sa.String(16), nullable=False),
    sa.Column("reason", sa.String(64), nullable=True),
    sa.Column("note", sa.Text, nullable=False),
    sa.Column("edited_content", sa.Text, nullable=True),
    sa.Column("author", sa.String(200), nullable=False),
    sa.Column("role", sa.String(32), nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.ForeignKeyConstraint(
        ["item_id", "version"], ["revisions.item_id", "revisions.version"], ondelete="CASCADE"
    ),
    sa.Index("ix_annotations_item", "item_id", "version"),
)

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("project_id", sa.String(64), _project_fk(), nullable=False, index=True),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("body", JSON, nullable=False),
    sa.Column("started_at", TS, nullable=False),
    sa.Column("updated_at", TS, nullable=False),
)

run_units = sa.Table(
    "run_units",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("unit_key", sa.String(200), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("result", JSON, nullable=True),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("finished_at", TS, nullable=False),
)
