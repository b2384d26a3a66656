"""The Store facade: projects, inputs, versioned items, annotations, runs (store/runs.py) and their units."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from evalcore.errors import NotFoundError, StaleVersionError
from evalcore.models import Annotation, Document, Procedure, SystemCard, Tool
from evalcore.models.common import content_hash, now_utc
from evalcore.store import schema as t
from evalcore.store.engine import create_engine, redact
from evalcore.store.failures import reported_full, reported_unreachable
from evalcore.store.location import database_url
from evalcore.store.migrations import migrate
from evalcore.store.runs import RunTables


@dataclass(frozen=True)
class ProjectInfo:
    """A project as listed on the Home page."""

    id: str
    title: str
    source_path: str | None
    settings: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class Revision:
    """One saved version of an item: who saved what, and when."""

    item_id: str
    kind: str
    version: int
    body: dict[str, Any] | None
    author: str
    note: str
    created_at: datetime


@dataclass(frozen=True)
class InputChanges:
    """What an import changed, per kind of input: names added, updated and left unchanged."""

    added: dict[str, list[str]]
    updated: dict[str, list[str]]
    unchanged: dict[str, list[str]]

    @property
    def total_written(self) -> int:
        """How many records the import added or changed."""
        return sum(len(v) for v in self.added.values()) + sum(len(v) for v in self.updated.values())


def annotation_from_row(r: sa.Row) -> Annotation:
    """An Annotation from a row of `annotations` joined with its item's `kind`."""
    return Annotation(
        item_kind=r.kind,
        item_id=r.item_id,
        turn_index=r.turn_index,
        label=r.label,
        reason=r.reason,
        note=r.note,
        edited_content=r.edited_content,
        author=r.author,
        role=r.role,
        created_at=r.created_at,
    )


def new_id(prefix: str) -> str:
    """A fresh unique id with a readable prefix, e.g. 'spec-3f9a1c2b7d4e'."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


class Store(RunTables):
    """All reads and writes of evalcore's data. Open one per process; it is safe to share across threads."""

    def __init__(self, url: str | None = None) -> None:
        self.url = database_url(url)
        self.engine = create_engine(self.url)
        with self.write() as conn:
            self.applied = migrate(conn)

    @property
    def dialect(self) -> str:
        """'sqlite' or 'postgresql'."""
        return self.engine.dialect.name

    @property
    def display_url(self) -> str:
        """The URL with its password hidden."""
        return redact(self.url)

    def close(self) -> None:
        """Release the connection pool."""
        self.engine.dispose()

    @contextmanager
    def write(self) -> Iterator[sa.Connection]:
        """A write transaction: committed when the block ends, rolled back whole if it raises (a full disk
        raises StoreFullError, one line)."""
        with (
            reported_unreachable(self.display_url),
            reported_full(self.display_url),
            self.engine.connect().execution_options(evalcore_write=True) as conn,
            conn.begin(),
        ):
            yield conn

    @contextmanager
    def read(self) -> Iterator[sa.Connection]:
        """A read-only transaction (a lost store raises StoreUnreachableError, one line)."""
        with reported_unreachable(self.display_url), self.engine.connect() as conn, conn.begin():
            yield conn

    # ----------------------------------------------------------------- projects

    def create_project(
        self,
        project_id: str,
        title: str,
        source_path: str | None = None,
        *,
        conn: sa.Connection | None = None,
    ) -> ProjectInfo:
        """Create a project, or return the existing one with this id (updating its title and source)."""
        with self._using(conn) as conn:
            row = conn.execute(sa.select(t.projects).where(t.projects.c.id == project_id)).first()
            if row is None:
                conn.execute(
                    sa.insert(t.projects).values(
                        id=project_id, title=title, source_path=source_path, settings={}, created_at=now_utc()
                    )
                )
            else:
                conn.execute(
                    sa.update(t.projects)
                    .where(t.projects.c.id == project_id)
                    .values(title=title, source_path=source_path or row.source_path)
                )
            row = conn.execute(sa.select(t.projects).where(t.projects.c.id == project_id)).one()
        return ProjectInfo(**row._asdict())

    def projects(self) -> list[ProjectInfo]:
        """All projects, oldest first."""
        with self.read() as conn:
            rows = conn.execute(sa.select(t.projects).order_by(t.projects.c.created_at, t.projects.c.id))
            return [ProjectInfo(**row._asdict()) for row in rows]

    def project(self, project_id: str) -> ProjectInfo:
        """One project; NotFoundError names the projects that exist."""
        with self.read() as conn:
            row = conn.execute(sa.select(t.projects).where(t.projects.c.id == project_id)).first()
        if row is None:
            known = ", ".join(p.id for p in self.projects()) or "none yet"
            raise NotFoundError(f"no project '{project_id}' in the store (projects: {known})")
        return ProjectInfo(**row._asdict())

    def update_settings(self, project_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        """Merge `changes` into the project's settings (a None value removes a key); return the result."""
        with self.write() as conn:
            current = conn.scalar(sa.select(t.projects.c.settings).where(t.projects.c.id == project_id))
            if current is None:
                raise NotFoundError(f"no project '{project_id}' in the store")
            merged = {**current, **changes}
            merged = {k: v for k, v in merged.items() if v is not None}
            conn.execute(sa.update(t.projects).where(t.projects.c.id == project_id).values(settings=merged))
        return merged

    def delete_project(self, project_id: str) -> None:
        """Remove a project and everything in it."""
        with self.write() as conn:
            item_ids = sa.select(t.items.c.id).where(t.items.c.project_id == project_id)
            run_ids = sa.select(t.runs.c.id).where(t.runs.c.project_id == project_id)
            # Explicit deletes, child tables first: SQLite's cascades need foreign keys on every connection.
            conn.execute(sa.delete(t.annotations).where(t.annotations.c.item_id.in_(item_ids)))
            conn.execute(sa.delete(t.turns).where(t.turns.c.item_id.in_(item_ids)))
            conn.execute(sa.delete(t.revisions).where(t.revisions.c.item_id.in_(item_ids)))
            for table in (t.run_units, t.job_claims, t.run_warnings, t.budget_reservations):
                conn.execute(sa.delete(table).where(table.c.run_id.in_(run_ids)))
            for table in (t.items, t.runs, t.system_cards, t.documents, t.tools, t.procedures):
                conn.execute(sa.delete(table).where(table.c.project_id == project_id))
            conn.execute(sa.delete(t.projects).where(t.projects.c.id == project_id))

    # ------------------------------------------------------------------- inputs

    def save_inputs(
        self,
        project_id: str,
        card: SystemCard,
        documents: Sequence[Document],
        tools: Sequence[Tool],
        procedures: Sequence[Procedure],
        *,
        conn: sa.Connection | None = None,
    ) -> InputChanges:
        """Upsert a project's inputs in one transaction; unchanged records are not touched."""
        added: dict[str, list[str]] = {}
        updated: dict[str, list[str]] = {}
        unchanged: dict[str, list[str]] = {}
        stamp = now_utc()
        batches: list[tuple[str, sa.Table, str, list[tuple[str, dict[str, Any], dict[str, Any]]]]] = [
            ("system card", t.system_cards, "project_id", [(project_id, card.model_dump(mode="json"), {})]),
            (
                "documents",
                t.documents,
                "id",
                [
                    (d.id, d.model_dump(mode="json"), {"kind": d.kind.value, "title": d.title})
                    for d in documents
                ],
            ),
            ("tools", t.tools, "name", [(x.name, x.model_dump(mode="json"), {}) for x in tools]),
            (
                "procedures",
                t.procedures,
                "name",
                [(x.name, x.model_dump(mode="json"), {}) for x in procedures],
            ),
        ]
        with self._using(conn) as conn:
            for label, table, key, records in batches:
                existing = dict(
                    conn.execute(
                        sa.select(table.c[key], table.c.content_hash).where(table.c.project_id == project_id)
                    ).all()
                )
                for name, body, extra in records:
                    digest = content_hash(body)
                    values = {"body": body, "content_hash": digest, "imported_at": stamp, **extra}
                    if name not in existing:
                        keys = {"project_id": project_id} | ({key: name} if key != "project_id" else {})
                        conn.execute(sa.insert(table).values(**keys, **values))
                        added.setdefault(label, []).append(name)
                    elif existing[name] != digest:
                        where = table.c.project_id == project_id
                        if key != "project_id":
                            where = where & (table.c[key] == name)
                        conn.execute(sa.update(table).where(where).values(**values))
                        updated.setdefault(label, []).append(name)
                    else:
                        unchanged.setdefault(label, []).append(name)
        return InputChanges(added, updated, unchanged)

    def system_card(self, project_id: str) -> SystemCard | None:
        """The project's system card, if imported."""
        with self.read() as conn:
            body = conn.scalar(
                sa.select(t.system_cards.c.body).where(t.system_cards.c.project_id == project_id)
            )
        return SystemCard.model_validate(body) if body is not None else None

    def documents(self, project_id: str) -> list[Document]:
        """The project's documents, by id."""
        return [Document.model_validate(b) for b in self._bodies(t.documents, project_id, t.documents.c.id)]

    def tools(self, project_id: str) -> list[Tool]:
        """The project's tools, by name."""
        return [Tool.model_validate(b) for b in self._bodies(t.tools, project_id, t.tools.c.name)]

    def procedures(self, project_id: str) -> list[Procedure]:
        """The project's procedures, by name."""
        rows = self._bodies(t.procedures, project_id, t.procedures.c.name)
        return [Procedure.model_validate(b) for b in rows]

    def _bodies(self, table: sa.Table, project_id: str, order: sa.Column) -> list[dict[str, Any]]:
        with self.read() as conn:
            return list(
                conn.scalars(sa.select(table.c.body).where(table.c.project_id == project_id).order_by(order))
            )

    # -------------------------------------------------------------------- items

    def add_item(
        self,
        project_id: str,
        kind: str,
        body: dict[str, Any],
        author: str,
        *,
        item_id: str | None = None,
        note: str = "created",
        generator: str | None = None,
        spec_id: str | None = None,
        run_id: str | None = None,
        conn: sa.Connection | None = None,
    ) -> str:
        """Create an item with its first revision (and its turns, for conversations); return its id."""
        item_id = item_id or body.get("id") or new_id(kind)
        body = {**body, "id": item_id} if "id" in body else body
        with self._using(conn) as c:
            c.execute(
                sa.insert(t.items).values(
                    id=item_id,
                    project_id=project_id,
                    kind=kind,
                    generator=generator,
                    spec_id=spec_id,
                    run_id=run_id,
                    created_at=now_utc(),
                )
            )
            c.execute(
                sa.insert(t.revisions).values(
                    item_id=item_id, version=1, body=body, author=author, note=note, created_at=now_utc()
                )
            )
            turns = body.get("turns") or []
            if turns:
                c.execute(
                    sa.insert(t.turns),
                    [
                        {
                            "item_id": item_id,
                            "idx": turn["index"],
                            "role": turn["role"],
                            "query_type": turn.get("query_type"),
                            "content": turn.get("content", ""),
                            "body": turn,
                        }
                        for turn in turns
                    ],
                )
        return item_id

    def save_revision(
        self,
        item_id: str,
        body: dict[str, Any] | None,
        author: str,
        expected_version: int,
        *,
        note: str = "edited",
        conn: sa.Connection | None = None,
    ) -> int:
        """Append a revision on top of `expected_version`; refuse with StaleVersionError if it is not current.

        The (item, version) primary key makes the check atomic: of two concurrent saves on the same
        version exactly one inserts, the other gets the refusal naming who saved in between.
        """
        version = expected_version + 1
        try:
            with self._using(conn) as c, c.begin_nested():
                latest = c.scalar(
                    sa.select(sa.func.max(t.revisions.c.version)).where(t.revisions.c.item_id == item_id)
                )
                if latest is None:
                    raise NotFoundError(f"no item '{item_id}' in the store")
                if latest != expected_version:
                    raise self._stale(c, item_id, expected_version, latest)
                c.execute(
                    sa.insert(t.revisions).values(
                        item_id=item_id,
                        version=version,
                        body=body,
                        author=author,
                        note=note,
                        created_at=now_utc(),
                    )
                )
        except IntegrityError:
            with self.read() as c:
                latest = c.scalar(
                    sa.select(sa.func.max(t.revisions.c.version)).where(t.revisions.c.item_id == item_id)
                )
                raise self._stale(c, item_id, expected_version, latest) from None
        return version

    def _stale(self, conn: sa.Connection, item_id: str, expected: int, latest: int) -> StaleVersionError:
        row = conn.execute(
            sa.select(t.revisions.c.author, t.revisions.c.created_at, t.items.c.kind)
            .join(t.items, t.items.c.id == t.revisions.c.item_id)
            .where(t.revisions.c.item_id == item_id, t.revisions.c.version == latest)
        ).one()
        current = self.current(item_id, conn=conn)
        label = (current.body or {}).get("scenario") or item_id
        return StaleVersionError(row.kind, item_id, label, expected, latest, row.author, row.created_at)

    def current(self, item_id: str, *, conn: sa.Connection | None = None) -> Revision:
        """The item's latest content (latest revision with a body) at its latest version number."""
        with self._using_read(conn) as c:
            rows = c.execute(
                sa.select(t.revisions, t.items.c.kind)
                .join(t.items, t.items.c.id == t.revisions.c.item_id)
                .where(t.revisions.c.item_id == item_id)
                .order_by(t.revisions.c.version.desc())
            ).all()
        if not rows:
            raise NotFoundError(f"no item '{item_id}' in the store")
        body = next((r.body for r in rows if r.body is not None), None)
        head = rows[0]
        return Revision(item_id, head.kind, head.version, body, head.author, head.note, head.created_at)

    def history(self, item_id: str) -> list[Revision]:
        """Every revision of an item, oldest first."""
        with self.read() as c:
            rows = c.execute(
                sa.select(t.revisions, t.items.c.kind)
                .join(t.items, t.items.c.id == t.revisions.c.item_id)
                .where(t.revisions.c.item_id == item_id)
                .order_by(t.revisions.c.version)
            ).all()
        return [Revision(r.item_id, r.kind, r.version, r.body, r.author, r.note, r.created_at) for r in rows]

    def list_current(
        self,
        project_id: str,
        kind: str,
        *,
        generator: str | None = None,
        spec_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Revision]:
        """The current content of a project's items of one kind, oldest first, one page at a time."""
        items = t.items
        rev = t.revisions
        latest_body = (
            sa.select(rev.c.item_id, sa.func.max(rev.c.version).label("v"))
            .where(rev.c.body.is_not(None))
            .group_by(rev.c.item_id)
            .subquery()
        )
        head = (
            sa.select(rev.c.item_id, sa.func.max(rev.c.version).label("hv"))
            .group_by(rev.c.item_id)
            .subquery()
        )
        query = (
            sa.select(rev, items.c.kind, head.c.hv)
            .join(latest_body, (latest_body.c.item_id == rev.c.item_id) & (latest_body.c.v == rev.c.version))
            .join(items, items.c.id == rev.c.item_id)
            .join(head, head.c.item_id == rev.c.item_id)
            .where(items.c.project_id == project_id, items.c.kind == kind)
            .order_by(items.c.created_at, items.c.id)
            .offset(offset)
        )
        if generator:
            query = query.where(items.c.generator == generator)
        if spec_id:
            query = query.where(items.c.spec_id == spec_id)
        if limit is not None:
            query = query.limit(limit)
        with self.read() as c:
            rows = c.execute(query).all()
        return [Revision(r.item_id, r.kind, r.hv, r.body, r.author, r.note, r.created_at) for r in rows]

    def count_items(self, project_id: str) -> dict[str, int]:
        """Number of items per kind in a project."""
        with self.read() as c:
            rows = c.execute(
                sa.select(t.items.c.kind, sa.func.count())
                .where(t.items.c.project_id == project_id)
                .group_by(t.items.c.kind)
            ).all()
        return {kind: n for kind, n in rows}

    def revisions_stamp(self) -> tuple[int, str]:
        """(number of revisions, time of the latest) of the whole store, from indexes: changes with every
        item added, edited or annotated anywhere, and with every item removed."""
        with self.read() as c:
            n, latest = c.execute(sa.select(sa.func.count(), sa.func.max(t.revisions.c.created_at))).one()
        return int(n), str(latest)

    def revision_stamp(self, project_id: str, kind: str) -> tuple[int, str]:
        """(number of revisions, time of the latest) of a project's items of one kind: changes with every
        item added, edited or annotated (each is a revision), so a page caches what it derives on it."""
        with self.read() as c:
            n, latest = c.execute(
                sa.select(sa.func.count(), sa.func.max(t.revisions.c.created_at))
                .join(t.items, t.items.c.id == t.revisions.c.item_id)
                .where(t.items.c.project_id == project_id, t.items.c.kind == kind)
            ).one()
        return int(n), str(latest)

    # -------------------------------------------------------------- annotations

    def annotate(
        self,
        item_id: str,
        annotations: Sequence[Annotation],
        author: str,
        expected_version: int,
        *,
        conn: sa.Connection | None = None,
    ) -> int:
        """Append annotations as one new revision of the item (version-checked); return the new version."""
        with self._using(conn) as c:
            version = self.save_revision(item_id, None, author, expected_version, note="annotated", conn=c)
            if annotations:
                c.execute(
                    sa.insert(t.annotations),
                    [
                        {
                            **a.model_dump(exclude={"item_kind", "item_id"}),
                            "item_id": item_id,
                            "version": version,
                            "author": author,
                        }
                        for a in annotations
                    ],
                )
        return version

    def annotations(self, item_id: str) -> list[Annotation]:
        """Every annotation ever saved on an item, oldest first."""
        with self.read() as c:
            rows = c.execute(
                sa.select(t.annotations, t.items.c.kind)
                .join(t.items, t.items.c.id == t.annotations.c.item_id)
                .where(t.annotations.c.item_id == item_id)
                .order_by(t.annotations.c.version, t.annotations.c.id)
            ).all()
        return [annotation_from_row(r) for r in rows]

    # --------------------------------------------------------------------- runs

    @contextmanager
    def unit(self, run_id: str, unit_key: str) -> Iterator[UnitWriter]:
        """A transaction for one unit of a job: what the block writes and the unit's mark commit together.

        If the block raises, nothing it wrote is kept and the unit stays unfinished, so a resume redoes it.
        A unit recorded as failed is replaced (a retry); one recorded as done raises IntegrityError.
        """
        with self.write() as c:
            writer = UnitWriter(c)
            yield writer
            units = t.run_units
            c.execute(
                sa.delete(units).where(
                    units.c.run_id == run_id, units.c.unit_key == unit_key, units.c.status == "failed"
                )
            )
            c.execute(
                sa.insert(t.run_units).values(
                    run_id=run_id,
                    unit_key=unit_key,
                    status=writer.status,
                    result=writer.result,
                    error=writer.error,
                    finished_at=now_utc(),
                )
            )

    def finished_units(self, run_id: str, keys: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """Units of a run already committed (those of `keys` when given): key -> {status, result, error}."""
        query = sa.select(t.run_units).where(t.run_units.c.run_id == run_id)
        if keys is not None:
            query = query.where(t.run_units.c.unit_key.in_(list(keys)))
        with self.read() as c:
            rows = c.execute(query).all()
        return {r.unit_key: {"status": r.status, "result": r.result, "error": r.error} for r in rows}

    # ------------------------------------------------------------------ helpers

    @contextmanager
    def _using(self, conn: sa.Connection | None) -> Iterator[sa.Connection]:
        if conn is not None:
            yield conn
        else:
            with self.write() as c:
                yield c

    @contextmanager
    def _using_read(self, conn: sa.Connection | None) -> Iterator[sa.Connection]:
        if conn is not None:
            yield conn
        else:
            with self.read() as c:
                yield c


class UnitWriter:
    """Handed to a job's unit block: its connection, and where to put the unit's result or failure."""

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn
        self.status = "done"
        self.result: dict[str, Any] | None = None
        self.error: str | None = None

    def fail(self, error: str, result: dict[str, Any] | None = None) -> None:
        """Record the unit as failed (kept, with its reason) instead of done."""
        self.status = "failed"
        self.error = error
        self.result = result
