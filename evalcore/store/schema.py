"""The current shape of the store's tables, used by queries. Migrations build it; a test checks they agree."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.sql.elements import Grouping

metadata = sa.MetaData()

# none_as_null: a Python None is SQL NULL (not the JSON text 'null'), so `body IS NULL` finds it.
JSON = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


class UTCDateTime(sa.TypeDecorator):
    """A timezone-aware UTC datetime on every backend (SQLite's DATETIME would hand back naive values)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


TS = UTCDateTime()


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
    # The latest revision of the store, read on every page (Store.revisions_stamp).
    sa.Index("ix_revisions_created", "created_at"),
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
    # 005_jobs: the moving parts of a run, each updated on its own (see evalcore.store.runs)
    sa.Column("stop_requested", sa.Text, nullable=True),
    sa.Column("stopped_reason", sa.Text, nullable=True),
    sa.Column("finished_at", TS, nullable=True),
    sa.Column("judge", sa.String(200), nullable=True),
    sa.Column("spent_usd", sa.Float, nullable=False, server_default="0"),
    sa.Column("spent_tokens", sa.Integer, nullable=False, server_default="0"),
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

# ------------------------------------------------------------ model layer (002_model_layer)

# Content-addressed model responses: key = hash of provider, model, messages, parameters, schema, prompt.
llm_cache = sa.Table(
    "llm_cache",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("provider", sa.String(64), nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("response", JSON, nullable=False),
    sa.Column("created_at", TS, nullable=False),
    # 005_jobs: set when the response could not be parsed; such an entry is never replayed
    sa.Column("rejected_at", TS, nullable=True),
)

# One row per model call (cache hits included): tokens, cost, latency, outcome. No foreign keys, so
# deleting a project or run leaves the spend history intact.
model_calls = sa.Table(
    "model_calls",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("project_id", sa.String(64), nullable=True),
    sa.Column("run_id", sa.String(64), nullable=True),
    sa.Column("task", sa.String(100), nullable=True),
    sa.Column("role", sa.String(16), nullable=True),
    sa.Column("provider", sa.String(64), nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("tokens_in", sa.Integer, nullable=False),
    sa.Column("tokens_out", sa.Integer, nullable=False),
    sa.Column("cost_usd", sa.Float, nullable=False),
    sa.Column("latency_ms", sa.Float, nullable=False),
    sa.Column("cache_hit", sa.Boolean, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("created_at", TS, nullable=False),
    sa.Index("ix_model_calls_project_id", "project_id"),
    sa.Index("ix_model_calls_run_id", "run_id"),
)

# 006_call_repairs: one row per task reply that needed repairs (`outcome` repaired) or did not validate
# (`outcome` invalid, re-asked); `repairs` names the fixes, comma-separated. Clean replies write nothing:
# the rate's denominator is the task's calls in model_calls.
call_repairs = sa.Table(
    "call_repairs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("project_id", sa.String(64), nullable=True),
    sa.Column("run_id", sa.String(64), nullable=True),
    sa.Column("task", sa.String(100), nullable=False),
    sa.Column("provider", sa.String(64), nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("outcome", sa.String(16), nullable=False),
    sa.Column("repairs", sa.Text, nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Index("ix_call_repairs_project_id", "project_id"),
)

# Embedding vectors (float32 bytes) by model and content hash of the text.
embeddings = sa.Table(
    "embeddings",
    metadata,
    sa.Column("model", sa.String(200), primary_key=True),
    sa.Column("content_hash", sa.String(64), primary_key=True),
    sa.Column("dim", sa.Integer, nullable=False),
    sa.Column("vector", sa.LargeBinary, nullable=False),
    sa.Column("created_at", TS, nullable=False),
)

# ------------------------------------------------------------------- runs (003_runs)

# One row per played turn of a run against a target. The columns are what failure tables group by (so a
# report reads no JSON); `body` holds the rest (reply, expected, conversation so far, rationale ...).
# `item_judge_passed` is the played item's own generation-time judge verdict, which tiers fall back to.
judgments = sa.Table(
    "judgments",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    sa.Column("conversation_id", sa.String(64), nullable=True),
    sa.Column("test_id", sa.String(64), nullable=True),
    sa.Column("turn_index", sa.Integer, nullable=True),
    sa.Column("score", sa.Float, nullable=True),
    sa.Column("error_type", sa.String(64), nullable=True),
    sa.Column("spec_id", sa.String(64), nullable=True),
    sa.Column("n_documents", sa.Integer, nullable=True),
    sa.Column("query_type", sa.String(32), nullable=True),
    sa.Column("multi_turn", sa.Boolean, nullable=True),
    sa.Column("item_judge_passed", sa.Boolean, nullable=True),
    sa.Column("judge", sa.String(200), nullable=False),
    sa.Column("body", JSON, nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Index("ix_judgments_run_turn", "run_id", "conversation_id", "turn_index"),
    sa.Index("ix_judgments_run_score", "run_id", "score", "error_type"),
    sa.Index("ix_judgments_run_spec", "run_id", "spec_id"),  # the specs a run played, for a picker
)

# -------------------------------------------------------- annotation workbench (004_annotation)

# Who is asked to review which item; the overlap (several annotators per item) gives agreement.
assignments = sa.Table(
    "assignments",
    metadata,
    sa.Column("item_id", sa.String(64), sa.ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("annotator", sa.String(200), primary_key=True),
    sa.Column("project_id", sa.String(64), _project_fk(), nullable=False),
    sa.Column("assigned_by", sa.String(200), nullable=False),
    sa.Column("assigned_at", TS, nullable=False),
    sa.Index("ix_assignments_project_annotator", "project_id", "annotator"),
)

# Derived, one row per item: its tier and judge fields, so the queue filters and pages in SQL. Rebuilt
# from revisions and annotations (evalcore.items.state); `version` is the head revision it reflects.
annotation_states = sa.Table(
    "annotation_states",
    metadata,
    sa.Column("item_id", sa.String(64), sa.ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("project_id", sa.String(64), _project_fk(), nullable=False),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("policy", sa.String(64), nullable=False),
    sa.Column("tier", sa.String(16), nullable=False),
    sa.Column("human_label", sa.String(16), nullable=True),
    sa.Column("needs_adjudication", sa.Boolean, nullable=False),
    sa.Column("judge_passed", sa.Boolean, nullable=True),
    sa.Column("judge_score", sa.Float, nullable=True),
    sa.Column("n_annotations", sa.Integer, nullable=False),
    sa.Column("detail", JSON, nullable=False),
    sa.Column("updated_at", TS, nullable=False),
    sa.Index("ix_annotation_states_queue", "project_id", "kind", "tier"),
)

# Derived: each annotator's effective whole-item verdict (evalcore.items.tiers rules), for "needs my review".
annotation_verdicts = sa.Table(
    "annotation_verdicts",
    metadata,
    sa.Column("item_id", sa.String(64), sa.ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("author", sa.String(200), primary_key=True),
    sa.Column("project_id", sa.String(64), _project_fk(), nullable=False),
    sa.Column("label", sa.String(16), nullable=False),
    sa.Index("ix_annotation_verdicts_author", "project_id", "author"),
)

# The queue pages a project's items oldest first: this index serves its ORDER BY ... LIMIT.
sa.Index("ix_items_queue", items.c.project_id, items.c.kind, items.c.created_at, items.c.id)

# What the results view orders a run's judged turns by: failed, unscored, passed; then item and turn. The
# index below serves its ORDER BY ... LIMIT (a page of a run of 100,000 turns was a sort of all of them).
# Constants are SQL literals, not bound parameters: SQLite and PostgreSQL match a query's expression to an
# indexed one only when both are written the same, parameters included.
JUDGMENT_ITEM = sa.func.coalesce(judgments.c.conversation_id, judgments.c.test_id)  # a judged turn's item
VERDICT_RANK = sa.case(
    (judgments.c.score.is_(None), sa.literal_column("1")),
    (judgments.c.score < sa.literal_column("1"), sa.literal_column("0")),
    else_=sa.literal_column("2"),
)
# PostgreSQL wants an indexed CASE in parentheses (and reads both as the same expression).
sa.Index(
    "ix_judgments_results",
    judgments.c.run_id,
    Grouping(VERDICT_RANK),
    JUDGMENT_ITEM,
    judgments.c.turn_index,
    judgments.c.id,
)

# Derived, read-through (009_item_summaries): what a reader computes from an item's current state, kept
# under the item's head version, so a reader of thousands reads these small rows instead of every item
# (evalcore.items.summaries). A row of an older version is never used: it is computed again and replaced.
item_summaries = sa.Table(
    "item_summaries",
    metadata,
    sa.Column("item_id", sa.String(64), sa.ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("body", JSON, nullable=False),
)

# ------------------------------------------------------------------------------- jobs (005_jobs)

# A run's warnings, appended (never rewritten); `digest` (hash of the message) keeps each one once.
run_warnings = sa.Table(
    "run_warnings",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    sa.Column("digest", sa.String(64), nullable=False),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Index("ux_run_warnings_message", "run_id", "digest", unique=True),
)

# Who works on which unit of a job: status claimed | done | failed | pending. A claim holds until
# `claimed_until` (renewed by its worker's heartbeat) or until its worker's process is seen dead.
job_claims = sa.Table(
    "job_claims",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("unit_key", sa.String(200), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("claimed_by", sa.String(200), nullable=True),
    sa.Column("claimed_until", TS, nullable=True),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("updated_at", TS, nullable=False),
    sa.Column("claimed_at", TS, nullable=True),  # when the current claim was taken (007)
    sa.Index("ix_job_claims_holder", "claimed_by", "status"),
)

# Budget held for model calls in flight, by any process: spent + held never passes a run's budget.
budget_reservations = sa.Table(
    "budget_reservations",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    sa.Column("holder", sa.String(200), nullable=False),
    sa.Column("usd", sa.Float, nullable=False),
    sa.Column("tokens", sa.Integer, nullable=False),
    sa.Column("expires_at", TS, nullable=False),
    sa.Index("ix_budget_reservations_run", "run_id"),
)

# ----------------------------------------------------------------- accounts and audit (008_accounts)

# Built-in accounts and the roles of OIDC identities (no password: `password_hash` NULL). A disabled
# account keeps its row, so the names on its versions and audit rows still say who it was.
users = sa.Table(
    "users",
    metadata,
    sa.Column("name", sa.String(200), primary_key=True),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("password_hash", sa.Text, nullable=True),
    sa.Column("disabled", sa.Boolean, nullable=False),
    sa.Column("created_by", sa.String(200), nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("updated_at", TS, nullable=False),
)

# A signed-in browser: only the SHA-256 of its token is kept, so a copy of the store signs nobody in.
user_sessions = sa.Table(
    "user_sessions",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("user_name", sa.String(200), sa.ForeignKey("users.name", ondelete="CASCADE"), nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("expires_at", TS, nullable=False),
    sa.Column("ended_at", TS, nullable=True),
    sa.Index("ix_user_sessions_user", "user_name"),
)

# Actions that have no who/when of their own (settings, jobs, imports, accounts, sign-ins, refusals);
# saved versions and verdicts keep theirs in `revisions` and `annotations`, and the trail reads both.
audit_log = sa.Table(
    "audit_log",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", TS, nullable=False),
    sa.Column("actor", sa.String(200), nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("action", sa.String(64), nullable=False),
    sa.Column("outcome", sa.String(16), nullable=False),
    sa.Column("project_id", sa.String(64), nullable=True),
    sa.Column("target", sa.Text, nullable=False),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Index("ix_audit_log_at", "at"),
)
