"""The store URL's password is masked everywhere it could appear (issue 25, finding 2): on Settings, in
`evalcore init` and `status`, in logs, in error messages, in what the store keeps and in the queue's job
records. One function, `secrets.mask_url`, does it for all."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import sqlalchemy as sa
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from evalcore.cli.main import SAMPLE_PROJECT, app
from evalcore.errors import UsageError
from evalcore.inputs import import_project
from evalcore.jobs.queue import JobQueue
from evalcore.models import Run, RunStatus
from evalcore.store import DATABASE_URL_ENV, Store
from evalcore.store.secrets import mask_url, redact

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "s3cr3t:p@ss-word"  # a ':' and an '@' inside: the forms a naive parser cuts in the wrong place
QUOTED = "s3cr3t%3Ap%40ss-word"


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://evalcore:{QUOTED}@db.example:5432/evalcore",
        f"postgresql://evalcore:{PASSWORD}@db.example/evalcore",  # unquoted: SQLAlchemy cannot parse it
        f"postgresql://evalcore@db.example/evalcore?sslmode=require&password={QUOTED}",
        f"redis://:{QUOTED}@cache.example:6379/0",
        f"host=db.example user=evalcore password={QUOTED} dbname=evalcore",
        f"could not reach postgresql+psycopg://evalcore:{QUOTED}@db.example/evalcore: refused",
    ],
)
def test_mask_url_hides_the_password_in_every_form(url):
    masked = mask_url(url)
    assert "s3cr3t" not in masked and "ss-word" not in masked and "***" in masked
    assert "db.example" in masked or "cache.example" in masked  # the rest is still shown


def test_mask_url_leaves_urls_without_a_password_alone():
    for url in ("sqlite:////tmp/x.db", "postgresql://evalcore@db/evalcore?sslmode=require", "a=b&c=d"):
        assert mask_url(url) == url


def test_a_store_url_that_cannot_be_read_is_one_line_without_the_password():
    with pytest.raises(UsageError) as raised:
        Store(f"postgresql://evalcore:{PASSWORD}@db.example/evalcore")
    assert "s3cr3t" not in str(raised.value) and "\n" not in str(raised.value)


def test_logs_errors_and_stored_text_never_hold_the_store_password(sqlite_store, monkeypatch, caplog):
    url = f"postgresql://evalcore:{QUOTED}@db.example/evalcore"
    monkeypatch.setenv(DATABASE_URL_ENV, url)  # not named like a credential: masked because it is a URL
    with caplog.at_level(logging.WARNING):
        logging.getLogger("evalcore.test").warning("could not open %s", url)
    assert "s3cr3t" not in caplog.text and "***" in caplog.text
    assert "s3cr3t" not in redact(f"error: connection to {url} failed")
    # a job that failed on the URL: its reason and warnings are kept as text in the store
    sqlite_store.create_project("p", "P")
    sqlite_store.start_run("p", Run(id="run-1", kind="test"))
    sqlite_store.add_run_warning("run-1", f"could not reach {url}")
    sqlite_store.finish_run("run-1", RunStatus.failed, f"connection to {url} refused")
    with sqlite_store.read() as conn:
        rows = [
            str(r)
            for table in ("runs", "run_warnings")
            for r in conn.execute(sa.text(f"select * from {table}"))
        ]
    assert rows and "s3cr3t" not in "\n".join(rows) and "***" in "\n".join(rows)


def test_a_queued_job_record_never_holds_the_store_password(tmp_path):
    store_url = f"postgresql+psycopg://evalcore:{QUOTED}@db.example/evalcore"
    queue = JobQueue(store_url, f"sqlite:///{tmp_path / 'queue.db'}")
    queue.enqueue("run-1")
    assert QUOTED.encode() not in (tmp_path / "queue.db").read_bytes()
    assert b"s3cr3t" not in (tmp_path / "queue.db").read_bytes()
    assert queue.pending_runs() == {"run-1"}  # the worker still knows the task is its store's


@pytest.fixture
def pg_url_with_password(postgres_databases):
    """A PostgreSQL store whose URL carries a password (the test server trusts 127.0.0.1, so any works)."""
    plain = postgres_databases.create()
    parsed = sa.make_url(plain)
    try:
        yield parsed.set(password=PASSWORD).render_as_string(
            hide_password=False
        ) + f"&password={QUOTED}".replace("&", "?", 1)
    finally:
        postgres_databases.drop(plain)


def test_settings_init_and_status_show_the_store_url_without_its_password(pg_url_with_password, monkeypatch):
    url = pg_url_with_password
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    import_project(Store(url), SAMPLE_PROJECT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.run()
    at.switch_page("pages/settings.py").run()
    assert not at.exception
    shown = [m.value for m in at.markdown] + [c.value for c in at.caption] + [e.value for e in at.error]
    shown += [d.value.to_csv() for d in at.dataframe]
    rendered = "\n".join(str(s) for s in shown)
    assert "postgresql" in rendered and ":***@127.0.0.1" in rendered and "s3cr3t" not in rendered
    for command in (["init", "--db", url], ["status", "--db", url]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 0, result.output
        assert "s3cr3t" not in result.output
