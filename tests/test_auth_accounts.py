"""Built-in accounts, sessions and the audit trail, on SQLite and PostgreSQL (evalcore.auth)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from evalcore.auth import accounts, audit, sessions
from evalcore.auth.roles import Actor, PermissionDenied, Role
from evalcore.cli.main import app
from evalcore.errors import EvalcoreError, UsageError
from evalcore.models.common import now_utc
from evalcore.store import Store
from evalcore.store import schema as t

PASSWORD = "correct horse battery"
LEAD = Actor(name="lena", role=Role.lead)
ANNOTATOR = Actor(name="alice", role=Role.annotator)


def test_an_account_signs_in_with_its_password_only_and_its_hash_is_argon2(store: Store):
    accounts.add_user(store, "alice", Role.annotator, PASSWORD)
    assert accounts.authenticate(store, "alice", PASSWORD) == Actor(name="alice", role=Role.annotator)
    assert accounts.authenticate(store, "alice", PASSWORD + "!") is None
    assert accounts.authenticate(store, "nobody", PASSWORD) is None
    for odd in ("x" * 5000, "nul\x00name", "", "  "):  # refused like any wrong name, no database error
        assert accounts.authenticate(store, odd, PASSWORD) is None
    with store.read() as conn:
        digest = conn.scalar(sa.select(t.users.c.password_hash))
    assert digest.startswith("$argon2id$") and PASSWORD not in digest
    assert accounts.built_in_accounts_exist(store)


def test_names_passwords_and_roles_are_checked_before_anything_is_written(store: Store):
    with pytest.raises(UsageError, match="at least 12"):
        accounts.add_user(store, "bob", Role.viewer, "short")
    with pytest.raises(UsageError, match="control character"):
        accounts.add_user(store, "bo\nb", Role.viewer, PASSWORD)
    with pytest.raises(UsageError, match="unknown role 'boss'"):
        accounts.parse_role("boss")
    accounts.add_user(store, "bob", Role.viewer, PASSWORD)
    with pytest.raises(EvalcoreError, match="'bob' exists"):
        accounts.add_user(store, "bob", Role.admin, PASSWORD)
    assert [(a.name, a.role) for a in accounts.list_users(store)] == [("bob", Role.viewer)]


def test_only_leads_manage_accounts_and_only_admins_make_admins(store: Store):
    with pytest.raises(
        PermissionDenied, match="managing accounts needs the lead role; alice is an annotator"
    ):
        accounts.add_user(store, "eve", Role.admin, PASSWORD, actor=ANNOTATOR)
    with pytest.raises(PermissionDenied, match="making an admin needs the admin role"):
        accounts.add_user(store, "eve", Role.admin, PASSWORD, actor=LEAD)
    accounts.add_user(store, "ann", Role.annotator, PASSWORD, actor=LEAD)
    assert [a.name for a in accounts.list_users(store)] == ["ann"]
    refused = [e for e in audit.trail(store) if e.outcome == "refused"]
    assert [(e.actor, e.action) for e in refused] == [("lena", "users.add"), ("alice", "users.add")]


def test_sessions_expire_end_on_sign_out_and_on_any_change_of_the_account(store: Store):
    accounts.add_user(store, "alice", Role.annotator, PASSWORD)
    alice = accounts.authenticate(store, "alice", PASSWORD)
    token = sessions.start_session(store, alice)
    assert sessions.session_actor(store, token) == alice
    with store.read() as conn:  # only the token's hash is stored
        assert conn.scalar(sa.select(t.user_sessions.c.token_hash)) != token
    sessions.end_session(store, token)
    assert sessions.session_actor(store, token) is None

    short = sessions.start_session(store, alice, hours=1)
    assert sessions.session_actor(store, short) == alice
    with store.write() as conn:  # its hour has passed
        conn.execute(sa.update(t.user_sessions).values(expires_at=now_utc() - timedelta(seconds=1)))
    assert sessions.session_actor(store, short) is None

    for change in (
        lambda: accounts.reset_password(store, "alice", PASSWORD + "2"),
        lambda: accounts.set_role(store, "alice", Role.analyst),
        lambda: accounts.disable_user(store, "alice"),
    ):
        live = sessions.start_session(store, alice)
        change()
        assert sessions.session_actor(store, live) is None
    assert accounts.authenticate(store, "alice", PASSWORD + "2") is None  # disabled


def test_session_hours_come_from_the_environment(monkeypatch):
    assert sessions.session_hours() == 12
    monkeypatch.setenv(sessions.SESSION_HOURS_ENV, "0.5")
    assert sessions.session_hours() == 0.5
    monkeypatch.setenv(sessions.SESSION_HOURS_ENV, "soon")
    with pytest.raises(UsageError, match="EVALCORE_SESSION_HOURS='soon'"):
        sessions.session_hours()


def test_an_oidc_identity_has_the_role_a_lead_gave_it_else_viewer(store: Store):
    assert accounts.oidc_actor(store, "zoe@example.com") == Actor(name="zoe@example.com", role=Role.viewer)
    accounts.add_user(store, "zoe@example.com", Role.analyst)
    assert accounts.oidc_actor(store, "zoe@example.com").role == Role.analyst
    assert not accounts.built_in_accounts_exist(store), "an OIDC role is no built-in account"
    accounts.disable_user(store, "zoe@example.com")
    with pytest.raises(PermissionDenied, match="disabled"):
        accounts.oidc_actor(store, "zoe@example.com")


def test_the_trail_reads_versions_and_verdicts_and_its_csv_has_no_formula(store: Store):
    store.create_project("p", "P")
    item = store.add_item("p", "spec", {"scenario": "x"}, author="=HYPERLINK(1)")
    audit.record(store, LEAD, "settings.budget", project_id="p", target="p", detail="+1")
    entries = audit.trail(store, project_id="p")
    assert {(e.actor, e.action) for e in entries} == {
        ("=HYPERLINK(1)", "spec.saved"),
        ("lena", "settings.budget"),
    }
    text = audit.trail_csv(entries)
    assert "'=HYPERLINK(1)" in text and "'+1" in text
    assert ",=" not in text and ",+" not in text
    with pytest.raises(PermissionDenied, match="reading the audit trail needs the lead role"):
        audit.trail(store, actor=ANNOTATOR)
    assert item


def test_the_users_and_audit_commands(tmp_path):
    db = f"sqlite:///{tmp_path / 's.db'}"
    runner = CliRunner()
    made = runner.invoke(app, ["users", "add", "dana", "--role", "admin", "--password-stdin", "--db", db],
                         input=PASSWORD + "\n")  # fmt: skip
    assert made.exit_code == 0, made.output
    assert "built-in account dana: admin" in made.output
    listed = runner.invoke(app, ["users", "list", "--db", db])
    assert listed.output.startswith("dana\tadmin\tpassword\tactive")
    short = runner.invoke(app, ["users", "reset", "dana", "--password-stdin", "--db", db], input="x\n")
    assert short.exit_code == 2 and "at least 12" in short.output
    assert runner.invoke(app, ["users", "disable", "dana", "--db", db]).exit_code == 0
    trail = runner.invoke(app, ["audit", "--csv", "--db", db])
    assert trail.exit_code == 0
    assert trail.output.splitlines()[0] == "at,actor,role,action,outcome,project_id,target,detail"
    assert [line.split(",")[3] for line in trail.output.splitlines()[1:]] == ["users.disable", "users.add"]
