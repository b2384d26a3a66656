"""Shared fixtures: a real PostgreSQL server for the session, and fresh stores on SQLite and PostgreSQL.

`store` runs a test once per backend (ids `sqlite` and `postgres`; the latter marked `postgres`, so
`-m "not postgres"` leaves it out). Without PostgreSQL binaries the postgres tests fail, unless
EVALCORE_SKIP_POSTGRES=1 says to skip them; EVALCORE_TEST_POSTGRES_URL points them at an existing server.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa
from pg import SKIP_ENV, URL_ENV, Databases, LocalServer, find_bin_dir

from evalcore.store import Store
from evalcore.store.schema import metadata

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[Databases]:
    """Creates and drops databases on the session's PostgreSQL server (started on first use)."""
    url = os.environ.get(URL_ENV)
    if url:
        yield Databases(url)
        return
    bin_dir = find_bin_dir()
    if bin_dir is None:
        reason = (
            "no PostgreSQL binaries (initdb, pg_ctl) under /usr/lib/postgresql/*/bin or on PATH; "
            f"install PostgreSQL, set {URL_ENV} to a server, or set {SKIP_ENV}=1 to skip these tests"
        )
        if os.environ.get(SKIP_ENV) == "1":
            pytest.skip(reason)
        pytest.fail(reason, pytrace=False)
    server = LocalServer.start(bin_dir)
    try:
        yield Databases(server.url)
    finally:
        server.stop()


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    """The URL of a new, empty database on each backend (dropped after the test)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    databases: Databases = request.getfixturevalue("postgres_databases")
    url = databases.create()
    try:
        yield url
    finally:
        databases.drop(url)


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """A fresh store on each backend."""
    opened = Store(db_url)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def sqlite_store(tmp_path) -> Iterator[Store]:
    """A fresh SQLite store, for tests that are about something other than the backend."""
    opened = Store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        yield opened
    finally:
        opened.close()


def table_rows(store: Store) -> dict[str, list[str]]:
    """Every row of every table, as sorted text: two snapshots are equal only if nothing was written."""
    out = {}
    with store.read() as conn:
        for table in metadata.sorted_tables:
            out[table.name] = sorted(repr(tuple(row)) for row in conn.execute(sa.select(table)))
    return out


@pytest.fixture
def snapshot() -> Callable[[Store], dict[str, list[str]]]:
    """`snapshot(store)`: the whole content of a store, to check that a refused action changed nothing."""
    return table_rows


@pytest.fixture
def browser():
    """A headless Debian Chromium driven by selenium (the end-to-end tests); fails if it is missing."""
    from tests.browser import chromium, chromium_path

    if chromium_path() is None:
        pytest.fail("Debian chromium and chromium-driver are needed: run scripts/setup.sh --test")
    with chromium() as driver:
        yield driver
