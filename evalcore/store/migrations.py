"""Ordered, named schema migrations, applied when a store opens and recorded in `schema_migrations`.

Each migration receives alembic's `Operations` bound to the open transaction and describes its own DDL,
so an old store is brought forward step by step. Never edit a released migration: append a new one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.sql.elements import Grouping

from evalcore.errors import EvalcoreError
from evalcore.models.common import content_hash, now_utc
from evalcore.store.schema import JSON, TS, schema_migrations

if TYPE_CHECKING:
    from alembic.operations import Operations


@dataclass(frozen=True)
class Migration:
    """One named step of the schema's history."""

    name: str
    apply: Callable[[Operations], None]


def _project_id() -> sa.Column:
    return sa.Column(
        "project_id", sa.String(64), sa.ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )


def _input_table(op: Operations, name: str, key: str) -> None:
    op.create_table(
        name,
        _project_id(),
        sa.Column(key, sa.String(200), primary_key=True),
        *([sa.Column("kind", sa.String(16), nullable=False)] if name == "documents" else []),
        *([sa.Column("title", sa.String(300), nullable=False)] if name == "documents" else []),
        sa.Column("body", JSON, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("imported_at", TS, nullable=False),
    )


def m001_initial(op: Operations) -> None:
    """Projects, their inputs, versioned items with revisions, turns, annotations, runs and run units."""
    op.create_table(
        "projects",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("title", sa.String(300), nullable=False),
        sa.Column("source_path", sa.Text, nullable=True),
        sa.Column("settings", JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "system_cards",
        _project_id(),
        sa.Column("body", JSON, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("imported_at", TS, nullable=False),
    )
    _input_table(op, "documents", "id")
    _input_table(op, "tools", "name")
    _input_table(op, "procedures", "name")
    op.create_table(
        "items",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column(
            "project_id", sa.String(64), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("generator", sa.String(32), nullable=True),
        sa.Column("spec_id", sa.String(64), nullable=True),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_items_project_id", "items", ["project_id"])
    op.create_index("ix_items_project_kind", "items", ["project_id", "kind"])
    op.create_table(
        "revisions",
        sa.Column("item_id", sa.String(64), sa.ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("body", JSON, nullable=True),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "turns",
        sa.Column("item_id", sa.String(64), sa.ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("idx", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("query_type", sa.String(32), nullable=True),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("body", JSON, nullable=False),
    )
    op.create_table(
        "annotations",
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
    )
    op.create_index("ix_annotations_item", "annotations", ["item_id", "version"])
    op.create_table(
        "runs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column(
            "project_id", sa.String(64), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("body", JSON, nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_index("ix_runs_project_id", "runs", ["project_id"])
    op.create_table(
        "run_units",
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("unit_key", sa.String(200), primary_key=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("result", JSON, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("finished_at", TS, nullable=False),
    )


def m002_model_layer(op: Operations) -> None:
    """The model layer: response cache, one row per model call (spend, latency), embedding vectors."""
    op.create_table(
        "llm_cache",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("response", JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "model_calls",
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
    )
    op.create_index("ix_model_calls_project_id", "model_calls", ["project_id"])
    op.create_index("ix_model_calls_run_id", "model_calls", ["run_id"])
    op.create_table(
        "embeddings",
        sa.Column("model", sa.String(200), primary_key=True),
        sa.Column("content_hash", sa.String(64), primary_key=True),
        sa.Column("dim", sa.Integer, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )


def m003_runs(op: Operations) -> None:
    """Runs against a target: one judgment per played turn, with the columns failure tables group by."""
    op.create_table(
        "judgments",
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
    )
    op.create_index("ix_judgments_run_turn", "judgments", ["run_id", "conversation_id", "turn_index"])
    op.create_index("ix_judgments_run_score", "judgments", ["run_id", "score", "error_type"])


def m004_annotation(op: Operations) -> None:
    """Annotation workbench: who is assigned what, and the derived state that makes the queue fast.

    `annotation_states` and `annotation_verdicts` hold nothing that cannot be rebuilt from items,
    revisions and annotations: they are derived, kept current in the transaction that saves annotations,
    and refreshed from the head revision when something else wrote (see evalcore.items.state).
    """
    op.create_table(
        "assignments",
        sa.Column("item_id", sa.String(64), sa.ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("annotator", sa.String(200), primary_key=True),
        sa.Column(
            "project_id", sa.String(64), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("assigned_by", sa.String(200), nullable=False),
        sa.Column("assigned_at", TS, nullable=False),
    )
    op.create_index("ix_assignments_project_annotator", "assignments", ["project_id", "annotator"])
    op.create_table(
        "annotation_states",
        sa.Column("item_id", sa.String(64), sa.ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
        sa.Column(
            "project_id", sa.String(64), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
        ),
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
    )
    op.create_index("ix_annotation_states_queue", "annotation_states", ["project_id", "kind", "tier"])
    op.create_table(
        "annotation_verdicts",
        sa.Column("item_id", sa.String(64), sa.ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("author", sa.String(200), primary_key=True),
        sa.Column(
            "project_id", sa.String(64), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("label", sa.String(16), nullable=False),
    )
    op.create_index("ix_annotation_verdicts_author", "annotation_verdicts", ["project_id", "author"])
    # The queue pages conversations of a project oldest first: this index serves its ORDER BY and LIMIT.
    op.create_index("ix_items_queue", "items", ["project_id", "kind", "created_at", "id"])


def m005_jobs(op: Operations) -> None:
    """The one job mechanism: claimed units, column-level run state, appended warnings, budget in the store.

    A run's moving parts (status, stop request, stop reason, end, judge, spend) become columns updated one
    by one, and its warnings rows appended, so no writer erases what another wrote in between. Existing
    runs get their values from their bodies; finished units become finished claims.
    """
    op.add_column("runs", sa.Column("stop_requested", sa.Text, nullable=True))
    op.add_column("runs", sa.Column("stopped_reason", sa.Text, nullable=True))
    op.add_column("runs", sa.Column("finished_at", TS, nullable=True))
    op.add_column("runs", sa.Column("judge", sa.String(200), nullable=True))
    op.add_column("runs", sa.Column("spent_usd", sa.Float, nullable=False, server_default="0"))
    op.add_column("runs", sa.Column("spent_tokens", sa.Integer, nullable=False, server_default="0"))
    op.create_table(
        "run_warnings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ux_run_warnings_message", "run_warnings", ["run_id", "digest"], unique=True)
    op.create_table(
        "job_claims",
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("unit_key", sa.String(200), primary_key=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("claimed_by", sa.String(200), nullable=True),
        sa.Column("claimed_until", TS, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_index("ix_job_claims_holder", "job_claims", ["claimed_by", "status"])
    op.create_table(
        "budget_reservations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("holder", sa.String(200), nullable=False),
        sa.Column("usd", sa.Float, nullable=False),
        sa.Column("tokens", sa.Integer, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
    )
    op.create_index("ix_budget_reservations_run", "budget_reservations", ["run_id"])
    op.add_column("llm_cache", sa.Column("rejected_at", TS, nullable=True))
    _jobs_data(op.get_bind())


def _jobs_data(conn: sa.Connection) -> None:
    """Copy the moving parts of existing runs out of their bodies, and their finished units into claims."""
    runs = sa.table(
        "runs", sa.column("id"), sa.column("body", JSON), sa.column("stopped_reason"),
        sa.column("finished_at", TS), sa.column("judge"), sa.column("spent_usd"), sa.column("spent_tokens"),
    )  # fmt: skip
    warnings = sa.table(
        "run_warnings", sa.column("run_id"), sa.column("digest"), sa.column("message"),
        sa.column("created_at", TS),
    )  # fmt: skip
    calls = sa.table(
        "model_calls", sa.column("run_id"), sa.column("cost_usd"), sa.column("tokens_in"),
        sa.column("tokens_out"), sa.column("cache_hit", sa.Boolean),
    )  # fmt: skip
    spent = sa.select(
        calls.c.run_id, sa.func.sum(calls.c.cost_usd), sa.func.sum(calls.c.tokens_in + calls.c.tokens_out)
    ).where(calls.c.cache_hit.is_(False), calls.c.run_id.is_not(None))
    spend = {row[0]: (row[1], row[2]) for row in conn.execute(spent.group_by(calls.c.run_id))}
    stamp = now_utc()
    for run_id, body in conn.execute(sa.select(runs.c.id, runs.c.body)).all():
        usd, tokens = spend.get(run_id, (0.0, 0))
        conn.execute(
            sa.update(runs)
            .where(runs.c.id == run_id)
            .values(
                stopped_reason=body.get("stopped_reason"),
                finished_at=datetime.fromisoformat(body["finished_at"]) if body.get("finished_at") else None,
                judge=body.get("judge"),
                spent_usd=float(usd or 0.0),
                spent_tokens=int(tokens or 0),
            )
        )
        for message in dict.fromkeys(body.get("warnings") or []):
            conn.execute(
                sa.insert(warnings).values(
                    run_id=run_id, digest=content_hash(message), message=message, created_at=stamp
                )
            )
    conn.execute(
        sa.text(
            "INSERT INTO job_claims (run_id, unit_key, status, attempts, updated_at) "
            "SELECT run_id, unit_key, status, 1, finished_at FROM run_units"
        )
    )


def m006_call_repairs(op: Operations) -> None:
    """One row per task reply that needed repairs or did not validate: the repair rate per model."""
    op.create_table(
        "call_repairs",
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
    )
    op.create_index("ix_call_repairs_project_id", "call_repairs", ["project_id"])


def m007_claimed_at(op: Operations) -> None:
    """When a unit's current claim was taken, so a job's page says since when a worker holds it (a
    renewal moves `updated_at`, never this). A claim held at the upgrade gets its last change."""
    op.add_column("job_claims", sa.Column("claimed_at", TS, nullable=True))
    op.execute(sa.text("UPDATE job_claims SET claimed_at = updated_at WHERE claimed_by IS NOT NULL"))


def m008_accounts(op: Operations) -> None:
    """Built-in accounts (argon2 hashes), their sessions (token hashes with an expiry) and the audit log
    of actions that keep no who/when of their own (see evalcore.auth)."""
    op.create_table(
        "users",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("password_hash", sa.Text, nullable=True),
        sa.Column("disabled", sa.Boolean, nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_table(
        "user_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column(
            "user_name", sa.String(200), sa.ForeignKey("users.name", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.Column("ended_at", TS, nullable=True),
    )
    op.create_index("ix_user_sessions_user", "user_sessions", ["user_name"])
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", TS, nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("project_id", sa.String(64), nullable=True),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
    )
    op.create_index("ix_audit_log_at", "audit_log", ["at"])


def m009_item_summaries(op: Operations) -> None:
    """Summaries of items kept under their head version, for readers of thousands (see the schema)."""
    op.create_table(
        "item_summaries",
        sa.Column("item_id", sa.String(64), sa.ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("body", JSON, nullable=False),
    )


def m010_results_indexes(op: Operations) -> None:
    """The results view's order of a run's judged turns as an index (schema.VERDICT_RANK: failed,
    unscored, passed, then item and turn), the specs a run played, and the store's latest revision."""
    j = sa.table(
        "judgments",
        *(sa.column(c) for c in ("id", "run_id", "conversation_id", "test_id", "turn_index", "score")),
    ).c
    one, zero, two = (sa.literal_column(n) for n in ("1", "0", "2"))
    rank = sa.case((j.score.is_(None), one), (j.score < one, zero), else_=two)
    item = sa.func.coalesce(j.conversation_id, j.test_id)
    op.create_index("ix_judgments_results", "judgments", [j.run_id, Grouping(rank), item, j.turn_index, j.id])
    op.create_index("ix_judgments_run_spec", "judgments", ["run_id", "spec_id"])
    op.create_index("ix_revisions_created", "revisions", ["created_at"])


# Key of the PostgreSQL advisory lock held while migrating ("evalcore" read as a number, trimmed to 63 bits).
MIGRATION_LOCK_KEY = int.from_bytes(b"evalcore", "big") & (2**63 - 1)

MIGRATIONS: list[Migration] = [
    Migration("001_initial", m001_initial),
    Migration("002_model_layer", m002_model_layer),
    Migration("003_runs", m003_runs),
    Migration("004_annotation", m004_annotation),
    Migration("005_jobs", m005_jobs),
    Migration("006_call_repairs", m006_call_repairs),
    Migration("007_claimed_at", m007_claimed_at),
    Migration("008_accounts", m008_accounts),
    Migration("009_item_summaries", m009_item_summaries),
    Migration("010_results_indexes", m010_results_indexes),
]


def applied_migrations(conn: sa.Connection) -> list[str]:
    """Names of the migrations already applied to the database behind `conn`."""
    if not sa.inspect(conn).has_table("schema_migrations"):
        return []
    return list(conn.scalars(sa.select(schema_migrations.c.name).order_by(schema_migrations.c.name)))


def migrate(conn: sa.Connection, migrations: list[Migration] | None = None) -> list[str]:
    """Apply, inside the caller's transaction, every migration not yet recorded; return their names."""
    steps = MIGRATIONS if migrations is None else migrations
    if conn.dialect.name == "postgresql":
        # Stores opening at once (workers on a shared server) migrate one after the other, not in a race.
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
    if not sa.inspect(conn).has_table("schema_migrations"):
        schema_migrations.create(conn)
    done = set(applied_migrations(conn))
    unknown = done - {m.name for m in MIGRATIONS}
    if unknown:
        raise EvalcoreError(
            f"the store was written by a newer evalcore (migrations {sorted(unknown)}); upgrade evalcore"
        )
    pending = [step for step in steps if step.name not in done]
    if not pending:
        return []
    # alembic takes longer to import than a whole `evalcore status`; only a store to upgrade needs it.
    from alembic.migration import MigrationContext
    from alembic.operations import Operations

    op = Operations(MigrationContext.configure(conn))
    newly = []
    for step in pending:
        step.apply(op)
        conn.execute(sa.insert(schema_migrations).values(name=step.name, applied_at=now_utc()))
        newly.append(step.name)
    return newly
