"""Where the store is: its URL from the argument, the environment or the default SQLite file. Kept apart
from the engine so reading it (the CLI's --help, a page's error message) does not import SQLAlchemy."""

from __future__ import annotations

import os
from pathlib import Path

DATABASE_URL_ENV = "EVALCORE_DATABASE_URL"
DEFAULT_SQLITE_PATH = Path("data") / "evalcore.db"


def database_url(url: str | None = None) -> str:
    """The store URL: the argument, else `EVALCORE_DATABASE_URL`, else a SQLite file under ./data/."""
    chosen = url or os.environ.get(DATABASE_URL_ENV) or f"sqlite:///{DEFAULT_SQLITE_PATH.resolve()}"
    if chosen.startswith(("postgresql://", "postgres://")):
        # psycopg 3 is the driver we ship; plain URLs would make SQLAlchemy look for psycopg2.
        chosen = "postgresql+psycopg://" + chosen.split("://", 1)[1]
    return chosen
