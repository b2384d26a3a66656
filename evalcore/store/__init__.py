"""The store: one interface over SQLite or PostgreSQL (see ../shared/DESIGN.md, "The store")."""

from evalcore.store.engine import DATABASE_URL_ENV, database_url, redact
from evalcore.store.store import ProjectInfo, Revision, Store

__all__ = ["DATABASE_URL_ENV", "ProjectInfo", "Revision", "Store", "database_url", "redact"]
